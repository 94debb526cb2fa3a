"""The CUDA headers a learner includes compile with the project's wheels alone (no toolkit)."""
import pytest

from harness.frontends.nvrtc import compile

WMMA = r'''
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
extern "C" __global__ void k(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
'''
PIPELINE = r'''
#include <cuda_pipeline.h>
extern "C" __global__ void k(const float4* x, float4* out) {
    __shared__ float4 s[128];
    __pipeline_memcpy_async(&s[threadIdx.x], &x[threadIdx.x], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[threadIdx.x] = s[127 - threadIdx.x];
}
'''


@pytest.mark.parametrize("source,opcode", [(WMMA, "wmma.mma.sync"), (PIPELINE, "cp.async")],
                         ids=["mma.h", "cuda_pipeline.h"])
def test_header_compiles_to_its_instructions(source, opcode):
    r = compile(source, "kernel.cu")
    assert r.ok, r.log
    assert opcode in r.ptx
