// Cooperative groups beyond coop_groups.cu: tiled_partition<16/8/4/2> with cg::reduce over
// several operators, cg::inclusive_scan / exclusive_scan, labeled_partition, binary_partition,
// coalesced_threads in divergent code, tile meta ranks, thread_block_tile::match_any and a
// dynamic tiled_partition(block, n). Models: tests/models/realworld.py.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

// out[g] = cg::reduce(plus) over each N-wide tile (g = global index / N)
template <int N>
__global__ void cg_tile_sum(const int *in, int *out)
{
    auto tile = cg::tiled_partition<N>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int s = cg::reduce(tile, in[i], cg::plus<int>());
    if (tile.thread_rank() == 0)
        out[i / N] = s;
}
template __global__ void cg_tile_sum<16>(const int *, int *);
template __global__ void cg_tile_sum<8>(const int *, int *);
template __global__ void cg_tile_sum<4>(const int *, int *);
template __global__ void cg_tile_sum<2>(const int *, int *);

// and/or/xor/min of unsigned values over 16-wide tiles
__global__ void cg_tile16_bitops(const unsigned *in, unsigned *ands, unsigned *ors, unsigned *xors,
                                 unsigned *mins)
{
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    unsigned a = cg::reduce(tile, v, cg::bit_and<unsigned>());
    unsigned o = cg::reduce(tile, v, cg::bit_or<unsigned>());
    unsigned x = cg::reduce(tile, v, cg::bit_xor<unsigned>());
    unsigned m = cg::reduce(tile, v, cg::less<unsigned>());
    if (tile.thread_rank() == 0) {
        ands[i / 16] = a;
        ors[i / 16] = o;
        xors[i / 16] = x;
        mins[i / 16] = m;
    }
}

// float sums over 32-wide tiles of exactly representable values (small integers)
__global__ void cg_tile32_fsum(const float *in, float *out)
{
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = cg::reduce(tile, in[i], cg::plus<float>());
    if (tile.thread_rank() == 0)
        out[i / 32] = s;
}

// cg::inclusive_scan / exclusive_scan in 16-wide tiles
__global__ void cg_tile16_scans(const int *in, int *inc, int *exc)
{
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    inc[i] = cg::inclusive_scan(tile, in[i]);
    exc[i] = cg::exclusive_scan(tile, in[i]);
}

// Running maximum in 32-wide tiles (inclusive_scan with cg::greater)
__global__ void cg_tile32_scan_max(const int *in, int *out)
{
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = cg::inclusive_scan(tile, in[i], cg::greater<int>());
}

// labeled_partition of each warp by label[i]: sums[i] = sum of in over the lanes of i's warp
// that share its label; ranks[i] = i's rank among them; sizes[i] = their number
__global__ void cg_labeled_sum(const int *in, const int *label, int *sums, int *ranks, int *sizes)
{
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    auto part = cg::labeled_partition(warp, label[i]);
    sums[i] = cg::reduce(part, in[i], cg::plus<int>());
    ranks[i] = part.thread_rank();
    sizes[i] = part.num_threads();
}

// binary_partition by (in[i] odd): out[i] = how many lanes of the warp share i's parity
__global__ void cg_binary_partition_count(const int *in, int *out)
{
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    auto part = cg::binary_partition(warp, (in[i] & 1) != 0);
    out[i] = part.num_threads();
}

// coalesced_threads in a divergent branch: the lanes with in[i] > 0 compact their values;
// rank[i] = i's rank among them (-1 for the others), count[warp] = their number
__global__ void cg_coalesced_compact(const int *in, int *rank, int *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    rank[i] = -1;
    if (in[i] > 0) {
        auto active = cg::coalesced_threads();
        rank[i] = active.thread_rank();
        if (active.thread_rank() == 0)
            count[i / 32] = active.num_threads();
    }
}

// An atomic counter aggregated over the coalesced group (one atomicAdd per warp):
// slot[i] = the position lane i got, for in[i] != 0; -1 otherwise
__global__ void cg_coalesced_aggregated_atomic(const int *in, int *counter, int *slot)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    slot[i] = -1;
    if (in[i] != 0) {
        auto g = cg::coalesced_threads();
        int base = 0;
        if (g.thread_rank() == 0)
            base = atomicAdd(counter, (int)g.num_threads());
        slot[i] = g.shfl(base, 0) + g.thread_rank();
    }
}

// Tile meta ranks: out[i] = meta_group_rank * 100 + meta_group_size for 8-wide tiles
__global__ void cg_tile8_meta(int *out)
{
    auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = tile.meta_group_rank() * 100 + tile.meta_group_size();
}

// Tile shuffles: out[i] = value of lane (rank ^ 5) (shfl_xor) + value of lane 3 (shfl) in 16-tiles
__global__ void cg_tile16_shuffles(const int *in, int *out)
{
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    out[i] = tile.shfl_xor(v, 5) + tile.shfl(v, 3);
}

// Tile votes in 8-wide tiles: any/all/ballot of (in[i] > 0) and match_any of in[i] & 3
__global__ void cg_tile8_votes(const int *in, int *any, int *all, unsigned *ballot, unsigned *match)
{
    auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = in[i] > 0;
    any[i] = tile.any(p);
    all[i] = tile.all(p);
    ballot[i] = tile.ballot(p);
    match[i] = tile.match_any(in[i] & 3);
}

// block-wide group: out[i] = block.thread_rank() + 1000 * block.group_index().x after block.sync()
__global__ void cg_block_ranks(int *out)
{
    auto block = cg::this_thread_block();
    __shared__ int s[256];
    s[block.thread_rank()] = block.thread_rank();
    block.sync();
    out[blockIdx.x * blockDim.x + threadIdx.x] =
        s[block.size() - 1 - block.thread_rank()] + 1000 * block.group_index().x;
}
