// Elementwise kernels: 1D launches, grid-stride loops, __launch_bounds__,
// a by-value struct parameter and 64-bit integer arithmetic.
// Every kernel is independent; the comment above each gives its numpy model.
#include <cstdint>

// c[i] = a[i] + b[i] for i < n
__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

// y[i] = alpha * x[i] + y[i] for i < n
__global__ void saxpy(int n, float alpha, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}

// y[i] = alpha * x[i] + y[i] in double precision, grid-stride loop
__global__ void daxpy_grid_stride(long n, double alpha, const double *x, double *y)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x)
        y[i] = alpha * x[i] + y[i];
}

// out[i] = in[i] * in[i] - 3 * in[i] + 2 (int), grid-stride, at most 256 threads/block
__global__ void __launch_bounds__(256, 2)
poly_int_bounded(const int *in, int *out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int v = in[i];
        out[i] = v * v - 3 * v + 2;
    }
}

// out[i] = clamp(in[i], lo, hi) followed by a ReLU-like select
__global__ void clamp_relu(const float *in, float *out, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = fminf(fmaxf(in[i], lo), hi);
    out[i] = v > 0.0f ? v : 0.0f;
}

struct Affine {
    float scale;
    float shift;
    int   n;
    int   stride;   // read in[i * stride]
    double bias;
};

// By-value struct parameter: out[i] = p.scale * in[i * p.stride] + p.shift + (float)p.bias
__global__ void affine_struct_param(Affine p, const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        out[i] = p.scale * in[i * p.stride] + p.shift + (float)p.bias;
}

// 64-bit integer kernel: splitmix64 hash of (seed + i); also writes hash % 1000003 and hash >> 33
__global__ void splitmix64(uint64_t seed, uint64_t *hash, uint64_t *mod, int64_t *sh, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint64_t z = seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    hash[i] = z;
    mod[i] = z % 1000003ull;
    sh[i] = ((int64_t)z) >> 33;   // arithmetic shift of a signed value
}

// 64-bit signed division/remainder and min/max: q = a / b, r = a % b, m = max(a, b) - min(a, b)
__global__ void int64_divmod(const long long *a, const long long *b, long long *q,
                             long long *r, long long *m, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    long long x = a[i], y = b[i];
    q[i] = x / y;
    r[i] = x % y;
    m[i] = max(x, y) - min(x, y);
}
