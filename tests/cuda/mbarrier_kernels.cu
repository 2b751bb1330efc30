// mbarrier kernels (PTX ISA §9.7.13.15) as CUDA programs write them: cuda::barrier's
// arrive/wait with tokens and arrive_and_drop, cuda::memcpy_async completing on a barrier
// (cp.async + cp.async.mbarrier.arrive on sm_80; the bulk copy engine on sm_90), and raw
// inline-asm mbarrier + cp.async.bulk (sm_90; the sm_80 build computes the same result with
// plain loads). Models: tests/interp/test_mbarrier_cuda.py.
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#pragma nv_diag_suppress static_var_with_dynamic_init

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

// Three phases with split arrive/wait: s = in's block; each phase every thread reads its
// neighbour's value and adds its own index. out[b*B + t] = in[b*B + (t + 3) % B] + 3 * t + ...
// (the model recomputes the three rotations).
__global__ void barrier_arrive_wait(const int *in, int *out)
{
    __shared__ block_barrier bar;
    __shared__ int s[2][256];
    int t = threadIdx.x, B = blockDim.x;
    if (t == 0)
        init(&bar, B);
    __syncthreads();
    s[0][t] = in[blockIdx.x * B + t];
    block_barrier::arrival_token tok = bar.arrive();
    bar.wait(std::move(tok));
    for (int k = 0; k < 3; k++) {
        int v = s[k & 1][(t + 1) % B] + t;
        s[(k + 1) & 1][t] = v;
        bar.arrive_and_wait();
    }
    out[blockIdx.x * B + t] = s[1][t];
}

// arrive_and_drop: the upper half of the block leaves the barrier after the first phase; the
// lower half keeps synchronising (the expected count drops to B/2).
// out[b*B + t] = 2 * in[b*B + (t + 1) % B] for every t, then (t < B/2) the lower half's
// second phase adds in[b*B + (t + 2) % (B/2)].
__global__ void barrier_drop(const int *in, int *out)
{
    __shared__ block_barrier bar;
    __shared__ int s[256];
    int t = threadIdx.x, B = blockDim.x, h = B / 2;
    if (t == 0)
        init(&bar, B);
    __syncthreads();
    s[t] = in[blockIdx.x * B + t];
    bar.arrive_and_wait();
    int v = 2 * s[(t + 1) % B];
    if (t >= h) {
        out[blockIdx.x * B + t] = v;
        bar.arrive_and_drop();
        return;
    }
    bar.arrive_and_wait();
    s[t] = in[blockIdx.x * B + t];
    bar.arrive_and_wait();
    out[blockIdx.x * B + t] = v + s[(t + 2) % h];
}

// cuda::memcpy_async of a block's inputs into shared memory, completing on a barrier;
// out[b*B + t] = s[(t + 1) % B] + 1.
__global__ void memcpy_async_barrier(const float *in, float *out)
{
    __shared__ block_barrier bar;
    __shared__ alignas(16) float s[256];
    auto block = cg::this_thread_block();
    int t = threadIdx.x, B = blockDim.x;
    if (t == 0)
        init(&bar, B);
    __syncthreads();
    cuda::memcpy_async(block, s, in + blockIdx.x * B, cuda::aligned_size_t<16>(sizeof(float) * B), bar);
    bar.arrive_and_wait();
    out[blockIdx.x * B + t] = s[(t + 1) % B] + 1.0f;
}

// Raw mbarrier + bulk copies (sm_90): thread 0 expects 4 * B bytes, issues two bulk copies of
// half each into shared memory; every thread waits on phase 0 by parity, writes s[t] * 2 + t back
// into shared memory; after a fence.proxy.async and a barrier thread 0 bulk-copies the block to
// out. out[b*B + t] = 2 * in[b*B + t] + t. B must be a multiple of 8 (16-byte halves).
__global__ void raw_bulk_tx(const int *in, int *out)
{
    __shared__ alignas(8) unsigned long long bar;
    __shared__ alignas(16) int s[256];
    int t = threadIdx.x, B = blockDim.x;
#if __CUDA_ARCH__ >= 900
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned d = (unsigned)__cvta_generic_to_shared(s);
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (t == 0) {
        unsigned half = 2 * B;                 // bytes
        const int *src = in + blockIdx.x * B;
        asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
                     ::"r"(b), "r"(4 * B) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(d), "l"(src), "r"(half), "r"(b) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(d + half), "l"(src + B / 2), "r"(half), "r"(b) : "memory");
    }
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(b), "r"(0) : "memory");
    }
    s[t] = 2 * s[t] + t;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (t == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     ::"l"(out + blockIdx.x * B), "r"(d), "r"(4 * B) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
#else
    s[t] = in[blockIdx.x * B + t];
    __syncthreads();
    out[blockIdx.x * B + t] = 2 * s[t] + t;
#endif
}
