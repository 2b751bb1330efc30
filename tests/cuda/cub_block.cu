// CUB block-wide collectives (CUDA 13's CCCL): BlockReduce, BlockScan, BlockLoad/BlockStore,
// BlockExchange, BlockDiscontinuity, BlockAdjacentDifference. Each kernel works on one tile of
// BLOCK x ITEMS consecutive ints per CTA (tile t = in[t * BLOCK * ITEMS ...]); integer math
// only, so every result is exact. Models: tests/models/realworld.py.
#include <cub/cub.cuh>

// out[b] = sum of the CTA's BLOCK values (raking reduction, the default algorithm)
template <int BLOCK>
__global__ void cub_reduce_sum(const int *in, int *out)
{
    using R = cub::BlockReduce<int, BLOCK>;
    __shared__ typename R::TempStorage tmp;
    int v = in[blockIdx.x * BLOCK + threadIdx.x];
    int s = R(tmp).Sum(v);
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}
template __global__ void cub_reduce_sum<64>(const int *, int *);
template __global__ void cub_reduce_sum<128>(const int *, int *);
template __global__ void cub_reduce_sum<256>(const int *, int *);

// out[b] = max of the CTA's values, with the warp-reductions algorithm
template <int BLOCK>
__global__ void cub_reduce_max_warps(const int *in, int *out)
{
    using R = cub::BlockReduce<int, BLOCK, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
    __shared__ typename R::TempStorage tmp;
    int v = in[blockIdx.x * BLOCK + threadIdx.x];
    int m = R(tmp).Reduce(v, cuda::maximum<int>());
    if (threadIdx.x == 0)
        out[blockIdx.x] = m;
}
template __global__ void cub_reduce_max_warps<128>(const int *, int *);
template __global__ void cub_reduce_max_warps<256>(const int *, int *);

// out[b] = min over 4 items per thread, raking-commutative-only algorithm
__global__ void cub_reduce_min_items4(const int *in, int *out)
{
    using R = cub::BlockReduce<int, 128, cub::BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY>;
    __shared__ typename R::TempStorage tmp;
    int items[4];
    const int *tile = in + blockIdx.x * 128 * 4;
    for (int k = 0; k < 4; ++k)
        items[k] = tile[threadIdx.x * 4 + k];
    int m = R(tmp).Reduce(items, cuda::minimum<int>());
    if (threadIdx.x == 0)
        out[blockIdx.x] = m;
}

// out[b] = sum of the first n values of the tile (partial tile: Sum(v, num_valid))
__global__ void cub_reduce_partial(const int *in, int *out, int n)
{
    using R = cub::BlockReduce<int, 128>;
    __shared__ typename R::TempStorage tmp;
    int v = threadIdx.x < n ? in[blockIdx.x * 128 + threadIdx.x] : 0;
    int s = R(tmp).Sum(v, n);
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}

// out = inclusive prefix sum within each CTA; total[b] = the block aggregate
template <int BLOCK>
__global__ void cub_scan_inclusive(const int *in, int *out, int *total)
{
    using S = cub::BlockScan<int, BLOCK>;
    __shared__ typename S::TempStorage tmp;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    int agg;
    int v = in[i];
    S(tmp).InclusiveSum(v, v, agg);
    out[i] = v;
    if (threadIdx.x == 0)
        total[blockIdx.x] = agg;
}
template __global__ void cub_scan_inclusive<128>(const int *, int *, int *);
template __global__ void cub_scan_inclusive<256>(const int *, int *, int *);

// out = exclusive prefix sum within each CTA (the warp-scans algorithm)
template <int BLOCK>
__global__ void cub_scan_exclusive_warps(const int *in, int *out)
{
    using S = cub::BlockScan<int, BLOCK, cub::BLOCK_SCAN_WARP_SCANS>;
    __shared__ typename S::TempStorage tmp;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    int v = in[i];
    S(tmp).ExclusiveSum(v, v);
    out[i] = v;
}
template __global__ void cub_scan_exclusive_warps<64>(const int *, int *);
template __global__ void cub_scan_exclusive_warps<256>(const int *, int *);

// out = running maximum (inclusive max-scan), raking-memoize algorithm, 4 items per thread
__global__ void cub_scan_max_items4(const int *in, int *out)
{
    using S = cub::BlockScan<int, 128, cub::BLOCK_SCAN_RAKING_MEMOIZE>;
    __shared__ typename S::TempStorage tmp;
    int items[4];
    int base = blockIdx.x * 512 + threadIdx.x * 4;
    for (int k = 0; k < 4; ++k)
        items[k] = in[base + k];
    S(tmp).InclusiveScan(items, items, cuda::maximum<int>());
    for (int k = 0; k < 4; ++k)
        out[base + k] = items[k];
}

