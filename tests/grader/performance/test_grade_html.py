"""`kata grade --html`: the page a learner looks at, from a real CPU grade, rendered by headless
Chromium and its screenshot checked for layout (size, and each figure drawn where it belongs)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from grader import pipeline
from grader.performance import report_html

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    ws = tmp_path_factory.mktemp("ws") / "reduce"
    shutil.copytree(ROOT / "solutions" / "reduce", ws, ignore=shutil.ignore_patterns("wrong", "triton", "numba"))
    # a learner's comment with markup-like and HTML-like text, on a line of its own
    source = (ws / "kernel.cu").read_text()
    (ws / "kernel.cu").write_text("// x[i] <b>not bold</b> & [red]not red[/red]\n" + source)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KATA_HOME", str(home))
        report = pipeline.grade("reduce", ws, backend="cpu")
    assert report.verdict == "pass", report.headline
    return report


def test_the_page_shows_each_lines_share_and_counters(graded):
    page = report_html.page(graded)
    rows = {r.number: r for r in page["source"]}
    hot = [r for r in rows.values() if r.share]
    assert hot and abs(sum(r.share for r in hot) - 1.0) < 0.02  # the bound resource's time, split by line
    loads = [r for r in rows.values() if r.sectors.startswith("ld ")]
    assert loads and all("/" in r.sectors for r in loads)
    assert any(r.branch.endswith("%") for r in rows.values())
    assert page["grid"]["resource"] == "dram" and page["grid"]["dram"] > 0.8
    assert page["roofline"]["points"][0][2].kind == "estimate"
    for kernel in page["occupancy"]:  # none where clang made PTX only (no ptxas resources)
        assert any(b["limits"] and b["width"] == 100 for b in kernel["bars"])
    assert page["occupancy"] or graded.resources.occupancy == ()


def test_learner_text_is_escaped_not_interpreted(graded):
    html = report_html.render(graded)
    assert "// x[i] &lt;b&gt;not bold&lt;/b&gt; &amp; [red]not red[/red]" in html
    assert "<script" not in html and "http" not in html.split("<body>")[1]  # nothing from the network


@pytest.mark.browser
def test_chromium_draws_every_figure_where_the_layout_puts_it(graded, tmp_path):
    pil = pytest.importorskip("PIL.Image")
    if CHROMIUM is None:
        pytest.skip("headless Chromium is not installed")
    page = report_html.write(graded, tmp_path / "grade.html")
    shot = tmp_path / "grade.png"
    subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                    "--window-size=1200,900", page.as_uri()], capture_output=True, timeout=120)
    image = pil.open(shot).convert("RGB")
    assert image.size == (1200, 900)

    pixels = np.asarray(image, dtype=np.int32)

    def has(colour, box, tolerance=40):
        x0, y0, x1, y1 = box
        return bool((np.abs(pixels[y0:y1, x0:x1] - np.array(colour)).sum(axis=2) < tolerance).any())

    assert has((0x1a, 0x7f, 0x37), (0, 0, 300, 60))  # the green PASS badge, top left
    assert has((0x09, 0x69, 0xda), (0, 100, 600, 500))  # the roofline's ceiling, first figure
    assert has((0xfb, 0x85, 0x00), (500, 100, 1200, 500))  # the estimate on the bound grid, beside it
    if graded.resources.occupancy:
        assert has((0xcf, 0x22, 0x2e), (0, 100, 1200, 900))  # the limiting occupancy resource
    blank = int((pixels == np.array((0xfa, 0xfa, 0xfa))).all(axis=2).sum())
    assert blank < 0.8 * 1200 * 900  # a page, not an empty background
