"""A kata's [model] table: how the CPU performance model observes it (docs/kata-format.md)."""
from __future__ import annotations

from dataclasses import dataclass, field

from grader.errors import CatalogError

MODEL_MODES = ("sample", "data", "full")


@dataclass(frozen=True)
class ModelSettings:
    """The [model] table. A kata without one is observed with these defaults: the first blocks of
    every launch at the bench shape, halved along check_halve (else every integer dimension)
    where the inputs or the run do not fit the model's budget."""

    declared: bool = False  # the kata has a [model] table
    mode: str = "sample"  # sample: the first blocks of each launch | data: the same, on data-steered katas | full
    scale_by: str = "bytes"  # the cost-model quantity a smaller model shape is scaled by: bytes | flops | edges
    halve: tuple = ()  # dimensions a model shape is halved along (those that shorten a thread's loop)
    check_halve: tuple = ()  # dimensions the scaled-down check case (kata bench --backend cpu) halves
    shapes: tuple = ()  # one or two overrides of every bench case: the model shapes to run first
    case_shapes: tuple = ()  # the same, one list per bench case (when the cases need different ones)
    bench_scalars: dict = field(default_factory=dict)  # scalars only the inputs carry, at the bench shape
    case_scalars: tuple = ()  # the same, one table per bench case
    per_block: bool = False  # per-block counts at the model shape hold for the bench grid's blocks
    sample_threads: int | None = None  # threads emulated per launch in a sample (default: the model's)


def model_settings(table, cases: int, where: str) -> ModelSettings:
    if table is None:
        return ModelSettings()
    if not isinstance(table, dict):
        raise CatalogError(f"{where}: [model] should be a table")
    known = {f for f in ModelSettings.__dataclass_fields__ if f != "declared"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise CatalogError(f"{where}: model.{unknown[0]} is not a model setting (known: {', '.join(sorted(known))})")
    mode = table.get("mode", "sample")
    if mode not in MODEL_MODES:
        raise CatalogError(f"{where}: model.mode {mode!r} is not one of {', '.join(MODEL_MODES)}")
    for name in ("case_shapes", "case_scalars"):
        if name in table and len(table[name]) != cases:
            raise CatalogError(f"{where}: model.{name} needs one entry per bench case ({cases})")
    if len(table.get("shapes", [])) > 2 or any(len(s) > 2 for s in table.get("case_shapes", [])):
        raise CatalogError(f"{where}: model shapes are one or two overrides of the bench case")
    return ModelSettings(
        declared=True, mode=mode, scale_by=str(table.get("scale_by", "bytes")),
        halve=tuple(table.get("halve", ())), check_halve=tuple(table.get("check_halve", ())),
        shapes=tuple(dict(s) for s in table.get("shapes", ())),
        case_shapes=tuple(tuple(dict(s) for s in c) for c in table.get("case_shapes", ())),
        bench_scalars=dict(table.get("bench_scalars", {})),
        case_scalars=tuple(dict(c) for c in table.get("case_scalars", ())),
        per_block=bool(table.get("per_block", False)), sample_threads=table.get("sample_threads"))
