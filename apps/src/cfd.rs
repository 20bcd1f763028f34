//! Rodinia's cfd (euler3d, OpenACC version, as OpenARC's Rodinia suite has it:
//! `euler3d_cpu.c`): a finite-volume solver of the three-dimensional Euler equations on an
//! unstructured mesh, cell-centred, each element with `NNB` = 4 faces. Every iteration copies
//! the state (`variables`: density, momentum, density-energy, one array of each, `nelr` apart)
//! to `old_variables`, computes each element's time step (`step_factors`), then runs the `RK` =
//! 3 stages of a Runge-Kutta scheme, each a flux sweep (`compute_flux`: central fluxes through
//! each face plus an artificial viscosity; `-1` faces are walls, `-2` faces the far field) and
//! an update from the old state (`time_step`).
//!
//! The original's directives, kept: one `data copyout(variables) copyin(ff_variable, areas)
//! copyin(elements_surrounding_elements, normals) create(fluxes) create(old_variables,
//! step_factors)` region around the initialisation and all the iterations (bounded by `nelr`
//! where the original has its `NELR` constant); `kernels loop gang worker independent` on each
//! of the five element loops (the initialisation, with `loop seq` on its variable loop, the copy
//! to `old_variables`, `compute_step_factor`, and in the stage loop `compute_flux` and
//! `time_step`), which OpenARC's version writes inline in `main`, its helper functions
//! (`compute_velocity`, `compute_pressure`, ..) inlined by hand; the neighbour loop inside
//! `compute_flux` has no directive, as in the original (acc runs it in order in each element's
//! thread). The far-field state (`ff_variable`, in the data region's `copyin`) and its flux
//! contributions (twelve `float` globals the flux loop reads, which the compiler passes in) are
//! computed on the host as the original computes them, in `f32`.
//!
//! Changed: OpenARC's version declares the loops' eighty temporaries (`density_i`,
//! `flux_i_momentum_x`, `factor`, ..) at the top of `main` and lets the compiler privatize
//! them in each `kernels loop`; the port declares them in the loops' bodies, where Rust locals
//! are private to each iteration already (a `private` clause on each loop would say the
//! same). The original reads the mesh from a file (`fvcorr.domn.097K`, 97,046 elements;
//! `NEL`/`NELR` are compile-time constants, with `block_length` 1 so `nelr = nel`); the port
//! makes the mesh (see `mesh`) and takes its size as arguments. Timed as the original's "Main
//! Comp. Time (with data copies)": from before the data region to after it, the transfers, the
//! initialisation and every iteration included.
//!
//! Why OpenARC's version: Rodinia 3.1's own OpenACC cfd (`openacc/cfd`, e.g. in qbunia/rodinia)
//! does not run: in `euler3d_cpu.cpp` the mesh reading is under `#if 0`, `nelr` is 100 and the
//! calls of `compute_step_factor`, `compute_flux` and `time_step` are commented out, and
//! `euler3d_cpu_double.cpp` initialises `variables` inside a `data create(variables)` region
//! that never copies them back, so its iterations start from uninitialised memory. OpenARC's is
//! the complete single-precision program, with the same loops and Rodinia's `[NVAR][nelr]`
//! layout (the one Rodinia's CUDA version uses).
//!
//! The mesh: Rodinia's files hold tetrahedral meshes around a wing or a missile; the port builds
//! a structured mesh of `nx` x `ny` quadrilateral cells over a wall with a smooth bump (the
//! classic supersonic bump channel: height 1, the bump a third of the length long and 4% of
//! that thick), interior vertices jittered with `unit()`, laid in a plane tilted out of the x-y
//! plane so that every normal has three non-zero components. Each cell is a prism of unit depth
//! whose two faces in the plane (equal and opposite) are left out, as a symmetry plane's would
//! be: four faces per element, as `NNB` has it. The faces under the first row are walls (`-1`,
//! the original's "wing boundary"), the others on the edge far field (`-2`). Normals point into
//! the element and are as long as the face (the original reads them so, negating the file's);
//! `areas` are the cells' areas (the original's time step takes their square root for a
//! length). Elements are numbered row by row. The flow starts at the far-field state everywhere
//! (Mach 1.2 along x, the original's), shocks form at the bump and the flow settles: at the
//! large size the density ranges over 1.01 to 1.83 and the Mach number reaches 1.52 after the
//! 2000 iterations. (A blunt block in the flow, tried first, emptied the cell behind it within
//! 15 iterations, its pressure going negative and then NaN: the original's central scheme with
//! its scalar artificial viscosity wants a streamlined body, as Rodinia's wing and missile are.)

use std::time::Instant;

