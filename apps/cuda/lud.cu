// A hand-written CUDA version of lud (apps/src/lud.rs): the blocked LU decomposition without
// pivoting that CUDA programmers write, in 16 x 16 tiles staged through shared memory. For each
// block step: one block factors the diagonal tile, one block per tile of the block row and block
// column solves them against it, and one block per trailing tile subtracts the product of its
// block-column and block-row tiles; a last step factors the final diagonal tile. The same
// factors as the port's Doolittle loops (U on and above the diagonal, unit-diagonal L below),
// with the sums grouped by tile. Timed like the port: from the copy in to the copy back (the
// CUDA context made before).
//
// lud <size>   (size a multiple of 16)
#include "common.h"
#include <vector>

#define TILE 16

// Doolittle on the tile at (offset, offset), in place: thread t owns column t of U's rows and
// row t of L's columns.
__global__ void lud_diagonal(float *m, int n, int offset) {
    __shared__ float s[TILE][TILE + 1];
    int t = threadIdx.x;
    for (int r = 0; r < TILE; r++) s[r][t] = m[(size_t)(offset + r) * n + offset + t];
    __syncthreads();
    for (int i = 0; i < TILE; i++) {
        if (t >= i) {  // U[i][t]
            float sum = s[i][t];
            for (int k = 0; k < i; k++) sum -= s[i][k] * s[k][t];
            s[i][t] = sum;
        }
        __syncthreads();
        if (t > i) {  // L[t][i]
            float sum = s[t][i];
            for (int k = 0; k < i; k++) sum -= s[t][k] * s[k][i];
            s[t][i] = sum / s[i][i];
        }
        __syncthreads();
    }
    for (int r = 0; r < TILE; r++) m[(size_t)(offset + r) * n + offset + t] = s[r][t];
}

// Block b (0-based) solves the tile right of the diagonal tile, (offset, offset + (b+1)*TILE),
// for U (L of the diagonal tile applied from the left, its unit diagonal implied), with threads
// 0..TILE-1, one column each; and the tile below it, (offset + (b+1)*TILE, offset), for L (U of
// the diagonal tile applied from the right), with threads TILE..2*TILE-1, one row each.
__global__ void lud_perimeter(float *m, int n, int offset) {
    __shared__ float dia[TILE][TILE + 1], row[TILE][TILE + 1], col[TILE][TILE + 1];
    int t = threadIdx.x;
    int b0 = offset + (blockIdx.x + 1) * TILE;
    if (t < TILE) {
        for (int r = 0; r < TILE; r++) {
            dia[r][t] = m[(size_t)(offset + r) * n + offset + t];
            row[r][t] = m[(size_t)(offset + r) * n + b0 + t];
        }
    } else {
        int u = t - TILE;
        for (int r = 0; r < TILE; r++) col[r][u] = m[(size_t)(b0 + r) * n + offset + u];
    }
    __syncthreads();
    if (t < TILE) {
        for (int i = 1; i < TILE; i++) {
            float sum = row[i][t];
            for (int k = 0; k < i; k++) sum -= dia[i][k] * row[k][t];
            row[i][t] = sum;
        }
    } else {
        int u = t - TILE;
        for (int i = 0; i < TILE; i++) {
            float sum = col[u][i];
            for (int k = 0; k < i; k++) sum -= col[u][k] * dia[k][i];
            col[u][i] = sum / dia[i][i];
        }
    }
    __syncthreads();
    if (t < TILE) {
        for (int r = 1; r < TILE; r++) m[(size_t)(offset + r) * n + b0 + t] = row[r][t];
    } else {
        int u = t - TILE;
        for (int r = 0; r < TILE; r++) m[(size_t)(b0 + r) * n + offset + u] = col[r][u];
    }
}

// Each block updates one trailing tile: A -= L(tile of the block column) * U(tile of the block
// row), both staged in shared memory.
__global__ void lud_internal(float *m, int n, int offset) {
    __shared__ float row[TILE][TILE], col[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int r0 = offset + (blockIdx.y + 1) * TILE;
    int c0 = offset + (blockIdx.x + 1) * TILE;
    row[ty][tx] = m[(size_t)(offset + ty) * n + c0 + tx];
    col[ty][tx] = m[(size_t)(r0 + ty) * n + offset + tx];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < TILE; k++) sum += col[ty][k] * row[k][tx];
    m[(size_t)(r0 + ty) * n + c0 + tx] -= sum;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <size>\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < TILE || n % TILE != 0) {
        fprintf(stderr, "the size must be a positive multiple of %d\n", TILE);
        return 2;
    }
    size_t count = (size_t)n * n;
    // A diagonally dominant matrix, as the port makes it.
    std::vector<float> a(count);
    for (size_t idx = 0; idx < count; idx++)
        a[idx] = idx / n == idx % n ? 4.0f * (float)n : 0.5f + 0.5f * (float)unit(3, idx);
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    float *d_m;
    CHECK(cudaMalloc(&d_m, count * sizeof(float)));
    CHECK(cudaMemcpy(d_m, a.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    for (int offset = 0; offset < n - TILE; offset += TILE) {
        int tiles = (n - offset) / TILE - 1;
        lud_diagonal<<<1, TILE>>>(d_m, n, offset);
        lud_perimeter<<<tiles, 2 * TILE>>>(d_m, n, offset);
        lud_internal<<<dim3(tiles, tiles), dim3(TILE, TILE)>>>(d_m, n, offset);
    }
    lud_diagonal<<<1, TILE>>>(d_m, n, n - TILE);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(a.data(), d_m, count * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_m));
    double seconds = seconds_since(t0);

    double checksum = 0;
    for (size_t i = 0; i < count; i++) checksum += a[i];
    report(seconds, checksum);
    return 0;
}
