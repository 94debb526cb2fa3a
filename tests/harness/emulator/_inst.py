"""A stand-in for the engine's instruction objects when a test calls observer hooks by hand."""
from collections import namedtuple

Inst = namedtuple("Inst", "opcode pc file line")