use crate::{unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str = "Rodinia 3.1 cfd (euler3d), OpenACC version as in OpenARC's Rodinia suite (swiftcurrent2018/openarc, test/benchmarks/openacc/rodinia/cfd/euler3d_cpu.c)";

const GAMMA: f32 = 1.4;
const NDIM: usize = 3;
const NNB: usize = 4;
/// 3rd order RK.
const RK: usize = 3;
const FF_MACH: f32 = 1.2;
const DEG_ANGLE_OF_ATTACK: f32 = 0.0;

const VAR_DENSITY: usize = 0;
const VAR_MOMENTUM: usize = 1;
const VAR_DENSITY_ENERGY: usize = VAR_MOMENTUM + NDIM;
/// Variables per element.
pub const NVAR: usize = VAR_DENSITY_ENERGY + 1;

/// The far-field state and its flux contributions (the original's `ff_variable` and
/// `ff_flux_contribution_*` globals).
#[derive(Clone, Copy, Debug)]
pub struct FarField {
    pub variable: [f32; NVAR],
    pub momentum_x: [f32; 3],
    pub momentum_y: [f32; 3],
    pub momentum_z: [f32; 3],
    pub density_energy: [f32; 3],
}

/// The original's far-field conditions, in its `float` operations.
pub fn far_field() -> FarField {
    let angle_of_attack = (std::f64::consts::PI / 180.0) as f32 * DEG_ANGLE_OF_ATTACK;
    let mut ff_variable = [0f32; NVAR];
    ff_variable[VAR_DENSITY] = 1.4;

    let ff_pressure = 1.0f32;
    let ff_speed_of_sound = (GAMMA * ff_pressure / ff_variable[VAR_DENSITY]).sqrt();
    let ff_speed = FF_MACH * ff_speed_of_sound;

    let ff_velocity_x = ff_speed * angle_of_attack.cos();
    let ff_velocity_y = ff_speed * angle_of_attack.sin();
    let ff_velocity_z = 0.0f32;

    ff_variable[VAR_MOMENTUM] = ff_variable[VAR_DENSITY] * ff_velocity_x;
    ff_variable[VAR_MOMENTUM + 1] = ff_variable[VAR_DENSITY] * ff_velocity_y;
    ff_variable[VAR_MOMENTUM + 2] = ff_variable[VAR_DENSITY] * ff_velocity_z;

    ff_variable[VAR_DENSITY_ENERGY] =
        ff_variable[VAR_DENSITY] * (0.5 * (ff_speed * ff_speed)) + (ff_pressure / (GAMMA - 1.0));

    let ff_momentum_x = ff_variable[VAR_MOMENTUM];
    let ff_momentum_y = ff_variable[VAR_MOMENTUM + 1];
    let ff_momentum_z = ff_variable[VAR_MOMENTUM + 2];
    // compute_flux_contribution, inlined as in the original
    let x_x = ff_velocity_x * ff_momentum_x + ff_pressure;
    let x_y = ff_velocity_x * ff_momentum_y;
    let x_z = ff_velocity_x * ff_momentum_z;
    let y_x = x_y;
    let y_y = ff_velocity_y * ff_momentum_y + ff_pressure;
    let y_z = ff_velocity_y * ff_momentum_z;
    let z_x = x_z;
    let z_y = y_z;
    let z_z = ff_velocity_z * ff_momentum_z + ff_pressure;
    let de_p = ff_variable[VAR_DENSITY_ENERGY] + ff_pressure;
    FarField {
        variable: ff_variable,
        momentum_x: [x_x, x_y, x_z],
        momentum_y: [y_x, y_y, y_z],
        momentum_z: [z_x, z_y, z_z],
        density_energy: [
            ff_velocity_x * de_p,
            ff_velocity_y * de_p,
            ff_velocity_z * de_p,
        ],
    }
}

/// The original's `main` from its data region on: `iterations` iterations on the mesh of
/// `nelr` elements, the state at the end in `variables` (`[NVAR][nelr]`).
#[acc::offload]
#[allow(clippy::too_many_arguments)]
pub fn euler3d(
    nelr: usize,
    areas: &[f32],
    elements_surrounding_elements: &[i32],
    normals: &[f32],
    ff: &FarField,
    variables: &mut [f32],
    iterations: usize,
) {
    let ff_variable: [f32; NVAR] = ff.variable;
    let ff_flux_contribution_momentum_x_x = ff.momentum_x[0];
    let ff_flux_contribution_momentum_x_y = ff.momentum_x[1];
    let ff_flux_contribution_momentum_x_z = ff.momentum_x[2];
    let ff_flux_contribution_momentum_y_x = ff.momentum_y[0];
    let ff_flux_contribution_momentum_y_y = ff.momentum_y[1];
    let ff_flux_contribution_momentum_y_z = ff.momentum_y[2];
    let ff_flux_contribution_momentum_z_x = ff.momentum_z[0];
    let ff_flux_contribution_momentum_z_y = ff.momentum_z[1];
    let ff_flux_contribution_momentum_z_z = ff.momentum_z[2];
    let ff_flux_contribution_density_energy_x = ff.density_energy[0];
    let ff_flux_contribution_density_energy_y = ff.density_energy[1];
    let ff_flux_contribution_density_energy_z = ff.density_energy[2];
    let smoothing_coefficient = 0.2f32;

    let mut old_variables = vec![0f32; nelr * NVAR];
    let mut fluxes = vec![0f32; nelr * NVAR];
    let mut step_factors = vec![0f32; nelr];

    #[acc::data(
        copyout(variables[0..nelr * NVAR]),
        copyin(ff_variable[0..NVAR], areas[0..nelr]),
        copyin(elements_surrounding_elements[0..nelr * NNB], normals[0..NDIM * NNB * nelr]),
        create(fluxes[0..nelr * NVAR]),
        create(old_variables[0..nelr * NVAR], step_factors[0..nelr])
    )]
    {
        // Create arrays and set initial conditions (initialize_variables).
        #[acc::kernels_loop(gang, worker, independent)]
        for i in 0..nelr {
            #[acc::r#loop(seq)]
            for j in 0..NVAR {
                variables[i + j * nelr] = ff_variable[j];
            }
        }

        // Begin iterations.
        for _i in 0..iterations {
            // copy(old_variables, variables, nelr*NVAR)
            #[acc::kernels_loop(gang, worker, independent)]
            for i_c in 0..nelr * NVAR {
                old_variables[i_c] = variables[i_c];
            }

            // for the first iteration we compute the time step (compute_step_factor)
            #[acc::kernels_loop(gang, worker, independent)]
            for i_csf in 0..nelr {
                let density = variables[i_csf + VAR_DENSITY * nelr];

                let momentum_x = variables[i_csf + VAR_MOMENTUM * nelr];
                let momentum_y = variables[i_csf + (VAR_MOMENTUM + 1) * nelr];
                let momentum_z = variables[i_csf + (VAR_MOMENTUM + 2) * nelr];

                let density_energy = variables[i_csf + VAR_DENSITY_ENERGY * nelr];
                // compute_velocity
                let velocity_x = momentum_x / density;
                let velocity_y = momentum_y / density;
                let velocity_z = momentum_z / density;

                // compute_speed_sqd
                let speed_sqd =
                    velocity_x * velocity_x + velocity_y * velocity_y + velocity_z * velocity_z;
                // compute_pressure
                let pressure = (GAMMA - 1.0) * (density_energy - 0.5 * density * speed_sqd);
                // compute_speed_of_sound
                let speed_of_sound = (GAMMA * pressure / density).sqrt();

                // dt = 0.5 * sqrt(areas[i]) / (||v|| + c).... but when we do time stepping,
                // this later would need to be divided by the area, so we just do it all at once
                step_factors[i_csf] =
                    0.5 / (areas[i_csf].sqrt() * (speed_sqd.sqrt() + speed_of_sound));
            }

            for j in 0..RK {
                // compute_flux
                #[acc::kernels_loop(gang, worker, independent)]
                for i_cf in 0..nelr {
                    let density_i = variables[i_cf + VAR_DENSITY * nelr];
                    let momentum_i_x = variables[i_cf + VAR_MOMENTUM * nelr];
                    let momentum_i_y = variables[i_cf + (VAR_MOMENTUM + 1) * nelr];
                    let momentum_i_z = variables[i_cf + (VAR_MOMENTUM + 2) * nelr];

                    let density_energy_i = variables[i_cf + VAR_DENSITY_ENERGY * nelr];

                    // compute_velocity
                    let velocity_i_x = momentum_i_x / density_i;
                    let velocity_i_y = momentum_i_y / density_i;
                    let velocity_i_z = momentum_i_z / density_i;
                    // compute_speed_sqd
                    let speed_sqd_i = velocity_i_x * velocity_i_x
                        + velocity_i_y * velocity_i_y
                        + velocity_i_z * velocity_i_z;
                    let speed_i = speed_sqd_i.sqrt();
                    // compute_pressure
                    let pressure_i =
                        (GAMMA - 1.0) * (density_energy_i - 0.5 * density_i * speed_sqd_i);
                    // compute_speed_of_sound
                    let speed_of_sound_i = (GAMMA * pressure_i / density_i).sqrt();
                    // compute_flux_contribution
                    let flux_contribution_i_momentum_x_x = velocity_i_x * momentum_i_x + pressure_i;
                    let flux_contribution_i_momentum_x_y = velocity_i_x * momentum_i_y;
                    let flux_contribution_i_momentum_x_z = velocity_i_x * momentum_i_z;

                    let flux_contribution_i_momentum_y_x = flux_contribution_i_momentum_x_y;
                    let flux_contribution_i_momentum_y_y = velocity_i_y * momentum_i_y + pressure_i;
                    let flux_contribution_i_momentum_y_z = velocity_i_y * momentum_i_z;

                    let flux_contribution_i_momentum_z_x = flux_contribution_i_momentum_x_z;
                    let flux_contribution_i_momentum_z_y = flux_contribution_i_momentum_y_z;
                    let flux_contribution_i_momentum_z_z = velocity_i_z * momentum_i_z + pressure_i;

                    let de_p = density_energy_i + pressure_i;
                    let flux_contribution_i_density_energy_x = velocity_i_x * de_p;
                    let flux_contribution_i_density_energy_y = velocity_i_y * de_p;
                    let flux_contribution_i_density_energy_z = velocity_i_z * de_p;

                    let mut flux_i_density = 0.0f32;
                    let mut flux_i_momentum_x = 0.0f32;
                    let mut flux_i_momentum_y = 0.0f32;
                    let mut flux_i_momentum_z = 0.0f32;
                    let mut flux_i_density_energy = 0.0f32;

                    for j_cf in 0..NNB {
                        let nb = elements_surrounding_elements[i_cf + j_cf * nelr];
                        let normal_x = normals[i_cf + j_cf * nelr];
                        let normal_y = normals[i_cf + (j_cf + NNB) * nelr];
                        let normal_z = normals[i_cf + (j_cf + 2 * NNB) * nelr];
                        let normal_len =
                            (normal_x * normal_x + normal_y * normal_y + normal_z * normal_z)
                                .sqrt();

                        if nb >= 0 {
                            // a legitimate neighbor
                            let nb = nb as usize;
                            let density_nb = variables[nb + VAR_DENSITY * nelr];
                            let momentum_nb_x = variables[nb + VAR_MOMENTUM * nelr];
                            let momentum_nb_y = variables[nb + (VAR_MOMENTUM + 1) * nelr];
                            let momentum_nb_z = variables[nb + (VAR_MOMENTUM + 2) * nelr];
                            let density_energy_nb = variables[nb + VAR_DENSITY_ENERGY * nelr];
                            // compute_velocity
                            let velocity_nb_x = momentum_nb_x / density_nb;
                            let velocity_nb_y = momentum_nb_y / density_nb;
                            let velocity_nb_z = momentum_nb_z / density_nb;
                            // compute_speed_sqd
                            let speed_sqd_nb = velocity_nb_x * velocity_nb_x
                                + velocity_nb_y * velocity_nb_y
                                + velocity_nb_z * velocity_nb_z;
                            // compute_pressure
                            let pressure_nb = (GAMMA - 1.0)
                                * (density_energy_nb - 0.5 * density_nb * speed_sqd_nb);
                            // compute_speed_of_sound
                            let speed_of_sound_nb = (GAMMA * pressure_nb / density_nb).sqrt();
                            // compute_flux_contribution
                            let flux_contribution_nb_momentum_x_x =
                                velocity_nb_x * momentum_nb_x + pressure_nb;
                            let flux_contribution_nb_momentum_x_y = velocity_nb_x * momentum_nb_y;
                            let flux_contribution_nb_momentum_x_z = velocity_nb_x * momentum_nb_z;

                            let flux_contribution_nb_momentum_y_x =
                                flux_contribution_nb_momentum_x_y;
                            let flux_contribution_nb_momentum_y_y =
                                velocity_nb_y * momentum_nb_y + pressure_nb;
                            let flux_contribution_nb_momentum_y_z = velocity_nb_y * momentum_nb_z;

                            let flux_contribution_nb_momentum_z_x =
                                flux_contribution_nb_momentum_x_z;
                            let flux_contribution_nb_momentum_z_y =
                                flux_contribution_nb_momentum_y_z;
                            let flux_contribution_nb_momentum_z_z =
                                velocity_nb_z * momentum_nb_z + pressure_nb;

                            let de_p = density_energy_nb + pressure_nb;
                            let flux_contribution_nb_density_energy_x = velocity_nb_x * de_p;
                            let flux_contribution_nb_density_energy_y = velocity_nb_y * de_p;
                            let flux_contribution_nb_density_energy_z = velocity_nb_z * de_p;

                            // artificial viscosity
                            let factor = -normal_len
                                * smoothing_coefficient
                                * 0.5
                                * (speed_i
                                    + speed_sqd_nb.sqrt()
                                    + speed_of_sound_i
                                    + speed_of_sound_nb);
                            flux_i_density += factor * (density_i - density_nb);
                            flux_i_density_energy +=
                                factor * (density_energy_i - density_energy_nb);
                            flux_i_momentum_x += factor * (momentum_i_x - momentum_nb_x);
                            flux_i_momentum_y += factor * (momentum_i_y - momentum_nb_y);
                            flux_i_momentum_z += factor * (momentum_i_z - momentum_nb_z);

                            // accumulate cell-centered fluxes
                            let factor = 0.5 * normal_x;
                            flux_i_density += factor * (momentum_nb_x + momentum_i_x);
                            flux_i_density_energy += factor
                                * (flux_contribution_nb_density_energy_x
                                    + flux_contribution_i_density_energy_x);
                            flux_i_momentum_x += factor
                                * (flux_contribution_nb_momentum_x_x
                                    + flux_contribution_i_momentum_x_x);
                            flux_i_momentum_y += factor
                                * (flux_contribution_nb_momentum_y_x
                                    + flux_contribution_i_momentum_y_x);
                            flux_i_momentum_z += factor
                                * (flux_contribution_nb_momentum_z_x
                                    + flux_contribution_i_momentum_z_x);

                            let factor = 0.5 * normal_y;
                            flux_i_density += factor * (momentum_nb_y + momentum_i_y);
                            flux_i_density_energy += factor
                                * (flux_contribution_nb_density_energy_y
                                    + flux_contribution_i_density_energy_y);
                            flux_i_momentum_x += factor
                                * (flux_contribution_nb_momentum_x_y
                                    + flux_contribution_i_momentum_x_y);
                            flux_i_momentum_y += factor
                                * (flux_contribution_nb_momentum_y_y
                                    + flux_contribution_i_momentum_y_y);
                            flux_i_momentum_z += factor
                                * (flux_contribution_nb_momentum_z_y
                                    + flux_contribution_i_momentum_z_y);

                            let factor = 0.5 * normal_z;
                            flux_i_density += factor * (momentum_nb_z + momentum_i_z);
                            flux_i_density_energy += factor
                                * (flux_contribution_nb_density_energy_z
                                    + flux_contribution_i_density_energy_z);
                            flux_i_momentum_x += factor
                                * (flux_contribution_nb_momentum_x_z
                                    + flux_contribution_i_momentum_x_z);
                            flux_i_momentum_y += factor
                                * (flux_contribution_nb_momentum_y_z
                                    + flux_contribution_i_momentum_y_z);
                            flux_i_momentum_z += factor
                                * (flux_contribution_nb_momentum_z_z
                                    + flux_contribution_i_momentum_z_z);
                        } else if nb == -1 {
                            // a wing boundary
                            flux_i_momentum_x += normal_x * pressure_i;
                            flux_i_momentum_y += normal_y * pressure_i;
                            flux_i_momentum_z += normal_z * pressure_i;
                        } else if nb == -2 {
                            // a far field boundary
                            let factor = 0.5 * normal_x;
                            flux_i_density += factor * (ff_variable[VAR_MOMENTUM] + momentum_i_x);
                            flux_i_density_energy += factor
                                * (ff_flux_contribution_density_energy_x
                                    + flux_contribution_i_density_energy_x);
                            flux_i_momentum_x += factor
                                * (ff_flux_contribution_momentum_x_x
                                    + flux_contribution_i_momentum_x_x);
                            flux_i_momentum_y += factor
                                * (ff_flux_contribution_momentum_y_x
                                    + flux_contribution_i_momentum_y_x);
                            flux_i_momentum_z += factor
                                * (ff_flux_contribution_momentum_z_x
                                    + flux_contribution_i_momentum_z_x);

                            let factor = 0.5 * normal_y;
                            flux_i_density +=
                                factor * (ff_variable[VAR_MOMENTUM + 1] + momentum_i_y);
                            flux_i_density_energy += factor
                                * (ff_flux_contribution_density_energy_y
                                    + flux_contribution_i_density_energy_y);
                            flux_i_momentum_x += factor
                                * (ff_flux_contribution_momentum_x_y
                                    + flux_contribution_i_momentum_x_y);
                            flux_i_momentum_y += factor
                                * (ff_flux_contribution_momentum_y_y
                                    + flux_contribution_i_momentum_y_y);
                            flux_i_momentum_z += factor
                                * (ff_flux_contribution_momentum_z_y
                                    + flux_contribution_i_momentum_z_y);

                            let factor = 0.5 * normal_z;
                            flux_i_density +=
                                factor * (ff_variable[VAR_MOMENTUM + 2] + momentum_i_z);
                            flux_i_density_energy += factor
                                * (ff_flux_contribution_density_energy_z
                                    + flux_contribution_i_density_energy_z);
                            flux_i_momentum_x += factor
                                * (ff_flux_contribution_momentum_x_z
                                    + flux_contribution_i_momentum_x_z);
                            flux_i_momentum_y += factor
                                * (ff_flux_contribution_momentum_y_z
                                    + flux_contribution_i_momentum_y_z);
                            flux_i_momentum_z += factor
                                * (ff_flux_contribution_momentum_z_z
                                    + flux_contribution_i_momentum_z_z);
                        }
                    }

                    fluxes[i_cf + VAR_DENSITY * nelr] = flux_i_density;
                    fluxes[i_cf + VAR_MOMENTUM * nelr] = flux_i_momentum_x;
                    fluxes[i_cf + (VAR_MOMENTUM + 1) * nelr] = flux_i_momentum_y;
                    fluxes[i_cf + (VAR_MOMENTUM + 2) * nelr] = flux_i_momentum_z;
                    fluxes[i_cf + VAR_DENSITY_ENERGY * nelr] = flux_i_density_energy;
                }

                // time_step
                #[acc::kernels_loop(gang, worker, independent)]
                for i_ts in 0..nelr {
                    let factor = step_factors[i_ts] / (RK + 1 - j) as f32;

                    variables[i_ts + VAR_DENSITY * nelr] = old_variables[i_ts + VAR_DENSITY * nelr]
                        + factor * fluxes[i_ts + VAR_DENSITY * nelr];
                    variables[i_ts + VAR_DENSITY_ENERGY * nelr] = old_variables
                        [i_ts + VAR_DENSITY_ENERGY * nelr]
                        + factor * fluxes[i_ts + VAR_DENSITY_ENERGY * nelr];
                    variables[i_ts + VAR_MOMENTUM * nelr] = old_variables
                        [i_ts + VAR_MOMENTUM * nelr]
                        + factor * fluxes[i_ts + VAR_MOMENTUM * nelr];
                    variables[i_ts + (VAR_MOMENTUM + 1) * nelr] = old_variables
                        [i_ts + (VAR_MOMENTUM + 1) * nelr]
                        + factor * fluxes[i_ts + (VAR_MOMENTUM + 1) * nelr];
                    variables[i_ts + (VAR_MOMENTUM + 2) * nelr] = old_variables
                        [i_ts + (VAR_MOMENTUM + 2) * nelr]
                        + factor * fluxes[i_ts + (VAR_MOMENTUM + 2) * nelr];
                }
            }
        }
    }
}

