// Device-runtime kernels for the AMD translation tests (tests/amdgpu/test_amdgpu_devrt.py).
// make_devrt.py compiles this file (and cdp.cu) into the committed PTX next to it.
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;

// Each thread allocates n ints, fills them, sums them, frees them; twice, so the second round
// can reuse the first round's blocks. out[t] = sum, ok[t] = 1 when both allocations succeeded
// and the blocks were 16-byte aligned and distinct from the neighbour's.
__global__ void heap_rounds(int *out, int *ok, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int s = 0, good = 1;
  for (int round = 0; round < 2; round++) {
    int *p = (int *)malloc((n + t % 3) * sizeof(int));
    if (!p || ((unsigned long long)p & 15)) { good = 0; continue; }
    for (int i = 0; i < n + t % 3; i++) p[i] = t * 10 + i + round;
    __syncthreads();
    for (int i = 0; i < n + t % 3; i++) s += p[i];
    free(p);
  }
  out[t] = s;
  ok[t] = good;
}

__global__ void heap_null(unsigned long long *out) {
  void *p = malloc(0);
  free(nullptr);
  void *q = malloc(1ull << 40);
  out[threadIdx.x] = (unsigned long long)p | (unsigned long long)q;
}

// Every thread allocates and frees 64 KiB `rounds` times: far more than the 8 MiB heap holds,
// so it only works when freed blocks are reused. done[t] = the allocations that succeeded.
__global__ void heap_reuse(int *done, int rounds) {
  int n = 0;
  for (int r = 0; r < rounds; r++) {
    char *p = (char *)malloc(64 << 10);
    if (p) { p[r] = (char)r; n += p[r] == (char)r; free(p); }
  }
  done[blockIdx.x * blockDim.x + threadIdx.x] = n;
}

__global__ void printf_kinds(unsigned i, long long l, float f, double d, const char *unused) {
  printf("thread %d block %u: i=%d l=%lld u=%u x=%x f=%f d=%.3e c=%c s=%s %%\n", threadIdx.x, blockIdx.x, i, l,
         i, i, f, d, 'A' + threadIdx.x, "text");
  if (threadIdx.x == 1) printf("no arguments\n");
}

__global__ void grid_sum(int *a, int *out) {
  cg::grid_group g = cg::this_grid();
  a[g.thread_rank()] += 1;
  g.sync();
  if (g.thread_rank() == 0) { int s = 0; for (unsigned i = 0; i < g.size(); i++) s += a[i]; *out = s; }
}
