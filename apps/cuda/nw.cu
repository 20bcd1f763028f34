// A hand-written CUDA version of nw (apps/src/nw.rs), as a CUDA programmer would write the same
// Needleman-Wunsch sweep: the score matrix filled one anti-diagonal at a time, a kernel launch
// per diagonal with a thread per cell, first the top-left triangle and then the bottom-right
// one, in 32-bit integers. Timed like the port: from the copies in to the copy back (the CUDA
// context made before). The reference scores are only read, so they are copied in and not back.
//
// nw <sequence length> <penalty>
#include "common.h"
#include <vector>

// BLOSUM62 (A R N D C Q E G H I L K M F P S T W Y V B Z X *).
static const int blosum62[24][24] = {
    { 4, -1, -2, -2,  0, -1, -1,  0, -2, -1, -1, -1, -1, -2, -1,  1,  0, -3, -2,  0, -2, -1,  0, -4},
    {-1,  5,  0, -2, -3,  1,  0, -2,  0, -3, -2,  2, -1, -3, -2, -1, -1, -3, -2, -3, -1,  0, -1, -4},
    {-2,  0,  6,  1, -3,  0,  0,  0,  1, -3, -3,  0, -2, -3, -2,  1,  0, -4, -2, -3,  3,  0, -1, -4},
    {-2, -2,  1,  6, -3,  0,  2, -1, -1, -3, -4, -1, -3, -3, -1,  0, -1, -4, -3, -3,  4,  1, -1, -4},
    { 0, -3, -3, -3,  9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1, -3, -3, -2, -4},
    {-1,  1,  0,  0, -3,  5,  2, -2,  0, -3, -2,  1,  0, -3, -1,  0, -1, -2, -1, -2,  0,  3, -1, -4},
    {-1,  0,  0,  2, -4,  2,  5, -2,  0, -3, -3,  1, -2, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4},
    { 0, -2,  0, -1, -3, -2, -2,  6, -2, -4, -4, -2, -3, -3, -2,  0, -2, -2, -3, -3, -1, -2, -1, -4},
    {-2,  0,  1, -1, -3,  0,  0, -2,  8, -3, -3, -1, -2, -1, -2, -1, -2, -2,  2, -3,  0,  0, -1, -4},
    {-1, -3, -3, -3, -1, -3, -3, -4, -3,  4,  2, -3,  1,  0, -3, -2, -1, -3, -1,  3, -3, -3, -1, -4},
    {-1, -2, -3, -4, -1, -2, -3, -4, -3,  2,  4, -2,  2,  0, -3, -2, -1, -2, -1,  1, -4, -3, -1, -4},
    {-1,  2,  0, -1, -3,  1,  1, -2, -1, -3, -2,  5, -1, -3, -1,  0, -1, -3, -2, -2,  0,  1, -1, -4},
    {-1, -1, -2, -3, -1,  0, -2, -3, -2,  1,  2, -1,  5,  0, -2, -1, -1, -1, -1,  1, -3, -1, -1, -4},
    {-2, -3, -3, -3, -2, -3, -3, -3, -1,  0,  0, -3,  0,  6, -4, -2, -2,  1,  3, -1, -3, -3, -1, -4},
    {-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4,  7, -1, -1, -4, -3, -2, -2, -1, -2, -4},
    { 1, -1,  1,  0, -1,  0,  0,  0, -1, -2, -2,  0, -1, -2, -1,  4,  1, -3, -2, -2,  0,  0,  0, -4},
    { 0, -1,  0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1,  1,  5, -2, -2,  0, -1, -1,  0, -4},
    {-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1,  1, -4, -3, -2, 11,  2, -3, -4, -3, -2, -4},
    {-2, -2, -2, -3, -2, -1, -2, -3,  2, -1, -1, -2, -1,  3, -3, -2, -2,  2,  7, -1, -3, -2, -1, -4},
    { 0, -3, -3, -3, -1, -2, -2, -3, -3,  3,  1, -2,  1, -1, -2, -2,  0, -3, -1,  4, -3, -2, -1, -4},
    {-2, -1,  3,  4, -3,  0,  1, -1,  0, -3, -4,  0, -3, -3, -2,  0, -1, -4, -3, -3,  4,  1, -1, -4},
    {-1,  0,  0,  1, -3,  3,  4, -2,  0, -3, -3,  1, -1, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4},
    { 0, -1, -1, -1, -2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -2,  0,  0, -2, -1, -1, -1, -1, -1, -4},
    {-4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4,  1},
};

__device__ __forceinline__ int best_of(int a, int b, int c) {
    int k = a <= b ? b : a;
    return k <= c ? c : k;
}

// Diagonal i of the top-left triangle: the cells (row idx + 1, column i + 1 - idx), idx <= i.
__global__ void top_left(int *score, const int *ref, int cols, int penalty, int i) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx > i) return;
    size_t at = (size_t)(idx + 1) * cols + (i + 1 - idx);
    score[at] = best_of(score[at - 1 - cols] + ref[at], score[at - 1] - penalty, score[at - cols] - penalty);
}

// Diagonal i of the bottom-right triangle: the cells (row cols - idx - 2, column idx + cols - i - 2).
__global__ void bottom_right(int *score, const int *ref, int cols, int penalty, int i) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx > i) return;
    size_t at = (size_t)(cols - idx - 2) * cols + (idx + cols - i - 2);
    score[at] = best_of(score[at - 1 - cols] + ref[at], score[at - 1] - penalty, score[at - cols] - penalty);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <sequence length> <penalty>\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]), penalty = atoi(argv[2]);
    if (n < 3) {
        fprintf(stderr, "the sequences need at least 3 residues\n");
        return 2;
    }
    int rows = n + 1, cols = n + 1;
    size_t size = (size_t)rows * cols;
    std::vector<int> score(size, 0), ref(size, 0);
    // Two sequences of residues 1 to 10, scored with BLOSUM62.
    std::vector<int> down(rows), across(cols);
    for (int i = 1; i < rows; i++) down[i] = 1 + (int)(10.0 * unit(1, i));
    for (int j = 1; j < cols; j++) across[j] = 1 + (int)(10.0 * unit(2, j));
    for (int i = 1; i < rows; i++)
        for (int j = 1; j < cols; j++) ref[(size_t)i * cols + j] = blosum62[down[i]][across[j]];
    for (int i = 1; i < rows; i++) score[(size_t)i * cols] = -i * penalty;
    for (int j = 1; j < cols; j++) score[j] = -j * penalty;
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    int *d_score, *d_ref;
    CHECK(cudaMalloc(&d_score, size * sizeof(int)));
    CHECK(cudaMalloc(&d_ref, size * sizeof(int)));
    CHECK(cudaMemcpy(d_score, score.data(), size * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_ref, ref.data(), size * sizeof(int), cudaMemcpyHostToDevice));
    const int block = 256;
    for (int i = 0; i < cols - 2; i++)
        top_left<<<(i + 1 + block - 1) / block, block>>>(d_score, d_ref, cols, penalty, i);
    for (int i = cols - 4; i >= 0; i--)
        bottom_right<<<(i + 1 + block - 1) / block, block>>>(d_score, d_ref, cols, penalty, i);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(score.data(), d_score, size * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_score));
    CHECK(cudaFree(d_ref));
    double seconds = seconds_since(t0);

    long long sum = 0;
    for (size_t k = 0; k < size; k++) sum += score[k];
    report(seconds, (double)sum);
    return 0;
}
