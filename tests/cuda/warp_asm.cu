// warpSize (compiled to the WARP_SZ constant) and hand-written inline PTX with local
// registers the way CUB, Thrust and the CUDA samples write it: `%`-less names declared in an
// asm scope, `d|p` shuffle destinations, nested scopes that shadow a name, `<N>` ranges,
// predicates set and used in the block. Models: tests/models/realworld.py.
#include <cstdint>

// out[i] = lane + warpSize * warp index, with the lane and warp computed from warpSize
__global__ void warpsize_lane_ids(int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    out[t] = lane + 1000 * warp + warpSize * 100000;
}

// Warp sum with a loop bound of warpSize: out[w] = sum of the warp's values
__global__ void warpsize_loop_sum(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int off = warpSize / 2; off > 0; off /= 2)
        v += __shfl_down_sync(0xffffffffu, v, off, warpSize);
    if (threadIdx.x % warpSize == 0)
        out[i / warpSize] = v;
}

// CUB's inclusive-scan step, verbatim in form: shfl.sync.up with the `r0|p` pair and a
// guarded add, repeated for offsets 1, 2, 4, 8, 16: out = the warp's inclusive prefix sums
__device__ __forceinline__ unsigned scan_step(unsigned v, int offset)
{
    unsigned r;
    asm volatile("{\n\t"
                 "  .reg .u32 r0;\n\t"
                 "  .reg .pred p;\n\t"
                 "  shfl.sync.up.b32 r0|p, %1, %2, 0, -1;\n\t"
                 "  @p add.u32 r0, r0, %1;\n\t"
                 "  mov.u32 %0, r0;\n\t"
                 "}"
                 : "=r"(r)
                 : "r"(v), "r"(offset));
    return r;
}

__global__ void asm_shfl_up_scan(const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    for (int off = 1; off < 32; off *= 2)
        v = scan_step(v, off);
    out[i] = v;
}

// Butterfly reduction step with a `%`-less predicate and register: shfl.sync.bfly r0|p
__global__ void asm_shfl_bfly_max(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int m = 16; m > 0; m /= 2) {
        asm volatile("{\n\t"
                     "  .reg .s32 r0;\n\t"
                     "  .reg .pred p;\n\t"
                     "  shfl.sync.bfly.b32 r0|p, %0, %1, 0x1f, -1;\n\t"
                     "  @p max.s32 %0, %0, r0;\n\t"
                     "}"
                     : "+r"(v)
                     : "r"(m));
    }
    out[i] = v;
}

// Nested scopes: the inner `t` shadows the outer one; out[i] = (in[i] * 3) + (in[i] + 7)
__global__ void asm_nested_shadow(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int r;
    asm volatile("{\n\t"
                 "  .reg .s32 t;\n\t"
                 "  mul.lo.s32 t, %1, 3;\n\t"
                 "  {\n\t"
                 "    .reg .s32 t;\n\t"
                 "    add.s32 t, %1, 7;\n\t"
                 "    mov.s32 %0, t;\n\t"
                 "  }\n\t"
                 "  add.s32 %0, %0, t;\n\t"
                 "}"
                 : "=r"(r)
                 : "r"(in[i]));
    out[i] = r;
}

// A `<4>` register range without `%`: q0..q3 = in[i] shifted by 0, 8, 16, 24 and masked;
// out[i] = the sum of the four bytes
__global__ void asm_range_bytes(const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r;
    asm volatile("{\n\t"
                 "  .reg .u32 q<4>;\n\t"
                 "  bfe.u32 q0, %1, 0, 8;\n\t"
                 "  bfe.u32 q1, %1, 8, 8;\n\t"
                 "  bfe.u32 q2, %1, 16, 8;\n\t"
                 "  bfe.u32 q3, %1, 24, 8;\n\t"
                 "  add.u32 q0, q0, q1;\n\t"
                 "  add.u32 q2, q2, q3;\n\t"
                 "  add.u32 %0, q0, q2;\n\t"
                 "}"
                 : "=r"(r)
                 : "r"(in[i]));
    out[i] = r;
}

// Predicates computed and combined in asm: out[i] = 1 if 10 <= in[i] < 20 else 0 (setp, and,
// selp on `%`-less predicates)
__global__ void asm_predicate_range(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int r;
    asm volatile("{\n\t"
                 "  .reg .pred lo, hi, both;\n\t"
                 "  setp.ge.s32 lo, %1, 10;\n\t"
                 "  setp.lt.s32 hi, %1, 20;\n\t"
                 "  and.pred both, lo, hi;\n\t"
                 "  selp.s32 %0, 1, 0, both;\n\t"
                 "}"
                 : "=r"(r)
                 : "r"(in[i]));
    out[i] = r;
}

// Special registers from asm: out[i] = %laneid + 100 * %warpid-free warp index from %tid.x,
// and the lanemask_lt population count (== lane)
__global__ void asm_laneid_lanemask(int *lane_out, int *lt_out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane, lt;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm volatile("{\n\t"
                 "  .reg .u32 m;\n\t"
                 "  mov.u32 m, %%lanemask_lt;\n\t"
                 "  popc.b32 %0, m;\n\t"
                 "}"
                 : "=r"(lt));
    lane_out[i] = lane;
    lt_out[i] = lt;
}

// 64-bit carry chain in asm: out = a + b as two 32-bit halves through add.cc / addc
__global__ void asm_add64_carry(const unsigned long long *a, const unsigned long long *b,
                                unsigned long long *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long x = a[i], y = b[i];
    unsigned lo, hi;
    asm volatile("{\n\t"
                 "  .reg .u32 xl, xh, yl, yh;\n\t"
                 "  mov.b64 {xl, xh}, %2;\n\t"
                 "  mov.b64 {yl, yh}, %3;\n\t"
                 "  add.cc.u32 %0, xl, yl;\n\t"
                 "  addc.u32 %1, xh, yh;\n\t"
                 "}"
                 : "=r"(lo), "=r"(hi)
                 : "l"(x), "l"(y));
    out[i] = ((unsigned long long)hi << 32) | lo;
}

// Ballot + popc in asm with a `%`-less predicate from a setp: out[w] = lanes with odd values
__global__ void asm_vote_popc(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n;
    asm volatile("{\n\t"
                 "  .reg .pred odd;\n\t"
                 "  .reg .b32 bits, low;\n\t"
                 "  and.b32 low, %1, 1;\n\t"
                 "  setp.ne.b32 odd, low, 0;\n\t"
                 "  vote.sync.ballot.b32 bits, odd, 0xffffffff;\n\t"
                 "  popc.b32 %0, bits;\n\t"
                 "}"
                 : "=r"(n)
                 : "r"(in[i]));
    if (threadIdx.x % 32 == 0)
        out[i / 32] = n;
}

// prmt byte permute in asm: out[i] = in[i] with its bytes reversed (selector 0x0123)
__global__ void asm_prmt_reverse(const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r;
    asm volatile("prmt.b32 %0, %1, 0, 0x0123;" : "=r"(r) : "r"(in[i]));
    out[i] = r;
}
