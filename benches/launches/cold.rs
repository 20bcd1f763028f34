//! The first run of a program on a machine whose kernel cache is empty (issue 16): the
//! twelve-region time step of `programs::transport_steps`, run by a child process of this
//! benchmark with an empty `ACC_CACHE_DIR` and the driver's own JIT cache off
//! (`CUDA_CACHE_DISABLE=1`), as on a fresh machine or in a new container. The child times its first step (which compiles
//! the twelve kernels) and then a second one (everything compiled); the difference is what
//! compiling cost the program. Configurations: each kernel compiled by the driver at its
//! launch (`ACC_CUDA_DEFER_COMPILE=0 ACC_PTXAS=off`, acc before issue 16's cold-start work),
//! compiled on threads while the host goes on but by the driver only (`ACC_PTXAS=off`), and
//! the default (threads, with `ptxas` processes where a CUDA toolkit is installed).

use std::time::Instant;

use super::programs::transport_steps;

const NX: usize = 100;
const NZ: usize = 50;
const CHILD: &str = "ACC_BENCH_COLD_CHILD";

fn start() -> Vec<f64> {
    (0..3 * NX * NZ).map(|i| ((i * 7) % 11) as f64).collect()
}

/// In the child (`ACC_BENCH_COLD_CHILD` set): runs the two steps and prints their times and
/// the result; returns whether this process is the child.
pub fn child() -> bool {
    if std::env::var_os(CHILD).is_none() {
        return false;
    }
    acc::init(acc::DeviceType::Nvidia).expect("an nvidia device");
    acc::set_device_type(acc::DeviceType::Nvidia);
    let mut q = start();
    let t = Instant::now();
    let first = transport_steps(&mut q, NX, NZ, 1);
    let cold = t.elapsed();
    let t = Instant::now();
    let second = transport_steps(&mut q, NX, NZ, 1);
    let warm = t.elapsed();
    println!(
        "cold-child {} {} {first:e} {second:e}",
        cold.as_secs_f64(),
        warm.as_secs_f64()
    );
    true
}

/// Runs the child `reps` times per configuration, each with an empty cache directory, and
/// prints the medians.
pub fn run(reps: usize) {
    let exe = std::env::current_exe().expect("the benchmark's path");
    // The host's answer for the two steps, which every run must give.
    acc::set_device_type(acc::DeviceType::Host);
    let mut q = start();
    let want = (
        transport_steps(&mut q, NX, NZ, 1),
        transport_steps(&mut q, NX, NZ, 1),
    );
    acc::set_device_type(acc::DeviceType::Nvidia);
    let configs: [(&str, &[(&str, &str)]); 3] = [
        (
            "each kernel compiled by the driver at its launch",
            &[("ACC_CUDA_DEFER_COMPILE", "0"), ("ACC_PTXAS", "off")],
        ),
        (
            "compiled on threads, by the driver",
            &[("ACC_PTXAS", "off")],
        ),
        ("compiled on threads, ptxas where present (default)", &[]),
    ];
    let mut baseline = None;
    for (what, vars) in configs {
        let (mut colds, mut extras) = (Vec::new(), Vec::new());
        for rep in 0..reps {
            let dir = std::env::temp_dir().join(format!("acc-cold-{}-{rep}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let out = std::process::Command::new(&exe)
                .env(CHILD, "1")
                .env("ACC_CACHE_DIR", &dir)
                // Nor the driver's own cache of what it compiled: a fresh machine.
                .env("CUDA_CACHE_DISABLE", "1")
                .envs(vars.iter().copied())
                .output()
                .expect("the child runs");
            let _ = std::fs::remove_dir_all(&dir);
            let text = String::from_utf8_lossy(&out.stdout);
            let line = text
                .lines()
                .find(|l| l.starts_with("cold-child "))
                .unwrap_or_else(|| {
                    panic!(
                        "the cold-start child failed ({what}):\n{text}\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    )
                });
            let f: Vec<f64> = line
                .split_whitespace()
                .skip(1)
                .map(|x| x.parse().expect("a number"))
                .collect();
            for (got, want) in [(f[2], want.0), (f[3], want.1)] {
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs(),
                    "the cold-start program's sum {got} against the host's {want} ({what})"
                );
            }
            colds.push(f[0]);
            extras.push(f[0] - f[1]);
        }
        colds.sort_by(f64::total_cmp);
        extras.sort_by(f64::total_cmp);
        let (cold, extra) = (colds[reps / 2], extras[reps / 2]);
        let ratio = baseline.map_or(String::new(), |b: f64| format!("  ratio {:.2}x", b / extra));
        baseline.get_or_insert(extra);
        println!(
            "cold start, 12 kernels  first step {:>7.1} ms, {:>7.1} ms above a warm step{ratio}  ({what})",
            cold * 1e3,
            extra * 1e3
        );
    }
}
