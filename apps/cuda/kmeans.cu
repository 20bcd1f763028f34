// A hand-written CUDA version of kmeans (apps/src/kmeans.rs), as a CUDA programmer would write
// the same clustering: each pass copies the centres in, launches one kernel with a thread per
// point that finds the point's nearest centre, counts the points that changed cluster and adds
// the point to its cluster's sums (in shared memory per block, then once per block into global
// memory), and copies the sums back; the host divides them into the new centres. Passes repeat
// while points change cluster (delta > 0.001), at most 501 times, as the port's do.
//
// The same input as the port (features that are multiples of 1/16, whose sums are exact in any
// order), and distances without fused multiply-adds (__fmul_rn, __fadd_rn), so that the
// memberships and centres, and the checksum (the sum of the centres' coordinates), are the
// port's. Timed like the port: from the first copy in to the last copy back (the CUDA context
// made before).
//
// kmeans <npoints> <nfeatures> <nclusters>
#include "common.h"
#include <cfloat>
#include <cmath>
#include <vector>

static const float threshold = 0.001f;

__global__ void assign(const float *feature, const float *clusters, int *membership, int npoints,
                       int nfeatures, int nclusters, float *new_centers, int *new_centers_len,
                       int *delta) {
    extern __shared__ float shared[];
    int nc = nclusters * nfeatures;
    float *s_clusters = shared;            // [nclusters][nfeatures]
    float *s_sums = shared + nc;           // [nclusters][nfeatures]
    int *s_len = (int *)(s_sums + nc);     // [nclusters]
    __shared__ int s_delta;
    for (int k = threadIdx.x; k < nc; k += blockDim.x) {
        s_clusters[k] = clusters[k];
        s_sums[k] = 0.0f;
    }
    for (int k = threadIdx.x; k < nclusters; k += blockDim.x) s_len[k] = 0;
    if (threadIdx.x == 0) s_delta = 0;
    __syncthreads();

    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npoints) {
        const float *p = feature + (size_t)i * nfeatures;
        float min_dist = FLT_MAX;
        int index = 0;
        for (int c = 0; c < nclusters; c++) {
            float dist = 0.0f;
            for (int j = 0; j < nfeatures; j++) {
                float d = p[j] - s_clusters[c * nfeatures + j];
                dist = __fadd_rn(dist, __fmul_rn(d, d));
            }
            if (dist < min_dist) {
                min_dist = dist;
                index = c;
            }
        }
        if (membership[i] != index) atomicAdd(&s_delta, 1);
        membership[i] = index;
        atomicAdd(&s_len[index], 1);
        for (int j = 0; j < nfeatures; j++) atomicAdd(&s_sums[index * nfeatures + j], p[j]);
    }
    __syncthreads();

    for (int k = threadIdx.x; k < nc; k += blockDim.x) atomicAdd(&new_centers[k], s_sums[k]);
    for (int k = threadIdx.x; k < nclusters; k += blockDim.x) atomicAdd(&new_centers_len[k], s_len[k]);
    if (threadIdx.x == 0) atomicAdd(delta, s_delta);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <npoints> <nfeatures> <nclusters>\n", argv[0]);
        return 2;
    }
    int npoints = atoi(argv[1]), nfeatures = atoi(argv[2]), nclusters = atoi(argv[3]);
    if (npoints < nclusters || nclusters < 1 || nfeatures < 1) {
        fprintf(stderr, "kmeans: need at least as many points as clusters\n");
        return 2;
    }
    size_t nf = (size_t)npoints * nfeatures;
    int nc = nclusters * nfeatures;
    std::vector<float> feature(nf);
    for (size_t k = 0; k < nf; k++) feature[k] = (float)(floor(unit(11, k) * 16.0) / 16.0);
    std::vector<int> membership(npoints, -1);
    // The first points are the first centres.
    std::vector<float> clusters(feature.begin(), feature.begin() + nc);
    std::vector<float> new_centers(nc);
    std::vector<int> new_centers_len(nclusters);
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    float *d_feature, *d_clusters, *d_new_centers;
    int *d_membership, *d_new_centers_len, *d_delta;
    CHECK(cudaMalloc(&d_feature, nf * sizeof(float)));
    CHECK(cudaMalloc(&d_membership, npoints * sizeof(int)));
    CHECK(cudaMalloc(&d_clusters, nc * sizeof(float)));
    CHECK(cudaMalloc(&d_new_centers, nc * sizeof(float)));
    CHECK(cudaMalloc(&d_new_centers_len, nclusters * sizeof(int)));
    CHECK(cudaMalloc(&d_delta, sizeof(int)));
    CHECK(cudaMemcpy(d_feature, feature.data(), nf * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_membership, membership.data(), npoints * sizeof(int), cudaMemcpyHostToDevice));
    const int threads = 256;
    int blocks = (npoints + threads - 1) / threads;
    size_t shmem = (2 * (size_t)nc) * sizeof(float) + nclusters * sizeof(int);
    int loop = 0, passes = 0;
    float delta;
    do {
        CHECK(cudaMemcpy(d_clusters, clusters.data(), nc * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemset(d_new_centers, 0, nc * sizeof(float)));
        CHECK(cudaMemset(d_new_centers_len, 0, nclusters * sizeof(int)));
        CHECK(cudaMemset(d_delta, 0, sizeof(int)));
        assign<<<blocks, threads, shmem>>>(d_feature, d_clusters, d_membership, npoints, nfeatures,
                                           nclusters, d_new_centers, d_new_centers_len, d_delta);
        CHECK(cudaGetLastError());
        int changed;
        CHECK(cudaMemcpy(new_centers.data(), d_new_centers, nc * sizeof(float), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(new_centers_len.data(), d_new_centers_len, nclusters * sizeof(int),
                         cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&changed, d_delta, sizeof(int), cudaMemcpyDeviceToHost));
        delta = (float)changed;
        // The new centres: the mean of each cluster's points (a cluster with none keeps its own).
        for (int c = 0; c < nclusters; c++)
            if (new_centers_len[c] > 0)
                for (int j = 0; j < nfeatures; j++)
                    clusters[c * nfeatures + j] = new_centers[c * nfeatures + j] / (float)new_centers_len[c];
        passes++;
    } while (delta > threshold && loop++ < 500);
    CHECK(cudaMemcpy(membership.data(), d_membership, npoints * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_feature));
    CHECK(cudaFree(d_membership));
    CHECK(cudaFree(d_clusters));
    CHECK(cudaFree(d_new_centers));
    CHECK(cudaFree(d_new_centers_len));
    CHECK(cudaFree(d_delta));
    double seconds = seconds_since(t0);

    fprintf(stderr, "kmeans: %d passes\n", passes);
    double checksum = 0;
    for (int k = 0; k < nc; k++) checksum += clusters[k];
    report(seconds, checksum);
    return 0;
}
