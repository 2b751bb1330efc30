// Cooperative groups: thread_block, tiled_partition<32>/<16>/<4>, cg::reduce, tile shfl.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// out[warp] = sum of the warp's 32 values using a thread_block_tile<32> and shfl_down
__global__ void tile32_sum(const float *in, float *out)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int off = tile.size() / 2; off > 0; off /= 2)
        v += tile.shfl_down(v, off);
    if (tile.thread_rank() == 0)
        out[i / 32] = v;
}

// cg::reduce with cg::plus and cg::greater over 32-wide tiles (uses redux on sm_80 for int)
__global__ void tile_reduce_ops(const int *in, int *sums, int *maxes)
{
    auto block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    int i = block.group_index().x * block.size() + block.thread_rank();
    int v = in[i];
    int s = cg::reduce(tile, v, cg::plus<int>());
    int m = cg::reduce(tile, v, cg::greater<int>());
    if (tile.thread_rank() == 0) {
        sums[i / 32] = s;
        maxes[i / 32] = m;
    }
}

// Inclusive scan in 16-wide tiles with shfl_up; out[i] = prefix sum within the 16-group
__global__ void tile16_scan(const int *in, int *out)
{
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int off = 1; off < 16; off *= 2) {
        int n = tile.shfl_up(v, off);
        if ((int)tile.thread_rank() >= off)
            v += n;
    }
    out[i] = v;
}

// Tile votes with 4-wide tiles: out[i] = {any, all, ballot} of (in[i] > 0) within its 4-group
__global__ void tile4_votes(const int *in, int *any, int *all, unsigned *ballot)
{
    auto tile = cg::tiled_partition<4>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = in[i] > 0;
    any[i] = tile.any(p);
    all[i] = tile.all(p);
    ballot[i] = tile.ballot(p);
}

// Block-level sum using block.sync() and tile reductions; out[blockIdx.x] = block sum
__global__ void block_sum_cg(const float *in, float *out, int n)
{
    __shared__ float warp_sums[32];
    auto block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0)
        warp_sums[tile.meta_group_rank()] = v;
    block.sync();
    if (tile.meta_group_rank() == 0) {
        float w = tile.thread_rank() < tile.meta_group_size() ? warp_sums[tile.thread_rank()] : 0.0f;
        w = cg::reduce(tile, w, cg::plus<float>());
        if (tile.thread_rank() == 0)
            out[blockIdx.x] = w;
    }
}

// Coalesced group inside a branch: lanes with in[i] odd get their rank among the odd lanes
__global__ void coalesced_rank(const int *in, int *rank, int *size)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    rank[i] = -1;
    size[i] = 0;
    if (in[i] & 1) {
        cg::coalesced_group g = cg::coalesced_threads();
        rank[i] = g.thread_rank();
        size[i] = g.size();
    }
}
