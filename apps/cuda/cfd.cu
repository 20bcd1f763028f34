// A hand-written CUDA version of cfd (apps/src/cfd.rs), as Rodinia's own CUDA euler3d.cu
// writes the same solver: the state in arrays of one variable each (`[NVAR][nelr]`), the
// far-field state and its flux contributions in constant memory, and a kernel with a thread per
// element for each step of an iteration (the initialisation, the step factors, per Runge-Kutta
// stage the fluxes and the update); the copy to old_variables is a device-to-device cudaMemcpy.
// The same mesh as the port, made on the host from unit(), and the same float operations
// (nvcc fuses some multiply-adds, so the checksum may differ from the port's in its last
// digits). Timed like the port's data region: from the allocations and the copy in of the mesh
// to the copy back of the state (the CUDA context made before).
//
// cfd <nx> <ny> <iterations>
#include "common.h"
#include <cmath>
#include <vector>

#define GAMMA 1.4f
#define NDIM 3
#define NNB 4
#define RK 3 // 3rd order RK
#define ff_mach 1.2f
#define deg_angle_of_attack 0.0f

#define VAR_DENSITY 0
#define VAR_MOMENTUM 1
#define VAR_DENSITY_ENERGY (VAR_MOMENTUM + NDIM)
#define NVAR (VAR_DENSITY_ENERGY + 1)

#define BLOCK 192

struct FarField {
    float variable[NVAR];
    float3 momentum_x, momentum_y, momentum_z, density_energy;
};

__constant__ FarField ff;

__device__ __host__ inline void compute_flux_contribution(float density_energy, float3 momentum,
                                                          float pressure, float3 velocity, float3 &fc_momentum_x,
                                                          float3 &fc_momentum_y, float3 &fc_momentum_z,
                                                          float3 &fc_density_energy) {
    fc_momentum_x.x = velocity.x * momentum.x + pressure;
    fc_momentum_x.y = velocity.x * momentum.y;
    fc_momentum_x.z = velocity.x * momentum.z;

    fc_momentum_y.x = fc_momentum_x.y;
    fc_momentum_y.y = velocity.y * momentum.y + pressure;
    fc_momentum_y.z = velocity.y * momentum.z;

    fc_momentum_z.x = fc_momentum_x.z;
    fc_momentum_z.y = fc_momentum_y.z;
    fc_momentum_z.z = velocity.z * momentum.z + pressure;

    float de_p = density_energy + pressure;
    fc_density_energy.x = velocity.x * de_p;
    fc_density_energy.y = velocity.y * de_p;
    fc_density_energy.z = velocity.z * de_p;
}

__device__ inline float3 compute_velocity(float density, float3 momentum) {
    return make_float3(momentum.x / density, momentum.y / density, momentum.z / density);
}

__device__ inline float compute_speed_sqd(float3 v) { return v.x * v.x + v.y * v.y + v.z * v.z; }

__device__ inline float compute_pressure(float density, float density_energy, float speed_sqd) {
    return (GAMMA - 1.0f) * (density_energy - 0.5f * density * speed_sqd);
}

__device__ inline float compute_speed_of_sound(float density, float pressure) {
    return sqrtf(GAMMA * pressure / density);
}

__global__ void initialize_variables(int nelr, float *variables) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nelr) return;
    for (int j = 0; j < NVAR; j++) variables[i + j * nelr] = ff.variable[j];
}

__global__ void compute_step_factor(int nelr, const float *variables, const float *areas, float *step_factors) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nelr) return;
    float density = variables[i + VAR_DENSITY * nelr];
    float3 momentum = make_float3(variables[i + (VAR_MOMENTUM + 0) * nelr], variables[i + (VAR_MOMENTUM + 1) * nelr],
                                  variables[i + (VAR_MOMENTUM + 2) * nelr]);
    float density_energy = variables[i + VAR_DENSITY_ENERGY * nelr];
    float3 velocity = compute_velocity(density, momentum);
    float speed_sqd = compute_speed_sqd(velocity);
    float pressure = compute_pressure(density, density_energy, speed_sqd);
    float speed_of_sound = compute_speed_of_sound(density, pressure);
    step_factors[i] = 0.5f / (sqrtf(areas[i]) * (sqrtf(speed_sqd) + speed_of_sound));
}

