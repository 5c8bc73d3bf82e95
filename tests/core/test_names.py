"""The table of recorded tensors (xt_core/names.py) is the tape: the same names in the same
order, the phases the tape records, and axes whose sizes are the shapes the step computes."""

from __future__ import annotations

import numpy as np
import pytest

import xt_core
from xt_core import names

CONFIGS = [
    xt_core.PRESETS["tiny"],
    xt_core.Config(
        vocab_size=40, n_layer=3, n_head=6, n_kv_head=2, n_embd=48, ffn_hidden=100, seq_len=24, tie_embeddings=False
    ),
    xt_core.Config(n_layer=1, n_head=3, n_kv_head=1, n_embd=20, head_dim=10),  # H*hd = 30, C = 20
    xt_core.Config(n_layer=2, n_head=4, n_kv_head=2, n_embd=16, head_dim=6, qkv_bias=True, qk_norm=True),  # Qwen's
]
IDS = ["tiny", "gqa-untied", "head-dim", "qwen-parts"]
PER_LAYER = {"tiny": 18, "gqa-untied": 18, "head-dim": 18, "qwen-parts": 18 + 3 + 2}  # + biased q/k/v, normed q/k


@pytest.mark.parametrize("cfg,layer_rows", list(zip(CONFIGS, PER_LAYER.values(), strict=True)), ids=IDS)
def test_the_table_is_the_tape_in_order(cfg, layer_rows):
    nodes = xt_core.build_tape(cfg)
    assert names.tensor_names(cfg) == [node.name for node in nodes]
    assert [names.lookup(node.name).phase for node in nodes] == [node.phase for node in nodes]
    assert (
        len(names.tensor_names(cfg)) == 1 + layer_rows * cfg.n_layer + 5
    )  # embedding; 18 a layer (Llama's); norm, logits, softmax, losses


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_every_axis_is_the_shape_the_step_computes(cfg):
    n_seq, T = 2, 7
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, cfg.vocab_size, size=(n_seq, T + 1))
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=1), tokens[:, :-1], tokens[:, 1:])
    sizes = names.dims(cfg, n_seq, T)
    for name in names.tensor_names(cfg):
        found = names.lookup(name)
        expected = tuple(int(np.prod([sizes[d] for d in axis.split("*")])) for axis in found.axes)
        assert np.shape(trace[name]) == expected, name
    counted = sum(np.size(trace[name]) for name in names.tensor_names(cfg))
    assert names.recorded_elements(cfg, n_seq, T) == counted


def test_lookup_tells_a_recorded_tensor_from_any_other_name():
    assert names.lookup("layers.12.attention.probs").role == "attention probs"
    assert names.lookup("output_probs").role == "output probs"
    assert names.lookup("layers.0.attention.wq") is None  # a parameter
    assert names.lookup("attention.probs") is None  # a per-layer pattern without its layer
    assert names.lookup("layers.0.logits") is None  # outside a layer
    assert names.lookup("update") is None


def test_the_output_softmax_is_one_name_and_the_attention_softmax_another():
    assert names.is_output_softmax("output_probs")
    assert not names.is_output_softmax("layers.0.attention.probs")
    assert not names.is_output_softmax("probs")  # no tensor has that name
    assert [r.pattern for r in names.RECORDED if r.role.endswith("probs")] == [
        "layers.{L}.attention.probs",
        "output_probs",
    ]


def test_an_unknown_pattern_names_the_known_ones():
    with pytest.raises(KeyError, match="not a recorded tensor; known: embedding, layers"):
        names.entry("layers.{L}.attention.prob")


def test_every_fault_changes_a_step_the_table_declares():
    cfg = CONFIGS[1]
    recorded = set(names.tensor_names(cfg))
    for fault in xt_core.lab.faults.CATALOGUE.values():
        assert fault.step_name(cfg.n_layer - 1) in recorded, fault.name


