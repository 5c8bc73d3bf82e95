"""The HTML pages and assets: the home form, /walk permalinks and their validation, Plotly.js."""

import gzip
import json
import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest

from app.routes.assets import plotly_bundle, plotly_url
from app.spec import DEFAULT_TEXT
from app.spec.training import OPTIMIZER_LABELS
from tests.helpers.client import make_client
from xt_core.training.optim import OPTIMIZERS

ONE_LAYER = "n_layer=1&n_head=2&n_kv_head=2&n_embd=8&ffn_hidden=12&seq_len=48"


@pytest.fixture(scope="module")
def client():
    """Redirects are answers here: the client does not follow them."""
    with make_client(follow_redirects=False) as c:
        yield c


def field_error(html: str, field: str) -> str | None:
    match = re.search(rf'<p class="field-error" id="error-{re.escape(field)}"[^>]*>(.*?)</p>', html, re.S)
    return unescape(match.group(1)).strip() if match else None


def canonical_walk(client, query: str) -> str:
    """Follows the redirect a form submission gets; returns the permalink."""
    response = client.get(f"/walk?{query}")
    assert response.status_code == 303, response.text
    return response.headers["location"]


# ---------------------------------------------------------------------- home


def test_home_renders_the_form_with_defaults(client):
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    for name in ("text", "model", "seed", "tokenizer", "dtype", "n_layer", "n_head", "n_embd", "vocab_size"):
        assert f'name="{name}"' in html, name
    assert DEFAULT_TEXT in html
    assert 'action="/walk"' in html
    assert "field-error" not in html


def test_home_prefills_from_the_query_and_escapes_it(client):
    html = client.get("/", params={"text": '<script>alert(1)</script>"x', "n_layer": "3"}).text
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&#34;x" in html
    assert re.search(r'name="n_layer"[^>]*value="3"', html)


def test_the_optimizer_choices_and_their_labels_come_from_one_table(client):
    """Each optimizer xt_core has is offered once, labelled from app.spec.training's table; the
    script gets the same table (and the lrs) as JSON, not a copy of its own."""
    assert list(OPTIMIZER_LABELS) == ["adamw", "sgd"] and set(OPTIMIZER_LABELS) == set(OPTIMIZERS)
    html = client.get("/", params={"optimizer": "sgd"}).text
    options = re.findall(r'<option value="(adamw|sgd)" ?(selected)?>([^<]*)</option>', html)
    assert options == [("adamw", "", "AdamW: end with its update"), ("sgd", "selected", "SGD: end with its update")]
    assert '<small class="field-help" id="lr-help">blank: AdamW 0.003, SGD 0.1</small>' in html
    assert '<span id="train-steps-optimizer">(SGD, lr 0.1)' in html
    labels = re.search(r"data-optimizer-labels='([^']*)'", html).group(1)
    lrs = re.search(r"data-default-lrs='([^']*)'", html).group(1)
    assert json.loads(unescape(labels)) == OPTIMIZER_LABELS
    assert json.loads(unescape(lrs)) == {"adamw": "0.003", "sgd": "0.1"}


def test_pages_load_nothing_from_outside(client):
    for html in (client.get("/").text, client.get(canonical_walk(client, ONE_LAYER + "&text=abc")).text):
        assert not re.search(r'(src|href)="(https?:)?//', html), "pages must work offline"


# ---------------------------------------------------------------------- /walk


def test_form_submission_redirects_to_a_canonical_permalink(client):
    query = f"form=home&step=0&model=preset%3Atiny&vocab_size=&text=a%0D%0Ab+a&tokenizer=char&seed=3&{ONE_LAYER}"
    location = canonical_walk(client, query)
    params = parse_qs(urlsplit(location).query, keep_blank_values=True)
    assert urlsplit(location).path == "/walk"
    assert params["text"] == ["a\nb a"]  # textarea CRLF normalised
    assert params["seed"] == ["3"] and params["step"] == ["1"] and params["n_layer"] == ["1"]
    assert params["vocab_size"] == ["4"]  # resolved: the text's distinct characters
    assert "form" not in params and "model" not in params
    # The permalink is a fixed point: it renders, no second redirect.
    page = client.get(location)
    assert page.status_code == 200
    assert 'id="xt-spec"' in page.text and 'type="module"' in page.text


def test_the_form_offers_every_precision_and_a_low_one_s_loss_scaling(client):
    home = client.get("/").text
    assert re.findall(
        r'<option value="(\w+)"[^>]*>\w+</option>', home.split('id="f-dtype"')[1].split("</select>")[0]
    ) == [
        "float32",
        "float64",
        "bfloat16",
        "float16",
    ]
    assert re.search(r'<fieldset[^>]*id="precision-fields"\s+hidden disabled>', home)  # float32: not sent
    query = f"form=home&text=the+cat&{ONE_LAYER}&dtype=float16&loss_scale=1024&loss_scale_growth=&flush_to_zero=true"
    params = parse_qs(urlsplit(canonical_walk(client, query)).query)
    assert (params["dtype"], params["loss_scale"], params["flush_to_zero"]) == (["float16"], ["1024"], ["true"])
    assert "loss_scale_growth" not in params  # blank: a static scale


