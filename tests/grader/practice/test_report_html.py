"""The interview report as a user sees it: rendered by headless Chromium, verdicts in the DOM."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from grader.practice.interview_report import (FindingRow, InterviewReport, KataOutcome, SuiteResult,
                                     render_html, render_terminal, write_html)

def _report() -> InterviewReport:
    passed = KataOutcome("reduce", "Sum reduction", SuiteResult("pass", 14), SuiteResult("pass", 103),
                         memory="moves 1.00× the compulsory bytes", time_used_s=900, attempts=4,
                         hints=1, hints_total=3, solution="__global__ void reduce() {}",
                         explanation="A grid-stride loop, then a tree in shared memory.")
    failed = KataOutcome(
        "scan", "Inclusive scan", SuiteResult("pass", 12),
        SuiteResult("fail", 40, "fails for n = 1025: out[1024] = 7, expected 9",
                   ("out[1024] = 7, expected 9",), "kata grade --case n=1025 --seed 77"),
        findings=(FindingRow("race-raw", "error", "kernel.cu:17", "read before the barrier", 2),),
        time_used_s=1500, attempts=7, hints=3, hints_total=3,
        solution="__global__ void scan() { /* <b>not markup</b> */ }")
    return InterviewReport("a1b2c3", 1_700_000_000, 1_700_002_700, 1_700_002_400, "submitted",
                           "cpu", 77, (passed, failed))


class _Texts(HTMLParser):
    """Collects the text of elements carrying data-stage, keyed by (kata, stage)."""

    def __init__(self):
        super().__init__()
        self.kata, self.stage, self.found, self.links = None, None, {}, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.kata = attrs.get("data-kata", self.kata)
        self.stage = attrs.get("data-stage") if tag == "td" else self.stage
        for key in ("src", "href"):
            if attrs.get(key):
                self.links.append(attrs[key])

    def handle_data(self, data):
        if self.stage and data.strip():
            self.found[(self.kata, self.stage)] = data.strip()
            self.stage = None


def test_html_is_self_contained_and_escapes_source():
    html = render_html(_report())
    parser = _Texts()
    parser.feed(html)
    assert all(link.startswith("#") for link in parser.links)  # no external assets
    assert "<link" not in html and "<script" not in html
    assert "&lt;b&gt;not markup&lt;/b&gt;" in html
    assert parser.found[("reduce", "hidden")] == "pass"
    assert parser.found[("scan", "hidden")] == "fail"


def test_terminal_report_names_failures_and_findings():
    from rich.console import Console

    console = Console(record=True, width=120)
    render_terminal(_report(), console)
    text = console.export_text()
    assert "1/2 passed" in text
    assert "fails for n = 1025" in text and "race-raw kernel.cu:17" in text
    assert "Secret seed (now revealed): 77" in text


@pytest.mark.browser
def test_chromium_renders_the_verdicts(tmp_path, chromium):
    page = write_html(_report(), tmp_path / "report.html")
    dom = chromium("--dump-dom", page.as_uri())
    cells = dict(re.findall(r'<tr data-kata="(\w+)">.*?data-stage="hidden">(\w+)</td>', dom, re.S))
    assert cells == {"reduce": "pass", "scan": "fail"}
    overall = dict(re.findall(r'<tr data-kata="(\w+)">.*?data-stage="verdict">(\w+)</td>', dom, re.S))
    assert overall == {"reduce": "pass", "scan": "fail"}
    assert '<span id="score">1/2 katas passed</span>' in dom
    assert "fails for n = 1025: out[1024] = 7, expected 9" in dom
    shot = tmp_path / "report.png"
    chromium(f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000  # something was drawn


def test_performance_and_memory_lines_come_from_the_stage_results():
    from types import SimpleNamespace

    from grader.practice.interview_report import _describe
    from grader.performance.score import ScoreSummary

    summary = ScoreSummary("roofline", 0.81, 0.95, "good", {"pass": 0.5, "good": 0.75,
                                                             "excellent": 0.9}, "", "")
    line = _describe(SimpleNamespace(summary=summary, error=None))
    assert line.startswith("good · ") and "81%" in line
    memory = SimpleNamespace(efficiency=0.5, moved_bytes=800, compulsory_bytes=400,
                             load_sectors_per_request=8.0, load_ideal_sectors_per_request=4.0)
    assert _describe(SimpleNamespace(report=memory, note="")).startswith("50% efficient")
    assert _describe(SimpleNamespace(report=None, note="no counters")) == "no counters"
    assert _describe(None) == ""
