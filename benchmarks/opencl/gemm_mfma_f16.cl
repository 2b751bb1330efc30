// The f16 GEMM of tests/cuda/tensor_core.cu's wmma_gemm (C = alpha * A * B, A M x K and B K x N
// row-major half, C row-major float) written for AMD's matrix cores by hand: one wave64 per
// 16 x 16 tile of C, one v_mfma_f32_16x16x16f16 per k step of 16. The baseline that
// benchmarks/bench_tensor.py compares ptxvm's translated wmma_gemm inner loop with.
//
// Operand layout of v_mfma_f32_16x16x16f16 (CDNA2/CDNA3 ISA, "dependent matrix operations";
// lane l of the wave): A holds row l % 16, k = 4 * (l / 16) .. + 3; B holds column l % 16, the same
// four k; the float4 result holds column l % 16, rows 4 * (l / 16) .. + 3.
// grid = (N / 16, M / 16) work-groups of 64 work-items; M, N, K multiples of 16. Checked on the
// gfx90a ISA emulator (../shared/tools/amdgpu-emu): equal to numpy for small-integer 32 x 32 inputs.
#include "amdgcn_builtins.cl"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef half half4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));

__kernel void gemm_mfma_f16(__global const half *A, __global const half *B, __global float *C,
                            int M, int N, int K, float alpha)
{
    int lane = get_local_id(0);
    int row0 = get_group_id(1) * 16, col0 = get_group_id(0) * 16;
    int r = lane % 16, kq = 4 * (lane / 16);
    float4_t acc = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = 0; k < K; k += 16) {
        half4_t a, b;
        for (int j = 0; j < 4; ++j) {
            a[j] = A[(row0 + r) * K + k + kq + j];
            b[j] = B[(k + kq + j) * N + col0 + r];
        }
        acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, acc, 0, 0, 0);
    }
    for (int i = 0; i < 4; ++i)
        C[(row0 + kq + i) * N + col0 + r] = alpha * acc[i];
}
