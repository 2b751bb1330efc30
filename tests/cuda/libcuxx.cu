// libcu++ (CUDA 13's CCCL) in device code: cuda::atomic_ref with thread scopes and memory
// orders, cuda::std::atomic in shared memory, cuda::std bit operations, cuda::std::min/max/clamp
// and cuda::std::array. Integer results only (cuda::barrier: libcuxx_barrier.cu).
// Models: tests/models/realworld.py.
#include <cuda/atomic>
#include <cuda/std/array>
#include <cuda/std/__algorithm/clamp.h>
#include <cuda/std/__algorithm/max.h>
#include <cuda/std/__algorithm/min.h>
#include <cuda/std/atomic>
#include <cuda/std/bit>

// counter += in[i] for every thread, through a device-scope relaxed atomic_ref
__global__ void cuxx_atomic_ref_add(const int *in, int *counter)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);
    c.fetch_add(in[i], cuda::std::memory_order_relaxed);
}

// min/max of all values through fetch_min / fetch_max (acq_rel, system scope)
__global__ void cuxx_atomic_ref_minmax(const int *in, int *lo, int *hi)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<int, cuda::thread_scope_system> a(*lo), b(*hi);
    a.fetch_min(in[i], cuda::std::memory_order_acq_rel);
    b.fetch_max(in[i], cuda::std::memory_order_acq_rel);
}

// or/and/xor of all values (block-scope atomic_ref on a shared word, then one global store)
__global__ void cuxx_atomic_ref_bits(const unsigned *in, unsigned *out)
{
    __shared__ unsigned s_or, s_and, s_xor;
    if (threadIdx.x == 0) {
        s_or = 0;
        s_and = 0xffffffffu;
        s_xor = 0;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<unsigned, cuda::thread_scope_block> o(s_or), a(s_and), x(s_xor);
    o.fetch_or(in[i]);
    a.fetch_and(in[i]);
    x.fetch_xor(in[i]);
    __syncthreads();
    if (threadIdx.x == 0) {
        out[blockIdx.x * 3] = s_or;
        out[blockIdx.x * 3 + 1] = s_and;
        out[blockIdx.x * 3 + 2] = s_xor;
    }
}

// A CAS loop through compare_exchange_weak: counter = counter * 3 + 1 for each thread, from 0
// (the result depends only on the count of threads: the operation is applied n times)
__global__ void cuxx_atomic_cas_loop(unsigned *counter)
{
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*counter);
    unsigned old = c.load(cuda::std::memory_order_relaxed);
    while (!c.compare_exchange_weak(old, old * 3u + 1u, cuda::std::memory_order_acq_rel,
                                    cuda::std::memory_order_relaxed)) {
    }
}

// exchange: slots[i] = the value each thread swapped out of a shared cell, then the last value;
// out[b] = sum of what was swapped out (0 + all values but the last one's survivor) + final
__global__ void cuxx_atomic_exchange_sum(const int *in, int *out)
{
    __shared__ int cell;
    __shared__ int total;
    if (threadIdx.x == 0) {
        cell = 0;
        total = 0;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<int, cuda::thread_scope_block> c(cell), t(total);
    int old = c.exchange(in[i]);
    t.fetch_add(old);
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = total + cell;
}

// cuda::std::atomic<int> in shared memory as a ticket counter: tickets are a permutation of
// 0..blockDim-1 within each CTA; out[b] = sum of tickets (checks every ticket was unique)
__global__ void cuxx_shared_atomic_tickets(int *ticket, int *sum)
{
    __shared__ cuda::std::atomic<int> next;
    if (threadIdx.x == 0)
        next.store(0, cuda::std::memory_order_relaxed);
    __syncthreads();
    int t = next.fetch_add(1, cuda::std::memory_order_relaxed);
    ticket[blockIdx.x * blockDim.x + threadIdx.x] = t;
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(sum + blockIdx.x, 0);  // keep the slot touched by one thread
    cuda::atomic_ref<int, cuda::thread_scope_device> s(sum[blockIdx.x]);
    s.fetch_add(t, cuda::std::memory_order_relaxed);
}

// cuda::std bit operations on each value
__global__ void cuxx_bit_ops(const unsigned *in, unsigned *pop, unsigned *clz, unsigned *ctz,
                             unsigned *rotl, unsigned *floor, unsigned *width)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    pop[i] = cuda::std::popcount(v);
    clz[i] = cuda::std::countl_zero(v);
    ctz[i] = cuda::std::countr_zero(v);
    rotl[i] = cuda::std::rotl(v, 7);
    floor[i] = cuda::std::bit_floor(v);
    width[i] = cuda::std::bit_width(v);
}

// cuda::std::array, min/max/clamp: out[i] = clamp(sum of a 4-array built from in[i], lo, hi)
__global__ void cuxx_array_clamp(const int *in, int *out, int lo, int hi)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::std::array<int, 4> a = {in[i], in[i] * 2, -in[i], 5};
    int s = 0;
    for (int v : a)
        s += v;
    out[i] = cuda::std::clamp(cuda::std::max(s, cuda::std::min(s, lo - 1)), lo, hi);
}
