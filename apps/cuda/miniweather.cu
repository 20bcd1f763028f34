// A hand-written CUDA version of miniWeather (apps/src/miniweather.rs: the MPI + OpenACC
// version in C, one rank, DATA_SPEC_THERMAL): the same state layout
// ([NUM_VARS][nz + 2*hs][nx + 2*hs], perturbations from the hydrostatic background), the same
// time loop (three-stage Runge-Kutta, x and z split, the order alternating each step, the last
// step shortened to end at sim_time) and a kernel for each of the original's loops: a thread
// per interface for the fluxes (its stencil, values and third derivatives in registers), a
// thread per cell and variable for the tendencies and the update, a thread per halo row or
// column for the halos; each block's threads run along x. The domain totals (mass, total
// energy) are summed by a kernel whose threads each add 64 cells in order, the partial sums
// added on the host in order (deterministic, like acc's reductions). The same initial state,
// made on the host with the original's init (the same libm, so the same bits). nvcc fuses
// multiply-adds and its pow differs from glibc's in the last bit, so the checksum may differ
// from the port's in its last digits. Timed like the port's data region: from the allocations
// and the copy in of the state and the background to the copy back of the state, the
// reductions and the time loop included (the CUDA context made before); prints the original's
// own figures too (the time loop alone, d_mass, d_te).
//
// miniweather <nx> <nz> <sim_time>
#include "common.h"
#include <cmath>
#include <vector>

constexpr double pi = 3.14159265358979323846264338327;    // Pi
constexpr double grav = 9.8;                               // Gravitational acceleration (m / s^2)
constexpr double cp = 1004.;                               // Specific heat of dry air at constant pressure
constexpr double cv = 717.;                                // Specific heat of dry air at constant volume
constexpr double rd = 287.;                                // Dry air constant for equation of state (P=rho*rd*T)
constexpr double p0 = 1.e5;                                // Standard pressure at the surface in Pascals
constexpr double C0 = 27.5629410929725921310572974482;     // Constant to translate potential temperature into pressure
constexpr double gamm = 1.40027894002789400278940027894;   // gamma=cp/Rd
constexpr double xlen = 2.e4;                              // Length of the domain in the x-direction (meters)
constexpr double zlen = 1.e4;                              // Length of the domain in the z-direction (meters)
constexpr double hv_beta = 0.05;                           // How strong to diffuse the solution: hv_beta \in [0:1]
constexpr double cfl = 1.50;                               // "Courant, Friedrichs, Lewy" number
constexpr double max_speed = 450;                          // Assumed maximum wave speed (meter / sec)
constexpr int hs = 2;                                      // "Halo" size
constexpr int sten_size = 4;                               // Size of the stencil used for interpolation

constexpr int NUM_VARS = 4;
constexpr int ID_DENS = 0;
constexpr int ID_UMOM = 1;
constexpr int ID_WMOM = 2;
constexpr int ID_RHOT = 3;
constexpr int DIR_X = 1;
constexpr int DIR_Z = 2;

constexpr int nqpoints = 3;
constexpr double qpoints[] = {0.112701665379258311482073460022E0, 0.500000000000000000000000000000E0,
                              0.887298334620741688517926539980E0};
constexpr double qweights[] = {0.277777777777777777777777777779E0, 0.444444444444444444444444444444E0,
                               0.277777777777777777777777777779E0};

#define BLOCK 128
#define SUM_CHUNK 64 // cells each thread of the reduction adds

// The indices of a cell of the state, a flux interface and a tendency.
__device__ __host__ inline int state_at(int nx, int nz, int ll, int k, int i) {
    return ll * (nz + 2 * hs) * (nx + 2 * hs) + k * (nx + 2 * hs) + i;
}
__device__ inline int flux_at(int nx, int nz, int ll, int k, int i) {
    return ll * (nz + 1) * (nx + 1) + k * (nx + 1) + i;
}
__device__ inline int tend_at(int nx, int nz, int ll, int k, int i) { return ll * nz * nx + k * nx + i; }

// set_halo_values_x, one rank: the periodic copy within the rank. A thread per (ll, k).
__global__ void set_halo_values_x(double *state, int nx, int nz) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= NUM_VARS * nz) return;
    int ll = t / nz, k = t % nz;
    int row = state_at(nx, nz, ll, k + hs, 0);
    state[row + 0] = state[row + nx + hs - 2];
    state[row + 1] = state[row + nx + hs - 1];
    state[row + nx + hs] = state[row + hs];
    state[row + nx + hs + 1] = state[row + hs + 1];
}

