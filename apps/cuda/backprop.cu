// A hand-written CUDA version of backprop (apps/src/backprop.rs): one training step of an
// <in> x <hidden> x <out> network (threshold unit 0 in each layer), as a CUDA programmer would
// write it: the forward pass of a layer as partial sums over chunks of 256 input units (a
// thread per chunk and unit of the next layer, neighbouring threads on neighbouring weights),
// then a thread per unit adding its chunks and squashing; the deltas a thread per unit, their
// error sums on one thread; the weight adjustment a thread per weight. The same float and
// double operations as the port, with the products written __fmul_rn / __dmul_rn so that nvcc
// does not fuse them into FMAs (acc's PTX never does). Inputs as the port makes them. Timed
// like the port: from the copies in to the copies back (the CUDA context made before).
//
// backprop <in> <hidden> <out>
#include "common.h"
#include <vector>

#define ETA 0.3
#define MOMENTUM 0.3
#define CHUNK 256
#define BLOCK 256

static inline int blocks(long long n) { return (int)((n + BLOCK - 1) / BLOCK); }

__global__ void set_threshold(float *l1) { l1[0] = 1.0f; }

// partial[b * n2 + j - 1]: the sum over chunk b of the inputs k of conn[k][j] * l1[k].
__global__ void forward_partial(const float *l1, const float *conn, float *partial, int n1, int n2,
                                int nchunks) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nchunks * n2) return;
    int j = t % n2 + 1, b = t / n2;
    int k0 = b * CHUNK, k1 = min(k0 + CHUNK, n1 + 1);
    float sum = 0.0f;
    for (int k = k0; k < k1; k++) sum += __fmul_rn(conn[(size_t)k * (n2 + 1) + j], l1[k]);
    partial[(size_t)b * n2 + (j - 1)] = sum;
}

// l2[j] = SQUASH(the sum of unit j's partial sums).
__global__ void forward_finish(const float *partial, float *l2, int n2, int nchunks) {
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (j > n2) return;
    float sum = 0.0f;
    for (int b = 0; b < nchunks; b++) sum += partial[(size_t)b * n2 + (j - 1)];
    l2[j] = (float)(1.0 / (1.0 + exp(-(double)sum)));
}

// The output deltas and the sum of their magnitudes (err[0]).
__global__ void output_error(float *delta, const float *target, const float *output, int nj,
                             float *err) {
    float errsum = 0.0f;
    for (int j = 1; j <= nj; j++) {
        float o = output[j], t = target[j];
        delta[j] = (float)__dmul_rn(__dmul_rn((double)o, 1.0 - (double)o), (double)(t - o));
        errsum += delta[j] > 0.0f ? delta[j] : -delta[j];
    }
    err[0] = errsum;
}

// The hidden deltas, a thread per hidden unit.
__global__ void hidden_delta(float *delta_h, int nh, const float *delta_o, int no, const float *who,
                             const float *hidden) {
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (j > nh) return;
    float h = hidden[j];
    float sum = 0.0f;
    for (int k = 1; k <= no; k++) sum += __fmul_rn(delta_o[k], who[(size_t)j * (no + 1) + k]);
    delta_h[j] = (float)__dmul_rn(__dmul_rn((double)h, 1.0 - (double)h), (double)sum);
}

// The sum of the hidden deltas' magnitudes (err[1]).
__global__ void hidden_errsum(const float *delta_h, int nh, float *err) {
    float errsum = 0.0f;
    for (int j = 1; j <= nh; j++) errsum += delta_h[j] > 0.0f ? delta_h[j] : -delta_h[j];
    err[1] = errsum;
}

// w[k][j] += ETA delta[j] ly[k] + MOMENTUM oldw[k][j], a thread per weight (j from 1).
__global__ void adjust_weights(const float *delta, int ndelta, const float *ly, int nly, float *w,
                               float *oldw) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)(nly + 1) * ndelta) return;
    int j = (int)(t % ndelta) + 1;
    long long k = t / ndelta;
    size_t i = (size_t)k * (ndelta + 1) + j;
    double change = __dmul_rn(__dmul_rn(ETA, (double)delta[j]), (double)ly[k]);
    float new_dw = (float)__dadd_rn(change, __dmul_rn(MOMENTUM, (double)oldw[i]));
    w[i] += new_dw;
    oldw[i] = new_dw;
}

