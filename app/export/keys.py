"""Where an exported answer lives: the request the page would send, as a file name.

The page asks for `/api/traces/{id}/steps/3?seq=0`; an export holds the answer in the file
`answers/` + file_name(answer_key(...)) + `.json.gz`. static/js/lib/static_source.js computes the
same two functions from the URL the page requests (keep the two in step):

    answer_key   "/api/" dropped, "traces/{id}" -> "trace" (an export holds one trace), and the
                 query's pairs sorted by name: "trace/steps/3?pos=2&seq=0"; `lang` dropped
                 (an export holds one language: the page's, asked of the app by the export)
    file_name    every byte outside [A-Za-z0-9.-] of the key's UTF-8 as _XX (hex, upper case):
                 "trace_2Fsteps_2F3_3Fpos_3D2_26seq_3D0"
    bundle_of    answers asked for together share one file (gzip then finds what they repeat: the
                 default walkthrough's directory is 10% smaller): every position of one head's
                 Jacobian, every enlarged head of a step, the output softmax step's view at every
                 position. The bundle's key is "group:" and the key without the varying values;
                 None for an answer in a file of its own.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit

SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")


def answer_key(url: str) -> str:
    """The key of the answer to `url` (a path under /api/, with or without its query)."""
    parts = urlsplit(url)
    segments = [unquote(s) for s in parts.path.split("/")[2:]]  # after "" and "api"
    if segments[:1] == ["traces"]:
        segments = ["trace", *segments[2:]]
    pairs = sorted(pair for pair in parse_qsl(parts.query, keep_blank_values=True) if pair[0] != "lang")
    query = "&".join(f"{name}={value}" for name, value in pairs)
    return "/".join(segments) + (f"?{query}" if query else "")


def file_name(key: str) -> str:
    return "".join(chr(b) if b in SAFE else f"_{b:02X}" for b in key.encode())


_STEP = re.compile(r"^trace/steps/\d+$")
_HEAD = re.compile(r"^trace/steps/\d+/head$")


def bundle_of(key: str) -> str | None:
    path, _, query = key.partition("?")
    pairs = [pair.partition("=")[::2] for pair in query.split("&")] if query else []
    names = {name for name, _ in pairs}
    if path == "trace/jacobian":
        drop = {"pos"}
    elif _HEAD.match(path):
        drop = {"figure", "head"}
    elif _STEP.match(path) and "pos" in names:
        drop = {"pos"}
    else:
        return None
    kept = "&".join(f"{name}={value}" for name, value in pairs if name not in drop)
    return f"group:{path}?{kept}"
