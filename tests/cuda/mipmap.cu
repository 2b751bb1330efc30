// Mipmapped textures and formatted surface stores (issue 17): tex2DLod, tex2DGrad and
// tex3DLod on texture objects over a cudaMipmappedArray, txq of the level count, and a
// formatted surface store. nvcc 13 compiles surf2Dwrite to sust.b (an unformatted byte
// store), so the formatted form, sust.p, is written in inline PTX.
#include <cuda_runtime.h>

// out[i] = red of the fetch at (u[i], v[i]) with level of detail lod[i]
extern "C" __global__ void mip_lod(cudaTextureObject_t tex, const float* u, const float* v,
                                   const float* lod, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLod<float>(tex, u[i], v[i], lod[i]);
}

// The level of detail from the screen-space gradients of the coordinates (g: dx.x dx.y dy.x dy.y).
extern "C" __global__ void mip_grad(cudaTextureObject_t tex, const float* u, const float* v,
                                    const float4* g, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 d = g[i];
    out[i] = tex2DGrad<float>(tex, u[i], v[i], make_float2(d.x, d.y), make_float2(d.z, d.w));
}

// A 3D mip chain at an explicit level, four channels summed.
extern "C" __global__ void mip_lod3d(cudaTextureObject_t tex, const float4* p, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 q = p[i];
    float4 t = tex3DLod<float4>(tex, q.x, q.y, q.z, q.w);
    out[i] = t.x + t.y + t.z + t.w;
}

// Levels of the texture (txq.num_mipmap_levels; CUDA C++ has no wrapper for it).
extern "C" __global__ void mip_levels(cudaTextureObject_t tex, int* out) {
    int levels;
    asm("txq.num_mipmap_levels.b32 %0, [%1];" : "=r"(levels) : "l"(tex));
    *out = levels;
}

// Each thread stores a float4 colour to pixel (x, y) of an RGBA half-float surface
// (cudaCreateChannelDescHalf4): sust.p rounds each .f32 to the surface's format (x counts
// pixels, not bytes).
extern "C" __global__ void store_formatted(cudaSurfaceObject_t surf, const float4* colour, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float4 c = colour[y * w + x];
    asm volatile("sust.p.2d.v4.b32.trap [%0, {%1, %2}], {%3, %4, %5, %6};"
                 :: "l"(surf), "r"(x), "r"(y), "f"(c.x), "f"(c.y), "f"(c.z), "f"(c.w) : "memory");
}
