// Texture objects the way the CUDA imaging samples use them (our own sources):
// a bilinear resize, a box filter through tex2D, a layered texture, a cubemap lookup,
// a surface write/read pass and tex1Dfetch on linear memory.
#include <cuda_runtime.h>

// Bilinear resize: dst is dw x dh, sampled from a normalised-coordinate linear-filtered texture
// at the destination pixel centres: dst[y*dw+x] = tex2D(src, (x+0.5)/dw, (y+0.5)/dh)
__global__ void resize_bilinear(cudaTextureObject_t src, float *dst, int dw, int dh)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= dw || y >= dh)
        return;
    float u = (x + 0.5f) / dw;
    float v = (y + 0.5f) / dh;
    dst[y * dw + x] = tex2D<float>(src, u, v);
}

// Box filter of radius r through point-sampled tex2D at texel centres (clamped at the edges):
// dst[y*w+x] = sum over |dx|,|dy| <= r of tex2D(src, x+dx+0.5, y+dy+0.5) / (2r+1)^2
__global__ void box_filter(cudaTextureObject_t src, float *dst, int w, int h, int r)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float sum = 0.0f;
    for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx)
            sum += tex2D<float>(src, x + dx + 0.5f, y + dy + 0.5f);
    float n = (float)((2 * r + 1) * (2 * r + 1));
    dst[y * w + x] = sum / n;
}

// Layered texture: every layer sampled at the same point, summed with the layer index as weight:
// dst[y*w+x] = sum_l (l+1) * tex2DLayered(src, x+0.5, y+0.5, l)
__global__ void layered_weighted(cudaTextureObject_t src, float *dst, int w, int h, int layers)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float sum = 0.0f;
    for (int l = 0; l < layers; ++l)
        sum += (l + 1) * tex2DLayered<float>(src, x + 0.5f, y + 0.5f, l);
    dst[y * w + x] = sum;
}

// Cubemap lookup along directions: dst[i] = texCubemap(src, dir[3i], dir[3i+1], dir[3i+2])
__global__ void cube_lookup(cudaTextureObject_t src, const float *dir, float *dst, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = texCubemap<float>(src, dir[3 * i], dir[3 * i + 1], dir[3 * i + 2]);
}

// Surface pass: invert an RGBA8 image in place, then read the neighbour (zero beyond the edge):
// s[y][x] = 255 - s[y][x] per channel; right[y*w+x] = red of s[y][x+1] read back (0 past the edge)
__global__ void surf_invert(cudaSurfaceObject_t s, int *right, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    uchar4 c = surf2Dread<uchar4>(s, x * 4, y);
    surf2Dwrite(make_uchar4(255 - c.x, 255 - c.y, 255 - c.z, 255 - c.w), s, x * 4, y);
    __syncthreads();
    uchar4 r = surf2Dread<uchar4>(s, (x + 1) * 4, y, cudaBoundaryModeZero);
    right[y * w + x] = r.x;
}

// Gather through linear memory: dst[i] = tex1Dfetch(src, idx[i]) * 2 (0 for an index out of range)
__global__ void fetch_gather(cudaTextureObject_t src, const int *idx, float *dst, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = 2.0f * tex1Dfetch<float>(src, idx[i]);
}
