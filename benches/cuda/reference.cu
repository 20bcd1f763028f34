// Hand-written CUDA references for `cargo bench --features cuda --bench cuda`: what a CUDA
// programmer would write for each benchmark, compiled on the GPU machine with
// `nvcc -O3 -arch=sm_XX -cubin` and run in the same process as the acc regions.
#include <cstddef>

extern "C" __global__ void stream_copy(const double* __restrict__ a, double* __restrict__ c, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i];
}

extern "C" __global__ void stream_scale(double* __restrict__ b, const double* __restrict__ c, double s, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) b[i] = s * c[i];
}

extern "C" __global__ void stream_add(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void stream_triad(double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ c, double s, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i] + s * c[i];
}

template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity) {
    __shared__ T warps[32];
    for (int off = 16; off > 0; off /= 2) v = op(v, __shfl_down_sync(0xffffffff, v, off));
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warps[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? warps[lane] : identity;
        for (int off = 16; off > 0; off /= 2) v = op(v, __shfl_down_sync(0xffffffff, v, off));
    }
    return v;
}

struct Add {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
    template <typename T> __device__ T operator()(T a, T b) const { return fmax(a, b); }
};

// Grid-stride partial reductions, one partial per block, then one block folds the partials.
extern "C" __global__ void dot_partials(const double* __restrict__ a, const double* __restrict__ b, double* partials, size_t n) {
    double s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) s += a[i] * b[i];
    s = block_reduce(s, Add(), 0.0);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

extern "C" __global__ void sum_f32_partials(const float* __restrict__ x, float* partials, size_t n) {
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) s += x[i];
    s = block_reduce(s, Add(), 0.0f);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

extern "C" __global__ void max_f32_partials(const float* __restrict__ x, float* partials, size_t n) {
    float m = -INFINITY;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) m = fmaxf(m, x[i]);
    m = block_reduce(m, Max(), -INFINITY);
    if (threadIdx.x == 0) partials[blockIdx.x] = m;
}

extern "C" __global__ void fold_f64_add(const double* partials, double* out, unsigned count) {
    double s = 0;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) s += partials[i];
    s = block_reduce(s, Add(), 0.0);
    if (threadIdx.x == 0) *out = s;
}

extern "C" __global__ void fold_f32_add(const float* partials, float* out, unsigned count) {
    float s = 0;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) s += partials[i];
    s = block_reduce(s, Add(), 0.0f);
    if (threadIdx.x == 0) *out = s;
}

extern "C" __global__ void fold_f32_max(const float* partials, float* out, unsigned count) {
    float m = -INFINITY;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) m = fmaxf(m, partials[i]);
    m = block_reduce(m, Max(), -INFINITY);
    if (threadIdx.x == 0) *out = m;
}

// One Jacobi sweep on an n x m grid: the 4-point average of a into anew on the interior, with
// the largest change reduced (per block, then folded by fold_f64_max), then anew copied back.
extern "C" __global__ void jacobi_sweep(const double* __restrict__ a, double* __restrict__ anew, double* partials, int n, int m) {
    double err = 0;
    int j = blockIdx.y + 1;
    for (; j < n - 1; j += gridDim.y) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x + 1; i < m - 1; i += gridDim.x * blockDim.x) {
            double v = 0.25 * (a[j * m + i + 1] + a[j * m + i - 1] + a[(j - 1) * m + i] + a[(j + 1) * m + i]);
            anew[j * m + i] = v;
            err = fmax(err, fabs(v - a[j * m + i]));
        }
    }
    err = block_reduce(err, Max(), 0.0);
    if (threadIdx.x == 0) partials[blockIdx.y * gridDim.x + blockIdx.x] = err;
}

extern "C" __global__ void jacobi_copy(double* __restrict__ a, const double* __restrict__ anew, int n, int m) {
    int j = blockIdx.y + 1;
    for (; j < n - 1; j += gridDim.y)
        for (int i = blockIdx.x * blockDim.x + threadIdx.x + 1; i < m - 1; i += gridDim.x * blockDim.x) a[j * m + i] = anew[j * m + i];
}

extern "C" __global__ void fold_f64_max(const double* partials, double* out, unsigned count) {
    double m = 0;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) m = fmax(m, partials[i]);
    m = block_reduce(m, Max(), 0.0);
    if (threadIdx.x == 0) *out = m;
}