// out = exclusive scan with an initial value (seed) and the plus operator, over unsigned
__global__ void cub_scan_exclusive_seed(const unsigned *in, unsigned *out, unsigned seed)
{
    using S = cub::BlockScan<unsigned, 128, cub::BLOCK_SCAN_RAKING>;
    __shared__ typename S::TempStorage tmp;
    int i = blockIdx.x * 128 + threadIdx.x;
    unsigned v = in[i];
    S(tmp).ExclusiveScan(v, v, seed, cuda::std::plus<unsigned>());
    out[i] = v;
}

// BlockLoad/BlockStore with the given algorithms: out = in + 1, 4 items per thread
template <cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA>
__global__ void cub_load_store(const int *in, int *out)
{
    using L = cub::BlockLoad<int, 128, 4, LA>;
    using St = cub::BlockStore<int, 128, 4, SA>;
    __shared__ union {
        typename L::TempStorage load;
        typename St::TempStorage store;
    } tmp;
    int items[4];
    int off = blockIdx.x * 512;
    L(tmp.load).Load(in + off, items);
    __syncthreads();
    for (int k = 0; k < 4; ++k)
        items[k] += 1;
    St(tmp.store).Store(out + off, items);
}
template __global__ void cub_load_store<cub::BLOCK_LOAD_DIRECT, cub::BLOCK_STORE_DIRECT>(const int *, int *);
template __global__ void cub_load_store<cub::BLOCK_LOAD_VECTORIZE, cub::BLOCK_STORE_VECTORIZE>(const int *, int *);
template __global__ void cub_load_store<cub::BLOCK_LOAD_TRANSPOSE, cub::BLOCK_STORE_TRANSPOSE>(const int *, int *);
template __global__ void cub_load_store<cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::BLOCK_STORE_WARP_TRANSPOSE>(const int *,
                                                                                                       int *);
template __global__ void cub_load_store<cub::BLOCK_LOAD_STRIPED, cub::BLOCK_STORE_STRIPED>(const int *, int *);

// Guarded load of a partial tile (n valid items, the rest default 7) and a guarded store
__global__ void cub_load_guarded(const int *in, int *out, int n)
{
    using L = cub::BlockLoad<int, 128, 2, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using St = cub::BlockStore<int, 128, 2, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    __shared__ union {
        typename L::TempStorage load;
        typename St::TempStorage store;
    } tmp;
    int items[2];
    L(tmp.load).Load(in, items, n, 7);
    __syncthreads();
    for (int k = 0; k < 2; ++k)
        items[k] *= 3;
    St(tmp.store).Store(out, items);
}

// BlockExchange: a striped arrangement of 4 items per thread becomes a blocked one;
// out[t * 4 + k] = item k of thread t after the exchange
__global__ void cub_exchange_striped_to_blocked(const int *in, int *out)
{
    using E = cub::BlockExchange<int, 128, 4>;
    __shared__ typename E::TempStorage tmp;
    int items[4];
    int off = blockIdx.x * 512;
    for (int k = 0; k < 4; ++k)
        items[k] = in[off + k * 128 + threadIdx.x];
    E(tmp).StripedToBlocked(items, items);
    for (int k = 0; k < 4; ++k)
        out[off + threadIdx.x * 4 + k] = items[k];
}

// BlockDiscontinuity: flags[i] = 1 where in[i] != in[i - 1] (the tile's first item is a head)
__global__ void cub_flag_heads(const int *in, int *flags)
{
    using D = cub::BlockDiscontinuity<int, 128>;
    __shared__ typename D::TempStorage tmp;
    int items[2], f[2];
    int off = blockIdx.x * 256 + threadIdx.x * 2;
    items[0] = in[off];
    items[1] = in[off + 1];
    D(tmp).FlagHeads(f, items, cuda::std::not_equal_to<int>());
    flags[off] = f[0];
    flags[off + 1] = f[1];
}

// BlockAdjacentDifference: out[i] = in[i] - in[i - 1], out[first of tile] = in[first]
__global__ void cub_adjacent_difference(const int *in, int *out)
{
    using A = cub::BlockAdjacentDifference<int, 128>;
    __shared__ typename A::TempStorage tmp;
    int items[2];
    int off = blockIdx.x * 256 + threadIdx.x * 2;
    items[0] = in[off];
    items[1] = in[off + 1];
    A(tmp).SubtractLeft(items, items, cuda::std::minus<int>());
    out[off] = items[0];
    out[off + 1] = items[1];
}
