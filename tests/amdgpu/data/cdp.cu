// Dynamic parallelism (a device-side launch), compiled with -rdc=true by make_devrt.py: AMD GPU
// code objects refuse it (HIP has no device-side kernel launch).
__global__ void child(int *a) { a[threadIdx.x] = 1; }
__global__ void parent(int *a) { if (threadIdx.x == 0) child<<<1, 32>>>(a); }