__global__ void compute_flux(int nelr, const int *elements_surrounding_elements, const float *normals,
                             const float *variables, float *fluxes) {
    const float smoothing_coefficient = 0.2f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nelr) return;

    float density_i = variables[i + VAR_DENSITY * nelr];
    float3 momentum_i = make_float3(variables[i + (VAR_MOMENTUM + 0) * nelr],
                                    variables[i + (VAR_MOMENTUM + 1) * nelr],
                                    variables[i + (VAR_MOMENTUM + 2) * nelr]);
    float density_energy_i = variables[i + VAR_DENSITY_ENERGY * nelr];

    float3 velocity_i = compute_velocity(density_i, momentum_i);
    float speed_sqd_i = compute_speed_sqd(velocity_i);
    float speed_i = sqrtf(speed_sqd_i);
    float pressure_i = compute_pressure(density_i, density_energy_i, speed_sqd_i);
    float speed_of_sound_i = compute_speed_of_sound(density_i, pressure_i);
    float3 fc_i_momentum_x, fc_i_momentum_y, fc_i_momentum_z, fc_i_density_energy;
    compute_flux_contribution(density_energy_i, momentum_i, pressure_i, velocity_i, fc_i_momentum_x,
                              fc_i_momentum_y, fc_i_momentum_z, fc_i_density_energy);

    float flux_i_density = 0.0f;
    float3 flux_i_momentum = make_float3(0.0f, 0.0f, 0.0f);
    float flux_i_density_energy = 0.0f;

    for (int j = 0; j < NNB; j++) {
        int nb = elements_surrounding_elements[i + j * nelr];
        float3 normal = make_float3(normals[i + (j + 0 * NNB) * nelr], normals[i + (j + 1 * NNB) * nelr],
                                    normals[i + (j + 2 * NNB) * nelr]);
        float normal_len = sqrtf(normal.x * normal.x + normal.y * normal.y + normal.z * normal.z);

        if (nb >= 0) { // a legitimate neighbor
            float density_nb = variables[nb + VAR_DENSITY * nelr];
            float3 momentum_nb = make_float3(variables[nb + (VAR_MOMENTUM + 0) * nelr],
                                             variables[nb + (VAR_MOMENTUM + 1) * nelr],
                                             variables[nb + (VAR_MOMENTUM + 2) * nelr]);
            float density_energy_nb = variables[nb + VAR_DENSITY_ENERGY * nelr];
            float3 velocity_nb = compute_velocity(density_nb, momentum_nb);
            float speed_sqd_nb = compute_speed_sqd(velocity_nb);
            float pressure_nb = compute_pressure(density_nb, density_energy_nb, speed_sqd_nb);
            float speed_of_sound_nb = compute_speed_of_sound(density_nb, pressure_nb);
            float3 fc_nb_momentum_x, fc_nb_momentum_y, fc_nb_momentum_z, fc_nb_density_energy;
            compute_flux_contribution(density_energy_nb, momentum_nb, pressure_nb, velocity_nb, fc_nb_momentum_x,
                                      fc_nb_momentum_y, fc_nb_momentum_z, fc_nb_density_energy);

            // artificial viscosity
            float factor = -normal_len * smoothing_coefficient * 0.5f *
                           (speed_i + sqrtf(speed_sqd_nb) + speed_of_sound_i + speed_of_sound_nb);
            flux_i_density += factor * (density_i - density_nb);
            flux_i_density_energy += factor * (density_energy_i - density_energy_nb);
            flux_i_momentum.x += factor * (momentum_i.x - momentum_nb.x);
            flux_i_momentum.y += factor * (momentum_i.y - momentum_nb.y);
            flux_i_momentum.z += factor * (momentum_i.z - momentum_nb.z);

            // accumulate cell-centered fluxes
            factor = 0.5f * normal.x;
            flux_i_density += factor * (momentum_nb.x + momentum_i.x);
            flux_i_density_energy += factor * (fc_nb_density_energy.x + fc_i_density_energy.x);
            flux_i_momentum.x += factor * (fc_nb_momentum_x.x + fc_i_momentum_x.x);
            flux_i_momentum.y += factor * (fc_nb_momentum_y.x + fc_i_momentum_y.x);
            flux_i_momentum.z += factor * (fc_nb_momentum_z.x + fc_i_momentum_z.x);

            factor = 0.5f * normal.y;
            flux_i_density += factor * (momentum_nb.y + momentum_i.y);
            flux_i_density_energy += factor * (fc_nb_density_energy.y + fc_i_density_energy.y);
            flux_i_momentum.x += factor * (fc_nb_momentum_x.y + fc_i_momentum_x.y);
            flux_i_momentum.y += factor * (fc_nb_momentum_y.y + fc_i_momentum_y.y);
            flux_i_momentum.z += factor * (fc_nb_momentum_z.y + fc_i_momentum_z.y);

            factor = 0.5f * normal.z;
            flux_i_density += factor * (momentum_nb.z + momentum_i.z);
            flux_i_density_energy += factor * (fc_nb_density_energy.z + fc_i_density_energy.z);
            flux_i_momentum.x += factor * (fc_nb_momentum_x.z + fc_i_momentum_x.z);
            flux_i_momentum.y += factor * (fc_nb_momentum_y.z + fc_i_momentum_y.z);
            flux_i_momentum.z += factor * (fc_nb_momentum_z.z + fc_i_momentum_z.z);
        } else if (nb == -1) { // a wing boundary
            flux_i_momentum.x += normal.x * pressure_i;
            flux_i_momentum.y += normal.y * pressure_i;
            flux_i_momentum.z += normal.z * pressure_i;
        } else if (nb == -2) { // a far field boundary
            float factor = 0.5f * normal.x;
            flux_i_density += factor * (ff.variable[VAR_MOMENTUM + 0] + momentum_i.x);
            flux_i_density_energy += factor * (ff.density_energy.x + fc_i_density_energy.x);
            flux_i_momentum.x += factor * (ff.momentum_x.x + fc_i_momentum_x.x);
            flux_i_momentum.y += factor * (ff.momentum_y.x + fc_i_momentum_y.x);
            flux_i_momentum.z += factor * (ff.momentum_z.x + fc_i_momentum_z.x);

            factor = 0.5f * normal.y;
            flux_i_density += factor * (ff.variable[VAR_MOMENTUM + 1] + momentum_i.y);
            flux_i_density_energy += factor * (ff.density_energy.y + fc_i_density_energy.y);
            flux_i_momentum.x += factor * (ff.momentum_x.y + fc_i_momentum_x.y);
            flux_i_momentum.y += factor * (ff.momentum_y.y + fc_i_momentum_y.y);
            flux_i_momentum.z += factor * (ff.momentum_z.y + fc_i_momentum_z.y);

            factor = 0.5f * normal.z;
            flux_i_density += factor * (ff.variable[VAR_MOMENTUM + 2] + momentum_i.z);
            flux_i_density_energy += factor * (ff.density_energy.z + fc_i_density_energy.z);
            flux_i_momentum.x += factor * (ff.momentum_x.z + fc_i_momentum_x.z);
            flux_i_momentum.y += factor * (ff.momentum_y.z + fc_i_momentum_y.z);
            flux_i_momentum.z += factor * (ff.momentum_z.z + fc_i_momentum_z.z);
        }
    }

    fluxes[i + VAR_DENSITY * nelr] = flux_i_density;
    fluxes[i + (VAR_MOMENTUM + 0) * nelr] = flux_i_momentum.x;
    fluxes[i + (VAR_MOMENTUM + 1) * nelr] = flux_i_momentum.y;
    fluxes[i + (VAR_MOMENTUM + 2) * nelr] = flux_i_momentum.z;
    fluxes[i + VAR_DENSITY_ENERGY * nelr] = flux_i_density_energy;
}

