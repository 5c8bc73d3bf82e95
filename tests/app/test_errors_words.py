"""The refusals a page shows, in the page's language (app/words/said.py, errors.ftl,
errors-server.ftl): English byte for byte as before the words layer, Russian with no English word
outside a stated allow-list, `loc` and `type` the same in both; the models' words (models.ftl);
numbers' marks from the catalogue, so a third language is a folder and a line."""

from __future__ import annotations

import pickle
import re

import pytest

from app import words
from app.checkpoints import model_words
from app.checkpoints.registry import registry
from app.errors import SpecError
from app.spec.core_words import core_said
from app.spec.presets import presets
from app.words import numbers
from app.words.said import Grouped, Said
from tests.helpers.client import make_client
from xt_core import Config
from xt_core.checkpoint.zoo import ZOO
from xt_core.text.byte_char import CharTokenizer

# Latin words a Russian refusal may hold: names (of models, formats, tools), protocol words and the
# spec's field names, which no Russian course translates.
ALLOWED = {
    "GET",
    "POST",
    "JSON",
    "RoPE",
    "xt",
    "SGD",
    "AdamW",
    "PyTorch",
    "nanoGPT",
    "pickle",
    "induction",
    "null",
    "true",
    "false",
}
ALLOWED |= {"name", "text", "tokens", "model", "config", "optimizer"}


def english_words(message: str, allowed: set[str] = ALLOWED) -> list[str]:
    """The Latin words of `message` that are not code (a quoted value, an identifier, a path, a number)."""
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", " ", message)
    tokens = (token.lstrip("(").rstrip(".,;:()[]{}…") for token in unquoted.split())
    return [token for token in tokens if re.fullmatch(r"[A-Za-z]{2,}", token) and token not in allowed]


@pytest.fixture(scope="module")
def client():
    with make_client(max_upload_bytes=1 << 12) as c:
        yield c


# (a spec refused, the field it names, its English refusal as xt wrote it before the words layer)
REFUSED = [
    ({"config": {"n_layer": 99}}, ["body", "config", "n_layer"], "n_layer must be between 1 and 8, got 99"),
    ({"config": {"n_embd": 30}}, ["body", "config", "n_embd"], "n_embd (30) must be divisible by n_head (4)"),
    ({"config": {"n_layer": "abc"}}, ["body", "config", "n_layer"], None),  # pydantic's own English
    (
        {"text": "x" * 5000},
        ["body", "text"],
        "the text gives at least 4,999 positions, more than the 256 a random init takes (max_seq_len = 256)",
    ),
    ({"model": "induction", "text": "привет"}, ["body", "text"], None),
    ({"model": "no-such-model"}, ["body", "model"], None),
    ({"train_steps": 10**6}, ["body", "train_steps"], "train_steps must be between 0 and 500 (max_train_steps), got 1000000"),
    ({"optimizer": 3}, ["body", "optimizer"], None),
    ({"text": "ab", "tokens": [1, 2]}, ["body", "tokens"], "give text or tokens, not both"),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "loc", "english"), REFUSED, ids=lambda v: str(v)[:40])
def test_a_refusal_reads_in_the_page_language_with_the_same_loc_and_type(client, spec, loc, english):
    answers = {lang: client.post(f"/api/traces?lang={lang}", json=spec) for lang in ("en", "ru")}
    assert {answer.status_code for answer in answers.values()} == {422}
    en, ru = (answers[lang].json()["detail"][0] for lang in ("en", "ru"))
    assert en["loc"] == ru["loc"] == loc and en["type"] == ru["type"]
    if english is not None:
        assert en["msg"] == english
    assert ru["msg"] != en["msg"] and english_words(ru["msg"]) == []
    assert re.search("[а-яё]", ru["msg"])


def test_the_language_comes_from_the_cookie_or_accept_language_too(client):
    spec = {"config": {"n_layer": 99}}
    by_header = client.post("/api/traces", json=spec, headers={"accept-language": "ru-RU,ru;q=0.9"}).json()
    assert by_header["detail"][0]["msg"] == "n_layer должно быть от 1 до 8, получено 99"
    plain = client.post("/api/traces", json=spec, headers={"accept-language": "de"}).json()
    assert plain["detail"][0]["msg"] == "n_layer must be between 1 and 8, got 99"


