# A run recorded from the page (POST /api/runs: app/recording/limits.py, app/recording/recordings.py;
# templates/_film_record.html, static/js/film/record.js; docs/film.md, "Recording from the page")
film-record-error-task = task must be one of the demo tasks ({ $known }), got { $value }
film-record-error-steps = steps must be between 1 and { $most } (max_record_steps: the most a page may record), got { $value }
film-record-error-seconds = { $value } steps of the { $task } task are estimated at { $seconds } s of work, over max_record_seconds = { $most } s: record at most { $steps } steps of this task
film-record-error-bytes = the run would take up to { $need } bytes on disk, over max_record_bytes = { $most }: keep fewer checkpoints (a larger every) or record fewer steps
film-record-error-yours = { $most ->
        [one] you already have a recording under way (max_recordings_per_client = { $most }): wait for it to end
       *[other] you already have { $most } recordings under way (max_recordings_per_client): wait for one to end
    }
film-record-error-busy = { $most ->
        [one] the server records one run at a time (max_recordings = { $most }) and is recording one now: retry in { $seconds } s
       *[other] the server records { $most } runs at a time (max_recordings) and is recording that many now: retry in { $seconds } s
    }
film-record-error-full = the server keeps at most { $runs } runs recorded from the page (max_recorded_runs, max_recorded_bytes), and those it would remove are still new (min_recorded_run_seconds): retry in { $seconds } s
film-record-error-failed = the recording of { $name } failed or was stopped; nothing of it is kept
film-record-title = Record a training run
film-record-help = The server trains a demo task's model from its first step and records every step (the loss, the gradient norms, every head's scores), as xt train --record does, then opens its film. It trains in turns with everyone else's requests, so a long run takes a few minutes. At most { $steps } steps; the server keeps the last runs recorded here (at most { $runs }), the oldest removed first.
film-record-task = Task
film-record-task-induction = induction: repeated random letters (an induction head forms)
film-record-task-text = text: the corpus's sentences, letter by letter
film-record-task-gpt2-text = gpt2-text: the same sentences, a GPT-2-style model
film-record-steps = Training steps
film-record-start = Record
film-record-bar = Recording progress
js-film-record-queued = Started { $name }: waiting for its turn on the server…
js-film-record-waiting = { $done } of { $total } steps recorded: waiting for its turn ({ $ahead ->
        [0] next
        [one] { $ahead } build before it
       *[other] { $ahead } builds before it
    })…
js-film-record-progress = { $done } of { $total } steps recorded, loss { $loss }, { $seconds } s
js-film-record-finishing = All { $total } steps trained: adding the checkpoints where the loss fell fastest…
js-film-record-done = Recorded { $name }: opening its film…
js-film-record-failed = The recording failed: { $error }
