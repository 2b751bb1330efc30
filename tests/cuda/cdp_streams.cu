// Device-side streams and events (CDP2): kernels that create streams, launch into them,
// record events, wait on them and destroy them; plus the error paths the guide names.
#include <cuda_runtime.h>

__global__ void fill(int *out, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v + i;
}

__global__ void add_one(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += 1;
}

// Two streams: fill in s1, record e, s2 waits for e and adds one.
__global__ void streams_events(int *out, int n, int *err) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        cudaStream_t s1, s2;
        cudaEvent_t e;
        cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
        cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
        cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
        fill<<<(n + 63) / 64, 64, 0, s1>>>(out, n, 10);
        cudaEventRecord(e, s1);
        cudaStreamWaitEvent(s2, e, 0);
        add_one<<<(n + 63) / 64, 64, 0, s2>>>(out, n);
        cudaEventRecordWithFlags(e, s2, 0);
        cudaEventDestroy(e);
        cudaStreamDestroy(s1);
        cudaStreamDestroy(s2);
        err[0] = (int)cudaGetLastError();
    }
}

// A stream created without cudaStreamNonBlocking: CUDA returns an error.
__global__ void blocking_stream(int *err) {
    cudaStream_t s;
    err[0] = (int)cudaStreamCreateWithFlags(&s, cudaStreamDefault);
    err[1] = (int)cudaGetLastError();
    err[2] = (int)cudaPeekAtLastError();
}

// A destroyed stream used for a launch.
__global__ void destroyed_stream(int *out, int n, int *err) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaStreamDestroy(s);
    fill<<<1, 32, 0, s>>>(out, n, 1);
    err[0] = (int)cudaGetLastError();
}
