// tests/cuda/elementwise.cu saxpy: y[i] = alpha * x[i] + y[i] for i < n
#include "amdgcn_builtins.cl"

__kernel void saxpy(int n, float alpha, __global const float *x, __global float *y)
{
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}
