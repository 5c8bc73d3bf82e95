"""Lessons: a path of key steps through a walkthrough, each with a takeaway, narration, figure
annotations and a cue to the next, as plain TOML files a teacher edits (docs/lessons.md).

`schema` is the file's shape, `geometry` where an annotation lands on a figure, `catalogue`
reading and checking the files against the traces their specs build.
"""

from app.lessons.catalogue import Lesson, LessonError, check
from app.lessons.loading import Catalogue, load_all

__all__ = ["Catalogue", "Lesson", "LessonError", "check", "load_all"]
