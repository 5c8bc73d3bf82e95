"""`xt export` (app/export): every answer the page asks for is in the files, the same spec gives
the same bytes, a lesson exports only its steps, a quiz names no fault anywhere."""

from __future__ import annotations

import base64
import gzip
import json
import re

import numpy as np
import pytest

from app.export.keys import answer_key, bundle_of, file_name
from tests.helpers.export import LESSON, exported_texts, settings_with_lesson


def _answers(export) -> dict[str, object]:
    """The single file's answers by key (the directory's hold the same: test_determinism)."""
    return json.loads(exported_texts(export)["single file's answers"])


def test_keys_name_a_request_as_the_page_asks_it():
    url = "/api/traces/abc/steps/3/head?seq=0&head=1&figure=output.layers.0.attention.probs"
    key = answer_key(url)
    assert key == "trace/steps/3/head?figure=output.layers.0.attention.probs&head=1&seq=0"
    assert file_name(key) == "trace_2Fsteps_2F3_2Fhead_3Ffigure_3Doutput.layers.0.attention.probs_26head_3D1_26seq_3D0"
    assert bundle_of(key) == "group:trace/steps/3/head?seq=0"
    assert bundle_of(answer_key("/api/traces/abc/jacobian?layer=0&pos=4&seq=0&head=1")) == (
        "group:trace/jacobian?head=1&layer=0&seq=0"
    )
    assert bundle_of("trace/steps/3?seq=0") is None
    assert answer_key("/api/traces") == "trace" and answer_key("/api/lessons/x") == "lessons/x"


def test_the_export_holds_every_answer_the_page_asks_for(small_export):
    answers = _answers(small_export)
    assert {f"trace/steps/{i}?seq=0" for i in range(small_export.steps)} <= answers.keys()
    summary = answers["trace"]
    assert summary["id"] == small_export.trace_id and len(summary["steps"]) == small_export.steps
    probs = next(s["index"] for s in summary["steps"] if s["name"] == "layers.0.attention.probs")
    T, n_head = summary["T"], summary["config"]["n_head"]
    rows = {k for k in answers if k.startswith("trace/jacobian?") and "layer=0" in k}
    assert len(rows) == T * n_head  # every row of every head
    assert f"trace/steps/{probs}/head?figure=output.layers.0.attention.probs&head=1&seq=0" in answers
    assert answers["trace/checks"]["complete"] is True
    lesson = answers[f"lessons/{LESSON}"]
    assert lesson["steps"][0]["narration"].startswith("Point at the rows")
    assert [entry["name"] for entry in answers["lessons"]["lessons"]] == [LESSON]
    # every answer is the app's own JSON: a step view has its figures and its check
    view = answers[f"trace/steps/{probs}?seq=0"]
    assert view["figures"] and view["gradcheck"]["passed"] is True
    # none is a refusal: the output softmax's rows of a 4-token vocabulary too (the page sends no top_k)
    assert [key for key, answer in answers.items() if "xt_export_refused" in answer] == []
    output_rows = [answers[k] for k in answers if k.startswith("trace/jacobian?layer=output")]
    assert len(output_rows) == T and all(len(row["indices"]) == summary["config"]["vocab_size"] for row in output_rows)


def test_the_single_file_loads_nothing(small_export):
    page = small_export.single.read_text(encoding="utf-8")
    loads = re.findall(r'<(?:script|link|img|iframe|source)\b[^>]*?\b(?:src|href)="([^"]*)"', page)
    assert loads and [url for url in loads if not url.startswith("data:")] == []
    assert "/api/" not in re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)


