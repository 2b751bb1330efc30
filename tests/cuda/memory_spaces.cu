// State spaces: __constant__, static and dynamic shared memory, __ldg (ld.global.nc),
// __device__ globals, vector loads/stores and memory fences.

__constant__ float c_coeffs[16];
__constant__ int c_lut[256];
__device__ int g_counter;
__device__ float g_table[8] = {1.0f, 2.0f, 4.0f, 8.0f, 16.0f, 32.0f, 64.0f, 128.0f};

// 1D convolution with constant-memory taps: out[i] = sum_{k<taps} c_coeffs[k] * in[i + k]
// (in has n + taps - 1 elements, taps <= 16)
__global__ void conv1d_constant(const float *in, float *out, int n, int taps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < taps; ++k)
        acc += c_coeffs[k] * in[i + k];
    out[i] = acc;
}

// Lookup through a constant table with a data-dependent index: out[i] = c_lut[in[i] & 255]
// + g_table[i & 7] (as int)
__global__ void constant_lookup(const unsigned char *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = c_lut[in[i]] + (int)g_table[i & 7];
}

// Read-only loads via __ldg on several types: out[i] = ldg(a[i]) * ldg(b4[i]).x + ldg(d[i])
// + ldg(h[i]) (a float, b4 float4, d double, h int)
__global__ void ldg_readonly(const float *__restrict__ a, const float4 *__restrict__ b4,
                             const double *__restrict__ d, const int *__restrict__ h,
                             float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 v = __ldg(&b4[i]);
    out[i] = __ldg(&a[i]) * (v.x + v.y + v.z + v.w) + (float)__ldg(&d[i]) + (float)__ldg(&h[i]);
}

// Dynamic shared memory carved into two arrays (floats then ints): reverses a block's slice.
// Shared size = blockDim.x * (sizeof(float) + sizeof(int)).
// out[b*B + t] = in[b*B + (B-1-t)], iout[b*B + t] = t * (B - 1 - t)
__global__ void dynamic_shared_reverse(const float *in, float *out, int *iout)
{
    extern __shared__ __align__(16) unsigned char smem[];
    float *fs = reinterpret_cast<float *>(smem);
    int *is = reinterpret_cast<int *>(smem + blockDim.x * sizeof(float));
    int t = threadIdx.x, B = blockDim.x;
    int base = blockIdx.x * B;
    fs[t] = in[base + t];
    is[t] = t * (B - 1 - t);
    __syncthreads();
    out[base + t] = fs[B - 1 - t];
    iout[base + t] = is[B - 1 - t];
}

// Static shared 2D tile with a halo: 1D box blur of radius 2 over blocks of 128:
// out[i] = (in[i-2] + in[i-1] + in[i] + in[i+1] + in[i+2]) / 5 with zero outside [0, n)
__global__ void shared_halo_blur(const float *in, float *out, int n)
{
    __shared__ float tile[128 + 4];
    int i = blockIdx.x * 128 + threadIdx.x;
    int t = threadIdx.x + 2;
    tile[t] = i < n ? in[i] : 0.0f;
    if (threadIdx.x < 2) {
        int l = i - 2, r = i + 128;
        tile[threadIdx.x] = l >= 0 && l < n ? in[l] : 0.0f;
        tile[t + 128] = r < n ? in[r] : 0.0f;
    }
    __syncthreads();
    if (i < n)
        out[i] = (tile[t - 2] + tile[t - 1] + tile[t] + tile[t + 1] + tile[t + 2]) * 0.2f;
}

// Vector types: float4 and int2 loads/stores: out4[i] = in4[i] * 2 (component-wise),
// o2[i] = (i2[i].y, i2[i].x); double2 d2o[i] = d2[i].x + d2[i].y on both lanes
__global__ void vector_types(const float4 *in4, float4 *out4, const int2 *i2, int2 *o2,
                             const double2 *d2, double2 *d2o, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 v = in4[i];
    out4[i] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
    int2 p = i2[i];
    o2[i] = make_int2(p.y, p.x);
    double2 d = d2[i];
    d2o[i] = make_double2(d.x + d.y, d.x + d.y);
}

// Last-block-done pattern with __threadfence and a __device__ counter:
// partial[b] = block sum of in; the last block to finish writes total[0] = sum(partial)
// and resets g_counter. blockDim.x == 128.
__global__ void last_block_sum(const float *in, float *partial, float *total, int n)
{
    __shared__ float s[128];
    __shared__ bool is_last;
    int i = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int st = 64; st > 0; st >>= 1) {
        if (threadIdx.x < st)
            s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        unsigned ticket = atomicInc((unsigned *)&g_counter, gridDim.x);
        is_last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (is_last && threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned b = 0; b < gridDim.x; ++b)
            t += ((volatile float *)partial)[b];
        total[0] = t;
        g_counter = 0;
    }
}

// Generic-address-space helper: the same __noinline__ function is called with a shared and a
// global pointer (forces cvta and generic ld/st). out[i] = 3 * in[i] + 3 * in[i] (via shared)
__device__ __noinline__ float triple(const float *p) { return 3.0f * *p; }

__global__ void generic_pointers(const float *in, float *out, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = triple(&in[i]) + triple(&s[threadIdx.x]);
}
