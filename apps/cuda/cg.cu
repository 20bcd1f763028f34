// A hand-written CUDA version of NPB CG (apps/src/cg.rs), as a CUDA programmer would write the
// same computation: NPB's random sparse matrix built on the host (makea, as the port builds it),
// copied to the device once in compressed rows; then one untimed and NITER timed steps of the
// inverse power method, each running 25 conjugate gradient iterations on the device. The
// matrix-vector product takes one warp per row (shuffle reduction), the dot products a
// grid-stride loop with a shared-memory reduction per block whose partial sums the host adds,
// the vector updates one thread per element, all without fused multiply-adds (__dmul_rn,
// __dadd_rn). Timed like the port: the NITER timed steps (the matrix already on the device).
// The checksum is zeta; NPB's verification is printed to stderr.
//
// cg <NA> <NONZER> <NITER> <SHIFT>      (class S: 1400 7 15 10, B: 75000 13 75 60)
#include "common.h"
#include <cmath>
#include <vector>

static const double rcond = 1.0e-1;

// ---------------------------------------------------------------------------------------------
// The test problem, on the host.

static double randlc(double *x, double a) {
    const double r23 = 1.1920928955078125e-07, t23 = 8.388608e+06;
    const double r46 = r23 * r23, t46 = t23 * t23;
    double t1 = r23 * a;
    double a1 = trunc(t1);
    double a2 = a - t23 * a1;
    t1 = r23 * (*x);
    double x1 = trunc(t1);
    double x2 = *x - t23 * x1;
    t1 = a1 * x2 + a2 * x1;
    double t2 = trunc(r23 * t1);
    double z = t1 - t23 * t2;
    double t3 = t23 * z + a2 * x2;
    double t4 = trunc(r46 * t3);
    *x = t3 - t46 * t4;
    return r46 * (*x);
}

static double tran = 314159265.0, amult = 1220703125.0;

// A sparse n-vector (v, iv) with nz nonzeros at distinct positions in 1..n.
static void sprnvc(int n, int nz, int nn1, double *v, int *iv) {
    int nzv = 0;
    while (nzv < nz) {
        double vecelt = randlc(&tran, amult);
        double vecloc = randlc(&tran, amult);
        int i = (int)(nn1 * vecloc) + 1;
        if (i > n) continue;
        bool was_gen = false;
        for (int ii = 0; ii < nzv; ii++)
            if (iv[ii] == i) {
                was_gen = true;
                break;
            }
        if (was_gen) continue;
        v[nzv] = vecelt;
        iv[nzv] = i;
        nzv++;
    }
}

// Sets element i of the sparse vector (v, iv) of *nzv nonzeros to val.
static void vecset(double *v, int *iv, int *nzv, int i, double val) {
    bool set = false;
    for (int k = 0; k < *nzv; k++)
        if (iv[k] == i) {
            v[k] = val;
            set = true;
        }
    if (!set) {
        v[*nzv] = val;
        iv[*nzv] = i;
        (*nzv)++;
    }
}

