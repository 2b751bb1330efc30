// tests/cuda/atomics.cu histogram_shared: 64 bins, atomic adds on local memory, then flushed
// with global atomic adds: hist[b] += count of (in[i] & 63) == b
#include "amdgcn_builtins.cl"

__kernel void histogram_shared(__global const uint *in, __global uint *hist, int n)
{
    __local uint bins[64];
    for (int b = get_local_id(0); b < 64; b += get_local_size(0))
        bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_group_id(0) * get_local_size(0) + get_local_id(0); i < n;
         i += get_local_size(0) * get_num_groups(0))
        atomic_add(&bins[in[i] & 63], 1u);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = get_local_id(0); b < 64; b += get_local_size(0))
        if (bins[b])
            atomic_add(&hist[b], bins[b]);
}
