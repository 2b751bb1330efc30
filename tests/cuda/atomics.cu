// Atomics of every operation and type, on global and shared memory.
// Model notes: results that depend on ordering (exch, CAS return values) are
// described so that a model can check a set/permutation rather than exact order.

// Global atomicAdd on every type: each thread i adds its contribution.
//   *si += vals_i[i]; *ui += (unsigned)i; *ull += (unsigned long long)i << 20;
//   *f += vals_f[i]; *d += vals_d[i]
__global__ void atomic_add_types(const int *vals_i, const float *vals_f, const double *vals_d,
                                 int *si, unsigned *ui, unsigned long long *ull, float *f,
                                 double *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    atomicAdd(si, vals_i[i]);
    atomicAdd(ui, (unsigned)i);
    atomicAdd(ull, (unsigned long long)i << 20);
    atomicAdd(f, vals_f[i]);
    atomicAdd(d, vals_d[i]);
}

// Return values used: old[i] = value of *counter before this thread's atomicAdd(counter, 1);
// the set of old values is {0..n-1} (+ initial)
__global__ void atomic_ticket(int *counter, int *old, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        old[i] = atomicAdd(counter, 1);
}

// atomicSub / atomicExch / atomicMin / atomicMax on int, unsigned, long long, unsigned long long.
// r[0] -= v; r[1] = exch(v) (last writer wins; returned olds written to prev[i]);
// r[2..3] = min/max int; ru[0..1] = min/max unsigned; rl[0..1] min/max long long;
// rul[0..1] min/max unsigned long long; rf = atomicExch on float
__global__ void atomic_sub_exch_minmax(const int *v, int *r, unsigned *ru, long long *rl,
                                       unsigned long long *rul, float *rf, int *prev, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = v[i];
    atomicSub(&r[0], x);
    prev[i] = atomicExch(&r[1], x);
    atomicMin(&r[2], x);
    atomicMax(&r[3], x);
    atomicMin(&ru[0], (unsigned)x);
    atomicMax(&ru[1], (unsigned)x);
    atomicMin(&rl[0], (long long)x * 1000000007ll);
    atomicMax(&rl[1], (long long)x * 1000000007ll);
    atomicMin(&rul[0], (unsigned long long)(unsigned)x << 3);
    atomicMax(&rul[1], (unsigned long long)(unsigned)x << 3);
    atomicExch(rf, (float)x);
    atomicExch(&rul[2], (unsigned long long)i);
}

// atomicInc / atomicDec with wrap limits: each thread does one inc on c[0] with limit lim
// (c[0] = (c[0] >= lim) ? 0 : c[0]+1) and one dec on c[1] ((c==0 || c>lim) ? lim : c-1)
__global__ void atomic_inc_dec(unsigned *c, unsigned lim, unsigned *old_inc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    old_inc[i] = atomicInc(&c[0], lim);
    atomicDec(&c[1], lim);
}

// Bitwise atomics: r[0] &= ~(1 << (i%32)) for even i, r[1] |= 1 << (i%32), r[2] ^= v[i];
// 64-bit: r64[0] |= 1ull << (i%64), r64[1] &= ~(1ull << (i%64)) for odd i, r64[2] ^= v[i]*i
__global__ void atomic_bitwise(const unsigned *v, unsigned *r, unsigned long long *r64, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if ((i & 1) == 0)
        atomicAnd(&r[0], ~(1u << (i & 31)));
    atomicOr(&r[1], 1u << (i & 31));
    atomicXor(&r[2], v[i]);
    atomicOr(&r64[0], 1ull << (i & 63));
    if (i & 1)
        atomicAnd(&r64[1], ~(1ull << (i & 63)));
    atomicXor(&r64[2], (unsigned long long)v[i] * (unsigned long long)i);
}

// Float max through an atomicCAS loop on the int bit pattern: *result = max(*result, in[i])
__device__ float atomic_max_float(float *addr, float val)
{
    int *ia = (int *)addr;
    int old = *ia, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= val)
            break;
        old = atomicCAS(ia, assumed, __float_as_int(val));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void cas_float_max(const float *in, float *result, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomic_max_float(result, in[i]);
}

