// A hand-written CUDA version of NPB EP (apps/src/ep.rs), as a CUDA programmer would write the
// same computation: one thread per batch of 2^16 pairs, which finds its starting seed by binary
// exponentiation of the multiplier (NPB's randlc), makes its numbers one pair at a time (no
// array of them), and tallies the pairs inside the unit circle: the sums of the Gaussian
// deviates and the counts per square annulus, in shared memory per block, then once per block
// into global memory. The deviates without fused multiply-adds (__dmul_rn, __dadd_rn), as the
// port computes them. Timed like the port: from after the counts are zeroed to after the sums
// and counts are copied back (the CUDA context made before). The checksum is sx + sy; NPB's
// verification is printed to stderr.
//
// ep <M>      (class S: 24, W: 25, A: 28, B: 30, C: 32)
#include "common.h"
#include <cmath>

#define MK 16
#define NK (1 << MK)
#define NQ 10

static const double A = 1220703125.0;
static const double S = 271828183.0;
#define R23 1.1920928955078125e-07
#define T23 8.388608e+06

// NPB's generator: x = a * x (mod 2^46), returning x * 2^-46. Every product and sum in it is an
// integer below 2^53, so it is exact with or without contraction.
__host__ __device__ inline double randlc(double *x, double a) {
    const double r46 = R23 * R23, t46 = T23 * T23;
    double t1 = R23 * a;
    double a1 = (double)(int)t1;
    double a2 = a - T23 * a1;
    t1 = R23 * (*x);
    double x1 = (double)(int)t1;
    double x2 = *x - T23 * x1;
    t1 = a1 * x2 + a2 * x1;
    double t2 = (double)(int)(R23 * t1);
    double z = t1 - T23 * t2;
    double t3 = T23 * z + a2 * x2;
    double t4 = (double)(int)(r46 * t3);
    *x = t3 - t46 * t4;
    return r46 * (*x);
}

__global__ void batches(int nn, double an, double *sums) {
    __shared__ double s_q[NQ];
    __shared__ double s_sx, s_sy;
    if (threadIdx.x < NQ) s_q[threadIdx.x] = 0.0;
    if (threadIdx.x == 0) {
        s_sx = 0.0;
        s_sy = 0.0;
    }
    __syncthreads();

    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nn) {
        // The starting seed of batch k: S * an^k.
        int kk = k;
        double t1 = S, t2 = an;
        for (int i = 1; i <= 100; i++) {
            int ik = kk / 2;
            if (2 * ik != kk) randlc(&t1, t2);
            if (ik == 0) break;
            randlc(&t2, t2);
            kk = ik;
        }
        double bx = 0.0, by = 0.0;
        for (int i = 0; i < NK; i++) {
            double x1 = 2.0 * randlc(&t1, A) - 1.0;
            double x2 = 2.0 * randlc(&t1, A) - 1.0;
            double t = __dadd_rn(__dmul_rn(x1, x1), __dmul_rn(x2, x2));
            if (t <= 1.0) {
                double f = sqrt(-2.0 * log(t) / t);
                double t3 = x1 * f, t4 = x2 * f;
                int l = (int)fmax(fabs(t3), fabs(t4));
                atomicAdd(&s_q[l], 1.0);
                bx += t3;
                by += t4;
            }
        }
        atomicAdd(&s_sx, bx);
        atomicAdd(&s_sy, by);
    }
    __syncthreads();
    if (threadIdx.x < NQ) atomicAdd(&sums[2 + threadIdx.x], s_q[threadIdx.x]);
    if (threadIdx.x == 0) {
        atomicAdd(&sums[0], s_sx);
        atomicAdd(&sums[1], s_sy);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <M>\n", argv[0]);
        return 2;
    }
    int m = atoi(argv[1]);
    if (m < MK || m > MK + 30) {
        fprintf(stderr, "ep: M must be between %d and %d\n", MK, MK + 30);
        return 2;
    }
    int nn = 1 << (m - MK);

    // an = A^(2 * NK) (mod 2^46).
    double t1 = A;
    for (int i = 0; i < MK + 1; i++) randlc(&t1, t1);
    double an = t1;
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    double *d_sums;
    CHECK(cudaMalloc(&d_sums, (2 + NQ) * sizeof(double)));
    CHECK(cudaMemset(d_sums, 0, (2 + NQ) * sizeof(double)));
    const int threads = 128;
    batches<<<(nn + threads - 1) / threads, threads>>>(nn, an, d_sums);
    CHECK(cudaGetLastError());
    double sums[2 + NQ];
    CHECK(cudaMemcpy(sums, d_sums, sizeof(sums), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_sums));
    double seconds = seconds_since(t0);

    double sx = sums[0], sy = sums[1], gc = 0.0;
    for (int i = 0; i < NQ; i++) gc += sums[2 + i];
    double vx = 0.0, vy = 0.0;
    switch (m) {
        case 24: vx = -3.247834652034740e+3; vy = -6.958407078382297e+3; break;
        case 25: vx = -2.863319731645753e+3; vy = -6.320053679109499e+3; break;
        case 28: vx = -4.295875165629892e+3; vy = -1.580732573678431e+4; break;
        case 30: vx = 4.033815542441498e+4; vy = -2.660669192809235e+4; break;
        case 32: vx = 4.764367927995374e+4; vy = -8.084072988043731e+4; break;
        case 36: vx = 1.982481200946593e+5; vy = -1.020596636361769e+5; break;
        case 40: vx = -5.319717441530e+05; vy = -3.688834557731e+05; break;
    }
    if (vx != 0.0) {
        double ex = fabs((sx - vx) / vx), ey = fabs((sy - vy) / vy);
        fprintf(stderr, "ep: M = %d, %.0f pairs, sx = %.15e, sy = %.15e: verification %s\n", m, gc, sx,
                sy, (ex <= 1.0e-8 && ey <= 1.0e-8) ? "successful" : "FAILED");
    } else {
        fprintf(stderr, "ep: M = %d, %.0f pairs, sx = %.15e, sy = %.15e: no NPB values\n", m, gc, sx, sy);
    }
    report(seconds, sx + sy);
    return 0;
}
