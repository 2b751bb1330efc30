// tests/cuda/grids.cu transpose_tiled: out[c][r] = in[r][c] through a padded local tile;
// local size (32, 8)
#include "amdgcn_builtins.cl"

#define TILE 32

__kernel void transpose_tiled(__global const float *in, __global float *out, int rows, int cols)
{
    __local float tile[TILE][TILE + 1];
    int x = get_group_id(0) * TILE + get_local_id(0);
    int y = get_group_id(1) * TILE + get_local_id(1);
    for (int j = 0; j < TILE; j += get_local_size(1))
        if (x < cols && y + j < rows)
            tile[get_local_id(1) + j][get_local_id(0)] = in[(y + j) * cols + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    x = get_group_id(1) * TILE + get_local_id(0);
    y = get_group_id(0) * TILE + get_local_id(1);
    for (int j = 0; j < TILE; j += get_local_size(1))
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[get_local_id(0)][get_local_id(1) + j];
}
