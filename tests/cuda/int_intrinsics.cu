// Integer intrinsics: bit counting, permutes, funnel shifts, high multiplies, SAD, dp4a.
#include <cstdint>

// out[8*i+k] = {__popc(x), __clz(x), __brev(x), __ffs(x), __popcll(y), __clzll(y),
//               __ffsll(y), (int)(__brevll(y) >> 32)}  with x = a[i], y = b64[i]
__global__ void bit_ops(const unsigned *a, const unsigned long long *b64, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i];
    unsigned long long y = b64[i];
    out[8 * i + 0] = __popc(x);
    out[8 * i + 1] = __clz(x);
    out[8 * i + 2] = (int)__brev(x);
    out[8 * i + 3] = __ffs(x);
    out[8 * i + 4] = __popcll(y);
    out[8 * i + 5] = __clzll(y);
    out[8 * i + 6] = __ffsll(y);
    out[8 * i + 7] = (int)(__brevll(y) >> 32);
}

// out[4*i+k] = {__byte_perm(x, y, s), __funnelshift_l(x, y, s), __funnelshift_r(x, y, s),
//               __funnelshift_lc(x, y, s)} with x = a[i], y = b[i], s = sel[i]
__global__ void permute_funnel(const unsigned *a, const unsigned *b, const unsigned *sel,
                               unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i], y = b[i], s = sel[i];
    out[4 * i + 0] = __byte_perm(x, y, s);
    out[4 * i + 1] = __funnelshift_l(x, y, s);
    out[4 * i + 2] = __funnelshift_r(x, y, s);
    out[4 * i + 3] = __funnelshift_lc(x, y, s);
}

// Multiplies: out[6*i+k] = {__mul24(x,y), __umul24(ux,uy), __mulhi(x,y), __umulhi(ux,uy),
//   (int)(__mul64hi(x64,y64)), (int)(__umul64hi(ux64,uy64))} for x = a[i], y = b[i]
__global__ void mul_high(const int *a, const int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    long long x64 = (long long)x * 0x10001ll, y64 = (long long)y * -0x1000003ll;
    out[6 * i + 0] = __mul24(x, y);
    out[6 * i + 1] = (int)__umul24(ux, uy);
    out[6 * i + 2] = __mulhi(x, y);
    out[6 * i + 3] = (int)__umulhi(ux, uy);
    out[6 * i + 4] = (int)__mul64hi(x64, y64);
    out[6 * i + 5] = (int)__umul64hi((unsigned long long)x64, (unsigned long long)y64);
}

// SAD and dot products: out[6*i+k] = {__sad(x,y,z), __usad(ux,uy,uz), __dp4a(x,y,z) (signed
// bytes), __dp4a(ux,uy,uz) (unsigned), __dp2a_lo(x,y,z), __dp2a_hi(ux,uy,uz)}
__global__ void sad_dp4a(const int *a, const int *b, const int *c, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i], z = c[i];
    out[6 * i + 0] = (int)__sad(x, y, (unsigned)z);
    out[6 * i + 1] = (int)__usad((unsigned)x, (unsigned)y, (unsigned)z);
    out[6 * i + 2] = __dp4a(x, y, z);
    out[6 * i + 3] = (int)__dp4a((unsigned)x, (unsigned)y, (unsigned)z);
    out[6 * i + 4] = __dp2a_lo(x, y, z);
    out[6 * i + 5] = (int)__dp2a_hi((unsigned)x, (unsigned)y, (unsigned)z);
}

// Averages and SIMD-in-word: out[6*i+k] = {__hadd(x,y), __rhadd(x,y), __uhadd(ux,uy),
//   __vadd4(ux,uy), __vabsdiffu4(ux,uy), __vmaxu2(ux,uy)}
__global__ void average_simd(const int *a, const int *b, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    out[6 * i + 0] = (unsigned)__hadd(x, y);
    out[6 * i + 1] = (unsigned)__rhadd(x, y);
    out[6 * i + 2] = __uhadd(ux, uy);
    out[6 * i + 3] = __vadd4(ux, uy);
    out[6 * i + 4] = __vabsdiffu4(ux, uy);
    out[6 * i + 5] = __vmaxu2(ux, uy);
}

// Bit-field extract/insert via shifts and masks plus a 64-bit rotate:
// out[i] = ((x >> 7) & 0x1f) | ((y & 0xff) << 12); rot[i] = rotl64(z, i % 64)
__global__ void bitfield_rotate(const unsigned *a, const unsigned *b, const uint64_t *c,
                                unsigned *out, uint64_t *rot, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i], y = b[i];
    out[i] = ((x >> 7) & 0x1fu) | ((y & 0xffu) << 12);
    unsigned s = i & 63;
    uint64_t z = c[i];
    rot[i] = s ? (z << s) | (z >> (64 - s)) : z;
}
