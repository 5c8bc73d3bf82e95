"""The home form's model family (issue 36): a random init picks Llama's or GPT-2's ops; Llama's, the
default, stays out of the permalink (its trace ids are those it had), GPT-2's is carried, and an
unknown family is refused at its own field."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.helpers.client import make_client

ONE_LAYER = "n_layer=1&n_head=2&n_kv_head=2&n_embd=8&ffn_hidden=12&seq_len=48"
FORM = f"form=home&step=0&model=&text=the+cat&tokenizer=char&seed=0&dtype=float32&{ONE_LAYER}"


@pytest.fixture(scope="module")
def client():
    with make_client(follow_redirects=False) as c:
        yield c


def test_the_form_offers_each_family_llama_first(client):
    html = client.get("/").text
    options = re.findall(r'<option value="(\w+)" (selected)?>([^<]*)</option>', html[html.index('id="f-family"') :])
    assert [(value, text) for value, _, text in options[:2]] == [
        ("llama", "Llama (RMSNorm, RoPE, SwiGLU)"),
        ("gpt2", "GPT-2 (LayerNorm, GELU, learned positions, biases)"),
    ]
    assert options[0][1] == "selected"
    russian = client.get("/", params={"lang": "ru"}).text
    assert "Семейство модели" in russian and "GPT-2 (LayerNorm, GELU, обучаемые позиции, смещения)" in russian


def test_gpt2_is_carried_and_llama_left_out(client):
    gpt2 = client.get(f"/walk?{FORM}&family=gpt2")
    assert gpt2.status_code == 303
    query = parse_qs(urlsplit(gpt2.headers["location"]).query)
    assert query["family"] == ["gpt2"]
    page = client.get(gpt2.headers["location"])
    assert page.status_code == 200
    llama = client.get(f"/walk?{FORM}&family=llama")
    assert llama.status_code == 303 and "family" not in parse_qs(urlsplit(llama.headers["location"]).query)
    assert llama.headers["location"] == client.get(f"/walk?{FORM}").headers["location"]


def test_an_unknown_family_is_refused_at_its_field(client):
    refused = client.get(f"/walk?{FORM}&family=bert")
    assert refused.status_code == 422
    match = re.search(r'<p class="field-error" id="error-family"[^>]*>(.*?)</p>', refused.text, re.S)
    assert match and "bert" in unescape(match.group(1))