def test_walk_keeps_step_and_seq_and_embeds_the_spec_safely(client):
    location = canonical_walk(client, ONE_LAYER + "&text=" + "%3C%2Fscript%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    page = client.get(location.replace("step=1", "step=8") + "&seq=0").text
    assert 'data-step="7"' in page
    spec_json = re.search(r'<script type="application/json" id="xt-spec">(.*?)</script>', page, re.S).group(1)
    assert "</script>" not in spec_json and "<script>" not in spec_json
    assert "\\u003c/script\\u003e" in spec_json


def test_walk_without_a_step_lands_on_step_one(client):
    """step= counts as people do (the first step is step 1); an old link's step=0 is step 1."""
    location = canonical_walk(client, ONE_LAYER + "&text=hello")
    assert location.endswith("&step=1")
    assert canonical_walk(client, ONE_LAYER + "&text=hello&step=0").endswith("&step=1")


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ("n_embd=60&n_head=8", "n_embd", "divisible by n_head"),
        ("n_layer=99", "n_layer", "between 1 and"),
        ("n_layer=abc", "n_layer", "n_layer"),
        ("seed=-1", "seed", "seed"),
        ("text=", "text", "empty"),
        ("text=a", "text", "at least 2 tokens"),
        ("tokenizer=byte&vocab_size=100", "vocab_size", "256"),
        ("dtype=int8", "dtype", "dtype"),
        ("dtype=float16&loss_scale=3", "loss_scale", "a power of two"),
        ("dtype=float32&loss_scale=8", "loss_scale", "applies to a bfloat16 or float16 step"),
        ("dtype=bfloat16&loss_scale_growth=0", "loss_scale_growth", "between 1 and 100000"),
    ],
)
def test_an_invalid_spec_shows_the_form_with_the_message_by_its_field(client, query, field, words):
    response = client.get(f"/walk?form=home&{query}")
    assert response.status_code == 422
    message = field_error(response.text, field)
    assert message is not None, f"no message next to {field}"
    assert words in message
    assert re.search(f'aria-describedby="error-{field}[" ]', response.text)  # its help may follow
    assert "Traceback" not in response.text


def test_an_unknown_parameter_is_a_form_level_message(client):
    response = client.get("/walk?colour=red")
    assert response.status_code == 422
    assert "unknown parameter" in unescape(response.text)
    assert 'id="error-_form"' in response.text


def test_a_too_long_text_names_the_text_field(client):
    long = "ab" * (client.app.state.settings.max_seq_len // 2 + 1)
    response = client.get("/walk", params={"text": long})
    assert response.status_code == 422
    assert "positions, more than the 256 a random init takes" in field_error(response.text, "text")


def test_an_error_in_an_advanced_field_opens_its_disclosure(client):
    html = client.get("/walk?norm_eps=0").text
    assert field_error(html, "norm_eps")
    assert re.search(r'<details class="more-sizes"\s+open', html)


# ---------------------------------------------------------------------- assets


def test_plotly_is_served_gzipped_versioned_and_immutable(client):
    url = plotly_url()
    assert re.fullmatch(r"/assets/plotly-\d+\.\d+\.\d+-[0-9a-f]{16}\.min\.js", url)
    response = client.get(url, headers={"Accept-Encoding": "gzip, deflate"})
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert response.headers["content-type"].startswith("text/javascript")
    assert "Accept-Encoding" in response.headers["vary"]
    assert int(response.headers["content-length"]) < len(plotly_bundle().raw) / 2
    assert gzip.decompress(plotly_bundle().gzipped) == plotly_bundle().raw


def test_plotly_without_gzip_and_revalidation(client):
    response = client.get(plotly_url(), headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in response.headers
    assert response.content.startswith(b"/**") and b'"use strict";var Plotly=' in response.content[:400]
    again = client.get(plotly_url(), headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304


def test_an_unknown_plotly_version_or_build_is_404(client):
    assert client.get("/assets/plotly-0.0.1.min.js").status_code == 404
    version = plotly_bundle().version
    assert client.get(f"/assets/plotly-{version}-0123456789abcdef.min.js").status_code == 404


def test_pages_reference_the_versioned_plotly_and_static_files_revalidate(client):
    page = client.get(canonical_walk(client, ONE_LAYER + "&text=hello")).text
    assert f'src="{plotly_url()}"' in page
    response = client.get("/static/js/walk.js")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-cache"
