// tests/cuda/stencil2d.cu stencil_2d: 2D 5-point stencil on the interior of a row-major
// nx x ny grid (-4 * centre + west + east + north + south), boundary copied.
#include "amdgcn_builtins.cl"

__kernel void stencil_2d(__global const float *in, __global float *out, int nx, int ny)
{
    int x = get_group_id(0) * get_local_size(0) + get_local_id(0);
    int y = get_group_id(1) * get_local_size(1) + get_local_id(1);
    if (x >= nx || y >= ny)
        return;
    int idx = y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        out[idx] = in[idx];
        return;
    }
    out[idx] = -4.0f * in[idx] + in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx];
}
