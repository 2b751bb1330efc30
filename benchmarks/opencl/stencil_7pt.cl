// tests/cuda/grids.cu stencil_7pt (3D 7-point stencil on the interior, boundary copied), reported
// as an extra row next to the six kernels (the 2D stencil is stencil_2d.cl).
#include "amdgcn_builtins.cl"

__kernel void stencil_7pt(__global const float *in, __global float *out, int nx, int ny, int nz)
{
    int x = get_group_id(0) * get_local_size(0) + get_local_id(0);
    int y = get_group_id(1) * get_local_size(1) + get_local_id(1);
    int z = get_group_id(2) * get_local_size(2) + get_local_id(2);
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
