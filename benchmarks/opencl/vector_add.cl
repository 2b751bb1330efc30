// tests/cuda/elementwise.cu vector_add: c[i] = a[i] + b[i] for i < n
#include "amdgcn_builtins.cl"

__kernel void vector_add(__global const float *a, __global const float *b, __global float *c, int n)
{
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
