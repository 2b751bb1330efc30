// Multi-dimensional grids and blocks: 2D and 3D indexing, a tiled transpose.
#define TILE 32

// 2D: C[r][c] = A[r][c] + 2 * B[r][c]   (row-major, rows x cols)
__global__ void matrix_add_2d(const float *A, const float *B, float *C, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols)
        C[r * cols + c] = A[r * cols + c] + 2.0f * B[r * cols + c];
}

// 3D: out[z][y][x] = x + 1000*y + 1000000*z (as int), checking bounds nx, ny, nz
__global__ void index_3d(int *out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz)
        out[(z * ny + y) * nx + x] = x + 1000 * y + 1000000 * z;
}

// 3D 7-point stencil on the interior; boundary cells copied unchanged
__global__ void stencil_7pt(const float *in, float *out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz)
        return;
    int idx = (z * ny + y) * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[idx] = in[idx];
        return;
    }
    int sy = nx, sz = nx * ny;
    out[idx] = -6.0f * in[idx] + in[idx - 1] + in[idx + 1] + in[idx - sy] + in[idx + sy]
               + in[idx - sz] + in[idx + sz];
}

// Tiled transpose through padded shared memory: out[c][r] = in[r][c]; block (32, 8)
__global__ void transpose_tiled(const float *in, float *out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Naive matmul C = A (M x K) * B (K x N), 2D grid
__global__ void matmul_naive(const float *A, const float *B, float *C, int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}