// The matrix in compressed rows: the sum of the outer products of n sparse vectors, scaled by
// a geometric sequence from 1 to rcond, plus (rcond - shift) on the diagonal.
static void makea(int n, int nonzer, double shift, std::vector<double> &a, std::vector<int> &colidx,
                  std::vector<int> &rowstr) {
    int w = nonzer + 1;
    long nz = (long)n * w * w;
    std::vector<int> arow(n), acol((size_t)n * w), nzloc(n), ivc(w);
    std::vector<double> aelt((size_t)n * w), vc(w);
    int nn1 = 1;
    do {
        nn1 *= 2;
    } while (nn1 < n);
    for (int iouter = 0; iouter < n; iouter++) {
        int nzv = nonzer;
        sprnvc(n, nzv, nn1, vc.data(), ivc.data());
        vecset(vc.data(), ivc.data(), &nzv, iouter + 1, 0.5);
        arow[iouter] = nzv;
        for (int ivelt = 0; ivelt < nzv; ivelt++) {
            acol[(size_t)iouter * w + ivelt] = ivc[ivelt] - 1;
            aelt[(size_t)iouter * w + ivelt] = vc[ivelt];
        }
    }

    // Count the entries of each row (with duplicates), then place them.
    a.assign(nz, 0.0);
    colidx.assign(nz, 0);
    rowstr.assign(n + 1, 0);
    for (int i = 0; i < n; i++)
        for (int e = 0; e < arow[i]; e++) rowstr[acol[(size_t)i * w + e] + 1] += arow[i];
    for (int j = 1; j < n + 1; j++) rowstr[j] += rowstr[j - 1];
    if (rowstr[n] - 1 > nz) {
        fprintf(stderr, "cg: space for matrix elements exceeded\n");
        exit(1);
    }
    for (int j = 0; j < n; j++) {
        for (int k = rowstr[j]; k < rowstr[j + 1]; k++) {
            a[k] = 0.0;
            colidx[k] = -1;
        }
        nzloc[j] = 0;
    }
    double size = 1.0, ratio = pow(rcond, 1.0 / (double)n);
    for (int i = 0; i < n; i++) {
        for (int e = 0; e < arow[i]; e++) {
            int j = acol[(size_t)i * w + e];
            double scale = size * aelt[(size_t)i * w + e];
            for (int f = 0; f < arow[i]; f++) {
                int jcol = acol[(size_t)i * w + f];
                double va = aelt[(size_t)i * w + f] * scale;
                if (jcol == j && j == i) va = va + rcond - shift;
                int k, found = 0;
                for (k = rowstr[j]; k < rowstr[j + 1]; k++) {
                    if (colidx[k] > jcol) {
                        // Insert in column order.
                        for (int kk = rowstr[j + 1] - 2; kk >= k; kk--)
                            if (colidx[kk] > -1) {
                                a[kk + 1] = a[kk];
                                colidx[kk + 1] = colidx[kk];
                            }
                        colidx[k] = jcol;
                        a[k] = 0.0;
                        found = 1;
                        break;
                    } else if (colidx[k] == -1) {
                        colidx[k] = jcol;
                        found = 1;
                        break;
                    } else if (colidx[k] == jcol) {
                        nzloc[j]++;  // a duplicate
                        found = 1;
                        break;
                    }
                }
                if (!found) {
                    fprintf(stderr, "cg: internal error in sparse: i=%d\n", i);
                    exit(1);
                }
                a[k] += va;
            }
        }
        size *= ratio;
    }
    // Remove the empty entries the duplicates left.
    for (int j = 1; j < n; j++) nzloc[j] += nzloc[j - 1];
    for (int j = 0; j < n; j++) {
        int j1 = j > 0 ? rowstr[j] - nzloc[j - 1] : 0;
        int j2 = rowstr[j + 1] - nzloc[j];
        int e = rowstr[j];
        for (int k = j1; k < j2; k++, e++) {
            a[k] = a[e];
            colidx[k] = colidx[e];
        }
    }
    for (int j = 1; j < n + 1; j++) rowstr[j] -= nzloc[j - 1];
}

// ---------------------------------------------------------------------------------------------
// The device side.

// out = A v, one warp per row.
__global__ void spmv(const int *rowstr, const int *colidx, const double *a, const double *v,
                     double *out, int n) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= n) return;  // the whole warp
    double s = 0.0;
    for (int k = rowstr[row] + lane; k < rowstr[row + 1]; k += 32)
        s = __dadd_rn(s, __dmul_rn(a[k], v[colidx[k]]));
    for (int o = 16; o > 0; o /= 2) s = __dadd_rn(s, __shfl_down_sync(0xffffffffu, s, o));
    if (lane == 0) out[row] = s;
}

#define RBLOCKS 256
#define RTHREADS 256

// partial[block] = the block's part of sum (u - w)_i * (v - w)_i (w null: of u_i * v_i).
__global__ void dot(const double *u, const double *v, const double *w, int n, double *partial) {
    __shared__ double sh[RTHREADS];
    double s = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double a = u[i], b = v[i];
        if (w) {
            a = __dsub_rn(a, w[i]);
            b = __dsub_rn(b, w[i]);
        }
        s = __dadd_rn(s, __dmul_rn(a, b));
    }
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o /= 2) {
        if (threadIdx.x < o) sh[threadIdx.x] = __dadd_rn(sh[threadIdx.x], sh[threadIdx.x + o]);
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

// q = z = 0, r = p = x.
__global__ void cg_init(const double *x, double *z, double *p, double *q, double *r, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) {
        q[j] = 0.0;
        z[j] = 0.0;
        r[j] = x[j];
        p[j] = x[j];
    }
}

// z += alpha p, r -= alpha q.
__global__ void update_zr(double alpha, const double *p, const double *q, double *z, double *r, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) {
        z[j] = __dadd_rn(z[j], __dmul_rn(alpha, p[j]));
        r[j] = __dsub_rn(r[j], __dmul_rn(alpha, q[j]));
    }
}

// p = r + beta p.
__global__ void update_p(double beta, const double *r, double *p, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) p[j] = __dadd_rn(r[j], __dmul_rn(beta, p[j]));
}

// x = s z (z null: x = s).
__global__ void scale(double s, const double *z, double *x, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) x[j] = z ? __dmul_rn(s, z[j]) : s;
}

struct Device {
    int n;
    int *rowstr, *colidx;
    double *a, *x, *z, *p, *q, *r, *partial;
    std::vector<double> host_partial = std::vector<double>(RBLOCKS);

