# Recorded training runs (app/films/runs.py, GET /api/runs/{name}; docs/film.md)
film-error-unknown-run = no recorded run named { $name } on this server (its runs: { $known })
film-error-unreadable-run = the recorded run { $name } cannot be read: its files are damaged or larger than its stated limit
film-error-stride = stride must be at least { $least } to show the steps from { $start } up to { $stop }, not included (one answer holds at most { $most } steps), got { $value }