def test_the_example_of_the_home_form_a_char_model_refuses_names_its_alphabet_in_russian(client):
    detail = client.post("/api/traces?lang=ru", json={"model": "induction", "text": "привет"}).json()["detail"][0]
    assert detail["msg"] == (
        "символа 'п' в позиции 0 нет в словаре токенизатора модели 'induction'; её символы: 'abcdefghijklmnopqrstuvwxyz'"
    )


@pytest.mark.parametrize(
    ("filename", "data", "status", "english"),
    [
        (
            "model.pth",
            b"x",
            415,
            "'model.pth' is not a checkpoint type xt reads: send one of xt .safetensors or .npz, or llama2.c .bin, "
            "or nanoGPT .pt (a nanoGPT .pt is read without running its pickled code; other PyTorch .pth files are "
            "pickles and are never loaded)",
        ),
        ("big.safetensors", b"x" * 5000, 413, "the file is 0.0 MB; uploads are limited to 0.0 MB (max_upload_bytes)"),
    ],
)
def test_an_upload_refused_reads_in_the_page_language(client, filename, data, status, english):
    answers = {
        lang: client.post(f"/api/models?lang={lang}", files={"file": (filename, data, "application/octet-stream")})
        for lang in ("en", "ru")
    }
    assert {answer.status_code for answer in answers.values()} == {status}
    assert answers["en"].json()["detail"] == english
    assert english_words(answers["ru"].json()["detail"]) == []


def test_a_session_refusal_and_a_guard_refusal_read_in_russian(client):
    unknown = client.get("/api/sessions/ZZZZZZ?lang=ru")
    assert (
        unknown.status_code == 404
        and unknown.json()["detail"] == "занятия с кодом 'ZZZZZZ' нет: оно закончилось или код набран с ошибкой"
    )
    refused = client.post("/api/traces?lang=ru", json={}, headers={"origin": "https://elsewhere.example"})
    assert refused.status_code == 403 and refused.json()["detail"].startswith("запрос, меняющий состояние")


def test_a_said_is_its_english_keeps_its_values_and_crosses_processes():
    said = Said("error-config-params", params=Grouped(1234567), most=Grouped(1000))
    assert said == "this config has 1,234,567 parameters, more than the limit of 1,000"
    assert said.in_("ru") == "у этой конфигурации параметров: 1\xa0234\xa0567, а предел — 1\xa0000"
    error = pickle.loads(pickle.dumps(SpecError(("body", "config"), said)))
    assert error.loc == ("body", "config") and error.detail("ru")[0]["msg"] == said.in_("ru")


def test_the_known_xt_core_refusals_keep_xt_cores_english():
    """core_words maps a refusal only when the catalogue's English is xt_core's, word for word."""
    refusals = []
    for sizes in ({"n_embd": 30, "n_head": 4}, {"n_head": 4, "n_kv_head": 3}, {"n_embd": 12, "n_head": 4}):
        with pytest.raises(ValueError) as refused:
            Config(**sizes)
        refusals.append(str(refused.value))
    with pytest.raises(ValueError) as refused:
        CharTokenizer.from_text("abc").encode("abz")
    refusals.append(str(refused.value))
    mapped = [core_said(message) for message in refusals]
    assert all(isinstance(said, Said) for said in mapped) and mapped == refusals
    assert core_said("something xt_core says that no page shows") == "something xt_core says that no page shows"


def test_the_english_catalogue_of_the_models_is_their_files_own_words():
    """models.ftl's English is what the English page shows from the file's metadata or the zoo."""
    demos = {m["name"]: m for m in registry_listing() if m["kind"] == "demo"}
    for name, entry in demos.items():
        assert words.t("en", model_words.MODEL_MESSAGES[name]) == entry["description"]
    assert words.t("en", "model-smollm2-135m") == ZOO["smollm2-135m"].description


def registry_listing() -> list[dict]:
    from app.settings import get_settings

    return registry(get_settings()).listing()


