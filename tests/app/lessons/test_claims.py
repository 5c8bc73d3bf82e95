"""A lesson's claims are checked against the trace: each kind holds on a true instance and
refuses the lesson on a false one, with a message naming the file, the step, the claim and the
measured value; `xt lesson check` and the startup loader refuse a planted false claim; the text
is filled from what the claims measured; the shipped lessons' claims hold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.lessons import LessonError, check, load_all
from app.settings import Settings
from app.traces.store import build_trace
from tests.helpers.client import make_client
from xt_cli import main

ROOT = Path(__file__).resolve().parents[3]
INDUCTION = 'model = "induction"\ntext = "xkqvbmxkqvbmxkqvbmxkqvbm"'
TEXT = 'model = "text"\ntext = "the cat sat on the mat."'
TEXT16 = 'model = "text"\ntext = "the cat sat on the mat. the dog sat on the log."\ndtype = "float16"'
SCORES = 'tensor = "layers.1.attention.scores"\n  '


def lesson(spec: str, name: str, phase: str, claim: str, narration: str = "measured {c}") -> str:
    """A one-step lesson whose step states one claim named c."""
    return f"""title = "One claim"
[spec]
{spec}
[[steps]]
name = "{name}"
phase = "{phase}"
takeaway = "one claim"
narration = "{narration}"
  [[steps.claims]]
  id = "c"
  {claim}
