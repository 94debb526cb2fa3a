"""The grading GPU's public facts (NVIDIA H200 SXM), in one place: the backends report them to
launch plans, the emulator sizes its resident blocks and %nsmid by them, the occupancy table and
the performance model read their arithmetic from them. Fitted constants (latencies, sustained
rates) are not facts: they live with the model (grader/performance/model/fitted.json).

Per SM (Hopper): 4 sub-partitions, each issuing one warp instruction per cycle; 128 FP32 lanes,
64 INT32, 16 SFU, 32 load/store lanes and one shared-memory wavefront of 128 B per cycle; 256 KiB
of L1 and shared memory together. 132 SMs at the 1.98 GHz boost clock, 60 MiB of L2.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceFacts:
    name: str  # e.g. "NVIDIA H200" or "kata CPU emulator (H200 model)"
    sm_count: int  # streaming multiprocessors
    max_threads_per_block: int  # 1024 on every GPU kata targets
    max_shared_per_block: int  # bytes without opt-in (48 KiB)
    max_shared_per_block_optin: int  # bytes with cudaFuncAttributeMaxDynamicSharedMemorySize
    shared_per_sm: int  # bytes
    warp_size: int  # 32
    l2_bytes: int  # L2 cache size
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    registers_per_sm: int = 65536


# The H200's facts, which the CPU emulator reports so that launch plans size themselves the same way.
H200 = DeviceFacts(name="NVIDIA H200", sm_count=132, max_threads_per_block=1024,
                   max_shared_per_block=48 * 1024, max_shared_per_block_optin=227 * 1024,
                   shared_per_sm=228 * 1024, warp_size=32, l2_bytes=62_914_560)


#: what launch plans see on the GPU and on the emulator (which reports the same so plans size alike)
H200 = DeviceFacts(name="NVIDIA H200", sm_count=132, max_threads_per_block=1024,
                   max_shared_per_block=48 * 1024, max_shared_per_block_optin=227 * 1024,
                   shared_per_sm=228 * 1024, warp_size=32, l2_bytes=62_914_560)

CLOCK_HZ = 1.98e9  # boost clock
SUB_PARTITIONS = 4  # warp schedulers per SM, one warp instruction per cycle each
L1_BYTES = 256 * 1024  # L1 and shared memory together, per SM
SECTOR = 32  # bytes: the unit of L1/L2/DRAM traffic
SHARED_RESERVED_PER_BLOCK = 1024  # bytes the CUDA runtime keeps per resident block (sm_80 and newer)
#: dense tensor-core peaks of the whole GPU in FLOP/s (NVIDIA's H100/H200 SXM datasheet; wgmma is what
#: reaches them, mma.sync issues from registers and does not), by the roofline's precision names
TENSOR_PEAK = {"bf16": 989.4e12, "fp16": 989.4e12, "tf32": 494.7e12, "fp8": 1978.8e12}
#: warp instructions per cycle per SM of each pipe (lanes per cycle / 32)
PIPE_RATE = {"fp32": 4.0, "int": 2.0, "sfu": 0.5, "fp64": 2.0, "lsu": 1.0, "shuffle": 1.0,
             "branch": 2.0, "tensor": 1.0, "other": 4.0}
