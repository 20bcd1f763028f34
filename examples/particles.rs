//! Particles in a box under gravity, as arrays of `#[derive(acc::DeviceCopy)]` structs: each
//! step takes a particle's value (`let mut p = ps[i]`), moves it, bounces it off the walls
//! through an `#[acc::routine]` returning a tuple, and stores it back (`ps[i] = p`); every few steps a
//! reduction sums the kinetic energy. One data region holds the particles over all steps.
//! Every device computes each particle with the same correctly rounded f32 operations, so
//! positions must match plain loops bit for bit; the energy sum is compared within rounding.
//!
//! `cargo run --release --example particles [particles] [steps]` (default 1,000,000, 200).

use std::time::Instant;

#[derive(Clone, Copy, Debug, acc::DeviceCopy)]
#[repr(C)]
struct Particle {
    x: f32,
    y: f32,
    vx: f32,
    vy: f32,
    mass: f32,
}

/// A coordinate and its velocity bounced off walls at 0 and `wall`, losing `loss` of the
/// speed (a routine returning a tuple).
#[acc::routine(seq)]
fn bounce(pos: f32, vel: f32, wall: f32, loss: f32) -> (f32, f32) {
    if pos < 0.0 {
        (-pos, -vel * loss)
    } else if pos > wall {
        (2.0 * wall - pos, -vel * loss)
    } else {
        (pos, vel)
    }
}

#[acc::offload]
fn advance(ps: &mut [Particle], dt: f32, g: f32, wall: f32) {
    #[acc::parallel_loop(present(ps))]
    for i in 0..ps.len() {
        let mut p = ps[i];
        p.vy -= g * dt;
        p.x += p.vx * dt;
        p.y += p.vy * dt;
        let (x, vx) = bounce(p.x, p.vx, wall, 0.9);
        let (y, vy) = bounce(p.y, p.vy, wall, 0.9);
        p.x = x;
        p.vx = vx;
        p.y = y;
        p.vy = vy;
        ps[i] = p;
    }
}

#[acc::offload]
fn kinetic(ps: &[Particle]) -> f64 {
    let mut e = 0.0;
    #[acc::parallel_loop(present(ps), reduction(+: e))]
    for i in 0..ps.len() {
        let p = ps[i];
        e += 0.5 * (p.mass * (p.vx * p.vx + p.vy * p.vy)) as f64;
    }
    e
}

#[acc::offload]
fn simulate(ps: &mut Vec<Particle>, steps: usize, every: usize) -> Vec<f64> {
    let mut energies = Vec::new();
    #[acc::data(copy(ps))]
    {
        for s in 0..steps {
            advance(ps, 1e-3, 9.81, 10.0);
            if (s + 1) % every == 0 {
                energies.push(kinetic(ps));
            }
        }
    }
    energies
}

fn particles(n: usize) -> Vec<Particle> {
    let mut s = 0xA076_1D64_78BD_642Fu64;
    let mut r = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| Particle {
            x: r() * 10.0,
            y: r() * 10.0,
            vx: (r() - 0.5) * 4.0,
            vy: (r() - 0.5) * 4.0,
            mass: 0.5 + r(),
        })
        .collect()
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let n = args.next().and_then(Result::ok).unwrap_or(1_000_000).max(1);
    let steps = args.next().and_then(Result::ok).unwrap_or(200).max(1);
    let every = (steps / 4).max(1);
    let device = acc::get_device_type();
    simulate(&mut particles(16), 1, 1); // compiles the kernels outside the timing
    let mut ps = particles(n);
    let t = Instant::now();
    let energies = simulate(&mut ps, steps, every);
    let elapsed = t.elapsed().as_secs_f64();

    // Plain loops.
    let mut want = particles(n);
    let mut want_e = Vec::new();
    let plain_bounce = |pos: f32, vel: f32| {
        if pos < 0.0 {
            (-pos, -vel * 0.9)
        } else if pos > 10.0 {
            (2.0 * 10.0 - pos, -vel * 0.9)
        } else {
            (pos, vel)
        }
    };
    for s in 0..steps {
        for p in want.iter_mut() {
            p.vy -= 9.81 * 1e-3;
            p.x += p.vx * 1e-3;
            p.y += p.vy * 1e-3;
            (p.x, p.vx) = plain_bounce(p.x, p.vx);
            (p.y, p.vy) = plain_bounce(p.y, p.vy);
        }
        if (s + 1) % every == 0 {
            want_e.push(
                want.iter()
                    .map(|p| 0.5 * (p.mass * (p.vx * p.vx + p.vy * p.vy)) as f64)
                    .sum::<f64>(),
            );
        }
    }
    for (i, (a, b)) in ps.iter().zip(&want).enumerate() {
        let bits = |p: &Particle| [p.x, p.y, p.vx, p.vy].map(f32::to_bits);
        assert_eq!(bits(a), bits(b), "particle {i}: {a:?} against {b:?}");
    }
    assert_eq!(energies.len(), want_e.len());
    for (e, w) in energies.iter().zip(&want_e) {
        // Summed in another order by every parallel device.
        assert!(
            (e - w).abs() <= 1e-9 * w.abs(),
            "kinetic energy {e} against {w}"
        );
    }
    println!(
        "particles: {n} particles, {steps} steps, device = {device} ({}), time = {elapsed:.3} s ({:.0} M particle steps/s), kinetic energy {:.6e} -> {:.6e}, same bits as plain loops",
        acc::get_property(0, device, acc::Property::Name),
        n as f64 * steps as f64 / elapsed / 1e6,
        energies[0],
        energies[energies.len() - 1]
    );
}