def test_a_trace_lists_every_name_it_answers_to_with_its_shape_and_words():
    """Trace.names() (issue 28, "Python"): the token ids, every recorded tensor in execution order
    and every parameter, each once, with the shape trace[name] has, the table's title and label
    for a recorded tensor, and a gradient of that shape wherever has_grad says so."""
    cfg = xt_core.PRESETS["tiny"]
    tokens = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(2, 7))
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=0), tokens[:, :-1], tokens[:, 1:])
    listed = trace.names()
    listed_names = [entry.name for entry in listed]
    assert len(listed_names) == len(set(listed_names))
    assert listed_names[:2] == ["tokens", "targets"] and listed_names[2 : 2 + len(trace.nodes)] == trace.tensor_names()
    assert listed_names[2 + len(trace.nodes) :] == trace.param_names
    for entry in listed:
        assert trace[entry.name].shape == entry.shape, entry.name
        if entry.has_grad:
            assert trace.grad(entry.name).shape == entry.shape, entry.name
    probs = next(entry for entry in listed if entry.name == "layers.1.attention.probs")
    assert (probs.kind, probs.title, probs.label) == (
        "tensor",
        "Attention softmax over keys",
        "layer 1 attention probabilities, all heads",
    )
    assert "{" not in "".join(entry.label for entry in listed)
    assert {entry.kind for entry in listed if not entry.has_grad} == {"token ids"}


def test_gpt2s_table_is_its_tape_and_its_axes_the_shapes():
    cfg = xt_core.Config(family="gpt2", vocab_size=30, n_layer=2, n_head=4, n_kv_head=4, n_embd=16, ffn_hidden=64)
    nodes = xt_core.build_tape(cfg)
    assert names.tensor_names(cfg) == [node.name for node in nodes]
    assert [names.lookup(n.name, "gpt2").phase for n in nodes] == [n.phase for n in nodes]
    assert len(nodes) == 2 + 15 * cfg.n_layer + 5  # token + position embeddings; 15 a layer; norm .. loss
    tokens = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(2, 8))
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=1), tokens[:, :-1], tokens[:, 1:])
    sizes = names.dims(cfg, 2, 7)
    for name in names.tensor_names(cfg):
        axes = names.lookup(name, "gpt2").axes
        assert np.shape(trace[name]) == tuple(int(np.prod([sizes[d] for d in a.split("*")])) for a in axes), name
    assert names.recorded_elements(cfg, 2, 7) == sum(np.size(trace[name]) for name in names.tensor_names(cfg))


def test_a_gpt2_traces_listing_has_gpt2s_words():
    cfg = xt_core.Config(family="gpt2", vocab_size=20, n_layer=1, n_head=2, n_kv_head=2, n_embd=8, ffn_hidden=16)
    tokens = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(1, 6))
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg), tokens[:, :-1], tokens[:, 1:])
    listed = {e.name: e for e in trace.names()}
    assert listed["embedding_positions"].label == "token + position embeddings"
    assert listed["layers.0.attention_norm.out"].title == "LayerNorm before attention"
    assert listed["layers.0.feed_forward.gelu"].label == "layer 0 GELU activation"
    russian = {e.name: e for e in trace.names(lang="ru")}
    assert russian["embedding_positions"].label == "эмбеддинги токенов + позиционные эмбеддинги"
    assert russian["layers.0.attention.q"].title == "Проекция запросов q = n·Wq + bq"


def test_every_row_is_worded_in_every_catalogue_and_in_russian_on_request():
    """A family's rows carry structure only; each row's title and label are in the catalogues
    (app/words/locales/<lang>/names.ftl, by its words id), which Trace.names() reads without the app."""
    from xt_core.listing import CATALOGUES, words_of

    for lang in ("en", "ru"):
        catalogue = (CATALOGUES / lang / "names.ftl").read_text(encoding="utf-8")
        missing = [
            f"{row.words_id}-{part}"
            for rows in names.ROWS.values()
            for row in rows
            for part in ("title", "label")
            if f"\n{row.words_id}-{part} = " not in catalogue
        ]
        assert missing == [], f"{lang}: rows without words"
    assert words_of("layers.3.attention.probs", 3, "ru") == (
        "Софтмакс внимания по ключам",
        "вероятности внимания слоя 3, все головы",
    )
    assert words_of("not.recorded", None) == ("not.recorded", "not.recorded")


def test_a_row_holds_structure_only():
    """xt_core carries no word a person reads (issue 32): a row of the table is its pattern, axes,
    role, block, symbol, phase, the config part that makes it and the id of its words in the catalogues; the words are there."""
    from dataclasses import fields

    from xt_core.recorded import Recorded

    assert [f.name for f in fields(Recorded)] == [
        "pattern",
        "axes",
        "role",
        "block",
        "symbol",
        "phase",
        "part",
        "words",
    ]
