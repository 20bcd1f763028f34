// A hand-written CUDA version of srad (apps/src/srad.rs), as a CUDA programmer would write the
// same diffusion: a kernel for the neighbour index arrays, one for J = exp(I), and per
// iteration a one-block reduction of the region of interest (its two sums copied back, q0sqr
// computed on the host, as the OpenACC version does), then the coefficient sweep and the update
// sweep over a 2-D grid of 16 x 16 blocks. float data, with the same double constants as the
// port. Timed like the port: from the copy in of I to the copy back of J (the CUDA context
// made before).
//
// srad <rows> <cols> <y1> <y2> <x1> <x2> <lambda> <iterations>
#include "common.h"
#include <cmath>
#include <vector>

#define TILE 16
#define SUM_THREADS 256

__global__ void neighbours(int *iN, int *iS, int *jW, int *jE, int rows, int cols) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < rows) {
        iN[t] = t == 0 ? 0 : t - 1;
        iS[t] = t == rows - 1 ? rows - 1 : t + 1;
    }
    if (t < cols) {
        jW[t] = t == 0 ? 0 : t - 1;
        jE[t] = t == cols - 1 ? cols - 1 : t + 1;
    }
}

__global__ void extract(float *J, const float *I, size_t n) {
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) J[k] = (float)exp((double)I[k]);
}

// sum and sum of squares of J over rows r1..r2, columns c1..c2: one block, each thread a strided
// share of the region, then a tree in shared memory.
__global__ void roi_sums(const float *J, int cols, int r1, int r2, int c1, int c2, float *out) {
    __shared__ float s1[SUM_THREADS], s2[SUM_THREADS];
    int width = c2 - c1 + 1;
    int count = (r2 - r1 + 1) * width;
    float a = 0.0f, b = 0.0f;
    for (int e = threadIdx.x; e < count; e += blockDim.x) {
        float v = J[(size_t)(r1 + e / width) * cols + c1 + e % width];
        a += v;
        b += v * v;
    }
    s1[threadIdx.x] = a;
    s2[threadIdx.x] = b;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) {
            s1[threadIdx.x] += s1[threadIdx.x + h];
            s2[threadIdx.x] += s2[threadIdx.x + h];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = s1[0];
        out[1] = s2[0];
    }
}

// The directional derivatives and the saturated diffusion coefficient of each pixel.
__global__ void coefficients(const float *J, const int *iN, const int *iS, const int *jW, const int *jE,
                             float *dN, float *dS, float *dW, float *dE, float *c, int rows, int cols,
                             float q0sqr) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= rows || j >= cols) return;
    size_t k = (size_t)i * cols + j;
    float Jc = J[k];
    float n = J[(size_t)iN[i] * cols + j] - Jc;
    float s = J[(size_t)iS[i] * cols + j] - Jc;
    float w = J[(size_t)i * cols + jW[j]] - Jc;
    float e = J[(size_t)i * cols + jE[j]] - Jc;
    float G2 = (n * n + s * s + w * w + e * e) / (Jc * Jc);
    float L = (n + s + w + e) / Jc;
    float num = (float)(0.5 * G2 - (1.0 / 16.0) * (L * L));
    float den = (float)(1.0 + 0.25 * L);
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float ck = (float)(1.0 / (1.0 + den));
    c[k] = ck < 0.0f ? 0.0f : (ck > 1.0f ? 1.0f : ck);
    dN[k] = n;
    dS[k] = s;
    dW[k] = w;
    dE[k] = e;
}

