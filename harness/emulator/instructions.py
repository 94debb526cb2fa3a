"""The instruction set: importing this module registers every op builder with ops.BUILDERS.

ops.py holds the registry and the operand plumbing; each ops_*.py module registers the opcodes of
one family (integer, float, conversion, memory, atomics, warp, control, bits; mma, wmma,
cp.async, dot products) with @builder. A new
PTX instruction goes in the family module it belongs to (or a new ops_<family>.py listed here).
"""
from . import ops_atom, ops_bits, ops_ctrl, ops_cvt, ops_float, ops_int, ops_mem, ops_warp  # noqa: F401
from . import ops_async, ops_dot, ops_mma, ops_wmma  # noqa: F401  (tensor cores, cp.async, dp4a)
# Hopper, after the families they extend (each routes its forms of cvt/mma/cp/barrier, the rest unchanged)
from . import ops_cluster, ops_fp8, ops_mbarrier, ops_tma, ops_wgmma  # noqa: F401,E402
