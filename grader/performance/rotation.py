"""What keeps a GPU timing honest beyond its method (issue 24): timed samples that rotate between
buffer sets with different inputs, so a kernel that remembers an answer is timed on a launch whose
answer it has not seen (and every set's outputs are checked afterwards), and a floor below which a
time is impossible for the case's bytes and FLOPs (grader/performance/measured.py uses both)."""
from __future__ import annotations


#: a timing below this share of the roofline time is impossible (the ceilings are measured on this
#: GPU by the same method; the margin covers their noise)
FLOOR_FRACTION = 0.85


class Rotation:
    """run/prepare for timing.measure: each sample on the next buffer set, prepared outside the timing."""

    def __init__(self, launch_fn, plan, sets):
        self.launch_fn, self.plan, self.sets = launch_fn, plan, sets
        self.at = 0
        self.runs = [0] * len(sets)

    def prepare(self) -> None:
        self.at = (self.at + 1) % len(self.sets)
        self.sets[self.at].prepare()

    def run(self) -> None:
        self.runs[self.at] += 1
        self.launch_fn(self.plan, **self.sets[self.at].args)