def test_russian_models_and_presets_fit_their_tokenizers():
    ru = {m["name"]: model_words.model_in(m, "ru") for m in registry_listing()}
    for name in ("induction", "text"):  # char models: their examples stay in their alphabet, and say so
        assert ru[name]["examples"] and "латинск" in ru[name]["description"]
    smol = model_words.model_in({"name": "smollm2-135m", "kind": "real", "tokenizer_label": "x"}, "ru")
    assert all(re.search("[А-Яа-я]", text) for text in smol["examples"]) and smol["tokenizer_label"].startswith("BPE")
    class_text = next(p for p in presets("ru") if p["name"] == "class")["text"]
    assert re.search("[А-Яа-я]", class_text) and len(class_text.encode()) <= 128 + 1  # byte tokens, 128 positions
    assert [p["label"] for p in presets()] == ["tiny, 1 layer", "tiny, 2 layers", "class: 4 layers, width 256"]


def test_a_third_language_is_a_folder_and_a_line(tmp_path, monkeypatch):
    """German with a decimal comma: its catalogue folder and LANGUAGES, nothing in numbers.py or numbers.js."""
    for lang in ("en", "ru"):
        (tmp_path / lang).mkdir()
        for path in (words.LOCALES / lang).glob("*.ftl"):
            (tmp_path / lang / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "de").mkdir()
    for path in (words.LOCALES / "en").glob("*.ftl"):
        text = path.read_text(encoding="utf-8").replace("number-decimal-separator = .", "number-decimal-separator = ,")
        (tmp_path / "de" / path.name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(words, "LOCALES", tmp_path)
    monkeypatch.setattr(words, "LANGUAGES", ("en", "ru", "de"))
    for cached in (words.bundle, numbers.decimal_separator, numbers.group_separator):
        cached.cache_clear()
    try:
        assert numbers.format_number(2.5, "de") == "2,5" and numbers.format_number(2.5, "en") == "2.5"
    finally:
        for cached in (words.bundle, numbers.decimal_separator, numbers.group_separator):
            cached.cache_clear()


def test_translating_md_names_no_file_besides_the_catalogue():
    from tests.test_code_shape import ROOT

    guide = (ROOT / "docs" / "translating.md").read_text(encoding="utf-8")
    assert "DECIMAL_SEPARATOR" not in guide and "number-decimal-separator" in guide
    for formatter in ("app/words/numbers.py", "static/js/lib/numbers.js"):  # no language named in either
        assert not re.search(r"""\bru\b""", (ROOT / formatter).read_text(encoding="utf-8")), formatter


def test_the_home_form_shows_its_field_refusal_in_the_page_language(client):
    page = client.get("/walk?lang=ru&n_layer=99&text=abcabc").text
    assert 'id="error-n_layer" role="alert">n_layer должно быть от 1 до 8, получено 99</p>' in page
    english = client.get("/walk?lang=en&n_layer=99&text=abcabc").text
    assert 'id="error-n_layer" role="alert">n_layer must be between 1 and 8, got 99</p>' in english


def test_a_real_models_words_follow_the_page(stand_in_client):
    """SmolLM2 (its stand-in): the Tokenizer select names its BPE, and its examples are Russian on a Russian page."""
    page = stand_in_client.get("/?lang=ru&model=smollm2-135m&text=hello").text
    assert '<option value="bpe" data-model-tokenizer selected>BPE SmolLM2 (из файла модели)</option>' in page
    listed = stand_in_client.get("/api/models?lang=ru").json()["models"]
    smol = next(m for m in listed if m["name"] == "smollm2-135m")
    assert smol["examples"][0] == "Столица Франции — Париж. Столица Италии — Рим."
    english = next(
        m for m in stand_in_client.get("/api/models?lang=en").json()["models"] if m["name"] == "smollm2-135m"
    )
    assert english["examples"][0] == "The capital of France is Paris. The capital of Italy is Rome."


# The trace, tensor and session refusals (errors-traces.ftl): code a Russian one quotes as it is
TRACE_ALLOWED = ALLOWED | {"id", "seq", "layer", "rows", "at", "start", "stop", "shapes"}


@pytest.fixture(scope="module")
def trace_id(client):
    return client.post("/api/traces", json={}).json()["id"]


# (the path after the trace's, its status, `loc` (None: a 404's detail), its English as xt wrote it before)
TRACE_REFUSED = [
    ("steps/9999", 404, None, "step 9999 is out of range: this trace has steps 0 to {last}"),
    ("steps/0?seq=7", 422, ["query", "seq"], "seq must be between 0 and 0 (the trace has 1 sequence(s)), got 7"),
    ("jacobian?layer=9", 422, ["query", "layer"], "layer must be between 0 and 1 (the model has 2 layer(s)), got 9"),
    ("tensors/logits/slice?rows=abc", 422, ["query", "rows"], "rows must be \"start:stop\" (integers), got 'abc'"),
    ("tensors/logits/slice?rows=5:2", 422, ["query", "rows"], "rows must satisfy 0 <= start < stop <= 46, got 5:2"),
    ("tensors/logits/slice?at=0,0,0", 422, ["query", "at"], "at must give 1 index(es) for a tensor of shape [1, 46, 11], got 3"),
    ("tensors/logits/slice?find=qqq", 422, ["query", "find"], "no token 'qqq' along its token axes (B, T, V)"),
    ("tensors/nosuch/slice", 404, None, "no recorded tensor named 'nosuch' in trace {trace}"),
    ("tensors/tokens?grad=true", 404, None, "tokens are integer token ids: they have no gradient in trace {trace}; a step's `shapes` names the tensors it reads and writes"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "status", "loc", "english"), TRACE_REFUSED, ids=lambda v: str(v)[:40])
def test_a_trace_refusal_reads_in_russian_with_the_same_loc_and_type(client, trace_id, path, status, loc, english):
    joiner = "&" if "?" in path else "?"
    answers = {lang: client.get(f"/api/traces/{trace_id}/{path}{joiner}lang={lang}") for lang in ("en", "ru")}
    assert {answer.status_code for answer in answers.values()} == {status}
    details = {lang: answer.json()["detail"] for lang, answer in answers.items()}
    if loc is not None:
        assert [d["loc"] for d in details["ru"]] == [d["loc"] for d in details["en"]] == [loc]
        assert [d["type"] for d in details["ru"]] == [d["type"] for d in details["en"]]
        details = {lang: detail[0]["msg"] for lang, detail in details.items()}
    last = len(client.post("/api/traces", json={}).json()["steps"]) - 1
    assert details["en"] == english.format(trace=trace_id, last=last)
    assert details["ru"] != details["en"]
    assert english_words(details["ru"].replace(trace_id, ""), TRACE_ALLOWED) == [], details["ru"]


def test_an_unknown_trace_and_lesson_read_in_russian(client):
    unknown = {lang: client.get(f"/api/traces/nope/steps/0?lang={lang}") for lang in ("en", "ru")}
    assert unknown["en"].json()["detail"] == "unknown trace id 'nope'; POST its spec to /api/traces again"
    assert unknown["ru"].json()["detail"].startswith("неизвестный id трассы 'nope'")
    lesson = {lang: client.get(f"/api/lessons/nope?lang={lang}").json()["detail"] for lang in ("en", "ru")}
    assert lesson["en"] == "no lesson named 'nope'; GET /api/lessons lists them"
    assert lesson["ru"] == "урока с именем 'nope' нет; список уроков — GET /api/lessons"
    assert english_words(unknown["ru"].json()["detail"], TRACE_ALLOWED) == english_words(lesson["ru"]) == []


def test_a_session_mistake_reads_in_russian():
    from app.sessions import rules

    fields = {"limits": {"backward": [40, 41, 42], "n_steps": 84, "n_layer": 2, "n_head": 4, "T": 46}, "lesson": None}
    with pytest.raises(SpecError) as not_backward:
        rules.check_answer(3, fields)
    assert not_backward.value.msg == "step 3 is not a backward step: the bug is in one of steps 40 to 42"
    with pytest.raises(SpecError) as too_far:
        rules._between(("jacobian", "head"), 9, 4, Said("error-why-the-model-heads"))
    assert too_far.value.msg == "head must be between 0 and 3 (the model's heads), got 9"
    for refusal, russian in (
        (not_backward, "шаг 3 — не шаг обратного прохода: ошибка в одном из шагов с 40 по 42"),
        (too_far, "head должно быть от 0 до 3 (головы внимания модели), получено 9"),
    ):
        assert refusal.value.detail("ru")[0]["msg"] == russian
        assert refusal.value.detail("ru")[0]["loc"] == refusal.value.detail("en")[0]["loc"]