"""


def checked(tmp_path: Path, text: str):
    path = tmp_path / "claimed.toml"
    path.write_text(text)
    return check(path, Settings(), build_trace)


STRIPE = 'kind = "stripe"\n  tensor = "layers.1.attention.probs"\n  head = 1\n  offset = -5\n  from = 7\n  '
VALUE_L = 'kind = "value"\n  tensor = "tok_embeddings"\n  of = "contribution"\n  at = ["l"]\n  reduce = "norm"\n  '
TWICE = 'faults = ["softmax_ce_normalized_twice"]\n  '
TIED = 'faults = ["tied_embedding_one_contribution"]\n  '

# (spec, step, phase, a true claim, the same claim made false, what the refusal says was measured)
KINDS = {
    "stripe": (
        INDUCTION,
        "layers.1.attention.probs",
        "forward",
        STRIPE + "min_weight = 0.55",
        STRIPE + "min_weight = 0.7",
        "least weight 0.599",
    ),
    "target_probability": (
        INDUCTION,
        "output_probs",
        "loss",
        'kind = "target_probability"\n  above = 0.8\n  from = 7',
        'kind = "target_probability"\n  above = 0.8\n  from = 6',
        "from position 7 on (at least 0.868); before it at most 0.266",
    ),
    "argmax": (
        INDUCTION,
        "logits",
        "forward",
        'kind = "argmax"\n  tensor = "logits"\n  at = [0, -1]\n  equals = "m"',
        'kind = "argmax"\n  tensor = "logits"\n  at = [0, -1]\n  equals = "x"',
        "it is m (5.66)",
    ),
    "gradcheck": (
        TEXT,
        "output_probs",
        "backward",
        TWICE + 'kind = "gradcheck"\n  step = "output_probs"\n  passes = false',
        TWICE + 'kind = "gradcheck"\n  step = "output_probs"\n  passes = true',
        "it fails: rel. error 0.66",
    ),
    "failing_steps": (
        TEXT,
        "logits",
        "backward",
        TIED + 'kind = "failing_steps"\n  only = ["logits"]',
        TIED + 'kind = "failing_steps"\n  only = ["embedding"]',
        "failing: logits (first: rel. error 1)",
    ),
    "identity": (
        TEXT,
        "output_probs",
        "backward",
        'kind = "identity"\n  max = 1e-6',
        TWICE + 'kind = "identity"\n  max = 1e-6',
        "it is 0.0357",
    ),
    "value": (TEXT, "logits", "backward", VALUE_L + "min = 0.145", VALUE_L + "max = 0.1", "it is 0.149"),
    # float16 without a loss scale: the first tensor past the rule, 1.25 % of it flushed to zero
    "precision": (
        TEXT16,
        "layers.1.attention.scores",
        "backward",
        'kind = "precision"\n  ' + SCORES + 'measure = "flushed"\n  min = 0.01',
        'kind = "precision"\n  ' + SCORES + 'measure = "flushed"\n  max = 0.01',
        "it is 0.0125",
    ),
    "first_losing": (
        TEXT16,
        "layers.1.attention.scores",
        "backward",
        'kind = "first_losing"\n  first = "layers.1.attention.scores"',
        'kind = "first_losing"\n  first = "none"',
        "the first is dL/dlayers.1.attention.scores",
    ),
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_holds_when_true_and_refuses_when_false(tmp_path, kind):
    spec, name, phase, true, false, measured = KINDS[kind]
    good = checked(tmp_path, lesson(spec, name, phase, true))
    [shown] = good.steps[0]["claims"]
    assert shown["kind"] == kind and shown["id"] == "c"
    assert shown["measured"] and shown["against"].startswith("this trace")
    with pytest.raises(LessonError) as caught:
        checked(tmp_path, lesson(spec, name, phase, false))
    message = str(caught.value)
    assert message.startswith(f"claimed.toml: steps[0] ({name}, {phase}): claims[0] ({kind} 'c') is false against")
    assert measured in message


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        (
            VALUE_L.replace('"norm"', '"entry"').replace('["l"]', '["l", 0]') + "min = -1",
            "this step's contribution to ",
        ),
        (VALUE_L.replace('"norm"', '"max_abs"').replace("contribution", "grad") + "min = 0", "the largest |entry| of "),
    ],
    ids=["entry of a contribution", "largest entry of a gradient"],
)
def test_a_claim_reads_as_one_whole_sentence(tmp_path, claim, sentence):
    """Issue 32, finding 18: "the this step's contribution", glued from fragments at run time."""
    [shown] = checked(tmp_path, lesson(TEXT, "logits", "backward", claim)).steps[0]["claims"]
    assert shown["claimed"].startswith(sentence + "dL/dtok_embeddings[l"), shown["claimed"]
    assert "the this" not in shown["claimed"] and "|abs" not in shown["claimed"]


def test_the_text_is_filled_from_the_measured_values(tmp_path):
    spec, name, phase, true, _, _ = KINDS["stripe"]
    text = "least {c:.3f}, mean {c.mean:.2f} from {c.from}; N = {N}, V = {V}"
    filled = checked(tmp_path, lesson(spec, name, phase, true, narration=text)).steps[0]["narration"]
    assert filled == "least 0.599, mean 0.83 from 7; N = 23, V = 26"


@pytest.mark.parametrize(
    ("narration", "message"),
    [
        ("{nope}", "{nope} names no claim or value"),
        ("{c.median}", "{c.median}: claim c measures min, mean, head, offset, from"),
        ("{c:d}", "format 'd' does not fit"),
        ("{N.x}", "{N.x}: N is one number, it has no fields"),
    ],
)
def test_a_placeholder_that_does_not_fill_is_refused(tmp_path, narration, message):
    spec, name, phase, true, _, _ = KINDS["stripe"]
    with pytest.raises(LessonError) as caught:
        checked(tmp_path, lesson(spec, name, phase, true, narration=narration))
    assert "steps[0] (layers.1.attention.probs, forward).narration: " + message in str(caught.value)


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ('kind = "value"\n  tensor = "logit"\n  min = 0', "no recorded tensor named 'logit'"),
        ('kind = "value"\n  tensor = "logits"\n  at = [0, 99]\n  min = 0', "at[1] = 99 is outside axis 1's 23"),
        ('kind = "value"\n  tensor = "logits"\n  at = [0]\n  min = 0', "give reduce = sum, norm or max_abs"),
        ('kind = "gradcheck"\n  step = "logit"\n  passes = true', "no backward step named 'logit'"),
        ('kind = "value"\n  tensor = "logits"\n  of = "contribution"\n  min = 0', "this step adds no contribution"),
        ('faults = ["nope"]\n  kind = "identity"\n  max = 1', "unknown fault 'nope'"),
    ],
)
def test_a_claim_naming_what_does_not_exist_says_so(tmp_path, claim, message):
    with pytest.raises(LessonError) as caught:
        checked(tmp_path, lesson(INDUCTION, "logits", "forward", claim))
    assert message in str(caught.value)


def test_a_quiz_lessons_claims_name_their_faults(tmp_path):
    text = lesson(TEXT + "\nquiz = 7", "logits", "backward", 'kind = "identity"\n  max = 1')
    with pytest.raises(LessonError) as caught:
        checked(tmp_path, text)
    assert "a quiz lesson's claims name their faults" in str(caught.value)
    quiz = checked(tmp_path, text.replace('kind = "identity"', 'faults = []\n  kind = "identity"'))
    assert quiz.steps[0]["claims"][0]["against"] == "this trace's spec, correct backward"


FORWARD = (ROOT / "lessons" / "forward-in-ten.toml").read_text()
PLANTED = FORWARD.replace("min_weight = 0.55", "min_weight = 0.95", 1)


def test_xt_lesson_check_refuses_a_planted_false_claim(tmp_path, capsys):
    assert PLANTED != FORWARD
    path = tmp_path / "planted.toml"
    path.write_text(PLANTED)
    assert main(["lesson", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "planted.toml: steps[4] (layers.1.attention.probs, forward): claims[0] (stripe 'first') is false" in err
    assert "least weight 0.582" in err


def test_the_startup_loader_leaves_out_a_lesson_with_a_false_claim(tmp_path, caplog):
    (tmp_path / "good.toml").write_text(FORWARD)
    (tmp_path / "planted.toml").write_text(PLANTED)
    with make_client(lessons_dir=tmp_path) as client:
        names = [entry["name"] for entry in client.get("/api/lessons").json()["lessons"]]
        good = client.get("/api/lessons/good").json()
        assert client.get("/api/lessons/planted").status_code == 404
    assert names == ["good"]
    assert "lesson left out: planted.toml: steps[4] (layers.1.attention.probs, forward): claims[0]" in caplog.text
    stripe = good["steps"][4]
    assert stripe["claims"][0]["measured"] == "least weight 0.582, mean 0.799"
    assert "joins at position 7 and then holds it most firmly, never less than 0.60" in stripe["narration"]


def test_the_shipped_lessons_claims_hold_and_fill_their_text():
    catalogue = load_all(Settings())
    assert not catalogue.errors, "\n".join(str(e) for e in catalogue.errors)
    for lesson in catalogue.lessons.values():
        assert sum(len(step["claims"]) for step in lesson.steps) >= 3, lesson.name
        texts = [lesson.summary, *(s[k] for s in lesson.steps for k in ("takeaway", "narration", "next"))]
        assert not any("{" in text or "}" in text for text in texts), lesson.name


def test_a_precision_claim_may_be_about_the_spec_at_another_scale_or_precision(tmp_path):
    """2^8 lifts the scores' gradients back into float16's range; bfloat16 needs no scale; a
    float32 walkthrough has no numbers' health to claim."""
    scaled = 'kind = "precision"\n  ' + SCORES + 'measure = "flushed"\n  loss_scale = 256\n  max = 0.001'
    [shown] = checked(tmp_path, lesson(TEXT16, "layers.1.attention.scores", "backward", scaled)).steps[0]["claims"]
    assert shown["against"] == "this trace's spec at loss scale 256" and shown["values"]["value"] < 0.001
    bf16 = 'kind = "first_losing"\n  first = "none"\n  dtype = "bfloat16"'
    [shown] = checked(tmp_path, lesson(TEXT16, "logits", "backward", bf16)).steps[0]["claims"]
    assert shown["against"].startswith("this trace's spec in bfloat16") and shown["values"]["first"] == "none"
    with pytest.raises(LessonError, match="a float32 step: the numbers' health is a bfloat16 or float16 step's"):
        checked(tmp_path, lesson(TEXT, "logits", "backward", 'kind = "first_losing"\n  first = "none"'))


