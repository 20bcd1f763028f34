// A hand-written CUDA version of lavaMD (apps/src/lavamd.rs), as a CUDA programmer would write
// the same interactions: a block per home box and a thread per home-box particle; for the home
// box and each neighbour box in turn, the block stages that box's positions and charges in
// shared memory, and each thread adds the potential and force from every particle of it to its
// own particle's running sums (kept in registers, in the port's order), written out once at
// the end. Double precision, the same input as the port, the same checksum (the sum over
// particles of v + x + y + z). Timed like the port: from the copies in to the copy back (the
// CUDA context made before).
//
// lavamd <boxes1d> <particles per box>
#include "common.h"
#include <cmath>
#include <vector>

struct FourVector {
    double v, x, y, z;
};

struct Nei {
    int x, y, z, number;
    long long offset;
};

struct Box {
    int x, y, z, number;
    long long offset;
    int nn;
    Nei nei[26];
};

static const int threads = 128;

__global__ void interactions(const Box *boxes, const FourVector *rv, const double *qv, FourVector *fv,
                             int npb, double a2) {
    extern __shared__ double shared[];
    FourVector *s_r = (FourVector *)shared;  // [npb]
    double *s_q = shared + 4 * npb;          // [npb]
    int l = blockIdx.x;
    int i = threadIdx.x;
    long long first_i = boxes[l].offset;
    int nn = boxes[l].nn;
    FourVector a = {0, 0, 0, 0}, f = {0, 0, 0, 0};
    if (i < npb) {
        a = rv[first_i + i];
        f = fv[first_i + i];
    }
    for (int k = 0; k < 1 + nn; k++) {
        int pointer = k == 0 ? l : boxes[l].nei[k - 1].number;
        long long first_j = boxes[pointer].offset;
        __syncthreads();  // the previous box's particles are used up
        for (int j = threadIdx.x; j < npb; j += blockDim.x) {
            s_r[j] = rv[first_j + j];
            s_q[j] = qv[first_j + j];
        }
        __syncthreads();
        if (i < npb) {
            for (int j = 0; j < npb; j++) {
                FourVector b = s_r[j];
                double r2 = a.v + b.v - (a.x * b.x + a.y * b.y + a.z * b.z);
                double vij = exp(-(a2 * r2));
                double fs = 2.0 * vij;
                double q = s_q[j];
                f.v += q * vij;
                f.x += q * (fs * (a.x - b.x));
                f.y += q * (fs * (a.y - b.y));
                f.z += q * (fs * (a.z - b.z));
            }
        }
    }
    if (i < npb) fv[first_i + i] = f;
}

// A tenth from 0.1 to 1.0, as the port draws them.
static double tenth(uint64_t seed, uint64_t i) { return (floor(unit(seed, i) * 10.0) + 1.0) / 10.0; }

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <boxes1d> <particles per box>\n", argv[0]);
        return 2;
    }
    int b = atoi(argv[1]), npb = atoi(argv[2]);
    if (b < 1 || npb < 1 || npb > threads) {
        fprintf(stderr, "lavamd: need boxes1d >= 1 and 1 to %d particles a box\n", threads);
        return 2;
    }
    int number_boxes = b * b * b;
    size_t space_elem = (size_t)number_boxes * npb;
    double alpha = 0.5, a2 = 2.0 * alpha * alpha;

    // The boxes and their neighbour lists, home boxes in z, y, x order.
    std::vector<Box> boxes(number_boxes);
    int nh = 0;
    for (int i = 0; i < b; i++)
        for (int j = 0; j < b; j++)
            for (int k = 0; k < b; k++) {
                Box &h = boxes[nh];
                h.x = k;
                h.y = j;
                h.z = i;
                h.number = nh;
                h.offset = (long long)nh * npb;
                h.nn = 0;
                for (int l = -1; l < 2; l++)
                    for (int m = -1; m < 2; m++)
                        for (int n = -1; n < 2; n++) {
                            bool inside = i + l >= 0 && j + m >= 0 && k + n >= 0 && i + l < b && j + m < b && k + n < b;
                            if (inside && !(l == 0 && m == 0 && n == 0)) {
                                Nei &e = h.nei[h.nn++];
                                e.x = k + n;
                                e.y = j + m;
                                e.z = i + l;
                                e.number = (i + l) * b * b + (j + m) * b + (k + n);
                                e.offset = (long long)e.number * npb;
                            }
                        }
                nh++;
            }
    std::vector<FourVector> rv(space_elem), fv(space_elem, FourVector{0, 0, 0, 0});
    std::vector<double> qv(space_elem);
    for (size_t i = 0; i < space_elem; i++) {
        rv[i].v = tenth(21, i);
        rv[i].x = tenth(22, i);
        rv[i].y = tenth(23, i);
        rv[i].z = tenth(24, i);
        qv[i] = tenth(25, i);
    }
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    Box *d_boxes;
    FourVector *d_rv, *d_fv;
    double *d_qv;
    CHECK(cudaMalloc(&d_boxes, number_boxes * sizeof(Box)));
    CHECK(cudaMalloc(&d_rv, space_elem * sizeof(FourVector)));
    CHECK(cudaMalloc(&d_qv, space_elem * sizeof(double)));
    CHECK(cudaMalloc(&d_fv, space_elem * sizeof(FourVector)));
    CHECK(cudaMemcpy(d_boxes, boxes.data(), number_boxes * sizeof(Box), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_rv, rv.data(), space_elem * sizeof(FourVector), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_qv, qv.data(), space_elem * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_fv, fv.data(), space_elem * sizeof(FourVector), cudaMemcpyHostToDevice));
    size_t shmem = (size_t)npb * 5 * sizeof(double);
    interactions<<<number_boxes, threads, shmem>>>(d_boxes, d_rv, d_qv, d_fv, npb, a2);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(fv.data(), d_fv, space_elem * sizeof(FourVector), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_boxes));
    CHECK(cudaFree(d_rv));
    CHECK(cudaFree(d_qv));
    CHECK(cudaFree(d_fv));
    double seconds = seconds_since(t0);

    double checksum = 0;
    for (size_t i = 0; i < space_elem; i++) checksum += fv[i].v + fv[i].x + fv[i].y + fv[i].z;
    report(seconds, checksum);
    return 0;
}
