// CUB device-wide algorithms (CUDA 13's CCCL) called from host code: nvcc emits the kernels
// the dispatch layers launch (DeviceReduce's single-tile, multi-block and final kernels,
// DeviceScan's init and tile-scan kernels) into the PTX. Only the kernels are compiled and
// tested here; tests/interp/test_realworld_corpus.py launches the single-tile reduce kernel
// the way the dispatch would for a small input.
#include <cub/cub.cuh>

void device_reduce_sum(const int *d_in, int *d_out, int n, void *d_tmp, size_t &tmp_bytes)
{
    cub::DeviceReduce::Sum(d_tmp, tmp_bytes, d_in, d_out, n);
}

void device_reduce_max(const unsigned *d_in, unsigned *d_out, int n, void *d_tmp, size_t &tmp_bytes)
{
    cub::DeviceReduce::Max(d_tmp, tmp_bytes, d_in, d_out, n);
}

void device_inclusive_sum(const int *d_in, int *d_out, int n, void *d_tmp, size_t &tmp_bytes)
{
    cub::DeviceScan::InclusiveSum(d_tmp, tmp_bytes, d_in, d_out, n);
}

void device_exclusive_sum(const unsigned *d_in, unsigned *d_out, int n, void *d_tmp, size_t &tmp_bytes)
{
    cub::DeviceScan::ExclusiveSum(d_tmp, tmp_bytes, d_in, d_out, n);
}