def _step(lesson, name: str, phase: str = "backward", k: int = 0) -> dict:
    return [s for s in lesson.steps if s["name"] == name and s["phase"] == phase][k]


def test_the_issue_23_lesson_sentences_are_checked_claims():
    lessons = load_all(Settings()).lessons
    bug, loss, attention = lessons["find-the-bug"], lessons["loss-and-first-gradient"], lessons["backprop-attention"]
    # E5, E6 as issue 25 has them: a step where the quiz may plant a fault never says what that
    # fault gets wrong (tests/app/sessions/test_quiz_lesson_text.py): the softmax step says what
    # holds (its rows sum to zero), and "only logits fails" is said at the embedding, after the poll.
    softmax = _step(bug, "layers.1.attention.probs")
    assert "only the diagonal" not in softmax["takeaway"] and "sums to zero" in softmax["takeaway"]
    tied = {c["id"]: c for c in _step(bug, "embedding")["claims"]}  # E6: only logits fails
    assert tied["tied"]["measured"].startswith("failing: logits (first: rel. error 1)")
    assert "passes" in tied["tied_lookup"]["measured"]
    residual = _step(bug, "layers.1.ffn_residual")  # E7: red here means the mistake is above
    assert "the mistake is here or above it, nearer the loss" in residual["narration"]
    assert [c["values"]["passes"] for c in residual["claims"]] == ["passes", "fails"]
    twice = _step(loss, "output_probs", k=1)  # E9: the identity chart notices too
    assert "only thing that notices" not in twice["narration"]
    assert "deviates from (p − onehot)/N by up to 0.0357" in twice["narration"]
    assert "sealed" in _step(bug, "loss")["narration"] and "open 3 of them" in _step(bug, "loss")["narration"]  # M1
    assert "largest updates" not in _step(loss, "logits")["narration"]  # M8
    assert (
        "yet l, which the text never uses, gets a larger row (0.149) than n (0.133)"
        in _step(loss, "logits")["narration"]
    )
    scores = _step(attention, "layers.1.attention.scores")  # M10: the forgotten sum is dv, at attention.heads
    assert "not here: under it this step's check still passes" in scores["narration"]
    assert _step(attention, "layers.1.attention.heads")["claims"][0]["values"]["first"] == "layers.1.attention.heads"


