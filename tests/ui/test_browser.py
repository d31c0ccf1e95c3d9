"""The dashboard in a real browser: Debian's Chromium driven by Playwright, over a live server.

Skipped only where there is no Chromium and ``REFEREE_REQUIRE_BROWSER`` is unset; CI sets it, so
a machine that lost its browser fails here instead of passing quietly.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.track import TrackStore
from referee.ui import create_app, running
from referee.ui.browser import browser, chromium_path
from tests.ui.conftest import make_store

RUN = "grpo-curriculum"
WIDTH, HEIGHT = 1280, 900


def _need_browser() -> None:
    missing = []
    if chromium_path() is None:
        missing.append("no chromium on PATH (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package is not installed (make bootstrap)")
    if not missing:
        return
    if os.environ.get("REFEREE_REQUIRE_BROWSER"):
        pytest.fail("REFEREE_REQUIRE_BROWSER is set but " + "; ".join(missing), pytrace=False)
    pytest.skip("browser tests need a browser: " + "; ".join(missing))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, TrackStore, Any]]:
    """(base URL, the store behind it, a Playwright page); one server and browser per module."""
    _need_browser()
    store = make_store(tmp_path_factory.mktemp("ui") / "run")
    with running(create_app(store)) as url, browser() as b:
        page = b.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        yield url, store, page
    store.close()


def assert_real_picture(png: bytes, path: Path) -> None:
    """A PNG of the viewport's width and more than a few colours: not a blank page."""
    from PIL import Image, ImageStat

    path.write_bytes(png)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.width == WIDTH and image.height >= HEIGHT, image.size
    stddev = ImageStat.Stat(image.convert("L")).stddev[0]
    colours = image.resize((320, 240)).getcolors(maxcolors=1 << 16) or []
    assert stddev > 12 and len(colours) > 40, (path, stddev, len(colours))


def test_runs_page_lists_the_runs_and_a_row_opens_its_run(live, tmp_path):
    url, store, page = live
    page.goto(url + "/")
    rows = page.locator("#runs tbody tr")
    assert rows.count() == len(store.runs()) == 2
    assert "grpo curriculum" in rows.nth(0).inner_text()
    assert page.locator("#runs svg path").count() == 2  # the trend sparklines
    assert_real_picture(page.screenshot(full_page=True), tmp_path / "runs.png")
    rows.nth(0).locator("td").nth(3).click()  # a plain cell, not the link: the row opens
    page.wait_for_url(f"**/runs/{RUN}")
    assert page.locator("h1").inner_text().startswith("grpo curriculum")


def test_run_page_draws_the_curves_and_the_heatmap(live, tmp_path):
    url, _, page = live
    page.goto(f"{url}/runs/{RUN}")
    for series in ("train", "held-out"):
        curve = page.locator(f"#chart-pass path[data-series='{series}']")
        assert curve.count() == 1 and curve.is_visible()
        points = re.findall(r"[ML][\d.]+,[\d.]+", curve.get_attribute("d") or "")
        assert len(points) >= 3, series
        box = curve.bounding_box()
        assert box is not None and box["width"] > 100  # drawn across the chart, not a dot
    assert page.locator("#chart-heatmap rect.cell").count() >= 12
    assert page.locator("#chart-difficulty rect.bar").count() >= 2
    assert "sys.exit before the tests run" in page.locator("#alerts").inner_text()
    assert_real_picture(page.screenshot(full_page=True), tmp_path / "run.png")


def test_run_page_shows_the_cost_card(live):
    from referee.track.cost import cost_report

    url, store, page = live
    page.goto(f"{url}/runs/{RUN}")
    card = page.locator("#cost")
    assert card.is_visible()
    c = cost_report(store, RUN).total.cost
    assert page.locator("#cost-cpu").inner_text() == f"{c.sandbox_cpu_s:.2f} s"
    assert page.locator("#cost-tokens").inner_text() == f"{c.prompt_tokens} / {c.completion_tokens}"
    rows = page.locator("#cost-table tbody tr")
    assert rows.count() >= 2 and rows.first.is_visible()


def test_clicking_a_trajectory_row_opens_the_viewer(live, tmp_path):
    url, store, page = live
    page.goto(f"{url}/runs/{RUN}")
    row = page.locator("#trajectory-list tbody tr").first
    task = row.locator("td").nth(1).inner_text()
    row.locator("td").nth(1).click()
    page.wait_for_url("**/trajectories/*")
    tid = page.url.rsplit("/", 1)[1]
    t = store.trajectory(tid)
    assert t.task_id == task
    assert task in page.locator("h1").inner_text()
    tests = page.locator("#tests").inner_text()
    assert "test_basic" in tests and "test_large" in tests
    assert "run_tests" in page.locator("#turns").inner_text().lower()  # CSS upper-cases it
    assert_real_picture(page.screenshot(full_page=True), tmp_path / "trajectory.png")


def test_submitting_the_label_form_moves_the_item_out_of_the_pending_list(live, tmp_path):
    url, store, page = live
    page.goto(f"{url}/runs/{RUN}/audit")
    pending = int(page.locator("#pending-count").inner_text())
    labelled = int(page.locator("#labelled-count").inner_text())
    assert pending > 0
    assert_real_picture(page.screenshot(full_page=True), tmp_path / "audit.png")
    page.locator("#start").click()
    page.wait_for_url("**/trajectories/*")
    tid = page.url.rsplit("/", 1)[1]
    page.keyboard.press("3")  # the shortcut for the third label, broken-task
    page.fill("#note", "the expected output is wrong")
    page.fill("#labeller", "browser")
    page.click("#submit-label")
    page.wait_for_url("**labelled=1")
    assert "Label recorded" in page.locator("#labelled").inner_text()
    assert "quarantined" in page.locator("main").inner_text()
    [label] = store.labels(tid)
    assert (label.label, label.labeller) == ("broken-task", "browser")
    page.goto(f"{url}/runs/{RUN}/audit")
    assert int(page.locator("#pending-count").inner_text()) == pending - 1
    assert int(page.locator("#labelled-count").inner_text()) == labelled + 1
    assert "the expected output is wrong" in page.locator("#labelled").inner_text()


def test_an_unknown_trajectory_shows_a_readable_404(live):
    url, _, page = live
    response = page.goto(f"{url}/trajectories/does-not-exist")
    assert response is not None and response.status == 404
    assert "Not found" in page.locator("h1").inner_text()
    assert "does-not-exist" in page.locator("main").inner_text()
