// A tiled GEMM on mma.sync + ldmatrix + cp.async written with inline PTX (the pattern of
// CUTLASS-style and hand-written Ampere kernels): C (M x N, row-major float) = A (M x K,
// row-major half) * B (K x N, row-major half). A block of 128 threads computes a 32 x 32 tile
// of C; warp w owns rows (w / 2) * 16 and columns (w % 2) * 16 of it (two m16n8k16 products
// per 16-wide k step). K is walked in 32-wide slices, double-buffered in shared memory with
// cp.async groups. M, N, K multiples of 32; grid = (N / 32, M / 32).
#include <cuda_fp16.h>

#define BK 32
#define PAD 40   // halves per shared row: 80 bytes keeps every ldmatrix row 16-byte aligned

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(void *dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
}

// Thread t copies 16 bytes (8 halves) of the A slice and 16 of the B slice into stage s.
__device__ void load_stage(half (*As)[PAD], half (*Bs)[PAD], const half *A, const half *B, int K, int N,
                           int row0, int col0, int k0)
{
    int t = threadIdx.x;
    int r = t / 4, c = (t % 4) * 8;
    cp_async16(&As[r][c], A + (row0 + r) * K + k0 + c);
    cp_async16(&Bs[r][c], B + (k0 + r) * N + col0 + c);
    asm volatile("cp.async.commit_group;\n" ::);
}

__global__ void mma_gemm_f16(const half *A, const half *B, float *C, int M, int N, int K)
{
    __shared__ __align__(16) half As[2][32][PAD];
    __shared__ __align__(16) half Bs[2][32][PAD];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row0 = blockIdx.y * 32, col0 = blockIdx.x * 32;
    int wr = (warp / 2) * 16, wc = (warp % 2) * 16;
    float acc[2][4] = {};
    load_stage(As[0], Bs[0], A, B, K, N, row0, col0, 0);
    int slices = K / BK;
    for (int s = 0; s < slices; ++s) {
        int cur = s & 1;
        if (s + 1 < slices) {
            load_stage(As[cur ^ 1], Bs[cur ^ 1], A, B, K, N, row0, col0, (s + 1) * BK);
            asm volatile("cp.async.wait_group 1;\n" ::);
        } else {
            asm volatile("cp.async.wait_group 0;\n" ::);
        }
        __syncthreads();
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[4], b[4];
            // lanes 0-15 give rows 0-15 at k, lanes 16-31 the same rows at k + 8
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                         : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                         : "r"(smem_addr(&As[cur][wr + lane % 16][kk + (lane / 16) * 8])));
            // B is k-major in shared memory: .trans gives the column-major fragment
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                         : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                         : "r"(smem_addr(&Bs[cur][kk + lane % 16][wc + (lane / 16) * 8])));
            for (int j = 0; j < 2; ++j)
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                             "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                             : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[2 * j]), "r"(b[2 * j + 1]));
        }
        __syncthreads();
    }
    int g = lane / 4, t4 = lane % 4;
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 4; ++i) {
            int r = row0 + wr + g + (i / 2) * 8, c = col0 + wc + j * 8 + t4 * 2 + (i % 2);
            C[r * N + c] = acc[j][i];
        }
}

// Integer tensor cores: C (s32) = A (M x K s8, row-major) * B (K x N s8, stored column-major as
// N x K) with m16n8k32 fragments loaded straight from global memory (no ldmatrix), one warp per
// 16 x 8 tile, saturating the sum (.satfinite). grid = (N / 8, M / 16), 32 threads per block.
__global__ void mma_gemm_s8_satfinite(const signed char *A, const signed char *Bt, int *C, int M, int N, int K)
{
    int lane = threadIdx.x, g = lane / 4, t4 = lane % 4;
    int row0 = blockIdx.y * 16, col0 = blockIdx.x * 8;
    int acc[4] = {};
    for (int k = 0; k < K; k += 32) {
        unsigned a[4], b[2];
        for (int i = 0; i < 4; ++i)   // a_i: rows g / g+8, k t4*4 .. t4*4+3 (+16 for i >= 2)
            a[i] = *reinterpret_cast<const unsigned *>(A + (row0 + g + (i % 2) * 8) * K + k + t4 * 4 + (i / 2) * 16);
        for (int i = 0; i < 2; ++i)   // b_i: k t4*4 .. +3 (+16 for i = 1), column g
            b[i] = *reinterpret_cast<const unsigned *>(Bt + (col0 + g) * K + k + t4 * 4 + i * 16);
        asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    for (int i = 0; i < 4; ++i)
        C[(row0 + g + (i / 2) * 8) * N + col0 + t4 * 2 + (i % 2)] = acc[i];
}

#if __CUDA_ARCH__ >= 900
// sm_90: stmatrix writes a warp's 16 x 16 half tile of A + 1 (ldmatrix, add, stmatrix round trip
// through shared memory). One warp, 32 threads.
__global__ void stmatrix_roundtrip(const half *In, half *Out)
{
    __shared__ __align__(16) half tile[16][24];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32)
        tile[i / 16][i % 16] = In[i];
    __syncwarp();
    unsigned r[4];
    unsigned addr = smem_addr(&tile[lane % 16][(lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    for (int i = 0; i < 4; ++i) {
        __half2 h = *reinterpret_cast<__half2 *>(&r[i]);
        h = __hadd2(h, __float2half2_rn(1.0f));
        r[i] = *reinterpret_cast<unsigned *>(&h);
    }
    __syncwarp();
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};\n"
                 :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
    __syncwarp();
    for (int i = lane; i < 256; i += 32)
        Out[i] = tile[i / 16][i % 16];
}
#endif
