"""The home page (templates/home.html, static/js/home/*) on a phone and with the real
SmolLM2-135M. On a phone (320-390 px, every section open) nothing is wider than the screen and
Start takes a real tap: the bug lab's fieldset was 803 px wide (a fieldset is at least as wide as
its longest option by default) and the text box caught Start's click. With SmolLM2 the token count
is its BPE's, counted by the server (a character count said 159 tokens for 29), the Tokenizer
select names its tokenizer (it was blank), and the training limit and the default lr are the ones
the server applies to it (the form said "0–500 optimizer steps" where the server allows 1, and
an lr that made the loss worse). The SmolLM2 test skips unless the fetched .gguf is there (as
tests/browser/test_timeline.py); with XT_REQUIRE_REAL_MODEL=1 it fails instead. In Russian (?lang=ru)
the page has no English word outside a stated allow-list, fits a phone, reads every message of the
catalogue as the server does, and its language switch keeps the page's current URL."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app import words
from app.settings import Settings
from tests.helpers.browser import assert_clean, axe_violations, open_session
from tests.helpers.real_model import SMOLLM2, link_smollm2
from tests.helpers.words_sample import cases
from xt_core.checkpoint.zoo import ZOO

EXAMPLE = "The capital of France is Paris. The capital of Italy is Rome."  # 14 SmolLM2 tokens


@pytest.fixture
def smollm2_server(live_models_dir):
    """The live server with the fetched SmolLM2-135M in its models directory (for this test only)."""
    link = link_smollm2(live_models_dir)
    yield
    link.unlink()


def overflow(page) -> dict:
    """The page's width against the screen's, and the elements that reach past its right edge."""
    return page.evaluate(
        """() => ({scroll: document.scrollingElement.scrollWidth, inner: innerWidth,
                  wide: Array.from(document.querySelectorAll("body *"))
                    .filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5)
                    .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`).slice(0, 5)})"""
    )


@pytest.mark.every_run
@pytest.mark.parametrize("width", [320, 390])
def test_a_phone_never_scrolls_sideways_and_start_takes_a_tap(browser, server, width):
    context = browser.new_context(
        viewport={"width": width, "height": 844}, is_mobile=True, has_touch=True, base_url=server
    )
    try:
        with open_session(context, server) as session:
            page = session.page
            session.goto("/")
            page.wait_for_selector("#start-form[data-models-loaded]")
            page.select_option("#f-model", "")  # a random init: the sizes fieldset is enabled too
            page.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")
            page.select_option("#f-optimizer", "adamw")
            longest = page.locator("#f-faults option:not([disabled])").evaluate_all(
                "(all) => all.reduce((a, b) => (b.textContent.length > a.textContent.length ? b : a)).value"
            )
            page.select_option("#f-faults", longest)
            found = overflow(page)
            assert found["inner"] == width, found  # a mobile browser widens the layout to fit the page
            assert found["scroll"] <= width and found["wide"] == [], found
            page.locator("#start").click()  # a real click: nothing may cover the button
            page.wait_for_url(re.compile(r"/walk\?"))
            assert_clean(session)
    finally:
        context.close()


def assert_count_follows_the_training_optimizer(page, count, most_by_sgd: int) -> None:
    """Training first by AdamW takes no text at all: the count warns as soon as training steps are
    asked for; by SGD it takes `most_by_sgd` positions and warns past them; none asked, no warning."""
    page.select_option("#f-optimizer", "adamw")
    page.fill("#f-text", " the" * 2)  # one token each
    expect(count).to_contain_text("1 position ")
    expect(count).not_to_contain_text("more than")
    page.fill("#f-train_steps", "1")
    expect(count).to_contain_text(
        "more than the positions this model takes in float32 with training steps first by AdamW: none, "
        "at this server's limits"
    )
    page.select_option("#f-optimizer", "sgd")
    expect(count).not_to_contain_text("more than")
    page.fill("#f-text", " the" * (most_by_sgd + 2))
    expect(count).to_contain_text(
        f"more than the {most_by_sgd} positions this model takes in float32 with training steps first by SGD"
    )
    page.fill("#f-train_steps", "0")
    expect(count).not_to_contain_text("more than")


def test_smollm2_counts_its_bpe_tokens_and_states_its_own_limits(smollm2_server, session, axe):
    page = session.page
    session.goto("/")
    page.wait_for_selector("#start-form[data-models-loaded]")
    page.select_option("#f-model", SMOLLM2)
    page.select_option("#f-optimizer", "")  # the first walk's SGD off: training without one uses AdamW
    page.fill("#f-text", EXAMPLE)
    count = page.locator("#text-count")
    expect(count).to_contain_text("14 tokens → 13 positions")
    # The most positions the server takes for it (it said "Up to 8192 positions", where 61 fit)
    listed = next(m for m in page.request.get("/api/models").json()["models"] if m["name"] == SMOLLM2)
    most, training = listed["max_positions"]["float32"]["step"], listed["max_positions"]["float32"]["training"]
    # its own weights, AdamW's m and v and the build pass the trace budget at any length; SGD's fit
    assert training["adamw"] == 0 and training["sgd"] >= 64
    in_float64 = listed["max_positions"]["float64"]["step"]
    assert most >= 256 and 0 < in_float64 < most  # a trace keeps its layer boundaries only (xt_core.recompute)
    expect(page.locator("#model-help")).to_contain_text(
        f"Up to {most} positions (with training steps first: none with AdamW, {training['sgd']} with SGD) "
        f"in float32, {in_float64} positions (none with training steps first) in float64"
    )
    expect(count).to_contain_text("SmolLM2 BPE (from the model file): The · ␣capital")
    expect(page.locator("#f-tokenizer option:checked")).to_have_text("SmolLM2 BPE (from the model file)")
    help_text = page.locator("#train-steps-help")
    assert "lr-help" in page.locator("#f-lr").get_attribute("aria-describedby").split()
    assert "train-steps-help" in page.locator("#f-train_steps").get_attribute("aria-describedby").split()
    expect(help_text).to_contain_text("0–1 optimizer step on this text")  # the server's time limit for it
    expect(help_text).to_contain_text("lr 0.00003")
    assert page.locator("#f-lr").get_attribute("placeholder") == "0.00003"
    assert axe_violations(page, axe) == []
    # The live region holds the limit alone: typing an lr never rewrites (re-announces) it
    page.locator("#train-steps-limit").evaluate(
        """(live) => { window.liveChanges = 0;
                      new MutationObserver((m) => { window.liveChanges += m.length; })
                        .observe(live, {childList: true, characterData: true, subtree: true}); }"""
    )
    page.locator("#f-lr").press_sequentially("0.0001")
    expect(help_text).to_contain_text("lr 0.0001)")
    assert page.evaluate("window.liveChanges") == 0
    assert page.locator("#train-steps-help").get_attribute("aria-live") is None
    assert page.locator("#train-steps-limit").get_attribute("aria-live") == "polite"
    page.fill("#f-lr", "")
    page.select_option("#f-optimizer", "sgd")
    expect(help_text).to_contain_text("(SGD, lr 0.003)")
    assert page.locator("#f-lr").get_attribute("placeholder") == "0.003"
    page.fill("#f-text", "Hello world")
    expect(count).to_contain_text("2 tokens → 1 position ")
    assert_count_follows_the_training_optimizer(page, count, training["sgd"])
    page.fill("#f-text", "7" * (most + 2))  # one token a digit; past the most it takes: the server's refusal says why
    expect(count).to_contain_text("Cannot count the tokens")
    expect(count).to_contain_text(f"the text gives {most + 1} positions")
    expect(count).to_contain_text(f"takes {most} positions in float32")
    assert len(session.errors) == 1 and "422" in session.errors[0]  # that refusal, as the browser logs it
    session.errors.clear()
    # Back on a demo model: its own char tokenizer, counted here; the app's defaults again. The
    # text goes first, in the demo's alphabet: "7" is not, and the demo's limits for it would be
    # one more 422 in the console, or none, as the page's debounce and the machine's load decide.
    page.fill("#f-text", "xkqvbmxkqvbm")
    expect(count).not_to_contain_text("Cannot count the tokens")
    page.select_option("#f-model", "induction")
    expect(page.locator("#f-tokenizer option:checked")).to_have_text(re.compile(r"^char"))
    assert page.locator("#f-tokenizer option[data-model-tokenizer]").count() == 0
    expect(help_text).to_contain_text("(SGD, lr 0.1)")
    expect(help_text).to_contain_text(f"0–{Settings().max_train_steps} optimizer steps on this text")
    assert_clean(session)


# Words a Russian page may show in Latin letters: symbols, code identifiers and names that Russian
# ML texts write so too, and the names of the models xt can fetch (in a title attribute) (the rest of the page's English is marked lang="en": data the server has
# only in English so far, such as lesson titles, bug names, model labels; and <code>).
LATIN_ALLOWED = {
    "xt", "char", "byte", "UTF", "float32", "float64", "AdamW", "SGD", "lr", "RoPE", "RMSNorm", "FFN",
    "GQA", "n_embd", "seq_len", "tokens", "Home", "End", "P", "A", "C", "V", "W", "sha256", "pickle",
}  # fmt: skip
# A real model's description (models.ftl, in Russian now) names its maker, its family, its tokenizer
# and its weights' formats: names no language translates ("SmolLM2-135M-Instruct", "Q4_1").
LATIN_ALLOWED |= {"SmolLM2", "M", "Instruct", "Hugging", "Face", "Llama", "BPE", "Q4_1", "Q8_0"}
# The served models' group names the command that serves them (an optgroup's label holds no <code>).
LATIN_ALLOWED |= {"serve", "model"}
# GPT-2's demo, family and faults: the family's name and its ops' names as Russian texts write them, and symbols.
LATIN_ALLOWED |= {"GPT", "GELU", "LayerNorm", "W2", "b2"}
# The low precisions the form offers (their names, as float32's), and the loss scale's symbols.
LATIN_ALLOWED |= {"bfloat16", "float16", "S", "L", "inf", "NaN"}
# The bug lab's names of its bugs quote the seed's code and the notation: tensors and ops as written there.
LATIN_ALLOWED |= {
    "dres",
    "dx",
    "dW",
    "Wq",
    "Wo",
    "CE",
    "LM",
    "SwiGLU",
    "silu",
    "softmax",
    "hd",
    "kv",
    "q",
    "k",
    "n",
    "u",
    "a",
}
# The lessons' summaries (the home page's lesson list, issue 34) write the notation (docs/notation.md).
LATIN_ALLOWED |= {"N", "S", "i", "m", "onehot", "p", "v"}

RUSSIAN_TEXT = """() => {
  const inRussian = (node) => node.closest("[lang]")?.lang === "ru" && !node.closest("code, [translate=no]");
  const words = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest("script, style, textarea, #examples") || !inRussian(parent)) continue;
    if (parent.closest("select") ? false : parent.getClientRects().length === 0) continue;  // not shown
    words.push(node.textContent);
  }
  for (const el of document.querySelectorAll("[title], [placeholder], [aria-label], optgroup[label]"))
    if (inRussian(el)) words.push(el.title, el.placeholder || "", el.getAttribute("aria-label") || "", el.label || "");
  return words.join(" ");
}"""


def test_the_home_page_in_russian_has_no_english_word_and_fits_a_phone(browser, server, axe):
    """?lang=ru: the frame, the form and the texts the page's script writes (the token count, the
    training limit, the bug lab's help) come from the Russian catalogue; nothing overflows at 390 px."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, base_url=server)
    try:
        with open_session(context, server) as session:
            page = session.page
            session.goto("/?lang=ru")
            page.wait_for_selector("#start-form[data-models-loaded]")
            assert page.evaluate("document.documentElement.lang") == "ru"
            page.select_option("#f-model", "")  # a random init: the sizes fieldset and its help
            page.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")
            page.select_option("#f-optimizer", "adamw")
            page.select_option("#f-faults", "quiz")
            expect(page.locator("#faults-help")).to_contain_text("Сервер выберет")
            expect(page.locator("#text-count")).to_contain_text(re.compile(r"\d+ токен(а|ов)? →"))  # words.js
            text = page.evaluate(RUSSIAN_TEXT)
            latin = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
            names = {part for name in ZOO for part in latin.findall(name)}  # "smollm2-135m": smollm2, m
            english = sorted(set(latin.findall(text)) - LATIN_ALLOWED - names)
            assert english == [], f"English words on the Russian home page: {english}"
            found = overflow(page)
            assert found["scroll"] <= 390 and found["wide"] == [], found
            assert axe_violations(page, axe) == []
            # The page reads the catalogue as the server does: every message, plural form and number.
            asked = cases("ru")
            page_says = page.evaluate(
                "(asked) => import('/static/js/lib/words.js').then(({ t }) => asked.map(([id, values]) => t(id, values)))",
                asked,
            )
            differ = [(i, v, p) for (i, v), p in zip(asked, page_says, strict=True) if words.t("ru", i, **v) != p]
            assert differ == [], f"the page reads these messages otherwise than the server: {differ[:5]}"
            # The switch follows the page's URL as a script rewrites it (a walk's step): prefs.js.
            page.evaluate("history.replaceState(null, '', '/?text=abcab&lang=ru')")
            page.locator(".lang-switch a[hreflang=en]").click()
            page.wait_for_url(re.compile(r"/\?text=abcab&lang=en$"))
            assert page.evaluate("document.documentElement.lang") == "en"
            expect(page.locator("#f-text")).to_have_value("abcab")
            assert_clean(session)
    finally:
        context.close()
