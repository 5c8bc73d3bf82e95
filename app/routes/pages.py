"""HTML pages: the home form (GET /) and the step-through (GET /walk?<spec>&step=N[&present=1]),
N the step's number as people count it (from 1).

Both validate a spec the same way the API does (spec_from_query + resolve). A bad spec
re-renders the home form with the message next to the field it names (422); the page JS
only ever talks to the JSON API.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from app import words
from app.buglab import views as buglab_views
from app.checkpoints import model_words
from app.checkpoints.real_models import KNOWN_MODELS
from app.routes import home_ways
from app.routes.assets import module_preloads, plotly_locale_url, plotly_url
from app.settings import Settings
from app.spec import CONFIG_FIELDS, DEFAULT_CONFIG, DEFAULT_TEXT, SpecError, resolve, spec_from_query, spec_to_query
from app.spec import form as model_form
from app.spec.faults import new_quiz_seed
from app.spec.precision import PRECISION_FIELDS
from app.steps import glossary
from app.words import choice
from app.words import jinja as words_jinja
from app.words.numbers import format_number
from xt_core.config import FAMILY_PARTS

router = APIRouter(include_in_schema=False)
log = logging.getLogger("xt.pages")

# Query keys that belong to the view, not to the spec (a trace ignores them).
VIEW_KEYS = ("step", "seq", "present", "lang")
# Keys only the home form sends: `form` marks a form submission, `model=preset:<name>` a
# random-init preset whose sizes the config fields already carry.
FORM_KEYS = ("form",)
PRESET_PREFIX = "preset:"

# The example texts of a random init; "quote" is the page's language's own line (home-example-quote):
# a byte or char tokenizer takes any alphabet, so a Russian class can watch Russian text.
EXAMPLE_TEXTS = [
    ("cat", DEFAULT_TEXT),
    ("abc", "abcabcabcabcabcabcabcabc"),
    ("quote", None),
    ("emoji", "héllo wörld 👋 — שלום"),
]


def _examples(lang: str) -> list[tuple[str, str]]:
    return [(key, text if text is not None else words.t(lang, "home-example-quote")) for key, text in EXAMPLE_TEXTS]


@dataclass(frozen=True)
class Field:
    """A config field of the home form; its label is the message home-field-<name>, its help
    (when `help`) that message's .help (app/words/locales/*/home.ftl)."""

    name: str
    help: bool = False
    kind: str = "int"  # int | float | bool
    advanced: bool = False  # shown inside the "more sizes" disclosure


CONFIG_FORM = [
    Field("n_layer", help=True),
    Field("n_head"),
    Field("n_kv_head", help=True),
    Field("n_embd", help=True),
    Field("ffn_hidden"),
    Field("seq_len", help=True),
    Field("vocab_size", help=True, advanced=True),
    Field("tie_embeddings", help=True, kind="bool", advanced=True),
    Field("rope_theta", help=True, kind="float", advanced=True),
    Field("norm_eps", kind="float", advanced=True),
]
# The model family a random init computes (issue 36: a select of its own, templates/_family_field.html;
# a family's parts beyond it come from a permalink). Llama's is the default, left out of the spec.
FAMILY_CHOICES = tuple(FAMILY_PARTS)
FORM_CONFIG_FIELDS = {f.name for f in CONFIG_FORM} | {"family"}
SPEC_FIELDS = ("model", "text", "tokens", "tokenizer", "seed", "dtype", "faults", "fault_layer", "quiz", *CONFIG_FIELDS)
SPEC_FIELDS += model_form.TRAINING_FIELDS  # optimizer, lr, …, train_steps
SPEC_FIELDS += PRECISION_FIELDS  # a bfloat16 or float16 step's loss scaling
# The home form's bug-lab choice that asks for a quiz (no fault is named "quiz").
QUIZ_CHOICE = "quiz"


@lru_cache(maxsize=4)
def templates(directory: Path) -> Jinja2Templates:
    templates = Jinja2Templates(directory=directory)
    templates.env.globals["plotly_url"] = plotly_url
    templates.env.globals["plotly_locale_url"] = plotly_locale_url
    templates.env.globals["module_preloads"] = module_preloads
    words_jinja.install(templates.env)
    return templates


def _render(request: Request, name: str, status: int = 200, **context) -> Response:
    settings: Settings = request.app.state.settings
    response = templates(settings.templates_dir).TemplateResponse(request, name, context, status_code=status)
    choice.remember(request, response)
    return response


def _home_values(params: dict[str, str]) -> dict[str, str]:
    """What the home form shows: the defaults, overridden by whatever the query carried."""
    values = {name: _form_str(value) for name, value in DEFAULT_CONFIG.items()}
    values.update(text=DEFAULT_TEXT, tokenizer="char", seed="0", dtype="float32", model="", vocab_size="")
    values.update(family=FAMILY_CHOICES[0])
    values.update({key: value for key, value in params.items() if key in SPEC_FIELDS})
    return values


