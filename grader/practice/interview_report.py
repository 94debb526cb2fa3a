"""The final report of a mock interview: per kata what the public and hidden tests said, the
failures now revealed, sanitizer findings, performance or memory efficiency, time, attempts,
hints, and the reference solution. Rendered for the terminal (rich) and as one self-contained HTML
file (jinja2, inline CSS, no external assets, so it opens offline and can be mailed).

The report is built from plain data (the outcome dicts sessions.py stores per kata), so a report
can be re-rendered from the history file after the fact.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from grader.practice.progress import format_duration

VERDICT_STYLE = {"pass": "bold green", "fail": "bold red", "error": "bold yellow",
                 "skipped": "dim"}


@dataclass(frozen=True)
class FindingRow:
    kind: str  # a finding kind from harness/emulator/findings.py
    severity: str  # "error" | "warning"
    where: str  # file:line in the learner's source
    message: str  # one sentence
    count: int = 1  # how many times it happened


@dataclass(frozen=True)
class SuiteResult:
    verdict: str  # "pass" | "fail" | "error" | "skipped"
    cases: int  # how many cases ran
    headline: str = ""  # the shrunk failure (or the error), "" on a pass
    mismatches: tuple[str, ...] = ()  # the first few mismatching elements of that case
    rerun: str = ""  # the command that reruns exactly the failing case


@dataclass(frozen=True)
class KataOutcome:
    kata: str  # kata id
    title: str  # kata title
    public: SuiteResult  # the tests the learner could run during the session
    hidden: SuiteResult  # adversarial cases plus cases drawn with the session's secret seed
    findings: tuple[FindingRow, ...] = ()  # sanitizer findings (CPU), deduplicated
    performance: str = ""  # GPU: tier and score, e.g. "good · 0.81 of roofline"; "" on CPU
    memory: str = ""  # CPU: memory efficiency, e.g. "moves 1.00× the compulsory bytes"
    time_used_s: float = 0.0  # from the session start to the last grade of this kata
    attempts: int = 0  # `kata interview grade` / `kata grade` runs on this kata
    hints: int = 0  # hints revealed during the session
    hints_total: int = 0  # hints the kata has
    solution: str = ""  # the reference kernel's source
    explanation: str = ""  # why the reference solution is written the way it is
    backend: str = ""  # "cpu" | "gpu": where the hidden tests ran
    late_save_s: float = 0.0  # a source was last saved this long after the deadline (0: in time)
    snapshot_before_s: float = 0.0  # graded from the snapshot this long before the deadline (deadline.py)
    problem: str = ""  # why the kata fails although every output matched (a sanitizer finding)
    grade_page: str = ""  # the submit's `kata grade --html` page, relative to the session folder ("" if none)

    @property
    def verdict(self) -> str:
        """The kata's verdict: pass only when public and hidden tests both pass and the sanitizer
        found no error."""
        if self.problem:
            return "fail"
        if self.public.verdict == "pass" and self.hidden.verdict == "pass":
            return "pass"
        if "error" in (self.public.verdict, self.hidden.verdict):
            return "error"
        return "fail"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "KataOutcome":
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in data.items() if k in known}  # outcomes outlive versions
        data["public"] = SuiteResult(**{**data["public"],
                                       "mismatches": tuple(data["public"].get("mismatches", ()))})
        data["hidden"] = SuiteResult(**{**data["hidden"],
                                       "mismatches": tuple(data["hidden"].get("mismatches", ()))})
        data["findings"] = tuple(FindingRow(**f) for f in data.get("findings", ()))
        return cls(**data)


@dataclass(frozen=True)
class InterviewReport:
    session_id: str  # the session
    started_at: float  # unix time
    deadline: float  # unix time the countdown ended or would have
    submitted_at: float  # unix time of the freeze
    reason: str  # "submitted" | "deadline"
    backend: str  # "cpu" | "gpu"
    secret_seed: int  # now revealed, so any hidden case can be rerun
    katas: tuple[KataOutcome, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> int:
        return sum(k.verdict == "pass" for k in self.katas)

    @property
    def time_used_s(self) -> float:
        return max(0.0, min(self.submitted_at, self.deadline) - self.started_at)

    @property
    def minutes(self) -> int:
        return round((self.deadline - self.started_at) / 60)


def _when(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def render_terminal(report: InterviewReport, console=None) -> None:
    """The report as text: every learner and catalogue string printed as text, never as markup
    (a mismatch line `out[3] = ...` keeps its brackets); a pipe gets one row per kata, uncut."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from grader.terminal import Terminal

    console = console or Terminal()
    piped = not console.is_terminal
    title = (f"Interview {report.session_id} · {report.passed}/{len(report.katas)} passed · "
             f"{format_duration(report.time_used_s)} of {_minutes(report)} · {report.backend}")
    table = Table(title=title, title_justify="left", show_lines=False,
                  **({"box": None} if piped else {}))
    for column in ("kata", "verdict", "public", "hidden", "findings", "perf / memory", "time", "attempts",
                   "hints"):
        table.add_column(column, no_wrap=piped)
    for k in report.katas:
        table.add_row(
            k.kata, Text(k.verdict, style=VERDICT_STYLE[k.verdict]),
            Text.assemble((k.public.verdict, VERDICT_STYLE[k.public.verdict]), f" ({k.public.cases})"),
            Text.assemble((k.hidden.verdict, VERDICT_STYLE[k.hidden.verdict]), f" ({k.hidden.cases})"),
            str(len(k.findings)) if k.findings else "none",
            k.performance or k.memory or "-",
            format_duration(k.time_used_s), str(k.attempts), f"{k.hints}/{k.hints_total}")
    console.print(table)
    if report.reason == "deadline":
        console.print("Time ran out: the workspaces were frozen at the deadline.", style="yellow")
    for k in report.katas:
        lines: list[Text] = []
        for name, result in (("public", k.public), ("hidden", k.hidden)):
            if result.verdict != "pass" and result.headline:
                lines.append(Text.assemble((f"{name}:", "bold"), f" {result.headline}"))
                lines.extend(Text(f"    {m}") for m in result.mismatches)
                if result.rerun:
                    lines.append(Text(f"    rerun: {result.rerun}"))
        if k.problem:
            lines.append(Text.assemble(("fails:", "bold"), f" {k.problem}"))
        if k.late_save_s and k.snapshot_before_s:
            lines.append(Text(f"edited {format_duration(k.late_save_s)} after time ran out; those edits "
                              f"were not graded: graded as at your last grade, "
                              f"{format_duration(k.snapshot_before_s)} before the deadline", style="yellow"))
        elif k.late_save_s:
            lines.append(Text(f"saved {format_duration(k.late_save_s)} after time ran out; "
                              "graded as saved (no grade before the deadline kept an earlier state)", style="yellow"))
        for f in k.findings:
            times = f" (×{f.count})" if f.count > 1 else ""
            if not k.problem or f.message not in k.problem:  # told once
                lines.append(Text.assemble((f.kind, "red"), f" {f.where}: {f.message}{times}"))
        _section(console, f"{k.kata}: what went wrong", lines, piped, Panel)
        if k.solution:
            if k.explanation:
                _section(console, f"{k.kata}: the reference solution", [Text(k.explanation)], piped, Panel)
            from rich.syntax import Syntax

            console.print(Syntax(k.solution, "cuda", line_numbers=True))
    console.print(f"Secret seed (now revealed): {report.secret_seed}")


