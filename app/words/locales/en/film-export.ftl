# A recorded run's film exported as static files (`xt export --run`: app/export/film.py, static/js/film/exported.js; docs/export.md)
film-export-note = A static export of the film of the recorded run { $run }, computed once by xt's own code: it plays offline. { $count ->
        [0] No step's walkthrough is in it.
        [one] The walkthrough of one step opens from it: step { $steps }.
       *[other] The walkthroughs of { $count } steps open from it: steps { $steps }.
    } Another step's walkthrough, the heads' attention on a step's own batch, new text and training need the full app (make run, or xt serve --runs DIR, in a checkout of xt). This folder plays from a web server (python3 -m http.server in it will do): a browser refuses its scripts from file://, where the single file (xt export --run RUN --single-file FILE) plays.
film-export-note-single = A static export of the film of the recorded run { $run } in one file, computed once by xt's own code: it plays offline. No step's walkthrough opens from this file: an export as a directory (xt export --run RUN --out DIR) holds the walkthroughs of the run's checkpoints. The heads' attention on a step's own batch, new text and training need the full app (make run, or xt serve --runs DIR, in a checkout of xt).
film-export-step-note = The walkthrough of step { $step } of the recorded run { $run }, exported with the run's film, on { $seqs ->
        [one] the first sequence
       *[other] the first { $seqs } sequences
    } of the step's batch. Other steps, new text and training need the full app (make run, or xt serve --runs DIR, in a checkout of xt).
film-export-step-not-here = Step { $step } is not in this export: { $count ->
        [one] it holds the walkthrough of step { $steps } only.
       *[other] it holds the walkthroughs of steps { $steps }.
    } The full app opens every step.
film-export-no-steps = Step { $step } is not in this export: no step's walkthrough opens from it. The full app opens every step.