def test_the_models_widths_fill_from_the_trace(tmp_path):
    spec, name, phase, true, _, _ = KINDS["stripe"]
    text = "{n_embd} {ffn_hidden} {n_head} {n_kv_head} {kv_group} {head_dim} {q_dim} {kv_dim} {sqrt_head_dim:.3g}"
    filled = checked(tmp_path, lesson(spec, name, phase, true, narration=text)).steps[0]["narration"]
    cfg = make_client().post("/api/traces", json={"model": "induction", "text": "xkqvbm"}).json()["config"]
    hd = cfg["n_embd"] // cfg["n_head"]
    group = cfg["n_head"] // cfg["n_kv_head"]
    widths = (cfg["n_embd"], cfg["ffn_hidden"], cfg["n_head"], cfg["n_kv_head"], group, hd)
    expected = [*widths, cfg["n_head"] * hd, cfg["n_kv_head"] * hd, f"{hd**0.5:.3g}"]
    assert filled == " ".join(str(v) for v in expected)


# Issue 23's notation (docs/notation.md): S for scores, z for logits, h the skip input of x′ = h + FFN.
NOT_THE_NOTATION = (
    "sₖ",
    "∂pⱼ/∂sₖ",
    " ds = ",
    ": ds = ",
    "x·Wᵀ",
    "dL/dx into",
    "attention(x):",
    "the earlier positions.",
)


def test_the_shipped_lessons_use_the_notation_and_the_traces_widths():
    lessons = load_all(Settings()).lessons
    for lesson in lessons.values():
        texts = [lesson.summary, *(s[k] for s in lesson.steps for k in ("takeaway", "narration", "next"))]
        assert not [(bad, t) for t in texts for bad in NOT_THE_NOTATION if bad in t], lesson.name
    raw = {p.stem: p.read_text() for p in (ROOT / "lessons").glob("*.toml")}
    typed = ("64 numbers", "172 features", "16 features", "32 columns", "q has 64", "4 times", "hd = 16")
    assert not [(name, t) for name, text in raw.items() for t in typed if t in text]
    ten = lessons["forward-in-ten"]
    assert (
        "from position 1 on (row 0 has no previous letter), head 0 puts at least"
        in _step(ten, "layers.0.attention.probs", "forward")["narration"]
    )
    assert (
        "positions 0 to i: the earlier ones and i itself"
        in _step(ten, "layers.0.attention.probs", "forward")["takeaway"]
    )
    assert (
        "its inv is 1/Σ_w e^(z_w − max z), z the logits"
        in _step(lessons["loss-and-first-gradient"], "output_probs", k=1)["narration"]
    )
    residual = _step(lessons["backprop-attention"], "layers.1.attention_residual")["narration"]
    assert "∂h/∂x = I plus the branch's Jacobian" in residual and "attention(RMSNorm(x))" in residual
    assert "the figure splits dL/dh" in _step(lessons["find-the-bug"], "layers.1.ffn_residual")["narration"]


def test_the_issue_32_lesson_sentences_match_their_traces():
    """Findings 4, 5, 7 and 17 of issue 32; 7 against the attention probabilities themselves."""
    lessons = load_all(Settings()).lessons
    bug, ten = lessons["find-the-bug"], lessons["forward-in-ten"]
    last = _step(bug, "embedding")["takeaway"]  # 4: a wrong weight gradient stops where it is made
    assert "every wrong activation gradient upstream ends up here" in last and "weight gradient stops" in last
    residual = _step(bug, "layers.1.ffn_residual")  # 5: the takeaway says what the narration says
    assert "the mistake is here or above" in residual["takeaway"] and "here or above" in residual["narration"]
    assert "Two things notice" not in _step(lessons["loss-and-first-gradient"], "output_probs", k=1)["narration"]
    probs = np.asarray(build_trace(ten.spec)["layers.1.attention.probs"], dtype=np.float64)[0]
    stripe = lambda head, first, last: probs[head, np.arange(first, last + 1), np.arange(first, last + 1) - 5]  # noqa: E731
    text = _step(ten, "layers.1.attention.probs", "forward")["narration"]
    assert f"Head 0 is on it from the start (at least {stripe(0, 6, 11).min():.2f} from position 6 to 11)" in text
    assert f"head 1 puts only {probs[1, 6, 1]:.2f} there at position 6, joins at position 7" in text, text
    assert stripe(0, 6, 6)[0] > 0.5 and stripe(1, 6, 6)[0] < 0.05 and stripe(1, 7, 22).min() > 0.5
    assert "Three heads carry" not in text and "(heads 1, 2, 3" not in text