// C = A B for n x n row-major f32 matrices, 16 x 16 tiles in shared memory.
extern "C" __global__ void matmul_f32(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
    __shared__ float ta[16][16], tb[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float s = 0;
    for (int t = 0; t < n; t += 16) {
        ta[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; k++) s += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = s;
}

// Matrix-vector product, a block per row: the straightforward CUDA of acc's gang loop over a
// vector loop with a reduction, then `y[i] = s`.
extern "C" __global__ void matvec_f32(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = blockIdx.x; i < n; i += gridDim.x) {
        float s = 0.0f;
        for (int j = threadIdx.x; j < n; j += blockDim.x) s += A[(size_t)i * n + j] * x[j];
        s = block_reduce(s, Add(), 0.0f);
        if (threadIdx.x == 0) y[i] = s;
        __syncthreads();
    }
}

// CSR sparse matrix-vector product, a block per row (acc's gang loop over rows with a vector
// reduction over the row's entries).
extern "C" __global__ void spmv_f32(const unsigned long long* __restrict__ rows, const unsigned* __restrict__ cols, const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = blockIdx.x; i < n; i += gridDim.x) {
        float s = 0.0f;
        for (unsigned long long k = rows[i] + threadIdx.x; k < rows[i + 1]; k += blockDim.x) s += vals[k] * x[cols[k]];
        s = block_reduce(s, Add(), 0.0f);
        if (threadIdx.x == 0) y[i] = s;
        __syncthreads();
    }
}

// The same with a warp per row (what `vector_length(32)` asks for).
extern "C" __global__ void spmv_warp_f32(const unsigned long long* __restrict__ rows, const unsigned* __restrict__ cols, const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y, int n) {
    int lane = threadIdx.x % 32, warps = blockDim.x / 32;
    for (int i = blockIdx.x * warps + threadIdx.x / 32; i < n; i += gridDim.x * warps) {
        float s = 0.0f;
        for (unsigned long long k = rows[i] + lane; k < rows[i + 1]; k += 32) s += vals[k] * x[cols[k]];
        for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffff, s, off);
        if (lane == 0) y[i] = s;
    }
}

// A histogram by atomics in global memory, a thread per key (grid-stride).
extern "C" __global__ void histogram_u32(const unsigned* __restrict__ keys, unsigned* __restrict__ bins, size_t n, unsigned nbins) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        atomicAdd(&bins[keys[i] % nbins], 1u);
}

// The same with a block's copy of the bins in shared memory, merged at the end.
extern "C" __global__ void histogram_shared_u32(const unsigned* __restrict__ keys, unsigned* __restrict__ bins, size_t n, unsigned nbins) {
    __shared__ unsigned local[4096];
    for (unsigned b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        atomicAdd(&local[keys[i] % nbins], 1u);
    __syncthreads();
    for (unsigned b = threadIdx.x; b < nbins; b += blockDim.x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}

// A 7-point stencil over the interior of an n^3 grid, a thread per point (x fastest).
extern "C" __global__ void stencil7(const double* __restrict__ a, double* __restrict__ b, int n) {
    size_t total = (size_t)(n - 2) * (n - 2) * (n - 2);
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total; t += (size_t)gridDim.x * blockDim.x) {
        size_t i = 1 + t % (n - 2), j = 1 + (t / (n - 2)) % (n - 2), k = 1 + t / ((size_t)(n - 2) * (n - 2));
        size_t c = (k * n + j) * n + i;
        b[c] = (a[c - 1] + a[c + 1] + a[c - n] + a[c + n] + a[c - (size_t)n * n] + a[c + (size_t)n * n]) * (1.0 / 6.0);
    }
}

extern "C" __global__ void touch(double* x) {
    x[0] += 1.0;
}

// A one-thread kernel that runs for a while (the GPU busy when the next launch comes):
// `n` dependent steps, rounded as Rust does (no contraction into fma).
extern "C" __global__ void spin(double* y, unsigned long long n) {
    double v = y[0];
    for (unsigned long long k = 0; k < n; k++) v = __dadd_rn(__dmul_rn(v, 0.999), 1.0);
    y[0] = v;
}

// All-pairs n-body accelerations, a thread per body reading every other body from global
// memory (the straightforward CUDA of acc's parallel loop over bodies with an inner loop).
extern "C" __global__ void nbody_f32(const float* __restrict__ px, const float* __restrict__ py, const float* __restrict__ pz, const float* __restrict__ m, float* __restrict__ ax, float* __restrict__ ay, float* __restrict__ az, int n, float eps) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float xi = px[i], yi = py[i], zi = pz[i], fx = 0.0f, fy = 0.0f, fz = 0.0f;
        for (int j = 0; j < n; j++) {
            float dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
            float d2 = dx * dx + dy * dy + dz * dz + eps;
            float inv = 1.0f / sqrtf(d2);
            float s = m[j] * inv * inv * inv;
            fx += dx * s; fy += dy * s; fz += dz * s;
        }
        ax[i] = fx; ay[i] = fy; az[i] = fz;
    }
}

