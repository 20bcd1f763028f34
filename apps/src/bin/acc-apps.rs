//! The application suite as a benchmark: each program on the devices asked for, first run
//! (kernels compiled, unless the module cache has them) and a warm run, beside its CUDA
//! reference (`apps/cuda/<program>.cu`, compiled with `nvcc -O3` for the GPU found) and the
//! multicore device. Prints one line per program and device, then a table of ratios.
//!
//! ```text
//! acc-apps [--small] [--only hotspot,nw] [--devices nvidia,multicore,wgpu] [--reps N]
//! ```
//! `ACC_NVCC` names nvcc (else `nvcc` on the PATH or in /usr/local/cuda/bin); without one the
//! CUDA column is left out and says why. Set `ACC_TIME=1` for acc's own breakdown of where
//! each run's time goes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use acc::DeviceType;
use acc_apps::{programs, Program};

struct Args {
    large: bool,
    only: Option<Vec<String>>,
    devices: Vec<DeviceType>,
    reps: usize,
    spellings: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        large: true,
        only: None,
        devices: vec![DeviceType::Nvidia, DeviceType::Multicore],
        reps: 2,
        spellings: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--small" => a.large = false,
            "--spellings" => a.spellings = true,
            "--only" => {
                a.only = Some(
                    it.next()
                        .ok_or("--only needs a list")?
                        .split(',')
                        .map(str::to_string)
                        .collect(),
                )
            }
            "--devices" => {
                a.devices = it
                    .next()
                    .ok_or("--devices needs a list")?
                    .split(',')
                    .map(|d| d.parse::<DeviceType>().map_err(|e| e.to_string()))
                    .collect::<Result<_, _>>()?
            }
            "--reps" => {
                a.reps = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--reps needs a number")?
            }
            "--help" | "-h" => {
                println!(
                    "acc-apps [--small] [--only a,b] [--devices nvidia,multicore,wgpu] [--reps N]"
                );
                for p in programs() {
                    println!("  {}: {}", p.name, p.origin);
                }
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (try --help)")),
        }
    }
    if let Some(only) = &a.only {
        for name in only {
            if !programs().iter().any(|p| p.name == name) {
                return Err(format!("no program `{name}` in the suite (try --help)"));
            }
        }
    }
    Ok(a)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Finds nvcc: `ACC_NVCC`, the PATH, or /usr/local/cuda/bin.
fn nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ACC_NVCC") {
        return Some(p.into());
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("nvcc"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/nvcc")).filter(|p| p.is_file()))
}

/// The GPU's compute capability, as nvcc's `-arch` wants it (`sm_90`).
fn arch() -> String {
    let out = Command::new("nvidia-smi")
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    match out.lines().next().map(|l| l.trim().replace('.', "")) {
        Some(cc) if !cc.is_empty() => format!("sm_{cc}"),
        _ => "sm_90".into(),
    }
}

