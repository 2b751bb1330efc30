// libcu++'s cuda::barrier<thread_scope_block>, which compiles to the mbarrier instructions
// (mbarrier.init / arrive / test_wait on a shared .b64 object, PTX ISA §9.7.13.15). In a file
// of its own so the rest of libcuxx.cu translates while mbarrier is unsupported.
#include <cuda/barrier>

// cuda::barrier<thread_scope_block>: out[i] = 2 * in[block base + (t + 2) % n], through
// shared memory with arrive_and_wait between the phases
__global__ void cuxx_block_barrier(const int *in, int *out)
{
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    __shared__ int s[256];
    int t = threadIdx.x, n = blockDim.x;
    if (t == 0)
        init(&bar, n);
    __syncthreads();
    int i = blockIdx.x * n + t;
    s[t] = in[i];
    bar.arrive_and_wait();
    int v = s[(t + 1) % n];
    bar.arrive_and_wait();
    s[t] = v * 2;
    bar.arrive_and_wait();
    out[i] = s[(t + 1) % n];
}
