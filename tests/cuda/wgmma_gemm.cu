// GEMMs on sm_90a warpgroup tensor cores (wgmma.mma_async, PTX ISA 9.0 §9.7.15) written with
// inline PTX, one warpgroup (128 threads) per block; compiled for sm_90a only (the fixture
// script's sm90a variant; other variants get an empty body). C (M x N, row-major float) =
// A (M x K) * B (K x N).
//
// wgmma_gemm_f16: A row-major f16 (K-major), B row-major f16 (N-major: imm-trans-b = 1); a block
//   computes a 64 x 64 tile of C, K walked in 64-wide slices kept in shared memory in the
//   128-byte swizzled layout (16-byte chunk c of 128-byte row r stored at chunk c ^ (r % 8));
//   each 16-deep step moves the descriptors' start address (A by 32 bytes, B by 16 rows).
//   grid = (N / 64, M / 64); M, N, K multiples of 64.
// wgmma_gemm_bf16_regs: A row-major bf16 loaded straight into the A register fragment, B given
//   column-major (N x K, row-major: K-major) in the unswizzled core-matrix layout (8 x 8
//   elements per 128 bytes; LBO 128 between the two K halves, SBO 256 between 8-row groups);
//   the first step has scale-d = 0 (the accumulator starts as NaN and must not matter).
//   A block computes a 64 x 32 tile; grid = (N / 32, M / 64); M multiple of 64, N of 32, K of 16.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

__device__ __forceinline__ uint64_t desc_field(uint32_t x)
{
    return (uint64_t)((x & 0x3FFFF) >> 4);
}

// Matrix descriptor (§9.7.15.5.1.2): start, leading and stride byte offsets, swizzle mode
// (0 none, 1 128-byte, 2 64-byte, 3 32-byte) in bits 62-63.
__device__ __forceinline__ uint64_t make_desc(const void *smem, uint32_t lbo, uint32_t sbo, uint32_t mode)
{
    uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    return desc_field(addr) | (desc_field(lbo) << 16) | (desc_field(sbo) << 32) | ((uint64_t)mode << 62);
}

__device__ __forceinline__ void store_tile(float *C, const float *d, int regs, int N, int row0, int col0)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int e = 0; e < regs; ++e) {
        int r = row0 + 16 * warp + lane / 4 + 8 * ((e / 2) % 2);
        int c = col0 + 8 * (e / 4) + 2 * (lane % 4) + e % 2;
        C[r * N + c] = d[e];
    }
}

__global__ void wgmma_gemm_f16(const half *A, const half *B, float *C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(1024) half As[64 * 64];
    __shared__ __align__(1024) half Bs[64 * 64];
    int t = threadIdx.x;
    int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
    float d[32];
    for (int i = 0; i < 32; ++i)
        d[i] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 64) {
        for (int c = t; c < 512; c += 128) {
            int r = c / 8, ch = c % 8, sw = (ch ^ (r % 8)) * 16;
            *(uint4 *)((char *)As + r * 128 + sw) = *(const uint4 *)(A + (row0 + r) * K + k0 + ch * 8);
            *(uint4 *)((char *)Bs + r * 128 + sw) = *(const uint4 *)(B + (k0 + r) * N + col0 + ch * 8);
        }
        __syncthreads();
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        for (int kk = 0; kk < 64; kk += 16) {
            uint64_t da = make_desc((const char *)As + kk * 2, 16, 1024, 1);
            uint64_t db = make_desc((const char *)Bs + kk * 128, 16, 1024, 1);
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                         "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}\n"
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                         : "l"(da), "l"(db), "r"(1));
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        __syncthreads();
    }
    store_tile(C, d, 32, N, row0, col0);
#endif
}

__global__ void wgmma_gemm_bf16_regs(const __nv_bfloat16 *A, const __nv_bfloat16 *Bt, float *C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) __nv_bfloat16 Bs[32 * 16];
    int t = threadIdx.x, warp = t / 32, lane = t % 32;
    int row0 = blockIdx.y * 64, col0 = blockIdx.x * 32;
    float d[16];
    for (int i = 0; i < 16; ++i)
        d[i] = __int_as_float(0x7FC00000);
    for (int k0 = 0; k0 < K; k0 += 16) {
        // B element (n, k) of the 32 x 16 tile: core matrix (n / 8, k / 8), row n % 8, column k % 8
        for (int i = t; i < 32 * 16; i += 128) {
            int n = i / 16, k = i % 16;
            Bs[(n / 8) * 128 + (k / 8) * 64 + (n % 8) * 8 + k % 8] = Bt[(col0 + n) * K + k0 + k];
        }
        uint32_t a[4];
        for (int r = 0; r < 4; ++r) {
            int row = row0 + 16 * warp + lane / 4 + 8 * (r % 2);
            int col = k0 + (r / 2) * 8 + (lane % 4) * 2;
            uint16_t lo = __bfloat16_as_ushort(A[row * K + col]), hi = __bfloat16_as_ushort(A[row * K + col + 1]);
            a[r] = (uint32_t)lo | ((uint32_t)hi << 16);
        }
        __syncthreads();
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        uint64_t db = make_desc(Bs, 128, 256, 0);
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(k0 != 0 ? 1 : 0));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        __syncthreads();
    }
    store_tile(C, d, 16, N, row0, col0);
#endif
}
