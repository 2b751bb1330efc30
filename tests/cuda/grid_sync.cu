// Cooperative groups' grid-wide synchronisation: kernels that need a cooperative launch
// (cudaLaunchCooperativeKernel; ptxvm: cooperative=True). this_grid() reads the driver's grid
// workspace from %envreg1:%envreg2; sync() is a spin barrier on it (cooperative_groups/details/sync.h).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// partial[b] = sum of block b's inputs (atomics), then after the grid barrier thread 0 of the
// grid sums the partials: *out = sum of in[0..n)
__global__ void grid_sum(const int *in, int *partial, int *out, int n)
{
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    int v = i < n ? in[i] : 0;
    atomicAdd(&partial[blockIdx.x], v);
    grid.sync();
    if (grid.thread_rank() == 0) {
        int s = 0;
        for (unsigned b = 0; b < grid.num_blocks(); ++b)
            s += partial[b];
        *out = s;
    }
}

// steps rounds of a rotation through two buffers, a grid barrier between rounds: each round
// reads the value of the next thread of the whole grid (another block's at block edges):
// after the rounds buf[steps % 2][i] = buf[0][(i + steps) % n] + steps (n = all threads)
__global__ void grid_rotate(int *buf, int steps)
{
    cg::grid_group grid = cg::this_grid();
    unsigned n = grid.size();
    unsigned i = grid.thread_rank();
    for (int s = 0; s < steps; ++s) {
        int *src = buf + (s % 2) * n, *dst = buf + ((s + 1) % 2) * n;
        dst[i] = src[(i + 1) % n] + 1;
        grid.sync();
    }
}

// A 2-D grid, the split barrier (barrier_arrive / barrier_wait): every block writes its
// linear rank, then after the barrier each thread reads the rank of the block "opposite" it:
// out[t] = (nblocks - 1 - block_rank(t))
__global__ void grid_split_barrier(int *ranks, int *out)
{
    cg::grid_group grid = cg::this_grid();
    unsigned b = grid.block_rank();
    if (threadIdx.x == 0 && threadIdx.y == 0)
        ranks[b] = (int)b;
    auto token = grid.barrier_arrive();
    grid.barrier_wait(std::move(token));
    out[grid.thread_rank()] = ranks[grid.num_blocks() - 1 - b];
}

// Whether the launch provides the grid workspace: out[i] = this_grid().is_valid() (1 for a
// cooperative launch, 0 otherwise; no sync, so it never traps)
__global__ void grid_is_valid(int *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = cg::this_grid().is_valid() ? 1 : 0;
}

// Blocks reach the grid barrier on different paths (two copies of sync() at different places
// in the code): odd blocks first spend a loop of `work` rounds. After the barrier each block's
// thread 0 reads every block's value: out[b] = +/- (sum of k + 1 over all blocks k), negative
// for even blocks
__global__ void grid_two_sites(int *vals, int *out, int work)
{
    cg::grid_group grid = cg::this_grid();
    unsigned b = blockIdx.x;
    if (threadIdx.x == 0)
        vals[b] = b + 1;
    if (b % 2) {
        volatile int spin = 0;
        for (int k = 0; k < work; ++k)
            spin += k;
        grid.sync();
        int s = 0;
        for (unsigned k = 0; k < gridDim.x; ++k)
            s += vals[k];
        if (threadIdx.x == 0)
            out[b] = s;
    } else {
        grid.sync();
        int s = 0;
        for (unsigned k = 0; k < gridDim.x; ++k)
            s -= vals[k];
        if (threadIdx.x == 0)
            out[b] = s;
    }
}
