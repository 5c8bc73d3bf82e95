"""One settings object: every limit the server enforces, overridable by XT_* environment
variables (e.g. XT_CACHE_BYTES=100000000)."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    # ---- what a spec may ask for
    max_seq_len: int = 256  # config.seq_len
    max_n_layer: int = 8
    max_n_head: int = 16
    max_n_embd: int = 512
    max_ffn_hidden: int = 2048
    max_vocab_size: int = 4096
    max_params: int = 8_000_000  # total parameter count of a random-init config
    max_n_seq: int = 4  # rows of `tokens`
    max_seed: int = 2**32 - 1
    # a trace's Trace.nbytes() (float32: with its float64 twin), estimated before building it:
    # class preset × 4 sequences ≈ 730 MB fits; every other limit at its maximum at once would not
    max_trace_bytes: int = 1 << 30
    # ---- server resources
    # every trace alive together (cached, in use by a request or a check job, or being built: the
    # sum of Trace.nbytes()); also the most one trace may hold. 1.5 GiB: a real model's trace
    # (up to 1.5 GB, app/checkpoints/real_models.py) fits
    cache_bytes: int = 3 << 29
    # of cache_bytes, what the process's cache of recomputed segments may hold (xt_core.recompute:
    # a trace keeps its layer boundaries and replays a layer when a view reads inside it); at
    # most a quarter of cache_bytes. SmolLM2's layer replayed at 32 positions is 3.2 MB, its head
    # 24 MB (and 14 MB, 108 MB more once their weights' gradients are read); at 256, 33 and 194 MB.
    recompute_bytes: int = 256 << 20
    # freed memory the allocator may keep for the next step, beside what the budget counts
    # (xt_core.memory.limit_freed_memory; a server idle gives it all back: app.traces.freed): a
    # notebook keeps up to 1.25x its largest step, which in a class's mix sat uncounted past the
    # stated bound (cache_bytes + 512 MB + the weights)
    kept_freed_bytes: int = 256 << 20
    # ... and its bound on steps (sum of len(Trace.records)): each cached step is ~5.5 Python
    # objects (its record, its tape node, their closures), ~1 KB beside the arrays Trace.nbytes
    # counts. A server freezes the traces it caches (TraceStore.freeze_cached), so no garbage
    # collection walks them. 40,000 holds a class of 30 students' own SmolLM2 traces (1,092
    # steps each); at 5,000 it held 4, and every other student's views rebuilt theirs (~7 s each).
    cache_steps: int = 40_000
    # CPU-heavy work runs in this many threads, off the event loop (plus one thread for jobs of a
    # few milliseconds). One: under 50 clients the server is GIL-bound at ~1 core either way, and
    # with two the event loop waits longer for the GIL (make loadtest: slowest /healthz 75-104 ms
    # with 2, 68-70 ms with 1, same requests per second; the cold spec's p50 1.5 -> 1.9 s).
    worker_threads: int = 1
    blas_threads: int = 1  # BLAS threads per worker: more oversubscribes the cores (measured ~9x slower)
    max_heatmap_cells: int = 20_000  # larger heatmaps are downsampled (with a note)
    max_figure_cells: int = 150_000  # all panels of one figure (every head of a layer) together
    # All heatmaps of one step view together (~5.3 bytes of base64 per float32 cell): with the
    # tables this keeps every step's JSON under max_step_bytes; head grids get a double share.
    max_step_cells: int = 40_000
    max_step_bytes: int = 300_000  # raw JSON of a step view; beyond, its cell budget halves until it fits
    max_head_cells: int = 65_536  # one enlarged head at full resolution (max_seq_len² = 256²)
    max_table_rows: int = 64  # the 'numbers' table of a figure shows at most this many rows
    max_table_cols: int = 16  # ... and columns
    # One page of a tensor's numbers (GET .../tensors/{name}/slice): rows and columns at most.
    max_slice_rows: int = 256
    max_slice_cols: int = 64
    max_top_k: int = 64  # tokens shown in the output softmax's Jacobian
    # Entries of one tensor GET .../tensors/{name}?format=json serializes (422 naming format=npy
    # beyond, checked before a list is made): 262,144 float32 entries are ~5 MB of JSON, 0.2 s to
    # encode and 0.3 s to gzip while holding the GIL (SmolLM2's 28.3 M-entry embedding would be 560 MB
    # and 25 s, +2.2 GB RSS, stalling every other request). The .npy format has no limit: it streams.
    max_json_tensor_entries: int = 1 << 18
    # Bytes of the .npy downloads under way for one client (its learner identity, else its address:
    # the build queue's client), counted by their arrays' sizes before any work. Each holds its array
    # in cache_bytes until its response ends (SmolLM2's embedding gradient: 113 MB), so a client
    # reading slowly, or never, holds at most this much; past it, a 429 + Retry-After (a client's
    # first download is never refused: app/traces/downloads.py). Small arrays barely count: a class
    # downloading a tiny spec's tensors all at once is not refused.
    max_download_bytes_per_client: int = 256 << 20
    # ... for an address without a learner identity, which may be a class behind one router (the page
    # asks no identity before a download): more; a client that drops its cookie holds at most this,
    # each array for at most download_send_timeout_seconds unread
    max_download_bytes_per_address: int = 512 << 20
    # A download's piece (1 MB) its client does not take within this ends the response (the
    # connection closes) and lets its bytes go: a reader that stops holds them this long, not forever.
    download_send_timeout_seconds: float = 30.0
    quiz_probes: int = 3  # gradient checks a quiz learner may run before answering (app/buglab/quiz.py)
    # New steps the learners of one client address may probe on one quiz together (app/buglab/probes.py):
    # one learner's worth, so identities (60 an hour an address) do not multiply probes. A class
    # behind one address (a NAT) sharing its class quiz raises it.
    quiz_probes_per_address: int = 3
    # The secret that turns a quiz's number into its fault (app.spec.faults.quiz_key). Empty: one
    # derived from admin_key, else this process's own; several workers of one class share it.
    quiz_secret: str = ""
    # Learner identities (app/sessions/voters.py: a quiz's probes and answer, a poll's vote)
    # issued to one client address per voter_window_seconds; beyond, a 429.
    voters_per_address: int = 60
    voter_window_seconds: int = 3600
    step_cache_bytes: int = 64 << 20  # finished step views (JSON), by trace id, step, seq and pos
    # Per-step gradient checks, by trace id and step: ~5 Python objects each that every full
    # garbage collection walks (see cache_steps); 8,192 of them would pause the loop ~70 ms.
    gradcheck_cache_entries: int = 2048
    # A model with more parameters answers a step view before its gradient check: the view's
    # `gradcheck` is {"pending": true} and GET .../steps/{index}/check answers the check (SmolLM2's
    # take 0.3-3 s, the first one with its float64 twin ~2 s: the cold trace's first view would
    # wait for it). Smaller models' views hold their check (milliseconds).
    view_check_max_params: int = 20_000_000
    # Specs remembered by trace id (an older id is a 404: POST the spec again): 2-3 KB each for
    # a text, ~48 KB for the largest spec (4 rows of 256 token ids): at most ~100 MB.
    max_specs: int = 2_000
    # CPU jobs queued or running in the worker pool; beyond this a request is refused at once
    # with 503 + Retry-After (an overloaded server, not a failure) instead of waiting minutes.
    max_pending_jobs: int = 256
    # ---- checkpoints and training from the page
    max_upload_bytes: int = 8 << 20  # an uploaded checkpoint file (413 beyond)
    max_upload_store_bytes: int = 1 << 30  # all stored uploads together (507 beyond; none is deleted)
    max_train_steps: int = 500  # spec.train_steps
    # ---- admission: a fair queue (app/traces/admission.py; estimates: app/spec/cost.py)
    # A build waits its turn (round robin over clients; the head waits for its bytes within
    # cache_bytes, nobody overtakes it). The queue is full past the estimated seconds of every
    # build waiting or running (a class of 30 SmolLM2 texts is ~100 s) or past max_queued_builds
    # waiting: then 503 + Retry-After. One client (its learner identity, else its address) may
    # have max_queued_per_client builds waiting; one more is 429.
    max_queued_seconds: float = 600.0
    max_queued_builds: int = 128
    max_queued_per_client: int = 3
    max_queued_per_address: int = 32  # requests without a learner identity: maybe a class behind one router
    # A build estimated within both is small: it may also take the small lane's own worker slot, so a
    # classmate's tiny spec never waits out a SmolLM2 build (seconds). The class preset is ~0.23 s
    # and 48 MB; SmolLM2's shortest text is over a second.
    small_build_seconds: float = 0.5
    small_build_bytes: int = 64 << 20
    # One spec's training (train_steps of it) estimated by the cost model calibrated on this class
    # of machine (benchmarks/cost_model.py): the README's "about 20 s of work" at most.
    max_train_seconds: float = 20.0
    # ---- requests (app/security.py: checked before anything is parsed)
    # A JSON body (413 beyond). The largest spec is ~12 kB (4 rows of 257 ids, 512 escaped
    # characters); parsing holds the GIL whatever thread does it (~50 ms a MB on a busy core).
    max_body_bytes: int = 256 << 10
    # A body must arrive within body_timeout_seconds plus a second for every min_body_bytes_per_second
    # received (app/bodies.py; uvicorn times out headers only): else a 408 and the connection closes.
    body_timeout_seconds: float = 10.0
    min_body_bytes_per_second: int = 4096
    max_query_bytes: int = 16 << 10  # a query string (a /walk permalink is a few kB; 414 beyond)
    # Host headers this server answers (any port; 400 otherwise: DNS rebinding). `xt serve
    # --allowed-host NAME` adds the classroom's name for the machine.
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
    # When set, uploads, training and presenting need it (X-Admin-Key header, or the cookie that
    # opening /?key=<it> sets). `xt serve` bound beyond loopback makes one up and prints it.
    admin_key: str = ""
    # The admin cookie's value: a random token, never the key itself. Empty: the app makes one
    # when it starts (so a restart signs every browser out); `xt serve` makes one for its workers.
    admin_token: str = ""
    # Wrong admin or presenter keys (app.guesses.GuessLimiter) per client address (an IPv6 /64) and
    # minute; beyond, a key from that address is a 429 (Retry-After) before it is compared. Nothing
    # is counted over all addresses together (a flood would fill it and refuse the teacher): the
    # keys are too long to guess at this rate from any number of addresses (docs/lessons.md).
    key_failures_per_minute: int = 10
    # ---- connections (app/connections.py; `xt serve` raises the open-file limit first)
    # Open connections and open event streams in all, 0: from the open-file limit (docs/lessons.md,
    # "Serving a class"); and per client address. Beyond a client's share: 429, beyond the total: 503.
    max_connections: int = 0
    max_streams: int = 0
    max_client_connections: int = 64
    max_client_streams: int = 16
    # A connection's request headers must arrive within this (from its opening, or from the end of
    # its previous answer); an idle kept-alive connection closes after keep_alive_seconds.
    header_timeout_seconds: float = 10.0
    keep_alive_seconds: int = 5
    # Addresses whose X-Forwarded-For / X-Forwarded-Proto uvicorn believes (a reverse proxy's),
    # comma-separated; empty: none, so a client cannot pick the address its limits count under.
    forwarded_allow_ips: str = ""
    # ---- paths
    templates_dir: Path = ROOT / "templates"
    static_dir: Path = ROOT / "static"
    shipped_models_dir: Path = ROOT / "xt_core" / "checkpoint" / "demos"  # demo checkpoints in the repo
    models_dir: Path = ROOT / "data" / "models"  # uploads, sha256-<hex>.safetensors (gitignored)
    # Models the person serving named (`xt serve --model PATH`, repeatable; XT_MODEL_PATHS joins
    # them with os.pathsep): listed by file name, never opened from a path a client sends.
    model_paths: tuple[Path, ...] = ()
    # ---- classroom sessions and lessons (app.sessions, app.lessons; docs/api.md "Sessions")
    lessons_dir: Path = ROOT / "lessons"  # *.toml, validated at startup and by `xt lesson check`
    # ---- recorded training runs (`xt train --record`, app.films; docs/film.md)
    runs_dir: Path = ROOT / "runs"  # a run is a folder here; GET /api/runs lists them
    max_run_points: int = 2000  # steps one GET /api/runs/{name} answers at most (a stretch and a stride)
    # ---- runs recorded from the page (POST /api/runs, app/recording/recordings.py; docs/film.md, "Recording
    # from the page"). They live here, never in runs_dir (shipped or served by the person serving), each
    # named by the server; GET /api/runs lists both folders. Writing needs the admin key beyond loopback.
    recorded_runs_dir: Path = ROOT / "data" / "runs"
    # Training steps one page recording trains at most: the docs' demo recipe (1,500 steps of the
    # induction task, batch 16), about 40 s of wall time on 2 shared cores (docs/film.md).
    max_record_steps: int = 1500
    # ... and its estimate by the cost model (app/spec/cost.py: a training step and the heads' probes
    # per step), so a task with longer sequences (text: 64 positions) records fewer steps. The demo
    # recipe is estimated at 177 s (the model covers the slowest machine of its class: ~5x this one).
    max_record_seconds: float = 180.0
    # One page run's bound on disk (its plan's max_bytes, checked before anything is written): the
    # shipped run's 5 MB, 1,500 steps with 4 checkpoints.
    max_record_bytes: int = 5_000_000
    # Page runs kept, and their bytes together: a new recording first removes the oldest page runs
    # (never runs_dir's) until it fits both ...
    max_recorded_runs: int = 8
    max_recorded_bytes: int = 40_000_000
    # ... but none younger than this (someone may be watching it): with no page run old enough to
    # remove, a new recording is a 503 + Retry-After (the seconds until the oldest may go).
    min_recorded_run_seconds: int = 600
    # Recordings under way at once on the server (one more: 503 + Retry-After), and for one client
    # (its learner identity, else its address: the build queue's client; one more: 429).
    max_recordings: int = 1
    max_recordings_per_client: int = 1
    # A recording enters the build queue a slice at a time, each slice estimated at about this many
    # seconds (at least one step): between two slices the other clients' builds take their turns
    # (round robin), and a small build always has its own lane (app/traces/admission.py).
    record_slice_seconds: float = 2.0
    # Empty: sessions live in this process. redis://host:port/db: in Redis (state keys with
    # expiry, pub/sub for events), so several workers or hosts serve one class.
    redis_url: str = ""
    # The join URL's origin as students should type it (e.g. http://192.168.1.20:8000); empty:
    # the origin the presenter's browser used.
    public_url: str = ""
    max_sessions: int = 200  # open sessions at once (a new one beyond: 503)
    session_idle_seconds: int = 4 * 3600  # a session nobody touched (presenter move, open stream) for this long is gone
    # Lookups of an unknown join code per client (an address, an IPv6 /64) and minute; beyond, every
    # lookup from it is a 429 until the minute ends. No bound over all clients together: a code has
    # 31^10 values, so 65,536 addresses guessing at this rate for a 4-hour class find one of
    # max_sessions codes with probability 7.7e-5 (docs/lessons.md, "Guessing: the arithmetic").
    join_failures_per_minute: int = 20
    max_session_answers: int = 1000  # poll answers kept per session (one per learner identity)
    # ... of which one client address gives at most this many (a class behind one NAT address
    # needs it above its size): one client cannot fill the poll and lock real students out.
    session_answers_per_address: int = 40
    sse_ping_seconds: int = 15  # keep-alive comment on every event stream (proxies close idle ones)
    # An open stream renews its follower entry this often; an entry not renewed for 2 beats and
    # 2 s (a worker killed mid-class) stops counting.
    follower_heartbeat_seconds: int = 5

    @classmethod
    def from_env(cls) -> Settings:
        overrides = {}
        for f in fields(cls):
            raw = os.environ.get(f"XT_{f.name.upper()}")
            if raw is not None:
                overrides[f.name] = _parse(f.type, raw)
        return cls(**overrides)


def _parse(kind: str, raw: str):
    """An XT_* value as its field's type (annotations are strings: `from __future__ import annotations`)."""
    if kind == "Path":
        return Path(raw)
    if kind == "float":
        return float(raw)
    if kind == "str":
        return raw
    if kind == "tuple[Path, ...]":  # paths may hold commas: joined like PATH
        return tuple(Path(part) for part in raw.split(os.pathsep) if part)
    if kind.startswith("tuple"):
        return tuple(part.strip() for part in raw.split(",") if part.strip())
    return int(raw)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings.from_env()
