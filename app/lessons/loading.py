"""The checked lessons of settings.lessons_dir (app.lessons.catalogue checks each file), cached
until a file changes."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.lessons.catalogue import Lesson, LessonError, TraceFor, check
from app.lessons.run_lesson import RunAbsent
from app.settings import Settings
from app.traces.store import build_trace

log = logging.getLogger("xt.lessons")


@dataclass
class Catalogue:
    """The lessons that checked out, by name, and the files that did not (each LessonError)."""

    lessons: dict[str, Lesson] = field(default_factory=dict)
    errors: list[LessonError] = field(default_factory=list)


_cache: dict[tuple, Catalogue] = {}
_lock = threading.Lock()


def _signature(directory: Path) -> tuple:
    files = sorted(directory.glob("*.toml")) if directory.is_dir() else []
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)


def load_all(settings: Settings, trace_for: TraceFor = build_trace) -> Catalogue:
    """Every lesson file of settings.lessons_dir, checked. Cached until a file changes (the
    uploads directory aside, the settings are part of the key: limits decide what is valid)."""
    key = (replace(settings, models_dir=Path()), _signature(settings.lessons_dir))
    with _lock:
        if key not in _cache:
            catalogue = Catalogue()
            for path in sorted(settings.lessons_dir.glob("*.toml")) if settings.lessons_dir.is_dir() else []:
                try:
                    catalogue.lessons[path.stem] = check(path, settings, trace_for)
                except RunAbsent as exc:  # a run lesson on a server without its run: not the file's fault
                    log.info("lesson %s not offered: %s", path.stem, "; ".join(exc.problems))
                except LessonError as exc:
                    catalogue.errors.append(exc)
                except Exception as exc:  # one file must never stop the server: it is left out
                    log.exception("lesson %s could not be checked", path)
                    catalogue.errors.append(LessonError(path, [f"could not be checked: {type(exc).__name__}: {exc}"]))
            if len(_cache) > 16:
                _cache.clear()
            _cache[key] = catalogue
        return _cache[key]
