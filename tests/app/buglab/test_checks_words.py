"""The bug lab's chart of every step's check and the optimizer's line in the page's language
(the Russian walk found them English: GET .../checks had no language, and the optimizer's
numbers kept their point)."""

from __future__ import annotations

from app import words
from app.spec.training import describe_optimizer
from tests.helpers.client import post_trace
from tests.helpers.specs import SMALL_SPEC


def test_the_optimizer_line_writes_the_languages_decimal_mark():
    adamw = {"name": "adamw", "lr": 0.003, "weight_decay": 0.01}
    assert describe_optimizer(adamw) == "AdamW, lr 0.003, weight_decay 0.01"  # as before
    assert describe_optimizer(adamw, "ru") == "AdamW, lr 0,003, weight_decay 0,01"
    assert describe_optimizer({"name": "sgd", "lr": 0.1, "momentum": 0.9}, "ru") == "SGD, lr 0,1, momentum 0,9"


def test_the_chart_of_every_check_speaks_the_asked_language(client):
    trace = post_trace(client, {**SMALL_SPEC, "faults": ["softmax_missing_sum_term"]})
    charts = {}
    for lang in ("en", "ru", "en"):  # the finished chart is kept per language, never handed to another
        answer = client.get(f"/api/traces/{trace['id']}/checks", params={"wait": "true", "lang": lang}).json()
        layout = answer["figure"]["layout"]
        charts[lang] = (layout["title"]["text"], [a["text"] for a in layout["annotations"]])
        assert layout["title"]["text"] == words.t(lang, "names-buglab-chart-title")
        first = words.t(lang, "names-buglab-first-failing", step=answer["first_failing"])
        assert first in charts[lang][1], charts[lang]
    assert charts["en"] != charts["ru"]
