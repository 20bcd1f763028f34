//! N-body gravity, all pairs, leapfrog steps: for each body a sequential loop over every other
//! body (the GPU devices tile that loop and stage the bodies through shared memory; `ACC_INFO`
//! says so), then an update of velocities and positions, inside one data region over the
//! time steps. Every device computes each body's sum in the same order with correctly rounded
//! f32 operations (`sqrt` and `/` included), so the result must match plain loops bit for bit.
//!
//! `cargo run --release --example nbody [bodies] [steps]` (default 16384 bodies, 10 steps).

use std::time::Instant;

/// One step: accelerations from all pairs (softened), then velocities and positions.
#[acc::offload]
#[allow(clippy::too_many_arguments)]
fn step(
    x: &mut [f32],
    y: &mut [f32],
    z: &mut [f32],
    vx: &mut [f32],
    vy: &mut [f32],
    vz: &mut [f32],
    m: &[f32],
    dt: f32,
) {
    let n = x.len();
    #[acc::parallel_loop(present(x, y, z, vx, vy, vz, m))]
    for i in 0..n {
        let (xi, yi, zi) = (x[i], y[i], z[i]);
        let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
        for j in 0..n {
            let (dx, dy, dz) = (x[j] - xi, y[j] - yi, z[j] - zi);
            let d2 = dx * dx + dy * dy + dz * dz + 1e-4;
            let inv = 1.0 / (d2 * d2.sqrt());
            let s = m[j] * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        vx[i] += ax * dt;
        vy[i] += ay * dt;
        vz[i] += az * dt;
    }
    #[acc::parallel_loop(present(x, y, z, vx, vy, vz))]
    for i in 0..n {
        x[i] += vx[i] * dt;
        y[i] += vy[i] * dt;
        z[i] += vz[i] * dt;
    }
}

/// The bodies: positions, velocities, masses.
struct Bodies {
    p: [Vec<f32>; 3],
    v: [Vec<f32>; 3],
    m: Vec<f32>,
}

#[acc::offload]
fn run(b: &mut Bodies, steps: usize, dt: f32) {
    let [x, y, z] = &mut b.p;
    let [vx, vy, vz] = &mut b.v;
    let m = &b.m;
    #[acc::data(copy(x, y, z, vx, vy, vz), copyin(m))]
    {
        for _ in 0..steps {
            step(x, y, z, vx, vy, vz, m, dt);
        }
    }
}

fn bodies(n: usize) -> Bodies {
    let mut s = 0x853C_49E6_748F_EA9Bu64;
    let mut r = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let mut p: [Vec<f32>; 3] = Default::default();
    let mut v: [Vec<f32>; 3] = Default::default();
    for _ in 0..n {
        for c in 0..3 {
            p[c].push(r() * 10.0);
            v[c].push(r() * 0.1);
        }
    }
    let m = (0..n).map(|i| 1.0 + (i % 5) as f32 * 0.25).collect();
    Bodies { p, v, m }
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let n = args.next().and_then(Result::ok).unwrap_or(16384).max(2);
    let steps = args.next().and_then(Result::ok).unwrap_or(10);
    let dt = 1e-3f32;
    let device = acc::get_device_type();
    run(&mut bodies(64), 1, dt); // compiles the kernels outside the timing
    let mut b = bodies(n);
    let t = Instant::now();
    run(&mut b, steps, dt);
    let elapsed = t.elapsed().as_secs_f64();

    // Plain loops, the same operations in the same order.
    let mut w = bodies(n);
    for _ in 0..steps {
        let mut acc = vec![[0.0f32; 3]; n];
        for (i, a) in acc.iter_mut().enumerate() {
            let (xi, yi, zi) = (w.p[0][i], w.p[1][i], w.p[2][i]);
            for j in 0..n {
                let (dx, dy, dz) = (w.p[0][j] - xi, w.p[1][j] - yi, w.p[2][j] - zi);
                let d2 = dx * dx + dy * dy + dz * dz + 1e-4;
                let inv = 1.0 / (d2 * d2.sqrt());
                let s = w.m[j] * inv;
                a[0] += dx * s;
                a[1] += dy * s;
                a[2] += dz * s;
            }
        }
        for i in 0..n {
            for c in 0..3 {
                w.v[c][i] += acc[i][c] * dt;
            }
        }
        for i in 0..n {
            for c in 0..3 {
                w.p[c][i] += w.v[c][i] * dt;
            }
        }
    }
    for c in 0..3 {
        for i in 0..n {
            assert_eq!(
                (b.p[c][i].to_bits(), b.v[c][i].to_bits()),
                (w.p[c][i].to_bits(), w.v[c][i].to_bits()),
                "body {i}, coordinate {c}: ({}, {}) against ({}, {})",
                b.p[c][i],
                b.v[c][i],
                w.p[c][i],
                w.v[c][i]
            );
        }
    }
    let pairs = n as f64 * n as f64 * steps as f64;
    println!(
        "nbody: {n} bodies, {steps} steps, device = {device} ({}), time = {elapsed:.3} s ({:.1} G pair interactions/s), x[0] = {:.6}, same bits as plain loops",
        acc::get_property(0, device, acc::Property::Name),
        pairs / elapsed / 1e9,
        b.p[0][0]
    );
}
