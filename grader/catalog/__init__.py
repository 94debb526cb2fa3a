"""The catalogue: katas as data (katas/<id>/), their solutions and classic mistakes (solutions/<id>/).

`loader` reads and validates a kata folder once; `wrong` materialises the wrong kernels (stored as
diffs of their solution). `kata dev check`, which tests the content like code, is grader/devcheck/ (it
uses the grading pipeline).
"""
from grader.catalog.loader import (FORMAT, KATA_FILES, LEVELS, Arg, Bench, Kata, Param, Tolerance,
                                   all_katas, evaluate, ids, katas_root, load)

__all__ = ["FORMAT", "KATA_FILES", "LEVELS", "Arg", "Bench", "Kata", "Param", "Tolerance",
           "all_katas", "evaluate", "ids", "katas_root", "load"]
