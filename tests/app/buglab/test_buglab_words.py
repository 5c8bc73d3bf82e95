"""The bug lab's words in both languages (app/words/locales/<lang>/buglab.ftl): every fault of the
catalogue has its name and description there, and why it cannot apply where it may not, keyed by
its id (xt_core keeps only its structure); English reads as before the move; the catalogue, the
home form's choices and the faulty-vs-correct comparison read in Russian with no English word
outside the code they quote."""

from __future__ import annotations

import re

import pytest

from app import words
from app.buglab import views
from app.buglab.catalogue import description, fault_words
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.steps.context import TraceContext
from app.traces.store import build_trace
from tests.app.words.test_catalogues import messages
from tests.helpers.client import make_client
from tests.helpers.specs import SMALL_SPEC
from xt_core import Config
from xt_core.lab.faults import CATALOGUE

SIZES = {"vocab_size": 8, "n_layer": 1, "n_head": 2, "n_kv_head": 2, "n_embd": 8, "ffn_hidden": 8, "seq_len": 4}
NEITHER = Config(**SIZES, tie_embeddings=False)
# GPT-2 with every bias: where Llama's faults (RMSNorm, RoPE, SwiGLU, a plain linear) cannot apply
NEITHER_GPT2 = Config(**SIZES, tie_embeddings=False, family="gpt2")


@pytest.mark.parametrize("lang", words.LANGUAGES)
def test_every_fault_and_only_a_fault_has_its_words(lang):
    found = {key: message for key, message in messages(lang).items() if key.startswith("buglab-fault-")}
    assert set(found) - {"buglab-fault-option"} == {fault_words(name) for name in CATALOGUE}
    for name, fault in CATALOGUE.items():
        attributes = {a.id.name for a in found[fault_words(name)].attributes}
        refused = fault.requires(NEITHER) or fault.requires(NEITHER_GPT2)
        assert attributes == ({"description", "reason"} if refused else {"description"}), name


def test_english_reads_as_it_did():
    assert description(CATALOGUE["batch_mean_twice"]) == (
        "The mean over the N positions is applied twice: every gradient is N times too small."
    )
    with make_client() as client:
        listed = client.get("/api/faults", params={"n_head": 4, "n_kv_head": 4, "tie_embeddings": "false"}).json()
    tied = next(f for f in listed["faults"] if f["name"] == "tied_embedding_one_contribution")
    assert (
        tied["reason"] == "needs tied embeddings (tie_embeddings = true)" == CATALOGUE[tied["name"]].requires(NEITHER)
    )
    [option] = [o for o in views.picker_options() if o["name"] == "batch_mean_twice"]
    assert option["label"].startswith("batch mean twice — in: ")


# code the descriptions quote (p * dp, silu'(gate)) and names no language translates
ALLOWED = {
    "CE",
    "softmax",
    "silu'",
    "RoPE",
    "RMSNorm",
    "SwiGLU",
    "FFN",
    "LM",
    "Softmax",
    "GQA",
    "xhat",
    "dxhat",
    "mean",
    "sum",
    "diag",
    "sqrt",
}
ALLOWED |= {"head", "silu", "gate", "dres", "dx", "dh", "dp", "dW", "dY", "wq", "rms", "hd", "kv", "true", "dL"}
# GPT-2's faults: the family values and names a config writes, and the bias they break
ALLOWED |= {"family", "llama", "gpt2", "GPT", "LayerNorm", "b2"}
LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_'.]*[A-Za-z0-9_']|[A-Za-z]")  # a recorded name whole


def english(text: str) -> list[str]:
    return [w for w in LATIN.findall(text) if len(w) > 1 and w not in ALLOWED and not {"_", "."} & set(w)]


def test_the_catalogue_and_the_home_form_in_russian():
    with make_client() as client:
        listed = client.get("/api/faults", params={"lang": "ru", "tie_embeddings": "false"}).json()["faults"]
    texts = [f["description"] for f in listed] + [f["reason"] for f in listed if f["reason"]]
    texts += [words.t("ru", fault_words(name)) for name in CATALOGUE]
    assert {text: english(text) for text in texts if english(text)} == {}
    assert [f["description"] for f in listed] != [description(fault) for fault in CATALOGUE.values()]
    assert next(f for f in listed if f["name"] == "tied_embedding_one_contribution")["reason"].startswith("нужны")
    [option] = [o for o in views.picker_options("ru") if o["name"] == "batch_mean_twice"]
    assert option["label"].startswith("среднее по батчу дважды — в шаге: ")


def _ctx(spec: dict) -> TraceContext:
    settings = Settings()
    resolved = resolve(TraceSpec.model_validate(spec), settings)
    return TraceContext(resolved, build_trace(resolved), settings)


def test_the_comparison_with_the_correct_backward_in_both_languages():
    faulty, correct = _ctx({**SMALL_SPEC, "faults": ["softmax_missing_sum_term"]}), _ctx(SMALL_SPEC)
    broken = next(r.index for r in faulty.trace.records if r.name.endswith("attention.probs") and r.phase == "backward")
    en, ru = views.diff_view(faulty, correct, broken, 0), views.diff_view(faulty, correct, broken, 0, "ru")
    assert "this op's backward is the broken one" in en["verdict"]
    assert ru["verdict"].endswith("сломан обратный проход этой операции.") and not english(ru["verdict"])
    assert en["figures"][0]["title"].endswith("the gradient arriving: faulty vs correct")
    assert ru["figures"][0]["title"].endswith("пришедший градиент: ошибочный против верного")
    assert (
        "Числа: ошибочный − верный." in ru["figures"][1]["note"]
        and "Numbers: faulty − correct." in en["figures"][1]["note"]
    )
    assert [f["table"] for f in ru["figures"]] == [f["table"] for f in en["figures"]]  # the same numbers


def test_the_reveal_names_the_gradient_the_correct_line_reads():
    """The reveal shows the correct line beside the description: both name one gradient (issue 34:
    "(dres) instead of dx" beside `linear_backward(dh)`)."""
    import re

    from app import words
    from app.buglab.catalogue import description
    from xt_core.lab.faults import CATALOGUE

    fault = CATALOGUE["attention_out_reads_dres"]
    read = re.search(r"linear_backward\((\w+)\)", fault.correct).group(1)
    for lang in words.LANGUAGES:
        assert re.search(rf"\b{read}\b", description(fault, lang)), (lang, read)
        assert "dx" not in description(fault, lang)
