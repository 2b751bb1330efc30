// 2D 5-point stencil (one Jacobi-style step on a row-major nx x ny grid): the interior gets
// -4 * centre + west + east + north + south, the boundary is copied. Block (16, 16).
__global__ void stencil_2d(const float *in, float *out, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny)
        return;
    int idx = y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        out[idx] = in[idx];
        return;
    }
    out[idx] = -4.0f * in[idx] + in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx];
}
