// Fast-math intrinsics (approximate SFU instructions) and explicitly rounded operations.

// out[8*i+k] = {__sinf, __cosf, __expf, __logf(|x|+1), __powf(|x|+1, 0.5), __fdividef(x, y),
//               rsqrtf(|x|+1), __tanf}
__global__ void fast_intrinsics(const float *x, const float *y, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    out[8 * i + 0] = __sinf(a);
    out[8 * i + 1] = __cosf(a);
    out[8 * i + 2] = __expf(a);
    out[8 * i + 3] = __logf(fabsf(a) + 1.0f);
    out[8 * i + 4] = __powf(fabsf(a) + 1.0f, 0.5f);
    out[8 * i + 5] = __fdividef(a, b);
    out[8 * i + 6] = rsqrtf(fabsf(a) + 1.0f);
    out[8 * i + 7] = __tanf(a);
}

// Explicit rounding modes: out[8*i+k] = {__frcp_rn(y), __fsqrt_rn(|x|), __fadd_rz(x,y),
// __fmul_rd(x,y), __fmul_ru(x,y), __fdiv_rn(x,y), __fmaf_rz(x,y,1), __saturatef(x)}
__global__ void rounding_intrinsics(const float *x, const float *y, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    out[8 * i + 0] = __frcp_rn(b);
    out[8 * i + 1] = __fsqrt_rn(fabsf(a));
    out[8 * i + 2] = __fadd_rz(a, b);
    out[8 * i + 3] = __fmul_rd(a, b);
    out[8 * i + 4] = __fmul_ru(a, b);
    out[8 * i + 5] = __fdiv_rn(a, b);
    out[8 * i + 6] = __fmaf_rz(a, b, 1.0f);
    out[8 * i + 7] = __saturatef(a);
}

// Double intrinsics: out[5*i+k] = {__drcp_rn(y), __dsqrt_rn(|x|), __dadd_rz(x,y),
// __dmul_ru(x,y), __fma_rn(x,y,0.5)}
__global__ void double_rounding_intrinsics(const double *x, const double *y, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double a = x[i], b = y[i];
    out[5 * i + 0] = __drcp_rn(b);
    out[5 * i + 1] = __dsqrt_rn(fabs(a));
    out[5 * i + 2] = __dadd_rz(a, b);
    out[5 * i + 3] = __dmul_ru(a, b);
    out[5 * i + 4] = __fma_rn(a, b, 0.5);
}

// Float <-> int conversion intrinsics: iout[4*i+k] = {__float2int_rn, __float2int_rz,
// __float2int_rd, __float2int_ru}(x); uout[i] = __float2uint_rn(|x|);
// fout[2*i+k] = {__int2float_rn(ival), __uint2float_rz(uval)}; bits[i] = __float_as_uint(x)
__global__ void conversion_intrinsics(const float *x, const int *ival, const unsigned *uval,
                                      int *iout, unsigned *uout, float *fout, unsigned *bits, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    iout[4 * i + 0] = __float2int_rn(v);
    iout[4 * i + 1] = __float2int_rz(v);
    iout[4 * i + 2] = __float2int_rd(v);
    iout[4 * i + 3] = __float2int_ru(v);
    uout[i] = __float2uint_rn(fabsf(v));
    fout[2 * i + 0] = __int2float_rn(ival[i]);
    fout[2 * i + 1] = __uint2float_rz(uval[i]);
    bits[i] = __float_as_uint(v);
}

// Softmax of each row of length 32 using one warp per row and __expf (block of 32 x rows)
__global__ void warp_softmax_fast(const float *x, float *y, int rows)
{
    int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows)
        return;
    int lane = threadIdx.x;
    float v = x[row * 32 + lane];
    float m = v;
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float e = __expf(v - m);
    float s = e;
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    y[row * 32 + lane] = __fdividef(e, s);
}
