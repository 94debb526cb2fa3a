"""The cache-hint loads and stores that nvcc's headers define and clang's CUDA wrapper lacks.

clang 22's __clang_cuda_intrinsics.h has __ldcg/__ldcs/__ldcv and __stwt but not __stcs, __stcg,
__stwb, __ldca or __ldlu (CUDA's sm_32_intrinsics.hpp, which has them, is deliberately not
included by clang's wrapper). Kernels use __stcs for streaming outputs, so the clang front end
force-includes these definitions: the same PTX instructions NVRTC emits for them.
"""
from __future__ import annotations

#: C type → (PTX type, asm constraint); vectors are built from these
_SCALARS = {"float": ("f32", "f"), "double": ("f64", "d"), "int": ("s32", "r"), "unsigned int": ("u32", "r"),
            "long long": ("s64", "l"), "unsigned long long": ("u64", "l")}
_VECTORS = {"float2": "float", "float4": "float", "double2": "double", "int2": "int", "int4": "int",
            "uint2": "unsigned int", "uint4": "unsigned int", "longlong2": "long long",
            "ulonglong2": "unsigned long long"}
_STORES = {"__stcs": "cs", "__stcg": "cg", "__stwb": "wb"}
_LOADS = {"__ldca": "ca", "__ldlu": "lu"}
_XYZW = "xyzw"


def _types():
    for c in _SCALARS:
        yield c, c, 1
    for v, c in _VECTORS.items():
        yield v, c, int(v[-1])


def header() -> str:
    out = ["/* kata: cache-hint loads and stores missing from clang's CUDA wrapper (see clang_extras.py) */",
           "#pragma once", "#if defined(__CUDA_ARCH__) || defined(__CUDA__)"]
    for decl, elem, n in _types():
        ptx, con = _SCALARS[elem]
        vec = "" if n == 1 else f".v{n}"
        parts = ["__v"] if n == 1 else [f"__v.{_XYZW[k]}" for k in range(n)]
        slots = ",".join(f"%{k + 1}" for k in range(n))
        regs = slots if n == 1 else "{" + slots + "}"
        for name, hint in _STORES.items():
            ins = ", ".join(f'"{con}"({p})' for p in parts)
            out.append(f'static __device__ __inline__ void {name}({decl} *__p, {decl} __v) '
                       f'{{ asm volatile("st.global.{hint}{vec}.{ptx} [%0], {regs};" :: "l"(__p), {ins} : "memory"); }}')
        outs = ["__r"] if n == 1 else [f"__r.{_XYZW[k]}" for k in range(n)]
        oslots = ",".join(f"%{k}" for k in range(n))
        oregs = oslots if n == 1 else "{" + oslots + "}"
        for name, hint in _LOADS.items():
            res = ", ".join(f'"={con}"({r})' for r in outs)
            out.append(f'static __device__ __inline__ {decl} {name}(const {decl} *__p) {{ {decl} __r; '
                       f'asm volatile("ld.global.{hint}{vec}.{ptx} {oregs}, [%{n}];" : {res} : "l"(__p)); return __r; }}')
    out.append("#endif")
    return "\n".join(out) + "\n"
