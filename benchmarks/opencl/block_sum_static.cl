// tests/cuda/reductions.cu block_sum_static: out[group] = tree sum of the group's 256 values in
// local memory (zero past n); local size 256
#include "amdgcn_builtins.cl"

__kernel void block_sum_static(__global const float *in, __global float *out, int n)
{
    __local float s[256];
    uint t = get_local_id(0);
    uint i = get_group_id(0) * get_local_size(0) + t;
    s[t] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = get_local_size(0) / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0)
        out[get_group_id(0)] = s[0];
}