// The divergence and the image update.
__global__ void update(float *J, const float *c, const int *iS, const int *jE, const float *dN, const float *dS,
                       const float *dW, const float *dE, int rows, int cols, float lambda) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= rows || j >= cols) return;
    size_t k = (size_t)i * cols + j;
    float cN = c[k];
    float cS = c[(size_t)iS[i] * cols + j];
    float cW = c[k];
    float cE = c[(size_t)i * cols + jE[j]];
    float D = cN * dN[k] + cS * dS[k] + cW * dW[k] + cE * dE[k];
    J[k] = (float)(J[k] + 0.25 * lambda * D);
}

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: %s <rows> <cols> <y1> <y2> <x1> <x2> <lambda> <iterations>\n", argv[0]);
        return 2;
    }
    int rows = atoi(argv[1]), cols = atoi(argv[2]);
    int r1 = atoi(argv[3]), r2 = atoi(argv[4]), c1 = atoi(argv[5]), c2 = atoi(argv[6]);
    float lambda = (float)atof(argv[7]);
    int niter = atoi(argv[8]);
    if (rows < 1 || cols < 1 || r1 < 0 || c1 < 0 || r1 > r2 || c1 > c2 || r2 >= rows || c2 >= cols) {
        fprintf(stderr, "the region of interest must lie inside the image\n");
        return 2;
    }
    size_t n = (size_t)rows * cols;
    int size_r = (r2 - r1 + 1) * (c2 - c1 + 1);
    std::vector<float> I(n), J(n);
    for (size_t i = 0; i < n; i++) I[i] = (float)unit(1, i);
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    float *d_I, *d_J, *d_dN, *d_dS, *d_dW, *d_dE, *d_c, *d_sums;
    int *d_iN, *d_iS, *d_jW, *d_jE;
    CHECK(cudaMalloc(&d_I, n * sizeof(float)));
    CHECK(cudaMalloc(&d_J, n * sizeof(float)));
    CHECK(cudaMalloc(&d_dN, n * sizeof(float)));
    CHECK(cudaMalloc(&d_dS, n * sizeof(float)));
    CHECK(cudaMalloc(&d_dW, n * sizeof(float)));
    CHECK(cudaMalloc(&d_dE, n * sizeof(float)));
    CHECK(cudaMalloc(&d_c, n * sizeof(float)));
    CHECK(cudaMalloc(&d_sums, 2 * sizeof(float)));
    CHECK(cudaMalloc(&d_iN, rows * sizeof(int)));
    CHECK(cudaMalloc(&d_iS, rows * sizeof(int)));
    CHECK(cudaMalloc(&d_jW, cols * sizeof(int)));
    CHECK(cudaMalloc(&d_jE, cols * sizeof(int)));
    CHECK(cudaMemcpy(d_I, I.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    int longest = rows > cols ? rows : cols;
    neighbours<<<(longest + 255) / 256, 256>>>(d_iN, d_iS, d_jW, d_jE, rows, cols);
    extract<<<(unsigned)((n + 255) / 256), 256>>>(d_J, d_I, n);
    dim3 block(TILE, TILE), grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    for (int iter = 0; iter < niter; iter++) {
        roi_sums<<<1, SUM_THREADS>>>(d_J, cols, r1, r2, c1, c2, d_sums);
        float sums[2];
        CHECK(cudaMemcpy(sums, d_sums, 2 * sizeof(float), cudaMemcpyDeviceToHost));
        float meanROI = sums[0] / size_r;
        float varROI = (sums[1] / size_r) - meanROI * meanROI;
        float q0sqr = varROI / (meanROI * meanROI);
        coefficients<<<grid, block>>>(d_J, d_iN, d_iS, d_jW, d_jE, d_dN, d_dS, d_dW, d_dE, d_c, rows, cols, q0sqr);
        update<<<grid, block>>>(d_J, d_c, d_iS, d_jE, d_dN, d_dS, d_dW, d_dE, rows, cols, lambda);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(J.data(), d_J, n * sizeof(float), cudaMemcpyDeviceToHost));
    float *fbufs[] = {d_I, d_J, d_dN, d_dS, d_dW, d_dE, d_c, d_sums};
    for (float *p : fbufs) CHECK(cudaFree(p));
    int *ibufs[] = {d_iN, d_iS, d_jW, d_jE};
    for (int *p : ibufs) CHECK(cudaFree(p));
    double seconds = seconds_since(t0);

    double checksum = 0;
    for (size_t i = 0; i < n; i++) checksum += J[i];
    report(seconds, checksum);
    return 0;
}