def _minutes(report: InterviewReport) -> str:
    """The session's length as it was asked for: `--minutes 0.5` is 30 s, not '0 min'."""
    return format_duration(report.deadline - report.started_at)


def _section(console, title: str, lines: list, piped: bool, panel) -> None:
    if not lines:
        return
    from rich.text import Text

    body = Text("\n").join(lines)
    if piped:  # a panel's border would be as wide as the pipe's unlimited width
        console.print(Text(f"{title}:", style="bold"))
        console.print(body)
    else:
        console.print(panel(body, title=title, title_align="left"))


def render_html(report: InterviewReport) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("grader.practice", "templates"),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["duration"] = format_duration
    env.filters["when"] = _when
    return env.get_template("interview_report.html.j2").render(report=report)


def write_html(report: InterviewReport, path: Path) -> Path:
    path = Path(path)
    path.write_text(render_html(report), encoding="utf-8")
    return path


def _suites(report) -> tuple[SuiteResult, SuiteResult]:
    """The submit's GradeReport (grader/pipeline/, hidden=True) split into the public suite
    (the kata's public cases, which the pipeline runs first) and the hidden suite (cases drawn
    with the secret seed, then the kata's hidden cases)."""
    verdict = str(getattr(report, "verdict", "error"))
    headline = str(getattr(report, "headline", "") or "")
    correctness = getattr(report, "correctness", None)
    if correctness is None:  # it never ran: does not compile, or launch.py is broken
        failed = SuiteResult(verdict, 0, headline)
        return failed, SuiteResult("skipped", 0, "not run: " + headline)
    failure = correctness.failure
    public_cases = int(getattr(correctness, "public", 0) or 0)
    hidden_cases = int(correctness.cases_run) - public_cases
    if failure is None:
        # Every case's outputs matched; a sanitizer finding that still fails the kata is the
        # outcome's `problem`, not a test verdict.
        return SuiteResult("pass", public_cases), SuiteResult("pass", hidden_cases)
    shown = SuiteResult(verdict, 0, failure.headline or headline,
                        tuple(str(m) for m in (failure.mismatches or ()))[:5], failure.rerun or "")
    if failure.origin == "public":
        return (SuiteResult(shown.verdict, public_cases, shown.headline, shown.mismatches,
                            shown.rerun),
                SuiteResult("skipped", 0, "not run: the public tests failed first"))
    return SuiteResult("pass", public_cases), SuiteResult(
        shown.verdict, hidden_cases, shown.headline, shown.mismatches, shown.rerun)


