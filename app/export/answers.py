"""Every answer a walk page would ask the server for, asked of the app itself, in process.

The export drives the real app (app.main.create_app) through Starlette's TestClient: the same
routes, the same Answers (app.answers), the same sealing of a quiz, so an exported answer is
byte for byte what the server sends. What the page asks for is read from the answers themselves:

    the trace       POST /api/traces (the page's spec)
    each step       GET .../steps/{i}?seq=s  (every step, or a lesson's; every sequence up to MAX_SEQS)
    then, as the step's view offers them:
      its check     GET .../steps/{i}/check            when the view came before its check
      its heads     GET .../steps/{i}/head?figure&head&seq  every head of every grid of heads
      its Jacobian  GET .../jacobian?layer&head&pos&seq     every row of every head, while the export
                    holds at most MAX_JACOBIAN_ROWS; past it the page says "not in this export"
      its positions GET .../steps/{i}?seq&pos          the output softmax's identity figure per position
      its update    GET .../update?param               every parameter of the update step
    the checks      GET .../checks                     the chart of every step's check (not a lesson's)
    the precision   GET .../precision                  a bfloat16 or float16 step's numbers' health
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlencode

from app.export.keys import answer_key

MAX_SEQS = 4  # sequences of a batch exported (the page's sequence menu offers the others: not in this export)
MAX_JACOBIAN_ROWS = 512  # softmax rows (head × position × sequence) exported; the default walkthrough has 414

Progress = Callable[[int, int, str], None]  # (done, total, what)


class ExportError(Exception):
    """The app refused a request of the export (a bad spec, a lesson that does not exist)."""


@dataclass
class Collected:
    summary: dict
    answers: dict[str, bytes] = field(default_factory=dict)  # answer key -> the JSON body
    urls: dict[str, str] = field(default_factory=dict)  # answer key -> the URL asked (app.export.sealed asks again)
    left_out: list[str] = field(default_factory=list)  # what the export does not hold, in words
    lang: str = "en"  # the language every answer is asked in (`lang=`; the answers' keys drop it)

    @property
    def trace_id(self) -> str:
        return self.summary["id"]


class AppAnswers:
    """The app's answers by URL, each kept under its key (app.export.keys)."""

    def __init__(self, client, collected: Collected | None = None):
        self.client = client
        self.collected = collected

    def get(self, url: str, keep: bool = True, asked: str | None = None, refusable: bool = False) -> dict:
        """The answer to GET `url` (kept under its key), asked as `asked` when given (a URL with
        options that change when, not what, the app answers); a refusal (403) kept as one
        when `refusable` (a sealed quiz's chart of checks; a view the app itself refuses: the
        page then says what the app would)."""
        response = self.client.get(self._in_language(asked or url))
        if refusable and 400 <= response.status_code < 500:
            refusal = {"xt_export_refused": response.status_code, "detail": _detail(response)}
            self.collected.answers[answer_key(url)] = json.dumps(refusal, sort_keys=True).encode()
            self.collected.urls[answer_key(url)] = self._in_language(asked or url)
            return refusal
        return self._kept(url, response, keep, asked)

    def post(self, url: str, body: dict, keep: bool = True) -> dict:
        return self._kept(url, self.client.post(self._in_language(url), json=body), keep)

    def _in_language(self, url: str) -> str:
        """`url` asking for the answer's words in the export's language (app.deps.LangDep)."""
        lang = self.collected.lang if self.collected is not None else "en"
        return f"{url}{'&' if '?' in url else '?'}lang={lang}"

    def _kept(self, url: str, response, keep: bool, asked: str | None = None) -> dict:
        if response.status_code >= 400:
            raise ExportError(f"{url} answered {response.status_code}: {_detail(response)}")
        if keep and self.collected is not None:
            self.collected.answers[answer_key(url)] = response.content
            self.collected.urls[answer_key(url)] = self._in_language(asked or url)
        return response.json()


def _detail(response) -> str:
    """The person-readable message of a refusal (a string, or FastAPI's [{loc, msg}])."""
    try:
        detail = response.json().get("detail")
    except ValueError:
        return response.text[:300]
    if isinstance(detail, list):
        return "; ".join(f"{'.'.join(map(str, d.get('loc', [])[1:]))}: {d.get('msg')}" for d in detail)
    return str(detail)


