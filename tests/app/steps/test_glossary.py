"""The glossary: every term issue 23 names is defined once, the walk page carries the table, and
the terms the explanations use are found in them by the spellings the page looks for."""

from __future__ import annotations

import html
import json
import re

import numpy as np

import xt_core
from app.steps import explain, glossary
from tests.helpers.specs import SMALL_SPEC

ISSUE_TERMS = (
    "Jacobian", "onehot", "σ", "RoPE", "SwiGLU", "GQA", "LM head", "residual stream", "Iverson bracket",
    "float64 twin", "first-order prediction", "curvature", "Richardson extrapolation", "bias correction",
    "decoupled weight decay", "gemm_tn", "np.add.at", "fancy-index assignment", "inv", "dres",
    "projection term", "C++ backward pass",
)  # fmt: skip


def test_every_term_is_defined_once():
    names = [t.term for t in glossary.TERMS]
    forms = [f for t in glossary.TERMS for f in t.forms]
    assert len(set(names)) == len(names) and len(set(forms)) == len(forms)
    assert set(ISSUE_TERMS) <= set(names)
    for term in glossary.TERMS:
        assert term.forms and len(term.definition) > 40, term


def test_the_cpp_pass_is_said_in_plain_words_with_its_names_mapped():
    cpp = next(t for t in glossary.TERMS if t.term == "C++ backward pass")
    assert "hand-written C++ backward pass of this same architecture" in cpp.definition
    for theirs, ours in (("dres", "dL/dx′"), ("x2b", "n before the feed-forward"), ("h1", "(a)"), ("xb", "(n")):
        assert theirs in cpp.definition and ours in cpp.definition


def test_the_explanations_use_the_terms_as_the_glossary_spells_them():
    cfg = xt_core.Config(vocab_size=12, n_layer=1, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=8)
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=0), np.arange(6)[None], np.arange(1, 7)[None])
    text = " ".join(explain.explanation(r, trace) for r in trace.records)
    used = {t.term for t in glossary.TERMS if any(f in text for f in t.forms)}
    assert {"Jacobian", "RoPE", "SwiGLU", "GQA", "LM head", "residual stream", "onehot", "σ", "inv", "dres",
            "projection term", "np.add.at", "fancy-index assignment", "gemm_tn", "Iverson bracket",
            "C++ backward pass"} <= used  # fmt: skip


def test_the_walk_page_carries_the_glossary(client):
    page = client.get("/walk", params={**SMALL_SPEC["config"], "text": SMALL_SPEC["text"], "seed": 1})
    assert page.status_code == 200
    body = re.search(r'<script type="application/json" id="xt-glossary">(.*?)</script>', page.text, re.S)
    assert body, page.text[:500]
    assert json.loads(html.unescape(body.group(1))) == glossary.table()


def test_the_jacobian_is_applied_transposed_and_only_the_softmax_is_symmetric():
    jacobian = next(t for t in glossary.TERMS if t.term == "Jacobian").definition
    assert "multiplies the arriving gradient by its transpose, dL/din = Jᵀ·dL/dout" in jacobian, jacobian
    assert "dY·Wᵀ" in jacobian and "symmetric: there J = Jᵀ" in jacobian
    p = np.array([0.7, 0.2, 0.1])
    J = xt_core.softmax_jacobian(p)
    assert np.allclose(J, J.T)  # the softmax's J = Jᵀ the definition states