// One layer's forward pass: the threshold unit, the partial sums, the squashed units.
static void layerforward(float *l1, float *l2, const float *conn, int n1, int n2, float *partial) {
    int nchunks = (n1 + 1 + CHUNK - 1) / CHUNK;
    set_threshold<<<1, 1>>>(l1);
    forward_partial<<<blocks((long long)nchunks * n2), BLOCK>>>(l1, conn, partial, n1, n2, nchunks);
    forward_finish<<<blocks(n2), BLOCK>>>(partial, l2, n2, nchunks);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <in> <hidden> <out>\n", argv[0]);
        return 2;
    }
    int in = atoi(argv[1]), hid = atoi(argv[2]), out = atoi(argv[3]);
    if (in < 1 || hid < 1 || out < 1) {
        fprintf(stderr, "backprop: at least one unit in each layer\n");
        return 2;
    }
    size_t n_iw = (size_t)(in + 1) * (hid + 1), n_hw = (size_t)(hid + 1) * (out + 1);
    std::vector<float> input_units(in + 1, 0.0f), target(out + 1, 0.1f);
    std::vector<float> input_weights(n_iw), hidden_weights(n_hw);
    for (int k = 1; k <= in; k++) input_units[k] = (float)unit(3, k);
    for (size_t i = 0; i < n_iw; i++) input_weights[i] = (float)unit(1, i);
    for (size_t i = 0; i < n_hw; i++) hidden_weights[i] = (float)unit(2, i);
    float err[2];
    int max_chunks = (in + 1 + CHUNK - 1) / CHUNK;
    int max_n2 = hid > out ? hid : out;
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    float *d_input, *d_hidden, *d_output, *d_hidden_delta, *d_output_delta, *d_target;
    float *d_iw, *d_hw, *d_ipw, *d_hpw, *d_partial, *d_err;
    CHECK(cudaMalloc(&d_input, (in + 1) * sizeof(float)));
    CHECK(cudaMalloc(&d_hidden, (hid + 1) * sizeof(float)));
    CHECK(cudaMalloc(&d_output, (out + 1) * sizeof(float)));
    CHECK(cudaMalloc(&d_hidden_delta, (hid + 1) * sizeof(float)));
    CHECK(cudaMalloc(&d_output_delta, (out + 1) * sizeof(float)));
    CHECK(cudaMalloc(&d_target, (out + 1) * sizeof(float)));
    CHECK(cudaMalloc(&d_iw, n_iw * sizeof(float)));
    CHECK(cudaMalloc(&d_hw, n_hw * sizeof(float)));
    CHECK(cudaMalloc(&d_ipw, n_iw * sizeof(float)));
    CHECK(cudaMalloc(&d_hpw, n_hw * sizeof(float)));
    CHECK(cudaMalloc(&d_partial, (size_t)max_chunks * max_n2 * sizeof(float)));
    CHECK(cudaMalloc(&d_err, 2 * sizeof(float)));
    CHECK(cudaMemcpy(d_input, input_units.data(), (in + 1) * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_target, target.data(), (out + 1) * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_iw, input_weights.data(), n_iw * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_hw, hidden_weights.data(), n_hw * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_ipw, 0, n_iw * sizeof(float)));
    CHECK(cudaMemset(d_hpw, 0, n_hw * sizeof(float)));

    layerforward(d_input, d_hidden, d_iw, in, hid, d_partial);
    layerforward(d_hidden, d_output, d_hw, hid, out, d_partial);
    output_error<<<1, 1>>>(d_output_delta, d_target, d_output, out, d_err);
    hidden_delta<<<blocks(hid), BLOCK>>>(d_hidden_delta, hid, d_output_delta, out, d_hw, d_hidden);
    hidden_errsum<<<1, 1>>>(d_hidden_delta, hid, d_err);
    adjust_weights<<<blocks((long long)(hid + 1) * out), BLOCK>>>(d_output_delta, out, d_hidden, hid,
                                                                  d_hw, d_hpw);
    adjust_weights<<<blocks((long long)(in + 1) * hid), BLOCK>>>(d_hidden_delta, hid, d_input, in,
                                                                 d_iw, d_ipw);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(input_weights.data(), d_iw, n_iw * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hidden_weights.data(), d_hw, n_hw * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(err, d_err, 2 * sizeof(float), cudaMemcpyDeviceToHost));
    float *all[] = {d_input, d_hidden, d_output, d_hidden_delta, d_output_delta, d_target,
                    d_iw, d_hw, d_ipw, d_hpw, d_partial, d_err};
    for (float *p : all) CHECK(cudaFree(p));
    double seconds = seconds_since(t0);

    double checksum = 0;
    for (size_t i = 0; i < n_iw; i++) checksum += input_weights[i];
    for (size_t i = 0; i < n_hw; i++) checksum += hidden_weights[i];
    fprintf(stderr, "backprop: out_err %g, hid_err %g\n", err[0], err[1]);
    report(seconds, checksum);
    return 0;
}
