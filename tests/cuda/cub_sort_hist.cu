// CUB block-wide sorting and histograms (CUDA 13's CCCL): BlockRadixSort (keys, key-value
// pairs, descending, bit ranges, blocked-to-striped), BlockMergeSort, BlockHistogram (atomic and
// sort algorithms), BlockShuffle. One tile per CTA; models: tests/models/realworld.py.
#include <cub/cub.cuh>
#include <cub/block/block_shuffle.cuh>

// Each CTA sorts its BLOCK * ITEMS keys ascending (blocked arrangement: thread t holds
// positions t * ITEMS .. t * ITEMS + ITEMS - 1 of the sorted tile)
template <typename K, int BLOCK, int ITEMS>
__global__ void cub_radix_sort(const K *in, K *out)
{
    using S = cub::BlockRadixSort<K, BLOCK, ITEMS>;
    __shared__ typename S::TempStorage tmp;
    K keys[ITEMS];
    int off = blockIdx.x * BLOCK * ITEMS + threadIdx.x * ITEMS;
    for (int k = 0; k < ITEMS; ++k)
        keys[k] = in[off + k];
    S(tmp).Sort(keys);
    for (int k = 0; k < ITEMS; ++k)
        out[off + k] = keys[k];
}
template __global__ void cub_radix_sort<unsigned, 128, 4>(const unsigned *, unsigned *);
template __global__ void cub_radix_sort<int, 128, 2>(const int *, int *);
template __global__ void cub_radix_sort<unsigned short, 64, 4>(const unsigned short *, unsigned short *);
template __global__ void cub_radix_sort<unsigned long long, 64, 2>(const unsigned long long *,
                                                                   unsigned long long *);
template __global__ void cub_radix_sort<float, 128, 2>(const float *, float *);

// Descending sort of int keys
__global__ void cub_radix_sort_desc(const int *in, int *out)
{
    using S = cub::BlockRadixSort<int, 128, 2>;
    __shared__ typename S::TempStorage tmp;
    int keys[2];
    int off = blockIdx.x * 256 + threadIdx.x * 2;
    keys[0] = in[off];
    keys[1] = in[off + 1];
    S(tmp).SortDescending(keys);
    out[off] = keys[0];
    out[off + 1] = keys[1];
}

// Key-value pairs: values are the original positions, so out_vals is a stable argsort
__global__ void cub_radix_sort_pairs(const unsigned *in, unsigned *out_keys, int *out_vals)
{
    using S = cub::BlockRadixSort<unsigned, 128, 2, int>;
    __shared__ typename S::TempStorage tmp;
    unsigned keys[2];
    int vals[2];
    int off = blockIdx.x * 256 + threadIdx.x * 2;
    for (int k = 0; k < 2; ++k) {
        keys[k] = in[off + k];
        vals[k] = threadIdx.x * 2 + k;
    }
    S(tmp).Sort(keys, vals);
    for (int k = 0; k < 2; ++k) {
        out_keys[off + k] = keys[k];
        out_vals[off + k] = vals[k];
    }
}

// Sort on bits [4, 12) only (stable on the rest), result in a striped arrangement:
// out[off + k * 128 + t] = item k of thread t
__global__ void cub_radix_sort_bits_striped(const unsigned *in, unsigned *out)
{
    using S = cub::BlockRadixSort<unsigned, 128, 2>;
    __shared__ typename S::TempStorage tmp;
    unsigned keys[2];
    int off = blockIdx.x * 256;
    keys[0] = in[off + threadIdx.x * 2];
    keys[1] = in[off + threadIdx.x * 2 + 1];
    S(tmp).SortBlockedToStriped(keys, 4, 12);
    out[off + threadIdx.x] = keys[0];
    out[off + 128 + threadIdx.x] = keys[1];
}

struct IntLess {
    __device__ bool operator()(int a, int b) const { return a < b; }
};

// BlockMergeSort of 128 x 4 int keys per CTA
__global__ void cub_merge_sort(const int *in, int *out)
{
    using S = cub::BlockMergeSort<int, 128, 4>;
    __shared__ typename S::TempStorage tmp;
    int keys[4];
    int off = blockIdx.x * 512 + threadIdx.x * 4;
    for (int k = 0; k < 4; ++k)
        keys[k] = in[off + k];
    S(tmp).Sort(keys, IntLess());
    for (int k = 0; k < 4; ++k)
        out[off + k] = keys[k];
}

// hist[b * BINS + v] = how often byte value v occurs in CTA b's 128 x 4 samples
template <cub::BlockHistogramAlgorithm ALG>
__global__ void cub_histogram(const unsigned char *in, unsigned *hist)
{
    using H = cub::BlockHistogram<unsigned char, 128, 4, 256, ALG>;
    __shared__ typename H::TempStorage tmp;
    __shared__ unsigned bins[256];
    unsigned char samples[4];
    int off = blockIdx.x * 512 + threadIdx.x * 4;
    for (int k = 0; k < 4; ++k)
        samples[k] = in[off + k];
    H(tmp).Histogram(samples, bins);
    __syncthreads();
    for (int v = threadIdx.x; v < 256; v += 128)
        hist[blockIdx.x * 256 + v] = bins[v];
}
template __global__ void cub_histogram<cub::BLOCK_HISTO_ATOMIC>(const unsigned char *, unsigned *);
template __global__ void cub_histogram<cub::BLOCK_HISTO_SORT>(const unsigned char *, unsigned *);

// BlockShuffle: out[i] = in[i + 1] within the tile (the last thread keeps its own value)
__global__ void cub_shuffle_offset(const int *in, int *out)
{
    using S = cub::BlockShuffle<int, 128>;
    __shared__ typename S::TempStorage tmp;
    int i = blockIdx.x * 128 + threadIdx.x;
    int v = in[i];
    int w = v;
    S(tmp).Offset(v, w, 1);
    out[i] = threadIdx.x == 127 ? v : w;
}