/// One element's state, for the plain loops.
#[derive(Clone, Copy)]
struct State {
    density: f32,
    momentum: [f32; 3],
    density_energy: f32,
}

/// What the plain loops derive from a state: velocity, squared speed, pressure, speed of
/// sound, and the flux contributions (momentum x, y, z rows, then density-energy), with the
/// original's helper functions' operations.
struct Derived {
    speed_sqd: f32,
    pressure: f32,
    speed_of_sound: f32,
    fc: [[f32; 3]; 4],
}

fn derive(s: State) -> Derived {
    let v = s.momentum.map(|m| m / s.density);
    let speed_sqd = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    let pressure = (GAMMA - 1.0) * (s.density_energy - 0.5 * s.density * speed_sqd);
    let speed_of_sound = (GAMMA * pressure / s.density).sqrt();
    let m = s.momentum;
    let x = [v[0] * m[0] + pressure, v[0] * m[1], v[0] * m[2]];
    let y = [x[1], v[1] * m[1] + pressure, v[1] * m[2]];
    let z = [x[2], y[2], v[2] * m[2] + pressure];
    let de_p = s.density_energy + pressure;
    Derived {
        speed_sqd,
        pressure,
        speed_of_sound,
        fc: [x, y, z, v.map(|vk| vk * de_p)],
    }
}