__global__ void time_step(int j, int nelr, const float *old_variables, float *variables, const float *step_factors,
                          const float *fluxes) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nelr) return;
    float factor = step_factors[i] / (float)(RK + 1 - j);
    for (int v = 0; v < NVAR; v++)
        variables[i + v * nelr] = old_variables[i + v * nelr] + factor * fluxes[i + v * nelr];
}

// The original's far-field conditions, in float (cfd.rs's far_field()).
static FarField far_field() {
    FarField f;
    const float angle_of_attack = (float)(3.1415926535897931 / 180.0) * deg_angle_of_attack;
    f.variable[VAR_DENSITY] = 1.4f;
    float ff_pressure = 1.0f;
    float ff_speed_of_sound = sqrtf(GAMMA * ff_pressure / f.variable[VAR_DENSITY]);
    float ff_speed = ff_mach * ff_speed_of_sound;
    float3 ff_velocity = make_float3(ff_speed * cosf(angle_of_attack), ff_speed * sinf(angle_of_attack), 0.0f);
    f.variable[VAR_MOMENTUM + 0] = f.variable[VAR_DENSITY] * ff_velocity.x;
    f.variable[VAR_MOMENTUM + 1] = f.variable[VAR_DENSITY] * ff_velocity.y;
    f.variable[VAR_MOMENTUM + 2] = f.variable[VAR_DENSITY] * ff_velocity.z;
    f.variable[VAR_DENSITY_ENERGY] =
        f.variable[VAR_DENSITY] * (0.5f * (ff_speed * ff_speed)) + (ff_pressure / (GAMMA - 1.0f));
    float3 ff_momentum = make_float3(f.variable[VAR_MOMENTUM + 0], f.variable[VAR_MOMENTUM + 1],
                                     f.variable[VAR_MOMENTUM + 2]);
    compute_flux_contribution(f.variable[VAR_DENSITY_ENERGY], ff_momentum, ff_pressure, ff_velocity, f.momentum_x,
                              f.momentum_y, f.momentum_z, f.density_energy);
    return f;
}

