"""The catalogue: katas as data (katas/<id>/), their solutions and classic mistakes (solutions/<id>/).

`loader` reads and validates a kata folder once; `wrong` materialises the wrong kernels (stored as
diffs of their solution). `kata dev check`, which tests the content like code, is grader/devcheck/ (it
uses the grading pipeline).
"""
from grader.catalog.loader import (FORMAT, KATA_FILES, LEVELS, Arg, Bench, Kata, Param, Tolerance, add_root,
                                   all_katas, evaluate, ids, katas_root, load, load_folder)
from grader.catalog.roots import builtin_ids

__all__ = ["FORMAT", "KATA_FILES", "LEVELS", "Arg", "Bench", "Kata", "Param", "Tolerance", "add_root",
           "all_katas", "builtin_ids", "evaluate", "ids", "katas_root", "load", "load_folder"]