// Transpose of an n x n f32 matrix through a 32 x 33 shared-memory tile, 32 x 8 threads.
extern "C" __global__ void transpose_f32(const float* __restrict__ a, float* __restrict__ b, int n) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int k = 0; k < 32; k += 8)
        if (x < n && y + k < n) tile[threadIdx.y + k][threadIdx.x] = a[(size_t)(y + k) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    for (int k = 0; k < 32; k += 8)
        if (x < n && y + k < n) b[(size_t)(y + k) * n + x] = tile[threadIdx.x][threadIdx.y + k];
}

// The first pass of a two-pass scan: each block of 256 threads scans a chunk of `chunk`
// elements (16 per thread, consecutive) in shared memory and writes the chunk's total.
extern "C" __global__ void scan_chunks_u32(const unsigned* __restrict__ x, unsigned* __restrict__ y, unsigned* __restrict__ sums, size_t n, unsigned chunk) {
    __shared__ unsigned part[256];
    size_t base = (size_t)blockIdx.x * chunk;
    unsigned per = chunk / blockDim.x, run = 0;
    unsigned v[16];
    for (unsigned k = 0; k < per; k++) { v[k] = x[base + threadIdx.x * per + k]; run += v[k]; }
    part[threadIdx.x] = run;
    __syncthreads();
    for (unsigned off = 1; off < blockDim.x; off *= 2) {
        unsigned t = threadIdx.x >= off ? part[threadIdx.x - off] : 0;
        __syncthreads();
        part[threadIdx.x] += t;
        __syncthreads();
    }
    run = threadIdx.x ? part[threadIdx.x - 1] : 0;
    for (unsigned k = 0; k < per; k++) { run += v[k]; y[base + threadIdx.x * per + k] = run; }
    if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = run;
}

// The serial pass: the chunks' totals become their offsets, on one thread (as acc's `serial`).
extern "C" __global__ void scan_offsets_u32(unsigned* sums, unsigned count) {
    unsigned run = 0;
    for (unsigned b = 0; b < count; b++) { unsigned t = sums[b]; sums[b] = run; run += t; }
}

// The add pass: each element gets its chunk's offset.
extern "C" __global__ void scan_add_u32(unsigned* __restrict__ y, const unsigned* __restrict__ sums, size_t n, unsigned chunk) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] += sums[i / chunk];
}

// Softmax of each row of an n x m f32 matrix, a block per row: the row's maximum, the sum of
// exponentials, then each element scaled (block reductions through shared memory).
extern "C" __global__ void softmax_rows_f32(const float* __restrict__ x, float* __restrict__ y, int n, int m) {
    __shared__ float total;
    for (int i = blockIdx.x; i < n; i += gridDim.x) {
        const float* row = x + (size_t)i * m;
        float hi = -INFINITY;
        for (int j = threadIdx.x; j < m; j += blockDim.x) hi = fmaxf(hi, row[j]);
        hi = block_reduce(hi, Max(), -INFINITY);
        if (threadIdx.x == 0) total = hi;
        __syncthreads();
        hi = total;
        __syncthreads();
        float s = 0.0f;
        for (int j = threadIdx.x; j < m; j += blockDim.x) s += expf(row[j] - hi);
        s = block_reduce(s, Add(), 0.0f);
        if (threadIdx.x == 0) total = s;
        __syncthreads();
        float scale = 1.0f / total;
        for (int j = threadIdx.x; j < m; j += blockDim.x) y[(size_t)i * m + j] = expf(row[j] - hi) * scale;
        __syncthreads();
    }
}

// Each row smoothed (3-point, the ends taking themselves as the missing neighbour) through a
// row buffer in shared memory: a block per row, the row loaded, a barrier, then smoothed.
extern "C" __global__ void row_smooth_f32(const float* __restrict__ a, float* __restrict__ b, int rows, int m) {
    __shared__ float t[1024];
    for (int i = blockIdx.x; i < rows; i += gridDim.x) {
        __syncthreads();
        for (int j = threadIdx.x; j < m; j += blockDim.x) t[j] = a[(size_t)i * m + j];
        __syncthreads();
        for (int j = threadIdx.x; j < m; j += blockDim.x) {
            float l = j > 0 ? t[j - 1] : t[j];
            float r = j + 1 < m ? t[j + 1] : t[j];
            b[(size_t)i * m + j] = (l + t[j] + r) * (1.0f / 3.0f);
        }
    }
}

// One explicit heat step on an n x n f32 grid (interior only), and the copy back.
extern "C" __global__ void heat_step_f32(const float* __restrict__ u, float* __restrict__ v, int n) {
    int i = blockIdx.y + 1;
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i < n - 1 && j < n - 1) {
        int k = i * n + j;
        v[k] = u[k] + 0.2f * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - 4.0f * u[k]);
    }
}

extern "C" __global__ void heat_copy_f32(float* __restrict__ u, const float* __restrict__ v, int n) {
    int i = blockIdx.y + 1;
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i < n - 1 && j < n - 1) u[i * n + j] = v[i * n + j];
}