def test_the_same_spec_gives_byte_identical_files(small_export, tmp_path):
    from tests.helpers.export import export_small

    again = export_small(tmp_path)
    first = {
        p.relative_to(small_export.directory): p.read_bytes() for p in small_export.directory.rglob("*") if p.is_file()
    }
    second = {p.relative_to(again.directory): p.read_bytes() for p in again.directory.rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert [name for name in first if first[name] != second[name]] == []
    assert small_export.single.read_bytes() == again.single.read_bytes()


def test_a_lesson_exports_its_steps_only_and_tensors_as_npy(tmp_path, monkeypatch, capsys):
    import xt_cli
    from app.settings import get_settings

    monkeypatch.setenv("XT_LESSONS_DIR", str(settings_with_lesson(tmp_path).lessons_dir))
    get_settings.cache_clear()
    try:
        assert xt_cli.main(["export", "--lesson", LESSON, "--out", str(tmp_path / "lesson"), "--tensors"]) == 0
    finally:
        get_settings.cache_clear()
    assert "not in this export: the views of the" in capsys.readouterr().out
    answers = tmp_path / "lesson" / "answers"
    lesson = json.loads(gzip.decompress((answers / f"{file_name('lessons/' + LESSON)}.json.gz").read_bytes()))
    views = {p.name for p in answers.iterdir() if re.fullmatch(r"trace_2Fsteps_2F\d+_3Fseq_3D0\.json\.gz", p.name)}
    keys = [f"trace/steps/{step['index']}?seq=0" for step in lesson["steps"]]
    assert views == {f"{file_name(key)}.json.gz" for key in keys}
    probs = np.load(tmp_path / "lesson" / "tensors" / "layers.0.attention.probs.grad.npy")  # --tensors
    assert probs.shape == (1, 2, 7, 7) and probs.dtype == np.float32
    manifest = json.loads(
        re.search(r'id="xt-export">([^<]+)<', (tmp_path / "lesson" / "index.html").read_text()).group(1)
    )
    assert manifest["lesson"] == LESSON and manifest["step"] == lesson["steps"][0]["index"]
    assert manifest["steps"] == [step["index"] for step in lesson["steps"]]  # the page asks for no other


def test_a_quiz_export_names_no_fault_and_shows_no_verdict(quiz_export):
    from app import words
    from app.buglab.catalogue import description
    from xt_core.lab.faults import CATALOGUE

    texts = exported_texts(quiz_export)
    secrets = [
        *CATALOGUE,
        *(description(f, lang) for f in CATALOGUE.values() for lang in words.LANGUAGES),
        *(f.faulty for f in CATALOGUE.values()),
    ]
    # the catalogue it carries (#xt-words) is the same in every export: it words every fault alike,
    # the hidden one among them, so it tells nothing; everything else must name none
    catalogue = re.compile(r'<script type="application/json" id="xt-words">(.*?)</script>', re.S)
    carried = [match for text in texts.values() for match in catalogue.findall(text)]
    assert carried and all(all(name in words_ for name in CATALOGUE) for words_ in carried)
    data = {name: catalogue.sub("", text) for name, text in texts.items()}
    found = [(name, secret[:40]) for name, text in data.items() for secret in secrets if secret in text]
    assert found == []
    data = {name: text for name, text in data.items() if not name.startswith("static/")}
    verdicts = ['"passed":false', '"passed": false', '"ok":', "check failed", "✗"]
    assert [(name, v) for name, text in data.items() for v in verdicts if v in text] == []
    answers = json.loads(texts["single file's answers"])
    assert answers["trace/checks"]["xt_export_refused"] == 403  # the chart of checks: only after answering
    assert all(
        v["gradcheck"] == {"sealed": True} for k, v in answers.items() if re.fullmatch(r"trace/steps/\d+\?seq=0", k)
    )
    box = answers["trace/quiz/sealed"]
    assert len(set(map(len, box["answers"].values()))) == 1  # every answer's blob one length


@pytest.mark.parametrize("spec", [{"text": "ab", "model": "nope"}])
def test_a_bad_spec_is_an_export_error(spec, tmp_path):
    from app.export import ExportError, export

    with pytest.raises(ExportError, match="model"):
        export(spec, out=tmp_path / "x")


def test_a_russian_export_carries_its_catalogue_and_fluent(russian_export):
    """`xt export --lang ru`: the page is Russian and holds what its script reads (no server to ask):
    the Russian catalogue in #xt-words, @fluent/bundle inlined, Plotly's ru locale."""
    page = russian_export.read_text(encoding="utf-8")
    assert '<html lang="ru">' in page
    words = json.loads(re.search(r'<script type="application/json" id="xt-words">(.*?)</script>', page, re.S).group(1))
    assert words["lang"] == "ru" and "js-nav-counter-step = шаг { $number }" in words["ftl"]
    import_map = json.loads(re.search(r'<script type="importmap">(.*?)</script>', page, re.S).group(1))["imports"]
    assert "xt/vendor/fluent/index.js" in import_map and "xt/js/lib/words.js" in import_map
    words_module = base64.b64decode(import_map["xt/js/lib/words.js"].split(",", 1)[1]).decode()
    assert 'from "xt/vendor/fluent/index.js"' in words_module and 'from "/vendor/fluent/' not in words_module
    say = base64.b64decode(import_map["xt/js/lib/say.js"].split(",", 1)[1]).decode()
    assert 'import("xt/js/lib/words.js")' in say  # a data: URL module resolves no relative import
    assert 'name:"ru"' in page and "Plotly.register" in page  # Plotly's locale, inlined


def test_the_lang_is_not_part_of_an_answers_key():
    """An export holds one language: the page's `lang=` names the same file in every language."""
    assert answer_key("/api/traces/abc/steps/3?seq=0&lang=ru") == answer_key("/api/traces/abc/steps/3?seq=0")


def test_show_in_a_notebook_passes_its_language_to_the_export(monkeypatch):
    import app.export
    from app import notebook

    asked = {}

    def export(**kwargs):
        asked.update(kwargs)
        return app.export.Exported("t", 1, 1, html="<p>page</p>")

    monkeypatch.setattr(app.export, "export", export)
    assert notebook.show({"text": "ab"}, lang="ru").page == "<p>page</p>"
    assert asked["lang"] == "ru" and notebook.show({"text": "ab"}) and asked["lang"] == "en"


def test_a_low_precision_export_holds_its_numbers_health(tmp_path):
    """The walk page's precision panels read GET .../precision: the export answers it too."""
    from app.export import export

    config = {"n_layer": 1, "n_head": 2, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24, "seq_len": 16}
    done = export(spec={"config": config, "text": "the cat sat", "dtype": "bfloat16"}, out=tmp_path / "bf16")
    held = json.loads(gzip.decompress((tmp_path / "bf16" / "answers" / "trace_2Fprecision.json.gz").read_bytes()))
    assert held["dtype"] == "bfloat16" and held["tensors"] and held["first_losing"] is None
    assert "xt_export_refused" not in held and done.left_out == []