    double dot(const double *u, const double *v, const double *w = nullptr) {
        ::dot<<<RBLOCKS, RTHREADS>>>(u, v, w, n, partial);
        CHECK(cudaMemcpy(host_partial.data(), partial, RBLOCKS * sizeof(double), cudaMemcpyDeviceToHost));
        double s = 0.0;
        for (double ps : host_partial) s += ps;
        return s;
    }
    int blocks(int threads) const { return (n + threads - 1) / threads; }

    // 25 conjugate gradient iterations on A z = x; returns ||x - A z||.
    double conj_grad() {
        cg_init<<<blocks(128), 128>>>(x, z, p, q, r, n);
        double rho = dot(r, r);
        for (int cgit = 1; cgit <= 25; cgit++) {
            spmv<<<blocks(128 / 32), 128>>>(rowstr, colidx, a, p, q, n);
            double d = dot(p, q);
            double alpha = rho / d;
            double rho0 = rho;
            update_zr<<<blocks(1024), 1024>>>(alpha, p, q, z, r, n);
            rho = dot(r, r);
            double beta = rho / rho0;
            update_p<<<blocks(128), 128>>>(beta, r, p, n);
        }
        spmv<<<blocks(128 / 32), 128>>>(rowstr, colidx, a, z, r, n);
        return sqrt(dot(x, x, r));
    }

    // One step of the inverse power method: zeta = shift + 1/(x.z), x = z/||z||.
    double step(double shift) {
        conj_grad();
        double norm_temp1 = dot(x, z), norm_temp2 = 1.0 / sqrt(dot(z, z));
        scale<<<blocks(128), 128>>>(norm_temp2, z, x, n);
        return shift + 1.0 / norm_temp1;
    }
};

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s <NA> <NONZER> <NITER> <SHIFT>\n", argv[0]);
        return 2;
    }
    int na = atoi(argv[1]), nonzer = atoi(argv[2]), niter = atoi(argv[3]);
    double shift = atof(argv[4]);
    if (na < 2 || nonzer < 1 || niter < 1) {
        fprintf(stderr, "cg: sizes out of range\n");
        return 2;
    }
    randlc(&tran, amult);
    std::vector<double> a;
    std::vector<int> colidx, rowstr;
    makea(na, nonzer, shift, a, colidx, rowstr);
    int nnz = rowstr[na];
    CHECK(cudaFree(0));

    Device dev;
    dev.n = na;
    CHECK(cudaMalloc(&dev.rowstr, (na + 1) * sizeof(int)));
    CHECK(cudaMalloc(&dev.colidx, nnz * sizeof(int)));
    CHECK(cudaMalloc(&dev.a, nnz * sizeof(double)));
    double **vecs[] = {&dev.x, &dev.z, &dev.p, &dev.q, &dev.r};
    for (double **v : vecs) CHECK(cudaMalloc(v, (na + 2) * sizeof(double)));
    CHECK(cudaMalloc(&dev.partial, RBLOCKS * sizeof(double)));
    CHECK(cudaMemcpy(dev.rowstr, rowstr.data(), (na + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dev.colidx, colidx.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dev.a, a.data(), nnz * sizeof(double), cudaMemcpyHostToDevice));

    // One untimed step from x = (1, ..., 1), then x = (1, ..., 1) again.
    scale<<<dev.blocks(128), 128>>>(1.0, nullptr, dev.x, na);
    dev.step(shift);
    scale<<<dev.blocks(128), 128>>>(1.0, nullptr, dev.x, na);
    CHECK(cudaDeviceSynchronize());

    auto t0 = std::chrono::steady_clock::now();
    double zeta = 0.0;
    for (int it = 1; it <= niter; it++) zeta = dev.step(shift);
    CHECK(cudaDeviceSynchronize());
    double seconds = seconds_since(t0);
    CHECK(cudaGetLastError());

    CHECK(cudaFree(dev.rowstr));
    CHECK(cudaFree(dev.colidx));
    CHECK(cudaFree(dev.a));
    for (double **v : vecs) CHECK(cudaFree(*v));
    CHECK(cudaFree(dev.partial));

    double want = 0.0;
    if (na == 1400 && nonzer == 7 && niter == 15 && shift == 10.0) want = 8.5971775078648;
    else if (na == 7000 && nonzer == 8 && niter == 15 && shift == 12.0) want = 10.362595087124;
    else if (na == 14000 && nonzer == 11 && niter == 15 && shift == 20.0) want = 17.130235054029;
    else if (na == 75000 && nonzer == 13 && niter == 75 && shift == 60.0) want = 22.712745482631;
    else if (na == 150000 && nonzer == 15 && niter == 75 && shift == 110.0) want = 28.973605592845;
    if (want != 0.0) {
        double err = fabs(zeta - want) / want;
        fprintf(stderr, "cg: zeta = %.13e, error %.3e: verification %s\n", zeta, err,
                err <= 1.0e-10 ? "successful" : "FAILED");
    } else {
        fprintf(stderr, "cg: zeta = %.13e: not an NPB class\n", zeta);
    }
    report(seconds, zeta);
    return 0;
}
