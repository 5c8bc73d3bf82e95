"""A class on the film (issue 39, docs/lessons.md "A class on the film"): the presenter (1280×720)
presents the shipped run's film, a student on a 390×844 phone joins with the code and their film
follows the presenter's keyboard scrubbing (the line, the readout and the frames theirs); the presenter
opens the step into the walkthrough, the phone goes there too and follows, and both come back to the
film; axe finds nothing on the phone's film. Checkpoint steps only: each opens at once. A run lesson
presented from its film is followed stop by stop: the phone's panel, its marks, its walk stop."""

from __future__ import annotations

from tests.helpers.browser import assert_clean, axe_violations, phone_page

LINE_AT = "() => document.getElementById('film-plot').layout.shapes[0].x0"
SCRUB_TO = "(step) => { const s = document.getElementById('film-scrub'); s.value = step; s.dispatchEvent(new Event('input')); }"


def _on_step(page, step: int) -> None:
    page.wait_for_selector(f"#film[data-step='{step}']")
    assert page.input_value("#film-scrub") == str(step) and page.evaluate(LINE_AT) == step


def _present(presenter) -> str:
    """Presents the film page to a class: the join code its dialog shows."""
    presenter.click("#class-present:not([disabled])")
    presenter.wait_for_selector("#class-dialog[open]")
    code = presenter.text_content("#class-code").strip()
    presenter.click("#class-dialog-close")
    return code


def test_a_phone_follows_the_presenters_scrubbing_into_a_step_and_back(session, browser, server, axe):
    presenter = session.page
    presenter.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/film?run=induction&step=1000")
    presenter.wait_for_selector("#film[data-ready]")
    code = _present(presenter)
    with phone_page(browser, server) as (phone, errors):
        phone.goto(f"/join/{code}")
        phone.wait_for_selector("#film[data-ready][data-following='following']")
        _on_step(phone, 1000)
        presenter.wait_for_selector("#class-followers[data-count='1']")
        presenter.focus("#film-scrub")
        for _ in range(4):
            presenter.keyboard.press("ArrowRight")  # a drag's moves: the last one always arrives
        _on_step(phone, 1004)
        presenter.keyboard.press("PageUp")  # a twentieth of the run back
        _on_step(phone, 929)
        assert "Step 929" in phone.text_content("#film-readout")
        assert phone.locator("#film-frames canvas").count() == 2  # the phone's frames follow too
        assert phone.evaluate("document.scrollingElement.scrollWidth") <= 390
        assert axe_violations(phone, axe) == []

        presenter.evaluate(SCRUB_TO, 500)
        _on_step(phone, 500)
        presenter.click("#film-open")  # step 500, a checkpoint, into the walkthrough: the class goes there
        presenter.wait_for_selector("#step[data-rendered]")
        phone.wait_for_url("**/walk?run=induction&run_step=500*")
        phone.wait_for_selector("#walk[data-following='following'] #step[data-rendered]")
        presenter.click("#film-back")  # back to the film: the class comes back too
        phone.wait_for_url(f"**/film?run=induction&step=500*#follow={code}", wait_until="commit")
        assert errors == []
        presenter.wait_for_selector("#film[data-ready]")
        assert presenter.input_value("#film-scrub") == "500" and "present=" in presenter.url
    assert_clean(session)


MARKED = "document.getElementById('film-plot').data.filter((t) => t.meta === 'lesson-mark').length"


def _at_stop(page, k: int) -> None:
    page.wait_for_selector(f"#lesson-panel[data-lesson-step='{k}'][data-drawn='{k}']")


def test_a_phone_follows_the_run_lessons_stops_onto_a_walk_stop_and_back(session, browser, server, axe):
    """Watch an induction head form, presented from its film (/lessons/induction-head, "Present to
    class"): the phone's panel shows the presenter's stop, its marks on the phone's film at the stop's
    step; the clicker's Page Down to stop 3 (run step 500's walkthrough) takes the phone there, its
    panel at stop 3, and Page Up brings both back to the film's stop 2."""
    presenter = session.page
    presenter.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/lessons/induction-head")  # the film at stop 1, step 0
    _at_stop(presenter, 0)
    code = _present(presenter)
    with phone_page(browser, server) as (phone, errors):
        phone.goto(f"/join/{code}")
        phone.wait_for_selector("#film[data-following='following']")
        _at_stop(phone, 0)
        presenter.wait_for_selector("#class-followers[data-count='1']")
        presenter.keyboard.press("PageDown")  # a clicker: stop 2, the plateau at step 400
        _at_stop(phone, 1)
        _on_step(phone, 400)
        assert "from step 100 to step 665" in phone.text_content(".lesson-narration")
        assert phone.evaluate(MARKED) == 3 and phone.locator("#lesson-panel .lesson-controls button").first.is_hidden()
        assert phone.evaluate("document.scrollingElement.scrollWidth") <= 390
        assert axe_violations(phone, axe) == []

        presenter.keyboard.press("PageDown")  # stop 3: run step 500's walkthrough, the class goes along
        _at_stop(presenter, 2)
        phone.wait_for_url("**/walk?run=induction&run_step=500*")
        phone.wait_for_selector("#walk[data-following='following'] #step[data-rendered]")
        _at_stop(phone, 2)
        presenter.keyboard.press("PageUp")  # back to the film's stop 2
        phone.wait_for_url(f"**/film?run=induction&step=400*#follow={code}", wait_until="commit")
        _at_stop(phone, 1)
        _on_step(phone, 400)
        assert errors == []
    assert_clean(session)


def test_presenting_from_a_run_lessons_walk_stop_opens_a_class_on_its_film_there(session, browser, server):
    """Stop 3 of Watch an induction head form is run step 500's walkthrough: "Present to class" there
    opens a class on the run's film (not a walkthrough class, which refuses a run lesson), at that
    step and that stop; a phone that joins lands on the same walk stop, its panel at stop 3."""
    presenter = session.page
    presenter.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/walk?run=induction&run_step=500#lesson=induction-head&stop=2")
    _at_stop(presenter, 2)
    code = _present(presenter)
    state = presenter.evaluate(f"fetch('/api/sessions/{code}').then((r) => r.json())")
    opened = (state["run"], state["run_step"], state["lesson"], state["lesson_step"])
    assert opened == ("induction", 500, "induction-head", 2)
    with phone_page(browser, server) as (phone, errors):
        phone.goto(f"/join/{code}")
        phone.wait_for_url("**/walk?run=induction&run_step=500*")
        phone.wait_for_selector("#walk[data-following='following'] #step[data-rendered]")
        _at_stop(phone, 2)
        assert errors == []
    assert_clean(session)
