"""CUDA errors surface far below launch.py (kernel errors are asynchronous); they are the learner's."""
from harness.sandbox.isolation import Program
from harness.sandbox.worker import _classify


class CUDARuntimeError(RuntimeError):
    """Named like CuPy's, which this machine may not have."""


class CUDADriverError(RuntimeError):
    pass


def classify(tmp_path, exc):
    launch = tmp_path / "launch.py"
    launch.write_text("def launch(gpu):\n    pass\n")
    return _classify(exc, Program("gpu", None, None, "kernel.cu", str(launch)))


def test_an_illegal_address_is_a_crash_of_the_kernel_not_a_bug_of_ours(tmp_path):
    p = classify(tmp_path, CUDARuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered"))
    assert p.kind == "crash" and "crashed on the GPU" in p.message and "illegal memory access" in p.message
    assert classify(tmp_path, CUDADriverError("CUDA_ERROR_MISALIGNED_ADDRESS: misaligned address")).kind == "crash"


def test_too_many_registers_is_a_launch_error_and_allocation_failure_is_memory(tmp_path):
    p = classify(tmp_path, CUDADriverError("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested"))
    assert p.kind == "launch-error" and "fewer threads per block" in p.message
    p = classify(tmp_path, CUDARuntimeError("cudaErrorMemoryAllocation: out of memory"))
    assert p.kind == "memory"
