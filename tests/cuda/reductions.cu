// Block reductions with static and dynamic shared memory and __syncthreads.
#include <cfloat>

// out[blockIdx.x] = sum of in[blockIdx.x*256 .. +256) (zero-padded past n); blockDim.x == 256
__global__ void block_sum_static(const float *in, float *out, int n)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

// Same as block_sum_static but with dynamic shared memory (blockDim.x floats, power of two),
// two elements loaded per thread: block b sums in[b*2*blockDim .. +2*blockDim)
__global__ void block_sum_dynamic(const float *in, float *out, int n)
{
    extern __shared__ float sdata[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + t;
    float v = 0.0f;
    if (i < n) v += in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[t] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        if (t < stride)
            sdata[t] += sdata[t + stride];
        __syncthreads();
    }
    if (t < 32) {
        volatile float *vs = sdata;     // legacy warp-synchronous tail (volatile shared)
        if (blockDim.x >= 64) vs[t] += vs[t + 32];
        vs[t] += vs[t + 16];
        vs[t] += vs[t + 8];
        vs[t] += vs[t + 4];
        vs[t] += vs[t + 2];
        vs[t] += vs[t + 1];
    }
    if (t == 0)
        out[blockIdx.x] = sdata[0];
}

// out[blockIdx.x] = max and argmax of a block's slice; blockDim.x == 128
__global__ void block_argmax(const float *in, float *maxv, int *argmax, int n)
{
    __shared__ float sv[128];
    __shared__ int si[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    sv[t] = i < n ? in[i] : -FLT_MAX;
    si[t] = i < n ? i : -1;
    __syncthreads();
    for (int stride = 64; stride > 0; stride >>= 1) {
        if (t < stride) {
            float a = sv[t], b = sv[t + stride];
            if (b > a || (b == a && si[t + stride] < si[t] && si[t + stride] >= 0)) {
                sv[t] = b;
                si[t] = si[t + stride];
            }
        }
        __syncthreads();
    }
    if (t == 0) {
        maxv[blockIdx.x] = sv[0];
        argmax[blockIdx.x] = si[0];
    }
}

// Dot product: *result += sum(a[i]*b[i]) via a shared tree per block plus one atomicAdd per block
__global__ void dot_product(const float *a, const float *b, float *result, int n)
{
    __shared__ float cache[256];
    float tmp = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        tmp += a[i] * b[i];
    cache[threadIdx.x] = tmp;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(result, cache[0]);
}

// Hillis-Steele inclusive prefix sum within one block (blockDim.x <= 1024), double-buffered
__global__ void block_inclusive_scan(const int *in, int *out, int n)
{
    __shared__ int buf[2][1024];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    int cur = 0;
    buf[0][t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        int v = buf[cur][t];
        if (t >= off) v += buf[cur][t - off];
        buf[cur ^ 1][t] = v;
        cur ^= 1;
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[cur][t];
}

// Uses __syncthreads_count / _and / _or: flags[b] = {count(x>0), all(x>0), any(x<0)}
__global__ void sync_predicates(const int *in, int *flags, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 1;
    int cnt = __syncthreads_count(v > 0);
    int all = __syncthreads_and(v > 0);
    int any = __syncthreads_or(v < 0);
    if (threadIdx.x == 0) {
        flags[3 * blockIdx.x + 0] = cnt;
        flags[3 * blockIdx.x + 1] = all;
        flags[3 * blockIdx.x + 2] = any;
    }
}
