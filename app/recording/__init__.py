"""Runs recorded from the page (POST /api/runs; docs/film.md, "Recording from the page"): the limits
a body is checked against before any work (limits.py) and the recordings under way, each a slice at a
time through the build queue (recordings.py). Above app.films (which reads runs) and app.services."""