/// The same iterations in plain loops (the same `f32` operations in the same order), the state
/// at the end.
fn plain(mesh: &Mesh, ff: &FarField, iterations: usize) -> Vec<f32> {
    let n = mesh.nel;
    let state = |v: &[f32], i: usize| State {
        density: v[i + VAR_DENSITY * n],
        momentum: [
            v[i + VAR_MOMENTUM * n],
            v[i + (VAR_MOMENTUM + 1) * n],
            v[i + (VAR_MOMENTUM + 2) * n],
        ],
        density_energy: v[i + VAR_DENSITY_ENERGY * n],
    };
    let ff_fc = [
        ff.momentum_x,
        ff.momentum_y,
        ff.momentum_z,
        ff.density_energy,
    ];
    let mut variables = vec![0f32; n * NVAR];
    for j in 0..NVAR {
        variables[j * n..(j + 1) * n].fill(ff.variable[j]);
    }
    let mut step_factors = vec![0f32; n];
    let mut fluxes = vec![0f32; n * NVAR];
    for _ in 0..iterations {
        let old = variables.clone();
        for (i, sf) in step_factors.iter_mut().enumerate() {
            let d = derive(state(&variables, i));
            *sf = 0.5 / (mesh.areas[i].sqrt() * (d.speed_sqd.sqrt() + d.speed_of_sound));
        }
        for stage in 0..RK {
            for i in 0..n {
                let si = state(&variables, i);
                let di = derive(si);
                let speed_i = di.speed_sqd.sqrt();
                // density, momentum x, y, z, density-energy
                let mut f = [0f32; NVAR];
                for j in 0..NNB {
                    let nb = mesh.elements_surrounding_elements[i + j * n];
                    let normal: [f32; 3] =
                        std::array::from_fn(|k| mesh.normals[i + (j + k * NNB) * n]);
                    let normal_len =
                        (normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2])
                            .sqrt();
                    if nb >= 0 {
                        let snb = state(&variables, nb as usize);
                        let dnb = derive(snb);
                        let factor = -normal_len
                            * 0.2
                            * 0.5
                            * (speed_i
                                + dnb.speed_sqd.sqrt()
                                + di.speed_of_sound
                                + dnb.speed_of_sound);
                        f[VAR_DENSITY] += factor * (si.density - snb.density);
                        f[VAR_DENSITY_ENERGY] += factor * (si.density_energy - snb.density_energy);
                        for k in 0..3 {
                            f[VAR_MOMENTUM + k] += factor * (si.momentum[k] - snb.momentum[k]);
                        }
                        for (a, &na) in normal.iter().enumerate() {
                            let factor = 0.5 * na;
                            f[VAR_DENSITY] += factor * (snb.momentum[a] + si.momentum[a]);
                            f[VAR_DENSITY_ENERGY] += factor * (dnb.fc[3][a] + di.fc[3][a]);
                            for k in 0..3 {
                                f[VAR_MOMENTUM + k] += factor * (dnb.fc[k][a] + di.fc[k][a]);
                            }
                        }
                    } else if nb == -1 {
                        for k in 0..3 {
                            f[VAR_MOMENTUM + k] += normal[k] * di.pressure;
                        }
                    } else if nb == -2 {
                        for (a, &na) in normal.iter().enumerate() {
                            let factor = 0.5 * na;
                            f[VAR_DENSITY] +=
                                factor * (ff.variable[VAR_MOMENTUM + a] + si.momentum[a]);
                            f[VAR_DENSITY_ENERGY] += factor * (ff_fc[3][a] + di.fc[3][a]);
                            for k in 0..3 {
                                f[VAR_MOMENTUM + k] += factor * (ff_fc[k][a] + di.fc[k][a]);
                            }
                        }
                    }
                }
                for (v, fv) in f.iter().enumerate() {
                    fluxes[i + v * n] = *fv;
                }
            }
            for i in 0..n {
                let factor = step_factors[i] / (RK + 1 - stage) as f32;
                for v in 0..NVAR {
                    variables[i + v * n] = old[i + v * n] + factor * fluxes[i + v * n];
                }
            }
        }
    }
    variables
}