// set_halo_values_z: walls at the bottom and the top. A thread per (ll, i): blockIdx.y is ll.
__global__ void set_halo_values_z(double *state, const double *hy_dens_cell, int nx, int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, ll = blockIdx.y;
    if (i >= nx + 2 * hs) return;
    int r0 = state_at(nx, nz, ll, 0, i), r1 = state_at(nx, nz, ll, 1, i);
    int bottom = state_at(nx, nz, ll, hs, i), top = state_at(nx, nz, ll, nz + hs - 1, i);
    int rn = state_at(nx, nz, ll, nz + hs, i), rn1 = state_at(nx, nz, ll, nz + hs + 1, i);
    if (ll == ID_WMOM) {
        state[r0] = 0.;
        state[r1] = 0.;
        state[rn] = 0.;
        state[rn1] = 0.;
    } else if (ll == ID_UMOM) {
        state[r0] = state[bottom] / hy_dens_cell[hs] * hy_dens_cell[0];
        state[r1] = state[bottom] / hy_dens_cell[hs] * hy_dens_cell[1];
        state[rn] = state[top] / hy_dens_cell[nz + hs - 1] * hy_dens_cell[nz + hs];
        state[rn1] = state[top] / hy_dens_cell[nz + hs - 1] * hy_dens_cell[nz + hs + 1];
    } else {
        state[r0] = state[bottom];
        state[r1] = state[bottom];
        state[rn] = state[top];
        state[rn1] = state[top];
    }
}

// compute_tendencies_x, its flux loop: a thread per interface (k, i), i in 0..nx+1, blockIdx.y is k.
__global__ void flux_x(const double *state, double *flux, const double *hy_dens_cell,
                       const double *hy_dens_theta_cell, double hv_coef, int nx, int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y;
    if (i >= nx + 1) return;
    double stencil[4], d3_vals[NUM_VARS], vals[NUM_VARS];
    // Use fourth-order interpolation from four cell averages to compute the value at the interface
    for (int ll = 0; ll < NUM_VARS; ll++) {
        for (int s = 0; s < sten_size; s++) stencil[s] = state[state_at(nx, nz, ll, k + hs, i + s)];
        // Fourth-order-accurate interpolation of the state
        vals[ll] = -stencil[0] / 12 + 7 * stencil[1] / 12 + 7 * stencil[2] / 12 - stencil[3] / 12;
        // First-order-accurate interpolation of the third spatial derivative of the state
        d3_vals[ll] = -stencil[0] + 3 * stencil[1] - 3 * stencil[2] + stencil[3];
    }
    // Compute density, u-wind, w-wind, potential temperature, and pressure (r,u,w,t,p respectively)
    double r = vals[ID_DENS] + hy_dens_cell[k + hs];
    double u = vals[ID_UMOM] / r;
    double w = vals[ID_WMOM] / r;
    double t = (vals[ID_RHOT] + hy_dens_theta_cell[k + hs]) / r;
    double p = C0 * pow((r * t), gamm);
    // Compute the flux vector
    flux[flux_at(nx, nz, ID_DENS, k, i)] = r * u - hv_coef * d3_vals[ID_DENS];
    flux[flux_at(nx, nz, ID_UMOM, k, i)] = r * u * u + p - hv_coef * d3_vals[ID_UMOM];
    flux[flux_at(nx, nz, ID_WMOM, k, i)] = r * u * w - hv_coef * d3_vals[ID_WMOM];
    flux[flux_at(nx, nz, ID_RHOT, k, i)] = r * u * t - hv_coef * d3_vals[ID_RHOT];
}

// compute_tendencies_x, its tendency loop: a thread per (ll, k, i): blockIdx.y is k, blockIdx.z ll.
__global__ void tend_x(const double *flux, double *tend, double dx, int nx, int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y, ll = blockIdx.z;
    if (i >= nx) return;
    tend[tend_at(nx, nz, ll, k, i)] = -(flux[flux_at(nx, nz, ll, k, i + 1)] - flux[flux_at(nx, nz, ll, k, i)]) / dx;
}

