// Asynchronous global->shared copies (sm_80 cp.async): __pipeline_memcpy_async primitives,
// cuda::memcpy_async with cuda::pipeline, and cooperative_groups::memcpy_async.
#include <cuda_pipeline.h>
#include <cuda/pipeline>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;

// Each thread copies one float4 (16 bytes) into shared with __pipeline_memcpy_async, commits,
// waits, syncs, then out[i] = reversed-within-block element * 2 (block of 128 float4s)
__global__ void pipeline_primitives_reverse(const float4 *in, float4 *out)
{
    __shared__ float4 s[128];
    int t = threadIdx.x;
    int base = blockIdx.x * 128;
    __pipeline_memcpy_async(&s[t], &in[base + t], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    float4 v = s[127 - t];
    out[base + t] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
}

// Double-buffered streaming sum with 4-byte and 8-byte cp.async: each block sums `chunks`
// consecutive chunks of 256 floats; out[blockIdx.x] = sum of in[blockIdx.x*chunks*256 ...]
// blockDim.x == 256
__global__ void pipeline_double_buffer_sum(const float *in, float *out, int chunks)
{
    __shared__ float buf[2][256];
    __shared__ float red[256];
    int t = threadIdx.x;
    const float *src = in + (size_t)blockIdx.x * chunks * 256;
    __pipeline_memcpy_async(&buf[0][t], &src[t], sizeof(float));
    __pipeline_commit();
    float acc = 0.0f;
    for (int c = 0; c < chunks; ++c) {
        if (c + 1 < chunks)
            __pipeline_memcpy_async(&buf[(c + 1) & 1][t], &src[(c + 1) * 256 + t], sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(1);
        acc += buf[c & 1][t];
    }
    red[t] = acc;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s)
            red[t] += red[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = red[0];
}

// cuda::pipeline (thread scope) with cuda::memcpy_async: per-thread copy of 4 floats, then
// out[i] = in[i] + 1 for the block's slice of 4*blockDim floats
__global__ void cuda_pipeline_add_one(const float *in, float *out)
{
    extern __shared__ float sm[];
    int t = threadIdx.x;
    size_t base = (size_t)blockIdx.x * blockDim.x * 4;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&sm[4 * t], &in[base + 4 * t], cuda::aligned_size_t<16>(4 * sizeof(float)), pipe);
    pipe.producer_commit();
    cuda::pipeline_consumer_wait_prior<0>(pipe);
    for (int k = 0; k < 4; ++k)
        out[base + 4 * t + k] = sm[4 * t + k] + 1.0f;
    pipe.consumer_release();
}

// Block-wide cooperative_groups::memcpy_async of a whole tile, then cg::wait:
// out[b*n + j] = tile[n - 1 - j] for the block's n-element tile (n <= 1024, dynamic shared)
__global__ void cg_memcpy_async_reverse(const int *in, int *out, int n)
{
    extern __shared__ int tile[];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, tile, in + (size_t)blockIdx.x * n, sizeof(int) * n);
    cg::wait(block);
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        out[(size_t)blockIdx.x * n + j] = tile[n - 1 - j];
}