// Double multiply through a 64-bit CAS loop: *prod *= in[i] (all factors near 1)
__global__ void cas_double_mul(const double *in, double *prod, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long *p = (unsigned long long *)prod;
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, __double_as_longlong(__longlong_as_double(assumed) * in[i]));
    } while (assumed != old);
}

// Spin lock via atomicCAS/atomicExch guarding a non-atomic read-modify-write:
// one thread per block (thread 0) adds blockIdx.x+1 to *total under the lock
__global__ void spinlock_accumulate(int *lock, int *total)
{
    if (threadIdx.x != 0)
        return;
    while (atomicCAS(lock, 0, 1) != 0)
        ;
    __threadfence();
    volatile int *t = total;
    *t = *t + (int)blockIdx.x + 1;
    __threadfence();
    atomicExch(lock, 0);
}

// Shared-memory histogram: 64 bins, atomicAdd on shared, then flushed with global atomicAdd.
// hist[b] += count of (in[i] & 63) == b
__global__ void histogram_shared(const unsigned *in, unsigned *hist, int n)
{
    __shared__ unsigned bins[64];
    for (int b = threadIdx.x; b < 64; b += blockDim.x)
        bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[in[i] & 63], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 64; b += blockDim.x)
        if (bins[b])
            atomicAdd(&hist[b], bins[b]);
}

// Every atomic op on shared memory; thread 0 writes the final shared state to out:
// out = [sum, sub, min, max, and, or, xor, inc, dec, exch!=-1, cas_count] as ints,
// fout = [float sum, float max via CAS], dout = [double sum]
__global__ void shared_atomics_all(const int *in, int *out, float *fout, double *dout)
{
    __shared__ int s[11];
    __shared__ float sf[2];
    __shared__ double sd;
    __shared__ unsigned long long s64;
    int t = threadIdx.x;
    if (t == 0) {
        s[0] = 0; s[1] = 0; s[2] = 0x7fffffff; s[3] = (int)0x80000000; s[4] = -1; s[5] = 0;
        s[6] = 0; s[7] = 0; s[8] = 0; s[9] = -1; s[10] = 0;
        sf[0] = 0.0f; sf[1] = -1e30f; sd = 0.0; s64 = 0;
    }
    __syncthreads();
    int v = in[blockIdx.x * blockDim.x + t];
    atomicAdd(&s[0], v);
    atomicSub(&s[1], v);
    atomicMin(&s[2], v);
    atomicMax(&s[3], v);
    atomicAnd(&s[4], ~(1 << (t & 31)));
    atomicOr(&s[5], 1 << (t & 31));
    atomicXor(&s[6], v);
    atomicInc((unsigned *)&s[7], 1000u);
    atomicDec((unsigned *)&s[8], 1000u);
    atomicExch(&s[9], t);
    if (atomicCAS(&s[10], 0, 1) == 0)   // exactly one thread wins
        atomicAdd(&s[10], 100);
    atomicAdd(&sf[0], (float)v * 0.5f);
    atomic_max_float(&sf[1], (float)v);
    atomicAdd(&sd, (double)v * 0.25);
    atomicAdd(&s64, (unsigned long long)v);
    __syncthreads();
    if (t == 0) {
        for (int k = 0; k < 11; ++k)
            out[blockIdx.x * 12 + k] = s[k];
        out[blockIdx.x * 12 + 11] = (int)s64;
        fout[2 * blockIdx.x] = sf[0];
        fout[2 * blockIdx.x + 1] = sf[1];
        dout[blockIdx.x] = sd;
    }
}

// Block- and system-scoped variants (atom.cta / atom.sys):
// c[0] += 1 (block scope), c[1] += 1 (system scope), f[0..1] += (x, 2x)
__global__ void atomic_scopes(int *c, float *f, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    atomicAdd_block(&c[0], 1);
    atomicAdd_system(&c[1], 1);
    atomicMax_block(&c[2], i);
    atomicAdd_block(&f[0], x[i]);
    atomicAdd_system(&f[1], 2.0f * x[i]);
}
