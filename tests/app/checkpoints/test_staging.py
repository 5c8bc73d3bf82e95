"""An upload's staging (issue 24, finding 6): a full disk mid-upload is a 507 with nothing stored,
and a `.partial-*` staging directory a killed upload left is removed at the next start even when
another process now has the killed one's PID; one a live process is staging in is kept."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import time

import app.checkpoints.registry as registry_module
from app.checkpoints.registry import PARTIAL_PREFIX, STAGING_LOCK, ModelRegistry
from tests.app.checkpoints.test_checkpoints import checkpoint_bytes, upload
from tests.helpers.client import make_client
from xt_core.checkpoint import native


def _contents(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def test_a_full_disk_is_a_507_and_nothing_is_stored(tmp_path, monkeypatch):
    data = checkpoint_bytes(".safetensors", tmp_path, seed=51)
    uploads = tmp_path / "uploads"
    real_save = registry_module.save

    def full_disk_save(path, ckpt):
        with open(path, "wb") as f:
            f.write(b"half a file")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(registry_module, "save", full_disk_save)
    with make_client(models_dir=uploads) as client:
        response = upload(client, "m.safetensors", data)
        assert response.status_code == 507, response.text
        assert "disk" in response.json()["detail"] and "nothing was stored" in response.json()["detail"]
        assert _contents(uploads) == []  # no model, no staging directory
        monkeypatch.setattr(registry_module, "save", real_save)
        assert upload(client, "m.safetensors", data).status_code == 201  # space again: stored


def test_a_full_disk_while_the_upload_is_written_is_a_507_too(tmp_path, monkeypatch):
    data = checkpoint_bytes(".safetensors", tmp_path, seed=52)
    uploads = tmp_path / "uploads"

    def full_disk_write(path, payload):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(registry_module, "_write_synced", full_disk_write)
    with make_client(models_dir=uploads) as client:
        assert upload(client, "m.safetensors", data).status_code == 507
    assert _contents(uploads) == []


def _staging(directory, pid: int, with_lock: bool = True):
    path = directory / f"{PARTIAL_PREFIX}{pid}-{os.urandom(8).hex()}"
    path.mkdir(parents=True)
    (path / "upload.safetensors").write_bytes(b"part of an upload")
    if with_lock:
        (path / STAGING_LOCK).touch()
    return path


def test_a_killed_uploads_staging_is_removed_though_its_pid_lives_on(tmp_path):
    models = ModelRegistry(tmp_path, tmp_path / "shipped")
    # the killed upload's PID now names a live process (here: this one's parent): its lock is free
    reused = _staging(tmp_path, os.getppid())
    # a live upload in another process: it holds its staging directory's lock
    live = _staging(tmp_path, 999_999)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'w'); "
            "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)",
            str(live / STAGING_LOCK),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        removed = models.remove_stale_partials()
    finally:
        holder.kill()
        holder.wait()
    assert removed == [reused] and not reused.exists() and live.exists()
    assert models.remove_stale_partials() == [live]  # its process gone, the next start removes it


def test_a_staging_directory_without_a_lock_is_removed_once_older_than_this_process(tmp_path, monkeypatch):
    """Without a lock file (a process killed between making it and locking), a live PID is not
    enough to keep it: made before this process started, it is stale. This process started 5 minutes
    ago (a fake clock: a test worker of a long run may have started any time before)."""
    monkeypatch.setattr(registry_module, "_process_start_time", lambda: time.time() - 300)
    models = ModelRegistry(tmp_path, tmp_path / "shipped")
    before = _staging(tmp_path, os.getppid(), with_lock=False)
    old = time.time() - 600
    os.utime(before, (old, old))
    just_made = _staging(tmp_path, os.getppid(), with_lock=False)
    gone = _staging(tmp_path, 999_999_999, with_lock=False)  # no such process
    assert sorted(models.remove_stale_partials()) == sorted([before, gone])
    assert just_made.exists()


def test_staging_holds_its_lock_while_the_upload_is_checked(tmp_path, monkeypatch):
    data = checkpoint_bytes(".safetensors", tmp_path, seed=53)
    uploads = tmp_path / "uploads"
    seen = []
    real_load = native.load  # how the upload's file format (xt_core.checkpoint.formats: xt's row) reads it

    def load_and_look(path, limits=None):
        lock = path.parent / STAGING_LOCK
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("free")
        except BlockingIOError:
            seen.append("held")
        finally:
            os.close(fd)
        return real_load(path, limits=limits)

    monkeypatch.setattr(native, "load", load_and_look)
    with make_client(models_dir=uploads) as client:
        assert upload(client, "m.safetensors", data).status_code == 201
    assert seen == ["held"]
    assert [name for name in _contents(uploads) if name.startswith(PARTIAL_PREFIX)] == []
