"""CUDA's device-runtime functions a kernel calls without defining them (`.extern .func`).

`assert(cond)` compiles to a call of __assertfail(message, file, line, function, char size) when
cond is false; the GPU stops the launch and prints the file and line. Here the launch stops the
same way (as a trap does) with the finding "assertion failed at kernel.cu:LINE", the line being
the one the assert macro passed (its __LINE__).
"""
from __future__ import annotations

import numpy as np

from .ops import EXIT


def assertfail(eng, inst, rets, args):
    line_param = eng.pbuf[args[2]] if len(args) > 2 else None

    def run(sel):
        lanes = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else sel
        first = int(np.asarray(lanes).ravel()[0]) if np.size(lanes) else 0
        line = int(line_param[first, :4].view(np.uint32)[0]) if line_param is not None else inst.line
        where = f"{inst.file}:{line}"
        eng.report("trap", inst, lanes, f"assertion failed at {where}: the condition of the assert() on "
                   "that line was false for this thread; the launch was aborted, as on a GPU")
        eng.stopped = True
    return EXIT, run


#: name of the extern function -> builder(eng, inst, args) returning (kind, run)
def vprintf(eng, inst, rets, args):
    from .printf import vprintf as run_vprintf

    return run_vprintf(eng, inst, rets, args)


EXTERNS = {"__assertfail": assertfail, "vprintf": vprintf}