// The port's mesh (cfd.rs's mesh()): nx x ny cells over a wall with a bump, interior vertices
// jittered, in a tilted plane; walls under the first row, far field on the other edges;
// elements row by row.
struct Mesh {
    int nel;
    std::vector<float> areas;
    std::vector<int> esse;
    std::vector<float> normals;
};

static const double BUMP = 0.04; // the bump's thickness, a fraction of its chord

static void vertex(int nx, int ny, int a, int b, double &x, double &y) {
    double h = 1.0 / (double)ny;
    double length = (double)nx * h;
    double x0 = length / 3.0, chord = length / 3.0;
    double thickness = BUMP * chord;
    uint64_t v = (uint64_t)b * (nx + 1) + a;
    double jx = 0.0, jy = 0.0;
    if (a > 0 && a < nx && b > 0 && b < ny) {
        jx = 0.3 * (unit(1, v) - 0.5);
        jy = 0.3 * (unit(2, v) - 0.5);
    }
    x = ((double)a + jx) * h;
    double s = (x - x0) / chord;
    double wall = (s > 0.0 && s < 1.0) ? 16.0 * thickness * s * s * (1.0 - s) * (1.0 - s) : 0.0;
    y = wall + ((double)b + jy) * h * (1.0 - wall);
}

static Mesh make_mesh(int nx, int ny) {
    int nel = nx * ny, nelr = nel;
    Mesh m;
    m.nel = nel;
    m.areas.assign(nelr, 0.0f);
    m.esse.assign((size_t)nelr * NNB, 0);
    m.normals.assign((size_t)NDIM * NNB * nelr, 0.0f);
    for (int b = 0; b < ny; b++) {
        for (int a = 0; a < nx; a++) {
            int i = b * nx + a;
            // Corners counter-clockwise; face j joins corner j to corner j + 1.
            int ca[4] = {a, a + 1, a + 1, a}, cb[4] = {b, b, b + 1, b + 1};
            double x[4], y[4];
            for (int c = 0; c < 4; c++) vertex(nx, ny, ca[c], cb[c], x[c], y[c]);
            m.areas[i] = (float)(0.5 * ((x[0] * y[1] - x[1] * y[0]) + (x[1] * y[2] - x[2] * y[1]) +
                                        (x[2] * y[3] - x[3] * y[2]) + (x[3] * y[0] - x[0] * y[3])));
            // Across faces 0 to 3: below (the wall under the first row), right, above, left (the
            // far field beyond the other edges).
            int across[4] = {b == 0 ? -1 : i - nx, a == nx - 1 ? -2 : i + 1, b == ny - 1 ? -2 : i + nx,
                             a == 0 ? -2 : i - 1};
            for (int j = 0; j < NNB; j++) {
                m.esse[i + (size_t)j * nelr] = across[j];
                int k = (j + 1) % 4;
                double dx = x[k] - x[j], dy = y[k] - y[j];
                // The inward normal (-dy, dx) in the plane spanned by (1, 0, 0) and (0, 0.6, 0.8).
                m.normals[i + (size_t)(j + 0 * NNB) * nelr] = (float)(-dy);
                m.normals[i + (size_t)(j + 1 * NNB) * nelr] = (float)(0.6 * dx);
                m.normals[i + (size_t)(j + 2 * NNB) * nelr] = (float)(0.8 * dx);
            }
        }
    }
    return m;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <nx> <ny> <iterations>\n", argv[0]);
        return 2;
    }
    int nx = atoi(argv[1]), ny = atoi(argv[2]), iterations = atoi(argv[3]);
    if (nx < 3 || ny < 1 || iterations < 0) {
        fprintf(stderr, "the mesh needs at least 3 x 1 cells\n");
        return 2;
    }
    Mesh m = make_mesh(nx, ny);
    int nelr = m.nel;
    FarField f = far_field();
    std::vector<float> variables((size_t)nelr * NVAR);
    CHECK(cudaFree(0));

    auto t0 = std::chrono::steady_clock::now();
    float *d_areas, *d_normals, *d_variables, *d_old_variables, *d_fluxes, *d_step_factors;
    int *d_esse;
    CHECK(cudaMalloc(&d_areas, nelr * sizeof(float)));
    CHECK(cudaMalloc(&d_esse, (size_t)nelr * NNB * sizeof(int)));
    CHECK(cudaMalloc(&d_normals, (size_t)nelr * NNB * NDIM * sizeof(float)));
    CHECK(cudaMalloc(&d_variables, (size_t)nelr * NVAR * sizeof(float)));
    CHECK(cudaMalloc(&d_old_variables, (size_t)nelr * NVAR * sizeof(float)));
    CHECK(cudaMalloc(&d_fluxes, (size_t)nelr * NVAR * sizeof(float)));
    CHECK(cudaMalloc(&d_step_factors, nelr * sizeof(float)));
    CHECK(cudaMemcpyToSymbol(ff, &f, sizeof(FarField)));
    CHECK(cudaMemcpy(d_areas, m.areas.data(), nelr * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_esse, m.esse.data(), (size_t)nelr * NNB * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_normals, m.normals.data(), (size_t)nelr * NNB * NDIM * sizeof(float),
                     cudaMemcpyHostToDevice));

    int blocks = (nelr + BLOCK - 1) / BLOCK;
    initialize_variables<<<blocks, BLOCK>>>(nelr, d_variables);
    for (int it = 0; it < iterations; it++) {
        CHECK(cudaMemcpyAsync(d_old_variables, d_variables, (size_t)nelr * NVAR * sizeof(float),
                              cudaMemcpyDeviceToDevice));
        compute_step_factor<<<blocks, BLOCK>>>(nelr, d_variables, d_areas, d_step_factors);
        for (int j = 0; j < RK; j++) {
            compute_flux<<<blocks, BLOCK>>>(nelr, d_esse, d_normals, d_variables, d_fluxes);
            time_step<<<blocks, BLOCK>>>(j, nelr, d_old_variables, d_variables, d_step_factors, d_fluxes);
        }
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(variables.data(), d_variables, (size_t)nelr * NVAR * sizeof(float), cudaMemcpyDeviceToHost));
    float *fbufs[] = {d_areas, d_normals, d_variables, d_old_variables, d_fluxes, d_step_factors};
    for (float *p : fbufs) CHECK(cudaFree(p));
    CHECK(cudaFree(d_esse));
    double seconds = seconds_since(t0);

    double checksum = 0;
    for (size_t k = 0; k < variables.size(); k++) checksum += variables[k];
    report(seconds, checksum);
    return 0;
}
