// CUB warp-wide collectives (CUDA 13's CCCL): WarpReduce (full and logical warps of 16/8/4
// lanes, segmented by head flags), WarpScan (inclusive/exclusive, broadcast), WarpExchange,
// WarpLoad/WarpStore, WarpMergeSort. Models: tests/models/realworld.py.
#include <cub/cub.cuh>

// out[g] = sum of logical warp g's LANES values (g = global thread index / LANES)
template <int LANES>
__global__ void cub_warp_sum(const int *in, int *out)
{
    using W = cub::WarpReduce<int, LANES>;
    __shared__ typename W::TempStorage tmp[256 / LANES];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int s = W(tmp[threadIdx.x / LANES]).Sum(in[i]);
    if (threadIdx.x % LANES == 0)
        out[i / LANES] = s;
}
template __global__ void cub_warp_sum<32>(const int *, int *);
template __global__ void cub_warp_sum<16>(const int *, int *);
template __global__ void cub_warp_sum<8>(const int *, int *);
template __global__ void cub_warp_sum<4>(const int *, int *);

// out[w] = max over each 32-lane warp of unsigned values
__global__ void cub_warp_max(const unsigned *in, unsigned *out)
{
    using W = cub::WarpReduce<unsigned>;
    __shared__ typename W::TempStorage tmp[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned m = W(tmp[threadIdx.x / 32]).Reduce(in[i], cuda::maximum<unsigned>());
    if (threadIdx.x % 32 == 0)
        out[i / 32] = m;
}

// Sum of the first n lanes of each warp (partial warp reduction)
__global__ void cub_warp_sum_partial(const int *in, int *out, int n)
{
    using W = cub::WarpReduce<int>;
    __shared__ typename W::TempStorage tmp[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int v = lane < n ? in[i] : 0;
    int s = W(tmp[threadIdx.x / 32]).Sum(v, n);
    if (lane == 0)
        out[i / 32] = s;
}

// Segmented sums: a segment starts where heads[i] != 0 (and at lane 0); the sum is written
// at each segment's head lane, out = 0 elsewhere
__global__ void cub_warp_head_segmented_sum(const int *in, const int *heads, int *out)
{
    using W = cub::WarpReduce<int>;
    __shared__ typename W::TempStorage tmp[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int flag = lane == 0 || heads[i] != 0;
    int s = W(tmp[threadIdx.x / 32]).HeadSegmentedSum(in[i], flag);
    out[i] = flag ? s : 0;
}

// Inclusive (LANES-wide) prefix sums
template <int LANES>
__global__ void cub_warp_inclusive_sum(const int *in, int *out)
{
    using W = cub::WarpScan<int, LANES>;
    __shared__ typename W::TempStorage tmp[256 / LANES];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v;
    W(tmp[threadIdx.x / LANES]).InclusiveSum(in[i], v);
    out[i] = v;
}
template __global__ void cub_warp_inclusive_sum<32>(const int *, int *);
template __global__ void cub_warp_inclusive_sum<16>(const int *, int *);

// Exclusive prefix sums and each warp's total (warp_aggregate), 32 lanes
__global__ void cub_warp_exclusive_sum(const int *in, int *out, int *totals)
{
    using W = cub::WarpScan<int>;
    __shared__ typename W::TempStorage tmp[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v, agg;
    W(tmp[threadIdx.x / 32]).ExclusiveSum(in[i], v, agg);
    out[i] = v;
    if (threadIdx.x % 32 == 0)
        totals[i / 32] = agg;
}

// Running minimum (inclusive min-scan) over 8-lane logical warps
__global__ void cub_warp_inclusive_min8(const int *in, int *out)
{
    using W = cub::WarpScan<int, 8>;
    __shared__ typename W::TempStorage tmp[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v;
    W(tmp[threadIdx.x / 8]).InclusiveScan(in[i], v, cuda::minimum<int>());
    out[i] = v;
}

// Broadcast lane 5's value to its warp
__global__ void cub_warp_broadcast(const int *in, int *out)
{
    using W = cub::WarpScan<int>;
    __shared__ typename W::TempStorage tmp[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = W(tmp[threadIdx.x / 32]).Broadcast(in[i], 5);
}

// WarpLoad (transpose) + WarpExchange (blocked -> striped) + WarpStore (direct):
// each warp handles 32 x 4 consecutive ints; out holds them striped, plus 10
__global__ void cub_warp_load_exchange_store(const int *in, int *out)
{
    using L = cub::WarpLoad<int, 4, cub::WARP_LOAD_TRANSPOSE>;
    using E = cub::WarpExchange<int, 4>;
    using St = cub::WarpStore<int, 4, cub::WARP_STORE_DIRECT>;
    __shared__ typename L::TempStorage lt[4];
    __shared__ typename E::TempStorage et[4];
    int w = threadIdx.x / 32;
    int off = (blockIdx.x * 4 + w) * 128;
    int items[4];
    L(lt[w]).Load(in + off, items);
    for (int k = 0; k < 4; ++k)
        items[k] += 10;
    E(et[w]).BlockedToStriped(items, items);
    St().Store(out + off, items);
}

struct UintLess {
    __device__ bool operator()(unsigned a, unsigned b) const { return a < b; }
};

// WarpMergeSort: each warp sorts its 32 x 2 keys (blocked arrangement)
__global__ void cub_warp_merge_sort(const unsigned *in, unsigned *out)
{
    using S = cub::WarpMergeSort<unsigned, 2, 32>;
    __shared__ typename S::TempStorage tmp[4];
    int w = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    int off = (blockIdx.x * 4 + w) * 64 + lane * 2;
    unsigned keys[2] = {in[off], in[off + 1]};
    S(tmp[w]).Sort(keys, UintLess());
    out[off] = keys[0];
    out[off + 1] = keys[1];
}
