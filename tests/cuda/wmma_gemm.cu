// The WMMA GEMM pattern: D = alpha * A * B + beta * C, one warp per output tile, fragments
// loaded from global memory with a leading dimension, fill_fragment for the accumulator, the
// C fragment combined element by element, a store with its own leading dimension.
// blockDim = (32, 2): warp threadIdx.y of block (bx, by) owns tile row by * 2 + y, tile column bx.
// A is M x K, B is K x N; layouts per kernel below; every dimension a multiple of the tile.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

template <typename TFrag, typename TMem, typename TAcc, int TM, int TN, int TK, typename LA, typename LB>
__device__ void gemm_tile(const TMem *A, const TMem *B, const TAcc *C, TAcc *D, int lda, int ldb, int ldc,
                          int ldd, int K, TAcc alpha, TAcc beta, wmma::layout_t c_layout, wmma::layout_t d_layout)
{
    int tm = blockIdx.y * blockDim.y + threadIdx.y;
    int tn = blockIdx.x;
    bool a_row = std::is_same<LA, wmma::row_major>::value;
    bool b_row = std::is_same<LB, wmma::row_major>::value;
    wmma::fragment<wmma::matrix_a, TM, TN, TK, TFrag, LA> a;
    wmma::fragment<wmma::matrix_b, TM, TN, TK, TFrag, LB> b;
    wmma::fragment<wmma::accumulator, TM, TN, TK, TAcc> acc, c;
    wmma::fill_fragment(acc, TAcc(0));
    for (int k = 0; k < K; k += TK) {
        const TMem *pa = a_row ? A + tm * TM * lda + k : A + k * lda + tm * TM;
        const TMem *pb = b_row ? B + k * ldb + tn * TN : B + tn * TN * ldb + k;
        wmma::load_matrix_sync(a, pa, lda);
        wmma::load_matrix_sync(b, pb, ldb);
        wmma::mma_sync(acc, a, b, acc);
    }
    const TAcc *pc = c_layout == wmma::mem_row_major ? C + tm * TM * ldc + tn * TN : C + tn * TN * ldc + tm * TM;
    TAcc *pd = d_layout == wmma::mem_row_major ? D + tm * TM * ldd + tn * TN : D + tn * TN * ldd + tm * TM;
    wmma::load_matrix_sync(c, pc, ldc, c_layout);
    for (int e = 0; e < acc.num_elements; ++e)
        acc.x[e] = alpha * acc.x[e] + beta * c.x[e];
    wmma::store_matrix_sync(pd, acc, ldd, d_layout);
}

// f16 m16n16k16, float accumulator: A row-major, B column-major, C row-major, D column-major.
__global__ void wmma_gemm_f16(const half *A, const half *B, const float *C, float *D, int lda, int ldb,
                              int ldc, int ldd, int K, float alpha, float beta)
{
    gemm_tile<half, half, float, 16, 16, 16, wmma::row_major, wmma::col_major>(
        A, B, C, D, lda, ldb, ldc, ldd, K, alpha, beta, wmma::mem_row_major, wmma::mem_col_major);
}

// f16 m32n8k16 with a half accumulator: A column-major, B row-major, C and D row-major.
__global__ void wmma_gemm_f16_m32n8k16(const half *A, const half *B, const half *C, half *D, int lda, int ldb,
                                       int ldc, int ldd, int K, half alpha, half beta)
{
    gemm_tile<half, half, half, 32, 8, 16, wmma::col_major, wmma::row_major>(
        A, B, C, D, lda, ldb, ldc, ldd, K, alpha, beta, wmma::mem_row_major, wmma::mem_row_major);
}

// bf16 m8n32k16, float accumulator: A row-major, B row-major, C column-major, D row-major.
__global__ void wmma_gemm_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B, const float *C, float *D,
                               int lda, int ldb, int ldc, int ldd, int K, float alpha, float beta)
{
    gemm_tile<__nv_bfloat16, __nv_bfloat16, float, 8, 32, 16, wmma::row_major, wmma::row_major>(
        A, B, C, D, lda, ldb, ldc, ldd, K, alpha, beta, wmma::mem_col_major, wmma::mem_row_major);
}

// tf32 m16n16k8: float in memory (already tf32 values), float accumulator; A row, B column-major.
__global__ void wmma_gemm_tf32(const float *A, const float *B, const float *C, float *D, int lda, int ldb,
                               int ldc, int ldd, int K, float alpha, float beta)
{
    gemm_tile<wmma::precision::tf32, float, float, 16, 16, 8, wmma::row_major, wmma::col_major>(
        A, B, C, D, lda, ldb, ldc, ldd, K, alpha, beta, wmma::mem_row_major, wmma::mem_row_major);
}

// f64 m8n8k4: A row-major, B row-major, C and D row-major.
__global__ void wmma_gemm_f64(const double *A, const double *B, const double *C, double *D, int lda, int ldb,
                              int ldc, int ldd, int K, double alpha, double beta)
{
    gemm_tile<double, double, double, 8, 8, 4, wmma::row_major, wmma::row_major>(
        A, B, C, D, lda, ldb, ldc, ldd, K, alpha, beta, wmma::mem_row_major, wmma::mem_row_major);
}

// u8 m16n16k16, int accumulator: A row-major, B column-major, C and D row-major.
__global__ void wmma_gemm_u8(const unsigned char *A, const unsigned char *B, const int *C, int *D, int lda,
                             int ldb, int ldc, int ldd, int K, int alpha, int beta)
{
    gemm_tile<unsigned char, unsigned char, int, 16, 16, 16, wmma::row_major, wmma::col_major>(
        A, B, C, D, lda, ldb, ldc, ldd, K, alpha, beta, wmma::mem_row_major, wmma::mem_row_major);
}

// s8 m32n8k16, int accumulator: A row-major, B row-major, C row-major, D column-major.
__global__ void wmma_gemm_s8(const signed char *A, const signed char *B, const int *C, int *D, int lda,
                             int ldb, int ldc, int ldd, int K, int alpha, int beta)
{
    gemm_tile<signed char, signed char, int, 32, 8, 16, wmma::row_major, wmma::row_major>(
        A, B, C, D, lda, ldb, ldc, ldd, K, alpha, beta, wmma::mem_row_major, wmma::mem_col_major);
}
