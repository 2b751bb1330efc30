// Synchronisation primitives: cuda::atomic_ref with memory orders (ld.acquire / st.release /
// atom.acq_rel), cuda::barrier (mbarrier), __nanosleep back-off, fences, named barriers,
// and (on sm_90 only) thread block clusters with distributed shared memory.
#include <cuda/atomic>
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// cuda::barrier has a constructor, which nvcc warns about for __shared__ variables; the barrier is
// initialised explicitly with init() by one thread, as the CUDA programming guide shows.
#pragma nv_diag_suppress static_var_with_dynamic_init

// Message passing between the two halves of a block through a flag with release/acquire:
// threads t < B/2 write data[t] = payload[t] * 3, then (thread 0, after a block barrier)
// releases flag = 1; threads t >= B/2 spin (with __nanosleep) until they acquire flag == 1,
// then out[t - B/2] = data[t - B/2] + 1. Result: out[j] = 3 * payload[j] + 1.
// blockDim.x must be a multiple of 64 (the producer half uses named barrier 1) and <= 1024.
__global__ void release_acquire_flag(const int *payload, int *out)
{
    __shared__ int data[512];
    __shared__ int flag;
    int t = threadIdx.x, half = blockDim.x / 2;
    if (t == 0)
        flag = 0;
    __syncthreads();
    cuda::atomic_ref<int, cuda::thread_scope_block> f(flag);
    if (t < half) {
        data[t] = payload[blockIdx.x * half + t] * 3;
        // named barrier 1 among the producer half only
        asm volatile("bar.sync 1, %0;" ::"r"(half));
        if (t == 0)
            f.store(1, cuda::memory_order_release);
    } else {
        unsigned ns = 8;
        while (f.load(cuda::memory_order_acquire) == 0) {
            __nanosleep(ns);
            ns = ns < 256 ? ns * 2 : ns;
        }
        out[blockIdx.x * half + t - half] = data[t - half] + 1;
    }
}

// Device-scope atomic_ref read-modify-writes with explicit orders:
// c[0] += 1 (relaxed), c[1] = max (acq_rel), c[2] exchange (seq_cst), c[3] CAS 0 -> i+1 once;
// winners[i] = 1 for the single thread whose CAS succeeded
__global__ void atomic_ref_orders(int *c, int *winners, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    cuda::atomic_ref<int, cuda::thread_scope_device> a0(c[0]), a1(c[1]), a2(c[2]), a3(c[3]);
    a0.fetch_add(1, cuda::memory_order_relaxed);
    a1.fetch_max(i, cuda::memory_order_acq_rel);
    a2.exchange(i, cuda::memory_order_seq_cst);
    int expected = 0;
    winners[i] = a3.compare_exchange_strong(expected, i + 1, cuda::memory_order_acq_rel) ? 1 : 0;
}

// Fences of each scope around plain stores: out[i] = i, with __threadfence_block,
// __threadfence and __threadfence_system between the stores; last store wins: out[i] = 3*i
__global__ void fences(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = i;
    __threadfence_block();
    out[i] = 2 * i;
    __threadfence();
    out[i] = 3 * i;
    __threadfence_system();
}

// cuda::barrier in shared memory (mbarrier.init / arrive / test_wait): two phases.
// Phase 1: s[t] = in[b*B + t]; barrier; phase 2: out[b*B + t] = s[(t + 1) % B] - s[t]
__global__ void mbarrier_phases(const float *in, float *out)
{
    using barrier_t = cuda::barrier<cuda::thread_scope_block>;
    __shared__ barrier_t bar;
    __shared__ float s[1024];
    int t = threadIdx.x, B = blockDim.x;
    if (t == 0)
        init(&bar, B);
    __syncthreads();
    s[t] = in[blockIdx.x * B + t];
    bar.arrive_and_wait();
    float v = s[(t + 1) % B] - s[t];
    bar.arrive_and_wait();
    out[blockIdx.x * B + t] = v;
}

// Split arrive/wait with a token: compute between arrive and wait.
// out[b*B + t] = 2 * in[b*B + t] + s[B - 1 - t] where s holds the block's inputs
__global__ void mbarrier_split_arrive(const float *in, float *out)
{
    using barrier_t = cuda::barrier<cuda::thread_scope_block>;
    __shared__ barrier_t bar;
    __shared__ float s[1024];
    int t = threadIdx.x, B = blockDim.x;
    if (t == 0)
        init(&bar, B);
    __syncthreads();
    float x = in[blockIdx.x * B + t];
    s[t] = x;
    barrier_t::arrival_token tok = bar.arrive();
    float y = 2.0f * x;           // overlapped work
    bar.wait(std::move(tok));
    out[blockIdx.x * B + t] = y + s[B - 1 - t];
}

// Thread block clusters of 2 (sm_90): each block exposes its block sum in shared memory,
// cluster.sync(), then block r reads its peer's sum through distributed shared memory:
// out[blockIdx.x] = own_sum + peer_sum (blockDim.x == 256). On sm_80 the kernel computes
// out[blockIdx.x] = 2 * own_sum (no clusters) so both variants produce checkable results.
__global__ void
#if __CUDA_ARCH__ >= 900
__cluster_dims__(2, 1, 1)
#endif
cluster_pair_sum(const float *in, float *out)
{
    __shared__ float red[256];
    __shared__ float block_sum;
    int t = threadIdx.x;
    red[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s)
            red[t] += red[t + s];
        __syncthreads();
    }
    if (t == 0)
        block_sum = red[0];
#if __CUDA_ARCH__ >= 900
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    unsigned peer = cluster.block_rank() ^ 1u;
    float *peer_sum = cluster.map_shared_rank(&block_sum, peer);
    if (t == 0)
        out[blockIdx.x] = block_sum + *peer_sum;
    cluster.sync();
#else
    __syncthreads();
    if (t == 0)
        out[blockIdx.x] = 2.0f * block_sum;
#endif
}