def collect(
    client,
    spec: dict,
    steps: list[int] | None = None,
    progress: Progress | None = None,
    lang: str = "en",
    max_seqs: int = MAX_SEQS,
) -> Collected:
    """Every answer of the walk page of `spec` (only `steps`' views when given: a lesson's), in `lang`,
    of the batch's first `max_seqs` sequences (a run's step in its film's export: one)."""
    collected = Collected({}, lang=lang)
    app = AppAnswers(client, collected)
    summary = collected.summary = app.post("/api/traces", spec)
    base = f"/api/traces/{collected.trace_id}"
    indices = list(range(len(summary["steps"]))) if steps is None else sorted(set(steps))
    seqs = range(min(summary["n_seq"], max_seqs))
    if summary["n_seq"] > max_seqs:
        collected.left_out.append(f"sequences {max_seqs} to {summary['n_seq'] - 1} of the batch")
    if steps is not None:
        collected.left_out.append(f"the views of the {len(summary['steps']) - len(indices)} steps the lesson skips")
    views = [(index, seq) for seq in seqs for index in indices]
    derived: list[str] = []
    for done, (index, seq) in enumerate(views):
        view = app.get(f"{base}/steps/{index}?seq={seq}")
        derived.extend(_offered(base, view, summary, seq))
        _tell(progress, done + 1, len(views) + len(derived) + 1, f"step {index}")
    derived = _bounded_jacobians(derived, collected)
    for done, url in enumerate(derived):
        app.get(url, refusable=True)
        _tell(progress, len(views) + done + 1, len(views) + len(derived) + 1, url.rsplit("/", 1)[-1][:40])
    if summary["dtype"] in ("bfloat16", "float16"):  # the numbers' health the walk page's panels read
        app.get(f"{base}/precision", refusable=True)  # a quiz's is refused, and stays so
    if steps is None:  # the chart of every step's check (a lesson's export holds its steps' checks only)
        app.get(f"{base}/checks", asked=f"{base}/checks?wait=true", refusable=True)  # complete, not "so far"
    else:
        collected.left_out.append("the chart of every step's gradient check")
    _tell(progress, len(views) + len(derived) + 1, len(views) + len(derived) + 1, "checks")
    return collected


def _tell(progress: Progress | None, done: int, total: int, what: str) -> None:
    if progress is not None:
        progress(done, total, what)


def _offered(base: str, view: dict, summary: dict, seq: int) -> Iterator[str]:
    """The URLs a step's view lets the page ask for (the module's docstring)."""
    index = view["index"]
    if (view.get("gradcheck") or {}).get("pending"):
        yield f"{base}/steps/{index}/check"
    for figure in view.get("figures", []):
        if figure.get("heads"):
            for head in range(summary["config"]["n_head"]):
                yield f"{base}/steps/{index}/head?" + urlencode({"figure": figure["id"], "head": head, "seq": seq})
    if view.get("jacobian"):
        yield from _jacobian_rows(base, index, view["jacobian"], summary, seq)
    for param in (view.get("update") or {}).get("params", []):
        yield f"{base}/update?" + urlencode({"param": param["name"]})
    if summary["spec"]["faults"] and view["phase"] == "backward":  # planted bugs (a quiz's are sealed)
        yield f"{base}/steps/{index}/diff?seq={seq}"


def _jacobian_rows(base: str, index: int, jacobian: dict, summary: dict, seq: int) -> Iterator[str]:
    """Every row of the step's softmax (every head's), and for the output softmax the step's view
    at each position (its identity figure follows the row chosen)."""
    for pos in range(summary["T"]):
        if jacobian["kind"] == "output":
            yield f"{base}/jacobian?" + urlencode({"layer": "output", "pos": pos, "seq": seq})
            yield f"{base}/steps/{index}?" + urlencode({"seq": seq, "pos": pos})
            continue
        for head in range(summary["config"]["n_head"]):
            yield f"{base}/jacobian?" + urlencode({"layer": jacobian["layer"], "pos": pos, "seq": seq, "head": head})


def _bounded_jacobians(urls: list[str], collected: Collected) -> list[str]:
    """`urls` without the Jacobian rows past MAX_JACOBIAN_ROWS (said in collected.left_out)."""
    rows = [url for url in urls if "/jacobian?" in url]
    if len(rows) <= MAX_JACOBIAN_ROWS:
        return urls
    dropped = set(rows[MAX_JACOBIAN_ROWS:])
    collected.left_out.append(f"{len(dropped)} of {len(rows)} softmax Jacobian rows (it holds {MAX_JACOBIAN_ROWS})")
    return [url for url in urls if url not in dropped]
