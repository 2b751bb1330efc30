// Dynamic parallelism (CDP2, compiled with -rdc=true): kernels that launch kernels. nvcc 13
// lowers `k<<<g, b, s, stream>>>(args)` in device code to __cudaCDP2GetParameterBufferV2(k, g, b, s)
// and __cudaCDP2LaunchDeviceV2(buffer, stream); cudaMalloc/cudaFree/cudaGetLastError to
// __cudaCDP2Malloc/__cudaCDP2Free/__cudaCDP2GetLastError. Device-side cudaDeviceSynchronize is
// gone since CUDA 12: a child grid completes before its parent grid is considered complete.

// out[base + i] = base + 2 * i for i < n
__global__ void cdp_child(int *out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[base + i] = base + 2 * i;
}

// Every block's thread 0 launches a child grid over its own slice of n elements:
// out[b * n + i] = b * n + 2 * i
__global__ void cdp_parent(int *out, int n)
{
    if (threadIdx.x == 0)
        cdp_child<<<(n + 31) / 32, 32>>>(out, blockIdx.x * n, n);
}

// Recursive launches: *out += fib(k) (one grid per call of the recursion, leaves add 0 or 1)
__global__ void cdp_fib(int *out, int k)
{
    if (k < 2) {
        atomicAdd(out, k);
        return;
    }
    cdp_fib<<<1, 1>>>(out, k - 1);
    cdp_fib<<<1, 1>>>(out, k - 2);
}

// A chain of tail launches: each grid adds 1 to out[0..31] and, while out[32] < rounds, counts
// itself in out[32] and tail-launches the next grid: out[t] = in + rounds + 1, out[32] = rounds
__global__ void cdp_tail(int *out, int rounds)
{
    out[threadIdx.x] += 1;
    if (threadIdx.x == 0 && out[32] < rounds) {
        out[32] += 1;
        cdp_tail<<<1, 32, 0, cudaStreamTailLaunch>>>(out, rounds);
    }
}

// Parameters of several sizes and alignments in the parameter buffer: out[i] = scale * i + c + s
__global__ void cdp_mixed_child(char c, double scale, short s, long long *out, int n)
{
    int i = threadIdx.x;
    if (i < n)
        out[i] = (long long)(scale * i) + c + s;
}

__global__ void cdp_mixed_parent(long long *out, int n)
{
    cdp_mixed_child<<<1, n, 0, cudaStreamFireAndForget>>>((char)3, 2.0, (short)-5, out, n);
}

// Device-side cudaMalloc/cudaFree: the parent fills a heap buffer, the child doubles it into out
// and frees it; status[0] = cudaMalloc's result, status[1] = cudaGetLastError() after the launch
__global__ void cdp_heap_child(int *tmp, int *out, int n)
{
    int i = threadIdx.x;
    if (i < n)
        out[i] = 2 * tmp[i];
    __syncthreads();
    if (i == 0)
        cudaFree(tmp);
}

__global__ void cdp_heap_parent(int *out, int *status, int n)
{
    int *tmp = nullptr;
    status[0] = (int)cudaMalloc((void **)&tmp, n * sizeof(int));
    for (int i = 0; i < n; ++i)
        tmp[i] = i + 7;
    cdp_heap_child<<<1, n>>>(tmp, out, n);
    status[1] = (int)cudaGetLastError();
}
