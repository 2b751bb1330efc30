// Tensor copies through a tensor map (TMA, PTX ISA §9.7.9.25.5.2) as CUDA programs write them
// with libcu++: cuda::device::experimental::cp_async_bulk_tensor_2d_global_to_shared completing
// on a cuda::barrier (nvcc 13 emits cp.async.bulk.tensor.2d...mbarrier::complete_tx::bytes with
// the __grid_constant__ CUtensorMap parameter's cvta.param address), and the shared -> global
// store with bulk groups. sm_90a only (regenerate.py's NVCC_ARCH_SOURCES).
// Models: tests/interp/test_tma_fixture.py (a numpy tile copy with out-of-bounds fill).
#include <cuda.h>
#include <cuda/barrier>
#include <cuda/ptx>

#pragma nv_diag_suppress static_var_with_dynamic_init

using block_barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

// Block b loads the 16 x 32 float box at (x0 + 32 b, y0) through the map and writes it to
// out[b * 512 ..] row-major; elements outside the tensor read as the map's fill.
__global__ void tma_load_tile(const __grid_constant__ CUtensorMap tmap, float *out, int x0, int y0)
{
    __shared__ alignas(128) float tile[16][32];
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cde::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    block_barrier::arrival_token tok;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(&tile, &tmap, x0 + 32 * blockIdx.x, y0, bar);
        tok = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
    } else {
        tok = bar.arrive();
    }
    bar.wait(std::move(tok));
    for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x)
        out[blockIdx.x * 512 + i] = (&tile[0][0])[i];
}

// The 16 x 32 floats of `in` written to the box at (x0, y0); parts outside the tensor are dropped.
__global__ void tma_store_tile(const __grid_constant__ CUtensorMap tmap, const float *in, int x0, int y0)
{
    __shared__ alignas(128) float tile[16][32];
    for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x)
        (&tile[0][0])[i] = in[i];
    cde::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_shared_to_global(&tmap, x0, y0, &tile);
        cde::cp_async_bulk_commit_group();
        cde::cp_async_bulk_wait_group_read<0>();
    }
}