// Step k of forward elimination on an n x n f32 matrix: a block per row below k (grid-stride),
// each reading its factor before its threads update the row from column k on.
extern "C" __global__ void eliminate_step_f32(float* m, int n, int k) {
    for (int i = k + 1 + blockIdx.x; i < n; i += gridDim.x) {
        float f = m[i * n + k] / m[k * n + k];
        __syncthreads();
        for (int j = k + threadIdx.x; j < n; j += blockDim.x) m[i * n + j] -= f * m[k * n + j];
        __syncthreads();
    }
}

// A 17-tap filter over the interior of a long array, each block's window (its 256 outputs and
// the 16 elements around them) staged in shared memory: what `acc::cache!` asks for.
extern "C" __global__ void filter17_f32(const float* __restrict__ a, const float* __restrict__ w, float* __restrict__ b, long n) {
    __shared__ float sh[256 + 16];
    for (long base = 8 + blockIdx.x * 256L; base < n - 8; base += (long)gridDim.x * 256) {
        for (int q = threadIdx.x; q < 256 + 16; q += 256) {
            long g = base - 8 + q;
            if (g < n) sh[q] = a[g];
        }
        __syncthreads();
        long i = base + threadIdx.x;
        if (i < n - 8) {
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < 17; k++) s += w[k] * sh[threadIdx.x + k];
            b[i] = s;
        }
        __syncthreads();
    }
}

// A five-point stencil over the interior of an n x m grid, a thread per point.
extern "C" __global__ void stencil5_f32(const float* __restrict__ a, float* __restrict__ b, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1, j = blockIdx.y + 1;
    if (i < m - 1 && j < n - 1) {
        long c = (long)j * m + i;
        b[c] = 0.25f * (a[c - 1] + a[c + 1] + a[c - m] + a[c + m]);
    }
}

// benches/launches.rs: a tiny update of present data, launched thousands of times, and the sum
// a time step reads every tenth step (one block: the data is tiny). Rounded as Rust rounds
// (no fused multiply-add), so that acc's results compare exactly.
extern "C" __global__ void tiny_update(double* x, double a, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = __dadd_rn(__dmul_rn(x[i], 0.5), a);
}

extern "C" __global__ void tiny_sum(const double* __restrict__ x, double* out, size_t n) {
    __shared__ double s[256];
    double v = 0.0;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) v += x[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = s[0];
}

// One anti-diagonal `d` of the wavefront (a sequence alignment's score table, (n+1) x (n+1)).
extern "C" __global__ void wavefront_diagonal(int* h, const unsigned char* __restrict__ a,
                                              const unsigned char* __restrict__ b, size_t n,
                                              size_t d, size_t lo, size_t hi) {
    size_t i = lo + blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= hi) return;
    size_t w = n + 1, j = d - i;
    int m = a[i - 1] == b[j - 1] ? 2 : -1;
    int diag = h[(i - 1) * w + j - 1] + m;
    int up = h[(i - 1) * w + j] - 1;
    int left = h[i * w + j - 1] - 1;
    int best = diag > up ? diag : up;
    h[i * w + j] = best > left ? best : left;
}

// The wavefront of benches/launches.rs keeping three anti-diagonals (diagonal d at
// (d % 3) * (n + 1), cell (i, d - i) at index i).
extern "C" __global__ void wavefront_three(int* r, const unsigned char* __restrict__ a,
                                           const unsigned char* __restrict__ b, size_t n,
                                           size_t d, size_t lo, size_t hi) {
    size_t i = lo + blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= hi) return;
    size_t w = n + 1, j = d - i;
    size_t cur = (d % 3) * w, prev = ((d + 2) % 3) * w, prev2 = ((d + 1) % 3) * w;
    if (i == 0 || j == 0) {
        r[cur + i] = -(int)d;
        return;
    }
    int m = a[i - 1] == b[j - 1] ? 2 : -1;
    int diag = r[prev2 + i - 1] + m;
    int up = r[prev + i - 1] - 1;
    int left = r[prev + i] - 1;
    int best = diag > up ? diag : up;
    r[cur + i] = best > left ? best : left;
}

// A block of the pipeline of benches/launches/pipeline.rs: y[i] from x[i] by 8192 steps of
// s = s * 0.5 + v, rounded as Rust does (no contraction into fma).
extern "C" __global__ void pipeline_block(const double* __restrict__ x, double* y, size_t lo,
                                          size_t hi) {
    for (size_t i = lo + blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < hi;
         i += (size_t)gridDim.x * blockDim.x) {
        double v = x[i], s = 0.0;
        for (int k = 0; k < 8192; k++) s = __dadd_rn(__dmul_rn(s, 0.5), v);
        y[i] = s;
    }
}
