// Warp shuffles: idx (broadcast/rotate), down (reduction), xor (butterfly), up (scan).
#define FULL 0xffffffffu

// out[i] = in[lane 0 of the warp containing i]
__global__ void shfl_broadcast(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    out[i] = __shfl_sync(FULL, v, 0);
}

// out[i] = in[warp_base + (lane + shift) % 32]: rotate within each warp
__global__ void shfl_rotate(const float *in, float *out, int shift)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    out[i] = __shfl_sync(FULL, in[i], (lane + shift) & 31);
}

// out[warp] = sum of 32 values via __shfl_down_sync; lane 0 writes
__global__ void warp_sum_down(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(FULL, v, off);
    if ((threadIdx.x & 31) == 0)
        out[i >> 5] = v;
}

// Every lane gets the warp maximum via the xor butterfly: out[i] = max over its warp
__global__ void warp_max_xor(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int m = 16; m > 0; m >>= 1)
        v = max(v, __shfl_xor_sync(FULL, v, m));
    out[i] = v;
}

// Inclusive scan within each warp via __shfl_up_sync
__global__ void warp_scan_up(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = in[i];
    for (int off = 1; off < 32; off <<= 1) {
        int n = __shfl_up_sync(FULL, v, off);
        if (lane >= off)
            v += n;
    }
    out[i] = v;
}

// Shuffles with width 8 (sub-warp segments), double (two 32-bit shuffles) and
// out[i] = sum of in over its 8-lane segment; dout[i] = din of the segment's first lane
__global__ void shfl_width8_double(const int *in, int *out, const double *din, double *dout)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int m = 4; m > 0; m >>= 1)
        v += __shfl_xor_sync(FULL, v, m, 8);
    out[i] = v;
    dout[i] = __shfl_sync(FULL, din[i], 0, 8);
}

// Block sum: per-warp shuffle reduction, warp partials in shared, first warp reduces them.
// out[blockIdx.x] = sum of the block's slice (blockDim.x multiple of 32, <= 1024)
__global__ void block_sum_shfl(const float *in, float *out, int n)
{
    __shared__ float partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float v = i < n ? in[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(FULL, v, off);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x >> 5) ? partial[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(FULL, v, off);
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}
