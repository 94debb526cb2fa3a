"""The grading pipeline: grade() and the backend it runs on (grader/pipeline/run.py)."""

from grader.pipeline.backend import BackendChoice, choose_backend
from grader.pipeline.run import grade

__all__ = ["BackendChoice", "choose_backend", "grade"]
