// Device-side printf (vprintf) and assert (__assertfail).
#include <cstdio>
#include <cassert>

// Prints one line per thread with ints, a float (promoted to double), a 64-bit value,
// a string and a char; also writes out[i] = i * 2 so there is something to check.
__global__ void printf_basic(int *out, float scale)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = i * 2;
    printf("block %d thread %d: i=%d scale*i=%f id64=%llu %s %c\n", blockIdx.x, threadIdx.x, i,
           scale * i, (unsigned long long)i << 33, "tag", 'A' + (i % 26));
}

// Only thread 0 of each block prints, with a hex value and a pointer
__global__ void printf_conditional(const unsigned *flags, unsigned *copy)
{
    unsigned v = flags[blockIdx.x];
    copy[blockIdx.x] = v;
    if (threadIdx.x == 0)
        printf("block %u flags=0x%08x at %p\n", blockIdx.x, v, (const void *)&flags[blockIdx.x]);
}

// out[i] = in[i] / d[i] after asserting d[i] != 0 (assert fails, trapping, on a zero divisor)
__global__ void assert_nonzero(const int *in, const int *d, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    assert(d[i] != 0);
    out[i] = in[i] / d[i];
}

// Explicit trap: out[i] = in[i] unless in[i] < 0, in which case the kernel traps
__global__ void trap_on_negative(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (in[i] < 0)
        __trap();
    out[i] = in[i];
}
