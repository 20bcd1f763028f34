// A hand-written CUDA version of pathfinder (apps/src/pathfinder.rs), as a CUDA programmer would
// write the same dynamic programme: one kernel launch per row with a thread per column, each
// cell the weight below it plus the cheapest of the three cells above, the two rows swapped
// between steps, in 32-bit integers. Timed like the port: from the copies in to the copy back
// (the CUDA context made before). The grid of weights is only read, so it is copied in and not
// back, and only the newest row comes back.
//
// pathfinder <cols> <rows>
#include "common.h"
#include <utility>
#include <vector>

__global__ void step(int *dst, const int *src, const int *wall, int cols, int t) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= cols) return;
    int best = src[n];
    if (n > 0) best = min(best, src[n - 1]);
    if (n < cols - 1) best = min(best, src[n + 1]);
    dst[n] = wall[(size_t)(t + 1) * cols + n] + best;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <cols> <rows>\n", argv[0]);
        return 2;
    }
    int cols = atoi(argv[1]), rows = atoi(argv[2]);
    if (cols < 1 || rows < 1) {
        fprintf(stderr, "the grid needs at least 1 x 1 cells\n");
        return 2;
    }
    size_t size = (size_t)rows * cols;
    std::vector<int> wall(size), result(cols);
    for (size_t i = 0; i < size; i++) wall[i] = (int)(10.0 * unit(1, i));
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    int *d_wall, *d_src, *d_dst;
    CHECK(cudaMalloc(&d_wall, size * sizeof(int)));
    CHECK(cudaMalloc(&d_src, cols * sizeof(int)));
    CHECK(cudaMalloc(&d_dst, cols * sizeof(int)));
    CHECK(cudaMemcpy(d_wall, wall.data(), size * sizeof(int), cudaMemcpyHostToDevice));
    // The first row is the starting cost.
    CHECK(cudaMemcpy(d_dst, d_wall, cols * sizeof(int), cudaMemcpyDeviceToDevice));
    const int block = 256;
    for (int t = 0; t < rows - 1; t++) {
        std::swap(d_src, d_dst);
        step<<<(cols + block - 1) / block, block>>>(d_dst, d_src, d_wall, cols, t);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(result.data(), d_dst, cols * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_wall));
    CHECK(cudaFree(d_src));
    CHECK(cudaFree(d_dst));
    double seconds = seconds_since(t0);

    long long sum = 0;
    for (int n = 0; n < cols; n++) sum += result[n];
    report(seconds, (double)sum);
    return 0;
}
