// A hand-written CUDA version of hotspot (apps/src/hotspot.rs), as a CUDA programmer would
// write the same solver: one kernel launch per step over a 2-D grid of 16 x 16 blocks, the two
// grids swapped between steps, the same clamped five-point stencil, in double precision. Timed
// like the port: from the copies in to the copy back (the CUDA context made before).
//
// hotspot <rows> <cols> <steps>
#include "common.h"
#include <utility>
#include <vector>

#define MAX_PD (3.0e6)
#define PRECISION 0.001
#define SPEC_HEAT_SI 1.75e6
#define K_SI 100
#define FACTOR_CHIP 0.5
static const double t_chip = 0.0005, chip_height = 0.016, chip_width = 0.016, amb_temp = 80.0;

__global__ void step(double *result, const double *temp, const double *power, int row, int col,
                     double step_cap, double r_rx, double r_ry, double r_rz) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= row || c >= col) return;
    int S = r == row - 1 ? row - 1 : r + 1;
    int N = r == 0 ? 0 : r - 1;
    int W = c == 0 ? 0 : c - 1;
    int E = c == col - 1 ? col - 1 : c + 1;
    size_t k = (size_t)r * col + c;
    double t = temp[k];
    double delta = step_cap * (power[k] + (temp[(size_t)S * col + c] + temp[(size_t)N * col + c] - 2.0 * t) * r_ry +
                               (temp[(size_t)r * col + E] + temp[(size_t)r * col + W] - 2.0 * t) * r_rx +
                               (amb_temp - t) * r_rz);
    result[k] = t + delta;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <rows> <cols> <steps>\n", argv[0]);
        return 2;
    }
    int row = atoi(argv[1]), col = atoi(argv[2]), steps = atoi(argv[3]);
    size_t n = (size_t)row * col;
    std::vector<double> temp(n), power(n);
    for (size_t i = 0; i < n; i++) {
        temp[i] = 323.0 + 20.0 * unit(1, i);
        power[i] = 0.005 * unit(2, i);
    }
    double grid_height = chip_height / row, grid_width = chip_width / col;
    double cap = FACTOR_CHIP * SPEC_HEAT_SI * t_chip * grid_width * grid_height;
    double rx = grid_width / (2.0 * K_SI * t_chip * grid_height);
    double ry = grid_height / (2.0 * K_SI * t_chip * grid_width);
    double rz = t_chip / (K_SI * grid_height * grid_width);
    double max_slope = MAX_PD / (FACTOR_CHIP * t_chip * SPEC_HEAT_SI);
    double step_cap = (PRECISION / max_slope) / cap;
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    double *d_temp, *d_result, *d_power;
    CHECK(cudaMalloc(&d_temp, n * sizeof(double)));
    CHECK(cudaMalloc(&d_result, n * sizeof(double)));
    CHECK(cudaMalloc(&d_power, n * sizeof(double)));
    CHECK(cudaMemcpy(d_temp, temp.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_power, power.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    dim3 block(16, 16), grid((col + 15) / 16, (row + 15) / 16);
    for (int s = 0; s < steps; s++) {
        step<<<grid, block>>>(d_result, d_temp, d_power, row, col, step_cap, 1.0 / rx, 1.0 / ry, 1.0 / rz);
        std::swap(d_result, d_temp);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(temp.data(), d_temp, n * sizeof(double), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_temp));
    CHECK(cudaFree(d_result));
    CHECK(cudaFree(d_power));
    double seconds = seconds_since(t0);

    double checksum = 0;
    for (size_t i = 0; i < n; i++) checksum += temp[i];
    report(seconds, checksum);
    return 0;
}
