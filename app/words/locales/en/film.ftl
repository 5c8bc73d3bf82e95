# Recorded training runs (app/films/runs.py, GET /api/runs/{name}; docs/film.md)
film-error-unknown-run = no recorded run named { $name } on this server (its runs: { $known })
film-error-unreadable-run = the recorded run { $name } cannot be read: its files are damaged or larger than its stated limit
film-error-stride = stride must be at least { $least } to show the steps from { $start } up to { $stop }, not included (one answer holds at most { $most } steps), got { $value }
# A recorded run's step as a spec (app/spec/run_step.py: {"run": NAME, "run_step": s})
film-error-run-alone = { $field } cannot be changed with run: a recorded run's step takes only run and run_step (the run fixes the model, the weights, the batch and the optimizer)
film-error-run-changed = the run { $run } was recorded again since this page was made: its step { $step } holds other weights now (open it again from the run)
film-error-run-missing = run_step needs run: the name of a recorded run (GET /api/runs)
film-error-run-step-missing = run needs run_step: the step to open, from 0 to { $last }
# The walk page's summary of a run's step (templates/_walk_summary.html)
film-summary-run = step { $step } of the recorded run { $run }