// compute_tendencies_z, its flux loop: a thread per interface (k, i), k in 0..nz+1, blockIdx.y is k.
__global__ void flux_z(const double *state, double *flux, const double *hy_dens_int, const double *hy_dens_theta_int,
                       const double *hy_pressure_int, double hv_coef, int nx, int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y;
    if (i >= nx) return;
    double stencil[4], d3_vals[NUM_VARS], vals[NUM_VARS];
    for (int ll = 0; ll < NUM_VARS; ll++) {
        for (int s = 0; s < sten_size; s++) stencil[s] = state[state_at(nx, nz, ll, k + s, i + hs)];
        vals[ll] = -stencil[0] / 12 + 7 * stencil[1] / 12 + 7 * stencil[2] / 12 - stencil[3] / 12;
        d3_vals[ll] = -stencil[0] + 3 * stencil[1] - 3 * stencil[2] + stencil[3];
    }
    double r = vals[ID_DENS] + hy_dens_int[k];
    double u = vals[ID_UMOM] / r;
    double w = vals[ID_WMOM] / r;
    double t = (vals[ID_RHOT] + hy_dens_theta_int[k]) / r;
    double p = C0 * pow((r * t), gamm) - hy_pressure_int[k];
    // Enforce vertical boundary condition and exact mass conservation
    if (k == 0 || k == nz) {
        w = 0;
        d3_vals[ID_DENS] = 0;
    }
    // Compute the flux vector with hyperviscosity
    flux[flux_at(nx, nz, ID_DENS, k, i)] = r * w - hv_coef * d3_vals[ID_DENS];
    flux[flux_at(nx, nz, ID_UMOM, k, i)] = r * w * u - hv_coef * d3_vals[ID_UMOM];
    flux[flux_at(nx, nz, ID_WMOM, k, i)] = r * w * w + p - hv_coef * d3_vals[ID_WMOM];
    flux[flux_at(nx, nz, ID_RHOT, k, i)] = r * w * t - hv_coef * d3_vals[ID_RHOT];
}

// compute_tendencies_z, its tendency loop (with gravity on the z momentum).
__global__ void tend_z(const double *state, const double *flux, double *tend, double dz, int nx, int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y, ll = blockIdx.z;
    if (i >= nx) return;
    int indt = tend_at(nx, nz, ll, k, i);
    tend[indt] = -(flux[flux_at(nx, nz, ll, k + 1, i)] - flux[flux_at(nx, nz, ll, k, i)]) / dz;
    if (ll == ID_WMOM) tend[indt] = tend[indt] - state[state_at(nx, nz, ID_DENS, k + hs, i + hs)] * grav;
}

// semi_discrete_step's update: state_out = state_init + dt * tend (state_out may be state_init).
__global__ void apply_tendencies(const double *state_init, const double *tend, double *state_out, double dt, int nx,
                                 int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y, ll = blockIdx.z;
    if (i >= nx) return;
    int inds = state_at(nx, nz, ll, k + hs, i + hs);
    state_out[inds] = state_init[inds] + dt * tend[tend_at(nx, nz, ll, k, i)];
}

// reductions: each thread adds the mass and total energy of SUM_CHUNK cells (k, i), in order.
__global__ void reductions_kernel(const double *state, const double *hy_dens_cell, const double *hy_dens_theta_cell,
                                  double dx, double dz, int nx, int nz, double *part_mass, double *part_te) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int cells = nx * nz, first = t * SUM_CHUNK;
    if (first >= cells) return;
    int last = first + SUM_CHUNK < cells ? first + SUM_CHUNK : cells;
    double mass = 0, te = 0;
    for (int c = first; c < last; c++) {
        int k = c / nx, i = c % nx;
        double r = state[state_at(nx, nz, ID_DENS, k + hs, i + hs)] + hy_dens_cell[hs + k]; // Density
        double u = state[state_at(nx, nz, ID_UMOM, k + hs, i + hs)] / r;                     // U-wind
        double w = state[state_at(nx, nz, ID_WMOM, k + hs, i + hs)] / r;                     // W-wind
        double th = (state[state_at(nx, nz, ID_RHOT, k + hs, i + hs)] + hy_dens_theta_cell[hs + k]) / r; // theta
        double p = C0 * pow(r * th, gamm);   // Pressure
        double tt = th / pow(p0 / p, rd / cp); // Temperature
        double ke = r * (u * u + w * w);     // Kinetic Energy
        double ie = r * cv * tt;             // Internal Energy
        mass += r * dx * dz;                 // Accumulate domain mass
        te += (ke + ie) * dx * dz;           // Accumulate domain total energy
    }
    part_mass[t] = mass;
    part_te[t] = te;
}

