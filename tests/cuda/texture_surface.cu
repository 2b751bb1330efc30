// Texture and surface objects (bindless): tex2D<float4>, tex1Dfetch, tex2D<float>,
// tex3D, surf2Dread / surf2Dwrite.
#include <cuda_runtime.h>

// Sample an RGBA float texture at pixel centres: out[y*w + x] = dot(tex2D(x+0.5, y+0.5), weights)
// where weights = (0.299, 0.587, 0.114, 0) (luminance)
__global__ void tex2d_luminance(cudaTextureObject_t tex, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float4 c = tex2D<float4>(tex, x + 0.5f, y + 0.5f);
    out[y * w + x] = 0.299f * c.x + 0.587f * c.y + 0.114f * c.z;
}

// Normalised-coordinate bilinear sample at (u, v) per output: out[i] = tex2D<float>(tex, u[i], v[i])
__global__ void tex2d_sample_uv(cudaTextureObject_t tex, const float *u, const float *v, float *out,
                                int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<float>(tex, u[i], v[i]);
}

// Linear-memory texture fetch by integer index: out[i] = fetch(i) + fetch(idx[i]) (int texture too)
__global__ void tex1d_fetch(cudaTextureObject_t ftex, cudaTextureObject_t itex, const int *idx,
                            float *out, int *iout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = tex1Dfetch<float>(ftex, i) + tex1Dfetch<float>(ftex, idx[i]);
    iout[i] = tex1Dfetch<int>(itex, i) * 2;
}

// 3D texture sampled at voxel centres: out[(z*h + y)*w + x] = tex3D(x+.5, y+.5, z+.5)
__global__ void tex3d_copy(cudaTextureObject_t tex, float *out, int w, int h, int d)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < w && y < h && z < d)
        out[(z * h + y) * w + x] = tex3D<float>(tex, x + 0.5f, y + 0.5f, z + 0.5f);
}

// Surface read-modify-write: s[y][x] = 2 * s[y][x] + x - y for a float surface (byte x offset)
__global__ void surf2d_scale(cudaSurfaceObject_t surf, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float v;
    surf2Dread(&v, surf, x * (int)sizeof(float), y);
    surf2Dwrite(2.0f * v + (float)(x - y), surf, x * (int)sizeof(float), y);
}

// Write a gradient into a uchar4 surface and read back with clamp addressing:
// dst[y][x] = (x & 255, y & 255, (x + y) & 255, 255); check[y*w+x] = alpha read back from (x+1, y)
// (clamped at the border)
__global__ void surf2d_uchar4(cudaSurfaceObject_t dst, int *check, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    uchar4 c = make_uchar4(x & 255, y & 255, (x + y) & 255, 255);
    surf2Dwrite(c, dst, x * 4, y);
    uchar4 r = surf2Dread<uchar4>(dst, x * 4, y, cudaBoundaryModeClamp);
    check[y * w + x] = r.w;
}
