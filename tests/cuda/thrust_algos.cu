// Thrust algorithms (CUDA 13's CCCL) called from host code on device_ptr ranges: nvcc emits
// the kernels they launch (thrust::transform's parallel-for / cub::DeviceTransform kernels,
// thrust::reduce's CUB reduce kernels, thrust::inclusive_scan's scan kernels, thrust::sort's
// radix-sort kernels, thrust::sequence / fill) into the PTX.
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

struct saxpy_int {
    int a;
    __host__ __device__ int operator()(int x, int y) const { return a * x + y; }
};

struct square_u {
    __host__ __device__ unsigned operator()(unsigned x) const { return x * x; }
};

void thrust_transform_saxpy(int *x, int *y, int *out, int n, int a)
{
    thrust::device_ptr<int> px(x), py(y), po(out);
    thrust::transform(thrust::device, px, px + n, py, po, saxpy_int{a});
}

void thrust_transform_square(unsigned *x, unsigned *out, int n)
{
    thrust::device_ptr<unsigned> px(x), po(out);
    thrust::transform(thrust::device, px, px + n, po, square_u{});
}

int thrust_reduce_sum(const int *x, int n)
{
    thrust::device_ptr<const int> px(x);
    return thrust::reduce(thrust::device, px, px + n, 0, thrust::plus<int>());
}

void thrust_inclusive_scan(const int *x, int *out, int n)
{
    thrust::device_ptr<const int> px(x);
    thrust::device_ptr<int> po(out);
    thrust::inclusive_scan(thrust::device, px, px + n, po);
}

void thrust_sort_keys(unsigned *keys, int n)
{
    thrust::device_ptr<unsigned> pk(keys);
    thrust::sort(thrust::device, pk, pk + n);
}

void thrust_sequence_fill(int *a, int *b, int n)
{
    thrust::device_ptr<int> pa(a), pb(b);
    thrust::sequence(thrust::device, pa, pa + n, 3, 2);
    thrust::fill(thrust::device, pb, pb + n, 42);
}
