"""The report under construction: each stage of a grade adds its part to one ReportDraft, the
first stage that decides the verdict ends it, and build() makes the one frozen GradeReport."""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.results import CompileStage, CorrectnessStage, GradeReport, MemoryStage, ResourceStage


@dataclass
class ReportDraft:
    kata: str
    title: str
    workspace: str
    backend: str
    backend_reason: str
    seed: int
    diagnostic: bool
    notes: list[str] = field(default_factory=list)
    sources: str = ""
    compile: CompileStage | None = None
    resources: ResourceStage | None = None
    correctness: CorrectnessStage | None = None
    findings: tuple = ()
    memory: MemoryStage | None = None
    performance: object = None
    estimate: object = None
    verdict: str = ""
    stage: str = ""
    headline: str = ""
    reasons: tuple[str, ...] = ()

    @property
    def ended(self) -> bool:
        return bool(self.verdict)

    def end(self, verdict: str, stage: str, headline: str, reasons: tuple[str, ...]) -> None:
        """The verdict: no later stage runs."""
        self.verdict, self.stage, self.headline, self.reasons = verdict, stage, headline, tuple(reasons)

    def note(self, *notes: str) -> None:
        self.notes.extend(notes)

    def build(self) -> GradeReport:
        return GradeReport(
            kata=self.kata,
            title=self.title,
            workspace=self.workspace,
            backend=self.backend,
            backend_reason=self.backend_reason,
            seed=self.seed,
            verdict=self.verdict,
            stage=self.stage,
            headline=self.headline,
            reasons=self.reasons,
            compile=self.compile,
            resources=self.resources,
            correctness=self.correctness,
            findings=self.findings,
            memory=self.memory,
            performance=self.performance,
            estimate=self.estimate,
            notes=tuple(self.notes),
            sources=self.sources,
            diagnostic=self.diagnostic,
        )
