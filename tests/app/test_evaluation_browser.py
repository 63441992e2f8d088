"""The Versions page's evaluation part in headless Chromium: two versions side by side on the evaluation set
(metrics with B − A and significance, reliability plots, disagreements, CSV export) and a threshold chosen on
the PR curve. The model is prepared through the client of the data directory's service, which the app's
embedded service then attaches to. Screenshot: artifacts/screenshots/evaluation_compare.png."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from core.local import LocalService
from harness.streamlit import prepared_workbench
from tests.support.app import (
    BROWSER,
    CASUAL,
    FORMAL,
    FORMALITY,
    SENTIMENT,
    Ui,
    sentiment_samples,
)

pytestmark = BROWSER

HANDLE = "local.evalview"
# Held-out variants of the training texts, plus mixed sentences (half formal, half casual) that the two
# versions score differently: labelled by the half that comes first.
HELD = [{"trait": "formality", "text": f"{t} (a)", "quality": 1.0} for t in FORMAL[:8]]
HELD += [{"trait": "formality", "text": f"{t} (a)", "quality": 0.0} for t in CASUAL[:8]]
HELD += [
    {"trait": "formality", "text": f"{f} {c}", "quality": 1.0} for f, c in zip(FORMAL, CASUAL, strict=True)
]
HELD += [
    {"trait": "formality", "text": f"{c} {f}", "quality": 0.0}
    for f, c in zip(FORMAL, CASUAL[1:], strict=False)
]
HELD += [{**r, "text": r["text"].replace("day", "evening")} for r in sentiment_samples()]


def _prepare(service: LocalService) -> None:
    """v1 trained with low effort, v2 re-optimized with high effort; both evaluated on held-out variants."""
    with service.client() as c:
        c.create_model(HANDLE, description="evaluation view")
        c.add_traits(HANDLE, [FORMALITY, SENTIMENT])
        formal = [{"trait": "formality", "text": t, "quality": 1.0} for t in FORMAL]
        casual = [{"trait": "formality", "text": t, "quality": 0.0} for t in CASUAL]
        c.import_samples(HANDLE, formal + casual + sentiment_samples())
        c.wait(HANDLE, c.train(HANDLE, effort="low").run_id, timeout=120)
        c.wait(HANDLE, c.train(HANDLE, effort="high", reoptimize_params=True).run_id, timeout=180)
        c.add_evaluation_items(HANDLE, HELD)
        for version in (1, 2):
            c.wait(HANDLE, c.evaluate(HANDLE, version).run_id, timeout=120)


@pytest.fixture(scope="module")
def eval_app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("evaluation-browser")
    with prepared_workbench(data_dir, _prepare) as (url, _):
        yield url


def test_compare_two_versions_on_the_evaluation_set(eval_app_url: str, browser: Browser) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    ui = Ui(page)
    try:
        ui.goto(f"{eval_app_url}/versions?model={HANDLE}")
        page.get_by_role("heading", name="Evaluation set").first.wait_for()
        ui.expect_text(f"v2 on {len(HELD)} evaluation items")
        ui.no_exception()

        # A threshold from the PR curve: precision ≥ 0.9 on formality, stored with v2.
        expect_chart = page.locator(".st-key-thr_chart .js-plotly-plot")
        expect_chart.first.wait_for()
        ui.click("Set formality's threshold on v2")
        ui.expect_text("formality on v2: threshold")
        ui.no_exception()

        ui.click("Compare on the set")
        ui.expect_text("Where v1 and v2 disagree most")
        assert page.locator("[class*='st-key-evcmp_rel_'] .js-plotly-plot").count() == 2  # one per trait
        page.locator("[role='columnheader']", has_text="significant").first.wait_for(state="attached")
        with page.expect_download() as download:
            page.get_by_role("button", name=f"Download the comparison (CSV, {len(HELD)} items)").click()
        exported = Path(download.value.path()).read_text()
        head, metric_rows, dis_rows = exported.split("\n", 1)[0], *exported.split("\n\n")[:2]
        assert head.startswith(f"# {HANDLE}: A = v1, B = v2, paired on {len(HELD)}")
        assert "trait,metric,A,B,B − A,95% CI of B − A,p,significant,items" in metric_rows
        assert dis_rows.startswith("trait,label,A,B,B − A,text,item_id")
        assert len(dis_rows.strip().splitlines()) == len(HELD) + 1  # header + every item
        ui.no_exception()
        ui.shot("evaluation_compare")
    finally:
        page.close()
