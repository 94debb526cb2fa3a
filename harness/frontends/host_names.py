"""Names a host C/C++ library defines and NVRTC does not (it has no host library), each with what
to write instead. Both front ends use it: clang's portability check reports them before NVRTC
would, and NVRTC's own "identifier ... is undefined" message gets the same advice appended."""
from __future__ import annotations

import re

#: host-only macro → (the header that defines it, what works under NVRTC)
HOST_NAMES = {
    "INFINITY": ("math.h", "CUDART_INF_F from <math_constants.h>, or cuda::std::numeric_limits<float>::infinity() "
                 "from <cuda/std/limits>"),
    "NAN": ("math.h", "CUDART_NAN_F from <math_constants.h>, or cuda::std::numeric_limits<float>::quiet_NaN() "
            "from <cuda/std/limits>"),
    "HUGE_VAL": ("math.h", "CUDART_INF from <math_constants.h>"),
    "HUGE_VALF": ("math.h", "CUDART_INF_F from <math_constants.h>"),
    "FLT_MAX": ("float.h", "3.402823466e+38f, CUDART_MAX_NORMAL_F from <math_constants.h>, or "
                "cuda::std::numeric_limits<float>::max() from <cuda/std/limits>"),
    "FLT_MIN": ("float.h", "1.175494351e-38f"),
    "FLT_EPSILON": ("float.h", "1.192092896e-07f"),
    "DBL_MAX": ("float.h", "1.7976931348623157e+308"),
    "DBL_EPSILON": ("float.h", "2.2204460492503131e-16"),
    "INT_MAX": ("limits.h", "0x7fffffff, or cuda::std::numeric_limits<int>::max() from <cuda/std/limits>"),
    "INT_MIN": ("limits.h", "(-0x7fffffff - 1)"),
    "UINT_MAX": ("limits.h", "0xffffffffu"),
    "LLONG_MAX": ("limits.h", "0x7fffffffffffffffll"),
    "CHAR_BIT": ("limits.h", "8"),
    "SIZE_MAX": ("stdint.h", "cuda::std::numeric_limits<size_t>::max() from <cuda/std/limits>"),
    "INT32_MAX": ("stdint.h", "0x7fffffff"),
    "UINT32_MAX": ("stdint.h", "0xffffffffu"),
    "RAND_MAX": ("stdlib.h", "no host random numbers in a kernel"),
}

_UNDEFINED = re.compile(r'identifier "(\w+)" is undefined')


def advice(message: str) -> str:
    """NVRTC's message, with what to write instead when it names a host-only macro."""
    m = _UNDEFINED.search(message)
    if m is None or m[1] not in HOST_NAMES:
        return message
    header, instead = HOST_NAMES[m[1]]
    return f"{message}: {m[1]} comes from the host header <{header}>, which NVRTC does not have: use {instead}"
