// Tensor cores through nvcuda::wmma: 16x16x16 half -> float, plus a tiled GEMM and a tf32 one.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

// One warp computes D = A * B + C for a single 16x16x16 tile.
// A row-major 16x16 half, B column-major 16x16 half, C/D row-major 16x16 float.
__global__ void wmma_16x16x16(const half *A, const half *B, const float *C, float *D)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::load_matrix_sync(acc, C, 16, wmma::mem_row_major);
    wmma::mma_sync(acc, a, b, acc);
    wmma::store_matrix_sync(D, acc, 16, wmma::mem_row_major);
}

// Tiled GEMM: C (M x N, row-major float) = alpha * A (M x K row-major half) * B (K x N row-major
// half). Each warp owns one 16x16 output tile; M, N, K multiples of 16; blockDim = (32, 4):
// warp w of block (bx, by) handles tile row by*4 + w, tile column bx.
__global__ void wmma_gemm(const half *A, const half *B, float *C, int M, int N, int K, float alpha)
{
    int warp = threadIdx.y;
    int tile_m = blockIdx.y * blockDim.y + warp;
    int tile_n = blockIdx.x;
    if (tile_m * 16 >= M || tile_n * 16 >= N)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + tile_m * 16 * K + k, K);
        wmma::load_matrix_sync(b, B + k * N + tile_n * 16, N);
        wmma::mma_sync(acc, a, b, acc);
    }
    for (int e = 0; e < acc.num_elements; ++e)
        acc.x[e] *= alpha;
    wmma::store_matrix_sync(C + tile_m * 16 * N + tile_n * 16, acc, N, wmma::mem_row_major);
}

// Half accumulator and a column-major store: D (half, col-major) = A * B with m16n16k16
__global__ void wmma_half_acc(const half *A, const half *B, half *D)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::col_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, half> acc;
    wmma::fill_fragment(acc, __float2half(0.0f));
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::mma_sync(acc, a, b, acc);
    wmma::store_matrix_sync(D, acc, 16, wmma::mem_col_major);
}

// TF32 (sm_80): m16n16k8, inputs converted with __float_to_tf32. D = tf32(A) * tf32(B)
// with A 16x8 row-major float, B 8x16 row-major float, D 16x16 row-major float
__global__ void wmma_tf32(const float *A, const float *B, float *D)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(a, A, 8);
    wmma::load_matrix_sync(b, B, 16);
    for (int e = 0; e < a.num_elements; ++e)
        a.x[e] = wmma::__float_to_tf32(a.x[e]);
    for (int e = 0; e < b.num_elements; ++e)
        b.x[e] = wmma::__float_to_tf32(b.x[e]);
    wmma::mma_sync(acc, a, b, acc);
    wmma::store_matrix_sync(D, acc, 16, wmma::mem_row_major);
}