///////////////////////////////////////////////////////////////////////////////////////
// The host: the original's init (one rank, THERMAL), the time loop and the totals.
///////////////////////////////////////////////////////////////////////////////////////

// Establish hydrostatic balance using constant potential temperature (thermally neutral atmosphere)
static void hydro_const_theta(double z, double &r, double &t) {
    const double theta0 = 300.; // Background potential temperature
    const double exner0 = 1.;   // Surface-level Exner pressure
    double p, exner, rt;
    t = theta0;                                // Potential Temperature at z
    exner = exner0 - grav * z / (cp * theta0); // Exner pressure at z
    p = p0 * pow(exner, (cp / rd));            // Pressure at z
    rt = pow((p / C0), (1. / gamm));           // rho*theta at z
    r = rt / t;                                // Density at z
}

static double sample_ellipse_cosine(double x, double z, double amp, double x0, double z0, double xrad, double zrad) {
    double dist = sqrt(((x - x0) / xrad) * ((x - x0) / xrad) + ((z - z0) / zrad) * ((z - z0) / zrad)) * pi / 2.;
    if (dist <= pi / 2.) {
        return amp * pow(cos(dist), 2.);
    } else {
        return 0.;
    }
}

// Rising thermal
static void thermal(double x, double z, double &r, double &u, double &w, double &t, double &hr, double &ht) {
    hydro_const_theta(z, hr, ht);
    r = 0.;
    t = 0.;
    u = 0.;
    w = 0.;
    t = t + sample_ellipse_cosine(x, z, 3., xlen / 2, 2000., 2000., 2000.);
}

struct Model {
    int nx, nz;
    double dx, dz, dt;
    std::vector<double> state, hy_dens_cell, hy_dens_theta_cell, hy_dens_int, hy_dens_theta_int, hy_pressure_int;
};

static Model init(int nx, int nz) {
    Model m;
    m.nx = nx;
    m.nz = nz;
    m.dx = xlen / nx;
    m.dz = zlen / nz;
    const int i_beg = 0, k_beg = 0;
    double dx = m.dx, dz = m.dz;
    m.state.assign((size_t)(nx + 2 * hs) * (nz + 2 * hs) * NUM_VARS, 0.);
    m.hy_dens_cell.assign(nz + 2 * hs, 0.);
    m.hy_dens_theta_cell.assign(nz + 2 * hs, 0.);
    m.hy_dens_int.assign(nz + 1, 0.);
    m.hy_dens_theta_int.assign(nz + 1, 0.);
    m.hy_pressure_int.assign(nz + 1, 0.);
    // Define the maximum stable time step based on an assumed maximum wind speed
    m.dt = (dx < dz ? dx : dz) / max_speed * cfl;
    double r, u, w, t, hr, ht;
    // Initialize the cell-averaged fluid state via Gauss-Legendre quadrature
    for (int k = 0; k < nz + 2 * hs; k++) {
        for (int i = 0; i < nx + 2 * hs; i++) {
            for (int kk = 0; kk < nqpoints; kk++) {
                for (int ii = 0; ii < nqpoints; ii++) {
                    double x = (i_beg + i - hs + 0.5) * dx + (qpoints[ii] - 0.5) * dx;
                    double z = (k_beg + k - hs + 0.5) * dz + (qpoints[kk] - 0.5) * dz;
                    thermal(x, z, r, u, w, t, hr, ht);
                    int inds = state_at(nx, nz, ID_DENS, k, i);
                    m.state[inds] = m.state[inds] + r * qweights[ii] * qweights[kk];
                    inds = state_at(nx, nz, ID_UMOM, k, i);
                    m.state[inds] = m.state[inds] + (r + hr) * u * qweights[ii] * qweights[kk];
                    inds = state_at(nx, nz, ID_WMOM, k, i);
                    m.state[inds] = m.state[inds] + (r + hr) * w * qweights[ii] * qweights[kk];
                    inds = state_at(nx, nz, ID_RHOT, k, i);
                    m.state[inds] = m.state[inds] + ((r + hr) * (t + ht) - hr * ht) * qweights[ii] * qweights[kk];
                }
            }
        }
    }
    // Compute the hydrostatic background state over vertical cell averages
    for (int k = 0; k < nz + 2 * hs; k++) {
        for (int kk = 0; kk < nqpoints; kk++) {
            double z = (k_beg + k - hs + 0.5) * dz;
            thermal(0., z, r, u, w, t, hr, ht);
            m.hy_dens_cell[k] = m.hy_dens_cell[k] + hr * qweights[kk];
            m.hy_dens_theta_cell[k] = m.hy_dens_theta_cell[k] + hr * ht * qweights[kk];
        }
    }
    // Compute the hydrostatic background state at vertical cell interfaces
    for (int k = 0; k < nz + 1; k++) {
        double z = (k_beg + k) * dz;
        thermal(0., z, r, u, w, t, hr, ht);
        m.hy_dens_int[k] = hr;
        m.hy_dens_theta_int[k] = hr * ht;
        m.hy_pressure_int[k] = C0 * pow((hr * ht), gamm);
    }
    return m;
}