def _form_str(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _error_field(loc: tuple) -> str:
    """The form field a SpecError.loc names: its last known field, else the config group,
    else the form as a whole (also for a config field the form has no input for, e.g. a model
    family's part from a permalink: the message names it)."""
    for part in reversed(loc):
        if part in CONFIG_FIELDS and part not in FORM_CONFIG_FIELDS:
            return "_form"
        if part in SPEC_FIELDS:
            return str(part)
    return "config" if "config" in loc else "_form"


def _render_home(request: Request, params: dict[str, str], errors: dict[str, str], status: int) -> Response:
    values = _home_values(params)
    form = model_form.home_context(params, values, request.app.state.settings)  # checkpoints, training
    lang = choice.chosen_language(request)
    form["models"] = [model_words.model_in(entry, lang) for entry in form["models"]]  # its words, its examples
    form["fetchable"] = [model_words.fetchable_in(entry, lang) for entry in form["fetchable"]]
    if form["model_tokenizer"] and values.get("model") in KNOWN_MODELS:  # a real model's own tokenizer, named
        form["model_tokenizer"] = (form["model_tokenizer"][0], model_words.tokenizer_label(values["model"], lang))
    advanced_error = any(f.advanced and f.name in errors for f in CONFIG_FORM)
    return _render(
        request,
        "home.html",
        status,
        values=values,
        errors=errors,
        config_form=CONFIG_FORM,
        family_choices=FAMILY_CHOICES,
        advanced_open=advanced_error,
        examples=_examples(choice.chosen_language(request)),
        fault_options=buglab_views.picker_options(choice.chosen_language(request)),
        ways=home_ways.ways(request.app.state.settings, form["models"], choice.chosen_language(request)),
        upload_help=_upload_help(choice.chosen_language(request), form["upload_formats"], form["max_upload_mb"]),
        **form,
        settings=request.app.state.settings,
    )


def _upload_help(lang: str, formats: dict[str, tuple[str, ...]], max_mb: float) -> Markup:
    """The upload field's help: each maker's file suffixes ("An xt .safetensors or .npz, or a
    llama2.c .bin"), the size limit, what becomes of the file."""
    joiner = Markup(" ") + words.t(lang, "home-upload-or") + Markup(" ")
    parts = [
        words.markup(
            lang,
            "home-upload-format-first" if index == 0 else "home-upload-format-more",
            maker=words_jinja.name(maker),
            suffixes=joiner.join(Markup("<code>{}</code>").format(suffix) for suffix in suffixes),
        )
        for index, (maker, suffixes) in enumerate(formats.items())
    ]
    return words.markup(
        lang, "home-upload-help", formats=Markup("").join(parts), size_mb=format_number(max_mb, lang, 0)
    )


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> Response:
    """The start form; a query string (e.g. from "change the model" on /walk) prefills it."""
    return _render_home(request, dict(request.query_params), {}, 200)


def _spec_params(params: dict[str, str]) -> dict[str, str]:
    """The spec part of a /walk query. A home-form submission also sends blank fields
    ("automatic"), a preset marker and textarea line endings (CRLF): normalised here."""
    from_form = "form" in params
    spec = {k: v for k, v in params.items() if k not in VIEW_KEYS and k not in FORM_KEYS}
    if spec.get("model", "").startswith(PRESET_PREFIX):
        spec.pop("model")
    if from_form and spec.get("faults") == QUIZ_CHOICE:  # the server picks (and hides) the fault
        spec["faults"], spec["quiz"] = "", str(new_quiz_seed())
    if from_form:
        spec = {k: v for k, v in spec.items() if v != "" or k == "text"}
        if "text" in spec:
            spec["text"] = spec["text"].replace("\r\n", "\n")
        spec = model_form.normalise_form(spec)
    return spec


def _view_int(value: str | None) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


@router.get("/walk", response_class=HTMLResponse)
def walk(request: Request) -> Response:
    params = dict(request.query_params)
    spec_params = _spec_params(params)
    try:
        resolved = resolve(spec_from_query(spec_params), request.app.state.settings)
    except SpecError as exc:
        refusal = exc.detail(choice.chosen_language(request))[0]["msg"]  # in the page's language
        return _render_home(request, spec_params, {_error_field(exc.loc): refusal}, 422)
    except Exception:  # a bug, not the user's mistake: still answer with a page, not a trace
        log.exception("resolving %r", spec_params)
        message = words.t(choice.chosen_language(request), "home-internal-error")
        return _render_home(request, spec_params, {"_form": message}, 500)
    # step= is the step's number as people count it (the first step is step 1, as the counter
    # says: static/js/lib/numbering.js); the page and the API index steps from 0.
    number, seq = max(1, _view_int(params.get("step"))), _view_int(params.get("seq"))
    step = number - 1
    present = params.get("present") == "1"  # presenter mode (static/js/walk/present.js)
    query = spec_to_query(resolved.canonical)
    if spec_params != query or params.get("step") != str(number):
        # A form submission or a hand-written link: land on the complete, canonical permalink.
        view = {"step": str(number)} | ({"seq": str(seq)} if seq else {}) | ({"present": "1"} if present else {})
        view |= {"lang": params["lang"]} if choice.asked_language(request) else {}  # a permalink keeps its language
        return RedirectResponse(f"/walk?{urlencode(query | view)}", status_code=303)
    return _render(
        request,
        "walk.html",
        canonical=resolved.canonical,
        query=query,
        step=step,
        seq=seq,
        present=present,
        edit_url="/?" + urlencode(query),
        buglab=buglab_views.page_info(resolved, query, choice.chosen_language(request)),
        quiz_probes=request.app.state.settings.quiz_probes,
        glossary=glossary.table(choice.chosen_language(request)),
        **model_form.walk_context(resolved, query, request.app.state.settings, choice.chosen_language(request)),
    )
