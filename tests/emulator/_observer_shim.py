"""Lets the observer unit tests run before the engine's observer module exists."""
import sys
import types
from collections import namedtuple

try:
    import harness.emulator.observer  # noqa: F401
except ImportError:
    shim = types.ModuleType("harness.emulator.observer")

    class Observer:  # the documented hook interface, all no-ops
        findings: list = []

    shim.Observer = Observer
    sys.modules["harness.emulator.observer"] = shim

Inst = namedtuple("Inst", "opcode pc file line")