/// The mesh the original reads from its file: `nel` elements (`nelr` = `nel`), each with its
/// area, its `NNB` neighbours (`[NNB][nelr]`: an element number, `-1` a wall, `-2` the far
/// field) and the normals of its faces (`[NDIM][NNB][nelr]`), pointing into the element and as
/// long as the face.
pub struct Mesh {
    pub nel: usize,
    pub areas: Vec<f32>,
    pub elements_surrounding_elements: Vec<i32>,
    pub normals: Vec<f32>,
}

/// The bump's thickness, a fraction of its chord.
const BUMP: f64 = 0.04;

/// The mesh of `nx` x `ny` cells (see the module's notes), made alike by the CUDA reference.
pub fn mesh(nx: usize, ny: usize) -> Mesh {
    let nel = nx * ny;
    let nelr = nel;
    let h = 1.0 / ny as f64;
    let length = nx as f64 * h;
    let (x0, chord) = (length / 3.0, length / 3.0);
    let thickness = BUMP * chord;
    // A grid vertex: interior ones jittered by up to 0.15 of a cell each way, then the
    // column lifted over the bump (the wall's height at x) and squeezed to keep the top at 1.
    let vertex = |a: usize, b: usize| -> (f64, f64) {
        let v = (b * (nx + 1) + a) as u64;
        let (jx, jy) = if a > 0 && a < nx && b > 0 && b < ny {
            (0.3 * (unit(1, v) - 0.5), 0.3 * (unit(2, v) - 0.5))
        } else {
            (0.0, 0.0)
        };
        let x = (a as f64 + jx) * h;
        let s = (x - x0) / chord;
        let wall = if s > 0.0 && s < 1.0 {
            16.0 * thickness * s * s * (1.0 - s) * (1.0 - s)
        } else {
            0.0
        };
        (x, wall + (b as f64 + jy) * h * (1.0 - wall))
    };
    let mut areas = vec![0f32; nelr];
    let mut esse = vec![0i32; nelr * NNB];
    let mut normals = vec![0f32; NDIM * NNB * nelr];
    for b in 0..ny {
        for a in 0..nx {
            let i = b * nx + a;
            // Corners counter-clockwise; face j joins corner j to corner j + 1.
            let p = [
                vertex(a, b),
                vertex(a + 1, b),
                vertex(a + 1, b + 1),
                vertex(a, b + 1),
            ];
            areas[i] = (0.5
                * ((p[0].0 * p[1].1 - p[1].0 * p[0].1)
                    + (p[1].0 * p[2].1 - p[2].0 * p[1].1)
                    + (p[2].0 * p[3].1 - p[3].0 * p[2].1)
                    + (p[3].0 * p[0].1 - p[0].0 * p[3].1))) as f32;
            // Across faces 0 to 3: below (the wall under the first row), right, above, left
            // (the far field beyond the other edges).
            let across = [
                if b == 0 { -1 } else { (i - nx) as i32 },
                if a == nx - 1 { -2 } else { (i + 1) as i32 },
                if b == ny - 1 { -2 } else { (i + nx) as i32 },
                if a == 0 { -2 } else { (i - 1) as i32 },
            ];
            for j in 0..NNB {
                esse[i + j * nelr] = across[j];
                let (q, r) = (p[j], p[(j + 1) % 4]);
                let (dx, dy) = (r.0 - q.0, r.1 - q.1);
                // The inward normal (-dy, dx) in the plane spanned by (1, 0, 0) and
                // (0, 0.6, 0.8).
                normals[i + j * nelr] = (-dy) as f32;
                normals[i + (j + NNB) * nelr] = (0.6 * dx) as f32;
                normals[i + (j + 2 * NNB) * nelr] = (0.8 * dx) as f32;
            }
        }
    }
    Mesh {
        nel,
        areas,
        elements_surrounding_elements: esse,
        normals,
    }
}

