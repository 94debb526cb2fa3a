"""`python -m grader` is `kata` (useful where the console script is not on PATH)."""
from grader.cli import main

main()
