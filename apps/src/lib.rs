//! The application suite: ports to acc of public OpenACC programs (Rodinia's OpenACC versions,
//! NPB3.3-ACC, miniWeather), written from their sources as an OpenACC user would, keeping the
//! original's directives. Each program module has
//!
//! - the port: the original's compute and data directives on the same loops, the pointer swaps
//!   and time loops as written;
//! - `Size`s: `small` (what CI runs on every device, in a debug build) and `large` (the GPU
//!   benchmark);
//! - `run(&Size) -> Result<Outcome, String>`: makes the program's input (deterministic, in the
//!   ranges of the original's input files), times the computation as the program times itself
//!   (its data region, transfers and first launch included), and verifies the result against a
//!   plain-Rust twin of the same loops.
//!
//! The benchmark (`cargo run --release -p acc-apps -- --help`) runs each program on the devices
//! asked for and beside its CUDA reference (`apps/cuda/<program>.cu`, compiled with `nvcc` where
//! one is found).

use std::time::Duration;

pub mod backprop;
pub mod bfs;
pub mod cfd;
pub mod cg;
pub mod ep;
pub mod hotspot;
pub mod kmeans;
pub mod lavamd;
pub mod lud;
pub mod mg;
pub mod miniweather;
pub mod nw;
pub mod pathfinder;
pub mod srad;

/// What one run of a program gives.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The computation's time, as the program times itself.
    pub time: Duration,
    /// A number that sums up the result (printed beside the CUDA reference's own).
    pub checksum: f64,
    /// How the result was checked, in words.
    pub verified: String,
}

/// A program of the suite: its name, sizes and entry point.
pub struct Program {
    /// Its name, as the benchmark's `--only` takes it.
    pub name: &'static str,
    /// Where it comes from.
    pub origin: &'static str,
    /// Runs it at the small size (CI) or the large one (the GPU benchmark), on the current
    /// device.
    pub run: fn(large: bool) -> Result<Outcome, String>,
    /// The arguments its CUDA reference takes for the same size.
    pub cuda_args: fn(large: bool) -> Vec<String>,
}

macro_rules! program {
    ($m:ident, $origin:expr) => {
        Program {
            name: stringify!($m),
            origin: $origin,
            run: $m::run_size,
            cuda_args: $m::cuda_args,
        }
    };
}

/// Every program of the suite.
pub fn programs() -> Vec<Program> {
    #[allow(unused_mut)]
    let mut all = vec![
        program!(hotspot, "Rodinia 3.1, OpenACC version (hotspot.c)"),
        program!(kmeans, kmeans::ORIGIN),
        program!(lavamd, lavamd::ORIGIN),
        program!(lud, lud::ORIGIN),
        program!(nw, nw::ORIGIN),
        program!(pathfinder, pathfinder::ORIGIN),
        program!(srad, srad::ORIGIN),
    ];
    all.push(program!(backprop, backprop::ORIGIN));
    all.push(program!(bfs, bfs::ORIGIN));
    all.push(program!(cg, cg::ORIGIN));
    all.push(program!(ep, ep::ORIGIN));
    all.push(program!(cfd, cfd::ORIGIN));
    all.push(program!(mg, mg::ORIGIN));
    all.push(program!(miniweather, miniweather::ORIGIN));
    all
}

/// What the plain-Rust twin of `program` gives for the input `key` names: computed once per
/// process and kept, since the benchmark runs each program several times on several devices
/// and some twins take many seconds at the large sizes (kmeans, lud).
pub fn plain_result<T: Clone + Send + 'static>(
    program: &str,
    key: impl std::fmt::Debug,
    make: impl FnOnce() -> T,
) -> T {
    use std::any::Any;
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Kept = Mutex<HashMap<String, Box<dyn Any + Send>>>;
    static KEPT: OnceLock<Kept> = OnceLock::new();
    let name = format!("{program} {key:?}");
    let kept = KEPT.get_or_init(Default::default);
    if let Some(v) = kept
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&name)
        .and_then(|b| b.downcast_ref::<T>())
    {
        return v.clone();
    }
    let v = make();
    kept.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name, Box::new(v.clone()));
    v
}

/// The largest difference between `got` and `want` relative to `want`'s magnitude, or an
/// error naming the first element that differs by more than `tolerance`.
pub fn compare(what: &str, got: &[f64], want: &[f64], tolerance: f64) -> Result<f64, String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements, the plain loops give {}",
            got.len(),
            want.len()
        ));
    }
    let mut worst = 0.0f64;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let d = (g - w).abs() / w.abs().max(1e-300);
        if !(d <= tolerance) {
            return Err(format!(
                "{what}[{i}] = {g}, the plain loops give {w} (relative difference {d:e}, more than {tolerance:e})"
            ));
        }
        worst = worst.max(d);
    }
    Ok(worst)
}

/// A deterministic value in `[0, 1)` for index `i` and stream `seed` (a 64-bit mix), which the
/// CUDA references compute alike (`apps/cuda/common.h`), so both read the same input.
pub fn unit(seed: u64, i: u64) -> f64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}
