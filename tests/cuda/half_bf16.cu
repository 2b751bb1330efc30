// Half precision (cuda_fp16.h) and bfloat16 (cuda_bf16.h), scalar and packed.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Scalar half: out[i] = half(a[i] * b[i] + c[i]) via __hfma, plus __hadd/__hmul/__hsub,
// written back as float: f[3*i+k] = {hfma(a,b,c), hadd(a,b)*hsub(a,c), __hdiv(a, b)}
__global__ void half_scalar(const __half *a, const __half *b, const __half *c, __half *out,
                            float *f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half r = __hfma(a[i], b[i], c[i]);
    out[i] = r;
    f[3 * i + 0] = __half2float(r);
    f[3 * i + 1] = __half2float(__hmul(__hadd(a[i], b[i]), __hsub(a[i], c[i])));
    f[3 * i + 2] = __half2float(__hdiv(a[i], b[i]));
}

// Packed half2: out[i] = hfma2(a[i], b[i], c[i]) + hadd2(a[i], b[i]) * hmul2(b[i], c[i]);
// also h2max / habs2 / hneg2: m[i] = max(|a|, -b) lane-wise
__global__ void half2_ops(const __half2 *a, const __half2 *b, const __half2 *c, __half2 *out,
                          __half2 *m, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half2 x = a[i], y = b[i], z = c[i];
    __half2 t = __hfma2(x, y, z);
    out[i] = __hadd2(t, __hmul2(__hadd2(x, y), __hmul2(y, z)));
    m[i] = __hmax2(__habs2(x), __hneg2(y));
}

// Conversions: float pairs -> half2 (rn), back to float2; float -> half with rz/rd/ru;
// int/short conversions. h[i] = __floats2half2_rn(x[2i], x[2i+1]); back[2i..] = floats;
// r[4*i+k] = half2float({__float2half_rn, _rz, _rd, _ru}(x[2i])); iv[i] = __half2int_rn(h.x)
__global__ void half_conversions(const float *x, __half2 *h, float *back, float *r, int *iv,
                                 int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half2 p = __floats2half2_rn(x[2 * i], x[2 * i + 1]);
    h[i] = p;
    float2 f = __half22float2(p);
    back[2 * i] = f.x;
    back[2 * i + 1] = f.y;
    r[4 * i + 0] = __half2float(__float2half_rn(x[2 * i]));
    r[4 * i + 1] = __half2float(__float2half_rz(x[2 * i]));
    r[4 * i + 2] = __half2float(__float2half_rd(x[2 * i]));
    r[4 * i + 3] = __half2float(__float2half_ru(x[2 * i]));
    iv[i] = __half2int_rn(__low2half(p)) + __half2int_rz(__high2half(p));
}

// Half comparisons and half math: cmp[i] = (a<b) | (a==b)<<1 | hisnan(a)<<2 ;
// e[i] = hexp(a), s[i] = hsqrt(|a|) (as half)
__global__ void half_compare_math(const __half *a, const __half *b, int *cmp, __half *e,
                                  __half *s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half x = a[i], y = b[i];
    cmp[i] = (__hlt(x, y) ? 1 : 0) | (__heq(x, y) ? 2 : 0) | (__hisnan(x) ? 4 : 0);
    e[i] = hexp(x);
    s[i] = hsqrt(__habs(x));
}

// bfloat16 scalar and packed: out[i] = bf16 fma(a, b, c); p[i] = __hfma2 on __nv_bfloat162,
// f[2*i..] = floats of p[i]; rb[i] = float -> bf16 (rn) -> float round trip of x[i]
__global__ void bf16_ops(const __nv_bfloat16 *a, const __nv_bfloat16 *b, const __nv_bfloat16 *c,
                         __nv_bfloat16 *out, const __nv_bfloat162 *pa, const __nv_bfloat162 *pb,
                         __nv_bfloat162 *p, float *f, const float *x, float *rb, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = __hfma(a[i], b[i], c[i]);
    __nv_bfloat162 q = __hfma2(pa[i], pb[i], __hadd2(pa[i], pb[i]));
    p[i] = q;
    float2 fq = __bfloat1622float2(q);
    f[2 * i] = fq.x;
    f[2 * i + 1] = fq.y;
    rb[i] = __bfloat162float(__float2bfloat16(x[i])) + __bfloat162float(__float2bfloat16_rz(x[i]));
}

// Mixed precision dot: out[row] = sum_k float(A[row,k]) * float(B[k]) using half2 loads,
// accumulating in float (K even); one thread per row
__global__ void half2_dot_rows(const __half2 *A, const __half2 *B, float *out, int rows, int k2)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    float acc = 0.0f;
    for (int k = 0; k < k2; ++k) {
        float2 a = __half22float2(A[row * k2 + k]);
        float2 b = __half22float2(B[k]);
        acc += a.x * b.x + a.y * b.y;
    }
    out[row] = acc;
}

// Half atomics: atomicAdd on __half2 and __nv_bfloat162 and __half: acc2 += v[i] lane-wise
__global__ void half_atomics(const __half2 *v, __half2 *acc2, __nv_bfloat162 *accb, __half *acc1,
                             int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    atomicAdd(acc2, v[i]);
    atomicAdd(accb, __float22bfloat162_rn(__half22float2(v[i])));
    atomicAdd(acc1, __low2half(v[i]));
}