struct Device {
    int nx, nz;
    double dx, dz;
    double *state, *state_tmp, *flux, *tend;
    double *hy_dens_cell, *hy_dens_theta_cell, *hy_dens_int, *hy_dens_theta_int, *hy_pressure_int;
    double *part_mass, *part_te;
    int parts;
};

static void reductions(const Device &d, double &mass, double &te) {
    int threads = (d.nx * d.nz + SUM_CHUNK - 1) / SUM_CHUNK;
    reductions_kernel<<<(threads + BLOCK - 1) / BLOCK, BLOCK>>>(d.state, d.hy_dens_cell, d.hy_dens_theta_cell, d.dx,
                                                               d.dz, d.nx, d.nz, d.part_mass, d.part_te);
    CHECK(cudaGetLastError());
    std::vector<double> pm(threads), pt(threads);
    CHECK(cudaMemcpy(pm.data(), d.part_mass, threads * sizeof(double), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(pt.data(), d.part_te, threads * sizeof(double), cudaMemcpyDeviceToHost));
    mass = 0;
    te = 0;
    for (int t = 0; t < threads; t++) {
        mass += pm[t];
        te += pt[t];
    }
}

// semi_discrete_step: state_out = state_init + dt * rhs(state_forcing).
static void semi_discrete_step(const Device &d, double *state_init, double *state_forcing, double *state_out, double dt,
                               int dir) {
    int nx = d.nx, nz = d.nz;
    dim3 cells((nx + BLOCK - 1) / BLOCK, nz, NUM_VARS);
    if (dir == DIR_X) {
        set_halo_values_x<<<(NUM_VARS * nz + BLOCK - 1) / BLOCK, BLOCK>>>(state_forcing, nx, nz);
        double hv_coef = -hv_beta * d.dx / (16 * dt);
        flux_x<<<dim3((nx + 1 + BLOCK - 1) / BLOCK, nz), BLOCK>>>(state_forcing, d.flux, d.hy_dens_cell,
                                                                  d.hy_dens_theta_cell, hv_coef, nx, nz);
        tend_x<<<cells, BLOCK>>>(d.flux, d.tend, d.dx, nx, nz);
    } else {
        set_halo_values_z<<<dim3((nx + 2 * hs + BLOCK - 1) / BLOCK, NUM_VARS), BLOCK>>>(state_forcing,
                                                                                       d.hy_dens_cell, nx, nz);
        double hv_coef = -hv_beta * d.dz / (16 * dt);
        flux_z<<<dim3((nx + BLOCK - 1) / BLOCK, nz + 1), BLOCK>>>(state_forcing, d.flux, d.hy_dens_int,
                                                                  d.hy_dens_theta_int, d.hy_pressure_int, hv_coef,
                                                                  nx, nz);
        tend_z<<<cells, BLOCK>>>(state_forcing, d.flux, d.tend, d.dz, nx, nz);
    }
    apply_tendencies<<<cells, BLOCK>>>(state_init, d.tend, state_out, dt, nx, nz);
}

// perform_timestep: x then z, or z then x, three Runge-Kutta stages each.
static void perform_timestep(const Device &d, double dt, int &direction_switch) {
    int dirs[2] = {DIR_X, DIR_Z};
    if (!direction_switch) {
        dirs[0] = DIR_Z;
        dirs[1] = DIR_X;
    }
    for (int dir : dirs) {
        semi_discrete_step(d, d.state, d.state, d.state_tmp, dt / 3, dir);
        semi_discrete_step(d, d.state, d.state_tmp, d.state_tmp, dt / 2, dir);
        semi_discrete_step(d, d.state, d.state_tmp, d.state, dt / 1, dir);
    }
    direction_switch = direction_switch ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <nx> <nz> <sim_time>\n", argv[0]);
        return 2;
    }
    int nx = atoi(argv[1]), nz = atoi(argv[2]);
    double sim_time = atof(argv[3]);
    if (nx < hs || nz < 2 || !(sim_time >= 0)) {
        fprintf(stderr, "ask for at least %d x 2 cells and a time of 0 s or more\n", hs);
        return 2;
    }
    Model m = init(nx, nz);
    size_t n_state = m.state.size();
    std::vector<double> state(n_state);
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    Device d;
    d.nx = nx;
    d.nz = nz;
    d.dx = m.dx;
    d.dz = m.dz;
    d.parts = (nx * nz + SUM_CHUNK - 1) / SUM_CHUNK;
    CHECK(cudaMalloc(&d.state, n_state * sizeof(double)));
    CHECK(cudaMalloc(&d.state_tmp, n_state * sizeof(double)));
    CHECK(cudaMalloc(&d.flux, (size_t)(nz + 1) * (nx + 1) * NUM_VARS * sizeof(double)));
    CHECK(cudaMalloc(&d.tend, (size_t)nz * nx * NUM_VARS * sizeof(double)));
    CHECK(cudaMalloc(&d.hy_dens_cell, (nz + 2 * hs) * sizeof(double)));
    CHECK(cudaMalloc(&d.hy_dens_theta_cell, (nz + 2 * hs) * sizeof(double)));
    CHECK(cudaMalloc(&d.hy_dens_int, (nz + 1) * sizeof(double)));
    CHECK(cudaMalloc(&d.hy_dens_theta_int, (nz + 1) * sizeof(double)));
    CHECK(cudaMalloc(&d.hy_pressure_int, (nz + 1) * sizeof(double)));
    CHECK(cudaMalloc(&d.part_mass, d.parts * sizeof(double)));
    CHECK(cudaMalloc(&d.part_te, d.parts * sizeof(double)));
    CHECK(cudaMemcpy(d.state, m.state.data(), n_state * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.state_tmp, m.state.data(), n_state * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.hy_dens_cell, m.hy_dens_cell.data(), (nz + 2 * hs) * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.hy_dens_theta_cell, m.hy_dens_theta_cell.data(), (nz + 2 * hs) * sizeof(double),
                     cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.hy_dens_int, m.hy_dens_int.data(), (nz + 1) * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.hy_dens_theta_int, m.hy_dens_theta_int.data(), (nz + 1) * sizeof(double),
                     cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.hy_pressure_int, m.hy_pressure_int.data(), (nz + 1) * sizeof(double),
                     cudaMemcpyHostToDevice));

    // Initial reductions for mass, kinetic energy, and total energy
    double mass0, te0, mass, te;
    reductions(d, mass0, te0);

    // The main time step loop
    CHECK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    double etime = 0, dt = m.dt;
    int direction_switch = 1, steps = 0;
    while (etime < sim_time) {
        // If the time step leads to exceeding the simulation time, shorten it for the last step
        if (etime + dt > sim_time) dt = sim_time - etime;
        perform_timestep(d, dt, direction_switch);
        etime = etime + dt;
        steps++;
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    double loop_seconds = seconds_since(t1);

    // Final reductions for mass, kinetic energy, and total energy
    reductions(d, mass, te);
    CHECK(cudaMemcpy(state.data(), d.state, n_state * sizeof(double), cudaMemcpyDeviceToHost));
    double *bufs[] = {d.state, d.state_tmp, d.flux, d.tend, d.hy_dens_cell, d.hy_dens_theta_cell, d.hy_dens_int,
                      d.hy_dens_theta_int, d.hy_pressure_int, d.part_mass, d.part_te};
    for (double *p : bufs) CHECK(cudaFree(p));
    double seconds = seconds_since(t0);

    printf("steps: %d\n", steps);
    printf("CPU Time: %f sec\n", loop_seconds);
    printf("d_mass: %le\n", (mass - mass0) / mass0);
    printf("d_te:   %le\n", (te - te0) / te0);
    // The checksum: the sum of the magnitudes of the interior cells' perturbations, every variable.
    double checksum = 0;
    for (int ll = 0; ll < NUM_VARS; ll++)
        for (int k = 0; k < nz; k++)
            for (int i = 0; i < nx; i++) checksum += fabs(state[state_at(nx, nz, ll, k + hs, i + hs)]);
    report(seconds, checksum);
    return 0;
}
