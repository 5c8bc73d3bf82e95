"""Recorded training runs (xt_core/film) as the server serves them: the runs in settings.runs_dir,
each read checked against its own size bound, answered a stretch of steps at a time."""
