// Kernels for benchmarks/bench_interp.py and benchmarks/bench_jit.py (also usable as fixtures).
// Every kernel is independent; the comment above each gives its numpy model.

#define TILE 16

// Tiled matrix multiply through shared memory, square n x n (n a multiple of TILE):
// C = A @ B, accumulated in k order with fused multiply-adds.
__global__ void matmul_tiled(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// Mandelbrot escape counts: pixel i of a w x h grid over [-2, 1] x [-1.5, 1.5],
// iters[i] = first k < max_iter with |z| > 2 (or max_iter).
__global__ void mandelbrot(int *iters, int w, int h, int max_iter)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= w * h)
        return;
    float cx = -2.0f + 3.0f * (i % w) / w;
    float cy = -1.5f + 3.0f * (i / w) / h;
    float x = 0.0f, y = 0.0f;
    int k = 0;
    while (k < max_iter && x * x + y * y <= 4.0f) {
        float xt = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = xt;
        ++k;
    }
    iters[i] = k;
}

// One all-pairs n-body step (acceleration only), shared-memory tiles of blockDim.x bodies
// (blockDim.x <= NBODY_TILE). pos[j] = (x, y, z, mass); for every body i < n:
//   d_j = pos[j].xyz - pos[i].xyz,  r2_j = |d_j|^2 + eps2,
//   acc[i] = (sum_j d_j * mass_j * rsqrt(r2_j)^3, 0)     (j over all n bodies, in order,
// including j == i, whose d is 0: eps2 > 0 keeps it finite).
#define NBODY_TILE 256
__global__ void nbody_step(const float4 *pos, float4 *acc, int n, float eps2)
{
    __shared__ float4 tile[NBODY_TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 p = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int t = 0; t < n; t += blockDim.x) {
        int j = t + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        int m = min((int)blockDim.x, n - t);
        for (int k = 0; k < m; ++k) {
            float4 q = tile[k];
            float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            float r2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = rsqrtf(r2);
            float s = q.w * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    if (i < n)
        acc[i] = make_float4(ax, ay, az, 0.0f);
}
