// Kernels for benchmarks/bench_interp.py (also usable as fixtures).
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
