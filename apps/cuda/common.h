// What the CUDA references share with the Rust ports (apps/src/lib.rs): the input generator and
// the output line the benchmark reads.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <chrono>

// A deterministic value in [0, 1) for index i and stream seed (acc_apps::unit).
static inline double unit(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ull << 53);
}

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static inline double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The line the benchmark reads: the computation's time and the result's checksum.
static inline void report(double seconds, double checksum) {
    printf("seconds=%.6f checksum=%.17g\n", seconds, checksum);
}
