// Local memory, __noinline__ device functions, recursion, function pointers, virtual calls.

// Local array indexed with data-dependent indices, so it lives in .local memory.
// out[i] = sum over k<16 of buf[perm[(i + k) % 16]] where buf[k] = in[i] * (k + 1)
__global__ void local_array_permute(const float *in, const int *perm, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float buf[16];
    for (int k = 0; k < 16; ++k)
        buf[k] = in[i] * (float)(k + 1);
    float acc = 0.0f;
    for (int k = 0; k < 16; ++k)
        acc += buf[perm[(i + k) & 15] & 15];
    out[i] = acc;
}

// Per-thread histogram in local memory: counts[i*8 + b] = number of j<32 with data[i*32+j] % 8 == b
__global__ void local_histogram(const unsigned *data, int *counts, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int h[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < 32; ++j)
        h[data[i * 32 + j] & 7]++;
    for (int b = 0; b < 8; ++b)
        counts[i * 8 + b] = h[b];
}

__device__ __noinline__ float poly3(float x, float a, float b, float c)
{
    return ((a * x + b) * x + c) * x;
}

__device__ __noinline__ int gcd_noinline(int a, int b)
{
    while (b != 0) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

// out[i] = poly3(x[i], 1, -2, 3) ; g[i] = gcd(a[i], b[i])   (non-inlined calls)
__global__ void noinline_calls(const float *x, float *out, const int *a, const int *b, int *g, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = poly3(x[i], 1.0f, -2.0f, 3.0f);
    g[i] = gcd_noinline(abs(a[i]), abs(b[i]));
}

__device__ __noinline__ unsigned long long factorial(unsigned n)
{
    return n <= 1 ? 1ull : n * factorial(n - 1);
}

__device__ __noinline__ int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

// Recursion: fact[i] = i! (i <= 20), fibs[i] = fib(i % 20)
__global__ void recursion(unsigned long long *fact, int *fibs, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    fact[i] = factorial(i % 21);
    fibs[i] = fib(i % 20);
}

typedef float (*unary_fn)(float);

__device__ __noinline__ float op_square(float x) { return x * x; }
__device__ __noinline__ float op_negate(float x) { return -x; }
__device__ __noinline__ float op_half(float x) { return 0.5f * x; }
__device__ __noinline__ float op_plus_one(float x) { return x + 1.0f; }

__device__ unary_fn g_ops[4] = {op_square, op_negate, op_half, op_plus_one};

// Indirect calls through a function-pointer table: out[i] = ops[sel[i] & 3](x[i]),
// ops = [x*x, -x, 0.5x, x+1]
__global__ void function_pointers(const float *x, const int *sel, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = g_ops[sel[i] & 3](x[i]);
}

class Shape {
public:
    __device__ virtual float area() const = 0;
    __device__ virtual float perimeter() const = 0;
    __device__ virtual ~Shape() {}
};

class Square : public Shape {
    float s;
public:
    __device__ Square(float side) : s(side) {}
    __device__ float area() const override { return s * s; }
    __device__ float perimeter() const override { return 4.0f * s; }
};

class Circle : public Shape {
    float r;
public:
    __device__ Circle(float radius) : r(radius) {}
    __device__ float area() const override { return 3.14159265f * r * r; }
    __device__ float perimeter() const override { return 2.0f * 3.14159265f * r; }
};

class Rect : public Shape {
    float w, h;
public:
    __device__ Rect(float w_, float h_) : w(w_), h(h_) {}
    __device__ float area() const override { return w * h; }
    __device__ float perimeter() const override { return 2.0f * (w + h); }
};

__device__ __noinline__ float describe(const Shape *s)
{
    return s->area() + 0.001f * s->perimeter();
}

// Virtual calls on objects constructed in the kernel:
// kind = k[i] % 3: 0 -> Square(x), 1 -> Circle(x), 2 -> Rect(x, x + 1)
// out[i] = area + 0.001 * perimeter
__global__ void virtual_shapes(const int *k, const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Square sq(x[i]);
    Circle ci(x[i]);
    Rect re(x[i], x[i] + 1.0f);
    const Shape *table[3] = {&sq, &ci, &re};
    out[i] = describe(table[k[i] % 3]);
}

// Heap objects: a Shape allocated with new in the kernel and deleted again (device malloc/free)
__global__ void virtual_new_delete(const int *k, const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Shape *s;
    if (k[i] & 1)
        s = new Circle(x[i]);
    else
        s = new Square(x[i]);
    out[i] = s ? s->area() : -1.0f;
    delete s;
}