/// The mesh and iterations of each size: 64 x 48 cells (3,072 elements) and 20 iterations
/// (CI); 392 x 248 cells (97,216 elements, the size of Rodinia's `fvcorr.domn.097K`) and the
/// original's 2000 iterations (the plain loops take about 50 s on one core, the multicore
/// device a few seconds on 16).
fn size(large: bool) -> (usize, usize, usize) {
    if large {
        (392, 248, 2000)
    } else {
        (64, 48, 20)
    }
}

/// Runs cfd on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    let (nx, ny, iterations) = size(large);
    run(nx, ny, iterations)
}

/// The CUDA reference's arguments for the same size: `nx ny iterations`.
pub fn cuda_args(large: bool) -> Vec<String> {
    let (nx, ny, iterations) = size(large);
    vec![nx.to_string(), ny.to_string(), iterations.to_string()]
}

/// `iterations` iterations on the mesh of `nx` x `ny` cells on the current device, timed and
/// verified.
pub fn run(nx: usize, ny: usize, iterations: usize) -> Result<Outcome, String> {
    if nx < 3 || ny < 1 {
        return Err(format!(
            "cfd: a mesh of {nx} x {ny} cells has no room for the bump; ask for at least 3 x 1"
        ));
    }
    let m = mesh(nx, ny);
    let ff = far_field();
    let mut variables = vec![0f32; m.nel * NVAR];
    let t = Instant::now();
    euler3d(
        m.nel,
        &m.areas,
        &m.elements_surrounding_elements,
        &m.normals,
        &ff,
        &mut variables,
        iterations,
    );
    let time = t.elapsed();
    let want = crate::plain_result("cfd", (nx, ny, iterations), || plain(&m, &ff, iterations));
    let got: Vec<f64> = variables.iter().map(|&v| v as f64).collect();
    let want: Vec<f64> = want.iter().map(|&v| v as f64).collect();
    let worst = compare_fields(&got, &want, m.nel)?;
    Ok(Outcome {
        time,
        checksum: got.iter().sum(),
        verified: format!(
            "against plain loops, worst difference {worst:.1e} of each variable's largest magnitude, {:.1} ms",
            time.as_secs_f64() * 1e3
        ),
    })
}

