// A hand-written CUDA version of bfs (apps/src/bfs.rs): breadth-first search from node 0, level
// by level, as a CUDA programmer would write it: the masks and costs set by two kernels on the
// device, then per level one kernel that expands the frontier (a thread per node, looping over
// its edges) and one that makes the next frontier current and raises a flag in device memory
// when there is one; the host reads the flag back after each level. The graph is the port's
// (Rodinia's graphgen kind, from unit()). Timed like the port: from the copies in to the copy
// back of the costs (the CUDA context made before).
//
// bfs <nodes>
#include "common.h"
#include <algorithm>
#include <vector>

struct Node {
    int starting;
    int no_of_edges;
};

__global__ void init(bool *mask, bool *updating, bool *visited, int *cost, int n, int source) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    updating[i] = false;
    mask[i] = i == source;
    visited[i] = i == source;
    cost[i] = i == source ? 0 : -1;
}

__global__ void expand(const Node *nodes, const int *edges, bool *mask, bool *updating,
                       const bool *visited, int *cost, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n || !mask[tid]) return;
    mask[tid] = false;
    Node node = nodes[tid];
    int next = cost[tid] + 1;
    for (int i = node.starting; i < node.starting + node.no_of_edges; i++) {
        int id = edges[i];
        if (!visited[id]) {
            cost[id] = next;  // every writer of one level writes the same value
            updating[id] = true;
        }
    }
}

__global__ void advance(bool *mask, bool *updating, bool *visited, int *more, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n || !updating[tid]) return;
    mask[tid] = true;
    visited[tid] = true;
    updating[tid] = false;
    *more = 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <nodes>\n", argv[0]);
        return 2;
    }
    long long arg = atoll(argv[1]);
    if (arg < 1 || arg > 0x7fffffff / 8) {
        fprintf(stderr, "bfs: 1 to %d nodes, got %lld\n", 0x7fffffff / 8, arg);
        return 2;
    }
    int n = (int)arg;
    const int source = 0;

    // The graph: node i starts 2 + floor(3 unit(1, i)) undirected edges, the j-th to node
    // floor(n unit(2, 4 i + j)), each stored in both directions in the order made.
    std::vector<std::vector<int>> adjacency(n);
    for (uint64_t i = 0; i < (uint64_t)n; i++) {
        uint64_t num_edges = 2 + (uint64_t)(3.0 * unit(1, i));
        for (uint64_t j = 0; j < num_edges; j++) {
            uint64_t id = std::min((uint64_t)((double)n * unit(2, 4 * i + j)), (uint64_t)n - 1);
            adjacency[i].push_back((int)id);
            adjacency[id].push_back((int)i);
        }
    }
    std::vector<Node> nodes(n);
    std::vector<int> edges;
    for (int i = 0; i < n; i++) {
        nodes[i].starting = (int)edges.size();
        nodes[i].no_of_edges = (int)adjacency[i].size();
        edges.insert(edges.end(), adjacency[i].begin(), adjacency[i].end());
    }
    size_t m = edges.size();
    std::vector<int> cost(n);
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    Node *d_nodes;
    int *d_edges, *d_cost, *d_more;
    bool *d_mask, *d_updating, *d_visited;
    CHECK(cudaMalloc(&d_nodes, n * sizeof(Node)));
    CHECK(cudaMalloc(&d_edges, m * sizeof(int)));
    CHECK(cudaMalloc(&d_cost, n * sizeof(int)));
    CHECK(cudaMalloc(&d_more, sizeof(int)));
    CHECK(cudaMalloc(&d_mask, n * sizeof(bool)));
    CHECK(cudaMalloc(&d_updating, n * sizeof(bool)));
    CHECK(cudaMalloc(&d_visited, n * sizeof(bool)));
    CHECK(cudaMemcpy(d_nodes, nodes.data(), n * sizeof(Node), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_edges, edges.data(), m * sizeof(int), cudaMemcpyHostToDevice));
    const int block = 256;
    const int grid = (n + block - 1) / block;
    init<<<grid, block>>>(d_mask, d_updating, d_visited, d_cost, n, source);
    CHECK(cudaGetLastError());
    int levels = 0, more;
    do {
        CHECK(cudaMemset(d_more, 0, sizeof(int)));
        expand<<<grid, block>>>(d_nodes, d_edges, d_mask, d_updating, d_visited, d_cost, n);
        advance<<<grid, block>>>(d_mask, d_updating, d_visited, d_more, n);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(&more, d_more, sizeof(int), cudaMemcpyDeviceToHost));
        levels++;
    } while (more);
    CHECK(cudaMemcpy(cost.data(), d_cost, n * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_nodes));
    CHECK(cudaFree(d_edges));
    CHECK(cudaFree(d_cost));
    CHECK(cudaFree(d_more));
    CHECK(cudaFree(d_mask));
    CHECK(cudaFree(d_updating));
    CHECK(cudaFree(d_visited));
    double seconds = seconds_since(t0);

    long long checksum = 0;
    for (int i = 0; i < n; i++) checksum += cost[i];
    fprintf(stderr, "bfs: %d nodes, %zu edges, %d levels\n", n, m, levels);
    report(seconds, (double)checksum);
    return 0;
}
