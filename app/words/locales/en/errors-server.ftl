# The refusals of the routes, the guard in front of them and the classroom (app/routes/*,
# app/security.py, app/guesses.py, app/sessions/*) that a page shows. errors.ftl: the spec's.

## Comparing traces, the bug lab (app/routes/bench.py, app/routes/buglab.py)

error-compare-quiz = a quiz's trace cannot be compared: the difference would point at its fault
error-compare-param = param applies to the update step only
error-faults-unknown-parameter = unknown parameter { $key }: give model or config fields, and fault_layer
error-faults-layer = fault_layer must be between 0 and { $last }, got { $value }
error-quiz-sealed = a quiz hides every step's check from you until you answer it (a class's: until its presenter reveals): probe up to { $probes } steps (POST /api/traces/{ $trace_id }/quiz/probe)
error-quiz-of-a-class = this quiz belongs to a class: answer the class's poll; its presenter reveals the bug
error-quiz-not-backward = step { $step } is a { $phase } step: the bug is in a backward step
error-not-a-quiz = trace { $trace_id } is not a quiz; start one at /quiz
error-quiz-step-range = step must be between 0 and { $last } (the trace's steps), got { $value }

## Lessons and classes (app/routes/sessions.py, app/sessions/service.py, app/sessions/voters.py)

error-unknown-lesson = unknown lesson { $lesson }; GET /api/lessons lists them
error-lesson-other-spec = lesson { $lesson } walks through another spec: send its spec
error-poll-no-bug = this session's walkthrough plants no bug: start one from the bug lab to poll the class
error-poll-not-open = the poll is not open: wait for the presenter to open it
error-sessions-full = this server already holds { $most } open sessions (max_sessions); one ends after { $idle } s without use
error-session-codes-guessed = too many unknown session codes from this address (limit { $most } a minute); wait a minute
error-no-session = no session with code { $code }: it ended, or the code is mistyped
error-not-presenter = only the presenter moves the class: X-Presenter-Key is missing or wrong
error-session-ended = session { $code } ended
error-poll-full = this poll already has { $most } answers (max_session_answers)
error-poll-address-full = { $most } learners already answered from this address (session_answers_per_address)
error-voters-limited = this address has been given { $most } learner identities within { $window } s (voters_per_address): keep the cookie, or send the X-Voter the server gave

## Guessing a secret (app/guesses.py): what is guessed, then the two refusals

error-guess-keys = wrong keys
error-guess-admin-keys = wrong admin keys
error-guesses-per-address = too many { $what } from this address (limit { $most } a minute): wait a minute

## The guard in front of every route (app/security.py)

error-admin-key-needed = uploads, training and presenting on this server need the admin key: open the address `xt serve` printed (it ends in ?key=...) once in this browser, or send the X-Admin-Key header
error-admin-key-wrong = wrong admin key: open the exact address `xt serve` printed
error-host = this server answers to { $hosts } (its allowed hosts), not { $host }: whoever runs it can add a name with `xt serve --allowed-host NAME`
error-query-too-long = the query string is { $size } bytes, more than the limit of { $most } (max_query_bytes)
error-cross-site = a state-changing request must come from this server's own pages: it came from another site (Origin / Sec-Fetch-Site)
error-body-too-large = the body is { $size } bytes or more; this server takes at most { $most } ({ $setting })

## A busy server (app/traces/admission.py, app/services.py, app/traces/downloads.py): the reason, then when to retry

error-busy-retry = { $reason }; retry in about { $seconds } s
error-busy-jobs-running = the server is busy ({ $jobs } jobs running)
error-busy-jobs-queued = the server is busy ({ $jobs } jobs queued)
error-busy-client-queued = { $builds } builds of this client already wait ({ $setting } = { $most })
error-busy-client-downloads = this client's .npy downloads under way hold { $held } bytes and this one adds { $adds }, past { $setting } = { $most } bytes
error-busy-queue-full = the server is busy: { $builds } builds wait, the most the queue holds (max_queued_builds)
error-busy-queued-seconds = the server is busy: about { $queued } s of traces are queued and this one adds about { $adds } s, past the limit of { $most } s (max_queued_seconds)