/// Compares each variable's field (density, momentum x, y, z, density-energy) with the plain
/// loops', each difference taken relative to the field's largest magnitude (the momentum's y
/// and z components are near zero wherever the flow is undisturbed, so a difference relative to
/// each element's own value would say nothing there): the worst such difference, or an error naming the first
/// element that differs by more than `TOLERANCE`.
fn compare_fields(got: &[f64], want: &[f64], nelr: usize) -> Result<f64, String> {
    const NAMES: [&str; NVAR] = [
        "density",
        "momentum x",
        "momentum y",
        "momentum z",
        "density-energy",
    ];
    if got.len() != want.len() {
        return Err(format!(
            "cfd: {} values, the plain loops give {}",
            got.len(),
            want.len()
        ));
    }
    let mut worst = 0.0f64;
    for (v, name) in NAMES.iter().enumerate() {
        let (g, w) = (
            &got[v * nelr..(v + 1) * nelr],
            &want[v * nelr..(v + 1) * nelr],
        );
        let scale = w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if !(scale.is_finite() && scale > 0.0) {
            return Err(format!(
                "cfd {name}: the plain loops' largest magnitude is {scale} (the flow blew up)"
            ));
        }
        for (i, (gi, wi)) in g.iter().zip(w).enumerate() {
            let d = (gi - wi).abs() / scale;
            if !(d <= TOLERANCE) {
                return Err(format!(
                    "cfd {name}[{i}] = {gi}, the plain loops give {wi} (difference {d:e} of the field's largest magnitude {scale:e}, more than {TOLERANCE:e})"
                ));
            }
            worst = worst.max(d);
        }
    }
    Ok(worst)
}

/// Every device computes each element with the plain loops' `f32` operations in the same
/// order (acc gives Rust's bits for `+ - * /` and `sqrt` on every device and contracts
/// nothing, and the port has no reduction): host, multicore and lavapipe give the plain loops'
/// bits (worst difference 0 at the small size). The tolerance admits only differences in the
/// last bits, should a device round otherwise; the flow settles to a steady state, which damps
/// such differences rather than amplifying them.
const TOLERANCE: f64 = 1e-5;
