// IEEE-accurate math library calls (no fast-math), single and double precision.
#include <cmath>

// out[7*i + k] = {sinf, cosf, tanf, expf, logf, sqrtf, powf(|x|, 1.5)} of x[i]
__global__ void float_math(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    out[7 * i + 0] = sinf(v);
    out[7 * i + 1] = cosf(v);
    out[7 * i + 2] = tanf(v);
    out[7 * i + 3] = expf(v);
    out[7 * i + 4] = logf(fabsf(v) + 1.0f);
    out[7 * i + 5] = sqrtf(fabsf(v));
    out[7 * i + 6] = powf(fabsf(v), 1.5f);
}

// out[6*i + k] = {sin, cos, exp, log(|x|+1), sqrt(|x|), pow(|x|, 0.3)} in double
__global__ void double_math(const double *x, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double v = x[i];
    out[6 * i + 0] = sin(v);
    out[6 * i + 1] = cos(v);
    out[6 * i + 2] = exp(v);
    out[6 * i + 3] = log(fabs(v) + 1.0);
    out[6 * i + 4] = sqrt(fabs(v));
    out[6 * i + 5] = pow(fabs(v), 0.3);
}

// More functions: out[8*i + k] = {tanhf, atan2f(x, y), exp2f, log2f(|x|+1), log10f(|x|+1),
// cbrtf, erff, hypotf(x, y)}
__global__ void float_math_more(const float *x, const float *y, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    out[8 * i + 0] = tanhf(a);
    out[8 * i + 1] = atan2f(a, b);
    out[8 * i + 2] = exp2f(a);
    out[8 * i + 3] = log2f(fabsf(a) + 1.0f);
    out[8 * i + 4] = log10f(fabsf(a) + 1.0f);
    out[8 * i + 5] = cbrtf(a);
    out[8 * i + 6] = erff(a);
    out[8 * i + 7] = hypotf(a, b);
}

// Rounding and conversions: out[6*i+k] = {floorf, ceilf, roundf, truncf, rintf, fmodf(x, 1.7)};
// iout[3*i+k] = {(int)x, lrintf(x), (int)(unsigned)fabsf(x)}; dout[i] = (double)x / 3.0
__global__ void rounding_conversions(const float *x, float *out, int *iout, double *dout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    out[6 * i + 0] = floorf(v);
    out[6 * i + 1] = ceilf(v);
    out[6 * i + 2] = roundf(v);
    out[6 * i + 3] = truncf(v);
    out[6 * i + 4] = rintf(v);
    out[6 * i + 5] = fmodf(v, 1.7f);
    iout[3 * i + 0] = (int)v;
    iout[3 * i + 1] = (int)lrintf(v);
    iout[3 * i + 2] = (int)(unsigned)fabsf(v);
    dout[i] = (double)v / 3.0;
}

// IEEE division, reciprocal and fused multiply-add: q = a / b, r = 1 / b, f = fmaf(a, b, c),
// dq = (double)a / (double)b, df = fma(a, b, c) in double; also copysign and fdim
__global__ void div_fma(const float *a, const float *b, const float *c, float *q, float *r,
                        float *f, double *dq, double *df, float *cs, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    q[i] = a[i] / b[i];
    r[i] = 1.0f / b[i];
    f[i] = fmaf(a[i], b[i], c[i]);
    dq[i] = (double)a[i] / (double)b[i];
    df[i] = fma((double)a[i], (double)b[i], (double)c[i]);
    cs[i] = copysignf(fdimf(a[i], c[i]), b[i]);
}

// Special values: classify x: cls[i] = isnan*1 | isinf*2 | signbit*4 | isfinite*8
__global__ void classify(const float *x, int *cls, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    cls[i] = (isnan(v) ? 1 : 0) | (isinf(v) ? 2 : 0) | (signbit(v) ? 4 : 0) | (isfinite(v) ? 8 : 0);
}