/// Compiles and runs `p`'s CUDA reference: its time and checksum, or why there is none.
fn cuda_reference(p: &Program, large: bool) -> Result<(f64, f64), String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cuda")
        .join(format!("{}.cu", p.name));
    let src = if src.is_file() {
        src
    } else {
        // Beside the binary (the GPU machine runs a copy of the checkout).
        PathBuf::from("apps/cuda").join(format!("{}.cu", p.name))
    };
    if !src.is_file() {
        return Err(format!("no CUDA reference ({})", src.display()));
    }
    let nvcc = nvcc().ok_or("no nvcc")?;
    let exe = std::env::temp_dir().join(format!("acc-apps-{}-cuda", p.name));
    let out = Command::new(&nvcc)
        .args(["-O3", "-std=c++17", &format!("-arch={}", arch()), "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .map_err(|e| format!("{}: {e}", nvcc.display()))?;
    if !out.status.success() {
        return Err(format!(
            "nvcc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let out = Command::new(&exe)
        .args((p.cuda_args)(large))
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "the CUDA reference failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let field = |name: &str| -> Option<f64> {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
    };
    match (field("seconds"), field("checksum")) {
        (Some(s), Some(c)) => Ok((s, c)),
        _ => Err(format!(
            "the CUDA reference printed no `seconds=.. checksum=..`: {text}"
        )),
    }
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("acc-apps: {e}");
            std::process::exit(2);
        }
    };
    let mut failed = false;
    if a.spellings {
        spellings(&a, &mut failed);
    }
    let mut rows = Vec::new();
    for p in programs() {
        if a.only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|n| n == p.name))
        {
            continue;
        }
        let mut best = Vec::new();
        for &ty in &a.devices {
            if let Err(e) = acc::init(ty) {
                println!("{} on {ty}: not run: {e}", p.name);
                continue;
            }
            acc::set_device_type(ty);
            let mut times = Vec::new();
            for rep in 0..a.reps.max(1) {
                match (p.run)(a.large) {
                    Ok(o) => {
                        println!(
                            "{} on {ty}, run {}: {:.4} s, checksum {:.10e}, verified {}",
                            p.name,
                            rep + 1,
                            secs(o.time),
                            o.checksum,
                            o.verified
                        );
                        times.push(secs(o.time));
                    }
                    Err(e) => {
                        println!("{} on {ty}: FAILED: {e}", p.name);
                        failed = true;
                        break;
                    }
                }
            }
            if let (Some(first), Some(warm)) = (
                times.first().copied(),
                times.iter().skip(1).copied().reduce(f64::min),
            ) {
                best.push((ty, first, warm));
            } else if let Some(&first) = times.first() {
                best.push((ty, first, first));
            }
        }
        let cuda = if a.devices.contains(&DeviceType::Nvidia) {
            let r = cuda_reference(&p, a.large);
            match &r {
                Ok((s, c)) => println!("{} CUDA reference: {s:.4} s, checksum {c:.10e}", p.name),
                Err(e) => println!("{} CUDA reference: {e}", p.name),
            }
            r.ok().map(|(s, _)| s)
        } else {
            None
        };
        rows.push((p.name, best, cuda));
    }
    println!("\nprogram | device | first run s | warm s | multicore / device (warm) | CUDA s | CUDA / device (warm)");
    for (name, best, cuda) in &rows {
        let multicore = best
            .iter()
            .find(|(t, _, _)| *t == DeviceType::Multicore)
            .map(|b| b.2);
        for (ty, first, warm) in best {
            let vs_mc = multicore.map_or("-".into(), |m| format!("{:.2}x", m / warm));
            let vs_cuda = match (cuda, ty) {
                (Some(c), DeviceType::Nvidia | DeviceType::Wgpu) => format!("{:.2}x", c / warm),
                _ => "-".into(),
            };
            let c = cuda.map_or("-".into(), |c| format!("{c:.4}"));
            println!("{name} | {ty} | {first:.4} | {warm:.4} | {vs_mc} | {c} | {vs_cuda}");
        }
    }
    if failed {
        std::process::exit(1);
    }
}

/// `--spellings`: the same loop nest spelt several ways, each timed on each device.
fn spellings(a: &Args, failed: &mut bool) {
    for &ty in &a.devices {
        if acc::init(ty).is_err() {
            continue;
        }
        acc::set_device_type(ty);
        match acc_apps::hotspot::spellings(a.large) {
            Ok(times) => {
                let best = times
                    .iter()
                    .map(|t| secs(t.1))
                    .fold(f64::INFINITY, f64::min);
                for (name, t) in times {
                    println!(
                        "hotspot step on {ty}, {name}: {:.4} s, {:.2}x the best spelling",
                        secs(t),
                        secs(t) / best
                    );
                }
            }
            Err(e) => {
                println!("hotspot spellings on {ty}: FAILED: {e}");
                *failed = true;
            }
        }
    }
}
