// Warp votes, match, redux (sm_80), __activemask and __syncwarp.
#define FULL 0xffffffffu

// ballot[warp] = bitmask of lanes with in[i] > 0; any/all flags per warp
__global__ void vote_ballot_any_all(const int *in, unsigned *ballot, int *any, int *all)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = in[i] > 0;
    unsigned b = __ballot_sync(FULL, p);
    int a = __any_sync(FULL, p);
    int l = __all_sync(FULL, p);
    if ((threadIdx.x & 31) == 0) {
        ballot[i >> 5] = b;
        any[i >> 5] = a;
        all[i >> 5] = l;
    }
}

// Stream compaction within a warp: keep in[i] if in[i] is even; out gets the kept values
// in lane order at out[warp*32 + rank]; count[warp] = number kept
__global__ void warp_compact(const int *in, int *out, int *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = in[i];
    bool keep = (v & 1) == 0;
    unsigned mask = __ballot_sync(FULL, keep);
    int rank = __popc(mask & ((1u << lane) - 1u));
    if (keep)
        out[(i & ~31) + rank] = v;
    if (lane == 0)
        count[i >> 5] = __popc(mask);
}

// match_any: peers[i] = mask of lanes in the warp holding the same key;
// leader[i] = 1 if this lane is the lowest lane with its key.
// match_all: allsame[warp] = 1 if every lane holds the same key
__global__ void match_keys(const int *keys, const long long *keys64, unsigned *peers,
                           int *leader, int *allsame, unsigned *peers64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int k = keys[i];
    unsigned m = __match_any_sync(FULL, k);
    peers[i] = m;
    leader[i] = (__ffs(m) - 1) == lane;
    peers64[i] = __match_any_sync(FULL, keys64[i]);
    int pred;
    unsigned all = __match_all_sync(FULL, k, &pred);
    if (lane == 0)
        allsame[i >> 5] = pred && all == FULL;
}

// redux.sync (sm_80): per warp add/min/max of unsigned and signed, and/or/xor
__global__ void warp_redux(const unsigned *u, const int *s, unsigned *out_u, int *out_s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = u[i];
    int b = s[i];
    unsigned sum = __reduce_add_sync(FULL, a);
    unsigned mn = __reduce_min_sync(FULL, a);
    unsigned mx = __reduce_max_sync(FULL, a);
    int smn = __reduce_min_sync(FULL, b);
    int smx = __reduce_max_sync(FULL, b);
    unsigned an = __reduce_and_sync(FULL, a);
    unsigned orr = __reduce_or_sync(FULL, a);
    unsigned x = __reduce_xor_sync(FULL, a);
    if ((threadIdx.x & 31) == 0) {
        int w = i >> 5;
        out_u[6 * w + 0] = sum;
        out_u[6 * w + 1] = mn;
        out_u[6 * w + 2] = mx;
        out_u[6 * w + 3] = an;
        out_u[6 * w + 4] = orr;
        out_u[6 * w + 5] = x;
        out_s[2 * w + 0] = smn;
        out_s[2 * w + 1] = smx;
    }
}

// Divergent branch: only lanes with in[i] != 0 enter; they record __activemask()
// and the count of active lanes; others write 0. Ends with __syncwarp.
__global__ void active_mask_divergent(const int *in, unsigned *mask, int *active)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned m = 0;
    int c = 0;
    if (in[i] != 0) {
        m = __activemask();
        c = __popc(m);
        // partial-mask shuffle among the active lanes: sum over them via reduce
        c = __reduce_add_sync(m, 1u) == (unsigned)c ? c : -1;
    }
    __syncwarp();
    mask[i] = m;
    active[i] = c;
}

// Warp-aggregated atomic increment: one atomicAdd per warp, each lane gets a unique slot
// where pred (in[i] > threshold) holds; out[slot] = i
__global__ void warp_aggregated_append(const int *in, int threshold, int *out, int *counter)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[i] <= threshold)
        return;
    unsigned active = __activemask();
    int leader = __ffs(active) - 1;
    int lane = threadIdx.x & 31;
    int base = 0;
    if (lane == leader)
        base = atomicAdd(counter, __popc(active));
    base = __shfl_sync(active, base, leader);
    out[base + __popc(active & ((1u << lane) - 1u))] = i;
}