def _findings(report) -> tuple[FindingRow, ...]:
    rows = []
    for f in getattr(report, "findings", ()) or ():
        where = f.where() if callable(getattr(f, "where", None)) else str(getattr(f, "where", "?"))
        rows.append(FindingRow(str(f.kind), str(getattr(f, "severity", "error")), where,
                               str(f.message), int(getattr(f, "count", 1) or 1)))
    return tuple(rows)


def solution_of(kata) -> tuple[str, str]:
    """The reference kernel and its explanation: the solution's README when it has one, else the
    comment block that opens kernel.cu, followed by the kata's last hint."""
    folder = kata.solution_dir
    source = (folder / "kernel.cu").read_text() if (folder / "kernel.cu").is_file() else ""
    readme = folder / "README.md"
    if readme.is_file():
        return source, readme.read_text().strip()
    lead = []
    for line in source.splitlines():
        if not line.startswith("//"):
            break
        lead.append(line.lstrip("/ ").rstrip())
    parts = [" ".join(lead)] if lead else []
    if kata.hints:
        parts.append(kata.hints[-1])
    return source, "\n\n".join(parts)


def outcome_from(kata_id: str, report, *, attempts: int, hints: int, time_used_s: float,
                 late_save_s: float = 0.0, snapshot_before_s: float = 0.0, grade_page: str = "") -> KataOutcome:
    """One kata's outcome from the GradeReport of its submit."""
    from grader import catalog

    kata = catalog.load(kata_id)
    solution, explanation = solution_of(kata)
    public, hidden = _suites(report)
    correctness = getattr(report, "correctness", None)
    matched = correctness is not None and getattr(correctness, "failure", None) is None
    failed = str(getattr(report, "verdict", "error")) != "pass"
    problem = str(getattr(report, "headline", "")) if matched and failed else ""
    return KataOutcome(
        kata=kata_id, title=kata.title, public=public, hidden=hidden, findings=_findings(report),
        performance=_describe(getattr(report, "performance", None)),
        memory=_describe(getattr(report, "memory", None)),
        time_used_s=max(0.0, time_used_s), attempts=attempts, hints=hints,
        hints_total=len(kata.hints), solution=solution, explanation=explanation,
        backend=str(getattr(report, "backend", "") or ""), late_save_s=late_save_s,
        snapshot_before_s=snapshot_before_s,
        problem=problem, grade_page=grade_page)


def _describe(stage) -> str:
    """The performance stage (grader/performance/measured.py: PerformanceResult on a GPU, MemoryReport on the
    CPU) as one line."""
    if stage is None:
        return ""
    if isinstance(stage, str):
        return stage
    summary = getattr(stage, "summary", None)
    if summary is not None and hasattr(summary, "tier"):
        return f"{summary.tier} · {summary.headline()}"
    if hasattr(stage, "report") and hasattr(stage, "note"):  # grader.results.MemoryStage
        return _describe(stage.report) if stage.report is not None else stage.note
    if getattr(stage, "error", None):
        return f"not scored: {stage.error}"
    if hasattr(stage, "efficiency") and hasattr(stage, "compulsory_bytes"):
        return (f"{stage.efficiency:.0%} efficient: moves {stage.moved_bytes:,} B for "
                f"{stage.compulsory_bytes:,} compulsory; loads "
                f"{stage.load_sectors_per_request:.1f} sectors/request "
                f"(ideal {stage.load_ideal_sectors_per_request:.1f})")
    return str(stage)
