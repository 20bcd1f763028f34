//! Every `ACC_*` environment variable acc reads, read here and nowhere else, each by the
//! function named after it; docs/guide/devices.md and docs/guide/tools.md hold the table of
//! what each means. A variable set but empty (or blank) counts as unset. The modules that
//! use a value parse it and say when they read it (most once per process, at first use).

use std::ffi::OsString;

use crate::device_type::DeviceType;
use crate::error::Error;

/// Variable `name`, unless unset or blank.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Variable `name` as the OS gives it (a path), unless unset or empty.
fn var_os(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// `ACC_DEVICE_TYPE`: the device type (OpenACC; parsed by `icv`).
pub fn device_type() -> Option<String> {
    var("ACC_DEVICE_TYPE")
}

/// `ACC_DEVICE_NUM`: the device number (OpenACC; parsed by `icv`).
pub fn device_num() -> Option<String> {
    var("ACC_DEVICE_NUM")
}

/// `ACC_NUM_CORES`: the multicore device's thread count.
pub fn num_cores() -> Option<String> {
    var("ACC_NUM_CORES")
}

/// `ACC_NOTIFY`: what `observe` reports as it happens (a bit mask).
pub fn notify() -> Option<String> {
    var("ACC_NOTIFY")
}

/// `ACC_TIME`: any value but `0` turns the time table on.
pub fn time() -> bool {
    var("ACC_TIME").is_some_and(|v| v.trim() != "0")
}

/// `ACC_INFO`: the level of the mapping report (0 when unset; 1 for a value that is not a
/// number).
pub fn info() -> u8 {
    var("ACC_INFO").map_or(0, |v| v.trim().parse().unwrap_or(1))
}

/// `ACC_DUMP`: the stages whose code is written to files, lower case.
pub fn dump() -> Vec<String> {
    var("ACC_DUMP")
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_ascii_lowercase())
                .collect()
        })
        .unwrap_or_default()
}

/// `ACC_DUMP_DIR`: where `ACC_DUMP` writes.
pub fn dump_dir() -> Option<String> {
    var("ACC_DUMP_DIR")
}

/// `ACC_NARROW`: `0` keeps kernels' index arithmetic in 64 bits.
pub fn narrow() -> bool {
    var("ACC_NARROW").is_none_or(|v| v.trim() != "0")
}

/// `ACC_FAST_FLOAT`: `1` trades `f32` exactness for speed: wgpu's drivers may fuse and
/// reassociate float operations; nvidia fuses multiplies and adds and computes `f32` division,
/// square root and the common transcendental functions by the GPU's approximate instructions.
pub fn fast_float() -> bool {
    var("ACC_FAST_FLOAT").is_some_and(|v| v.trim() == "1")
}

/// `ACC_CACHE_DIR`: the directory of compiled nvidia kernels (`off`: none).
pub fn cache_dir() -> Option<OsString> {
    var_os("ACC_CACHE_DIR")
}

/// `ACC_PTXAS`: the `ptxas` to compile kernels with (`off`: none).
pub fn ptxas() -> Option<OsString> {
    var_os("ACC_PTXAS")
}

/// `ACC_CUDA_GRAPHS`: `0` launches at once rather than as graphs while the GPU is busy.
pub fn cuda_graphs() -> bool {
    var("ACC_CUDA_GRAPHS").is_none_or(|v| v.trim() != "0")
}

/// `ACC_CUDA_DEFER_COMPILE`: `0` makes a launch wait for its kernel's compilation.
pub fn cuda_defer_compile() -> bool {
    var("ACC_CUDA_DEFER_COMPILE").is_none_or(|v| v.trim() != "0")
}

/// `ACC_CUDA_BLOCKS_PER_SM`: blocks per multiprocessor of a launch without reductions, 1 to
/// 1024 (another value is ignored).
pub fn cuda_blocks_per_sm() -> Option<u32> {
    var("ACC_CUDA_BLOCKS_PER_SM")
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|b| (1..=1024).contains(b))
}

/// `ACC_AUTOCOMPARE`: `0`, `abort`, or any other value (report).
pub fn autocompare() -> Option<String> {
    var("ACC_AUTOCOMPARE")
}

/// `ACC_AUTOCOMPARE_TOL`: the relative tolerance of float comparisons.
pub fn autocompare_tol() -> Option<String> {
    var("ACC_AUTOCOMPARE_TOL")
}

/// `ACC_MPI_CUDA_AWARE`: `1` or `0` overrides what the MPI library says.
pub fn mpi_cuda_aware() -> Option<bool> {
    match var("ACC_MPI_CUDA_AWARE")?.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

// Device type names are read from the environment, so their parsing lives here (the type
// itself, in `device_type`, depends on nothing else in the crate).
impl DeviceType {
    /// Parses an `ACC_DEVICE_TYPE` value: one of [`DeviceType::NAMES`] (or `default`), in any
    /// case, with surrounding whitespace ignored (OpenACC 2.0 chapter 4).
    pub fn parse_env(value: &str) -> Result<DeviceType, Error> {
        let v = value.trim().to_ascii_lowercase();
        let ty = match v.as_str() {
            "host" => DeviceType::Host,
            "multicore" => DeviceType::Multicore,
            "nvidia" => DeviceType::Nvidia,
            "wgpu" => DeviceType::Wgpu,
            "default" => DeviceType::Default,
            _ => {
                return Err(Error::UnknownDeviceType {
                    value: value.to_string(),
                    valid: Self::NAMES.join(", "),
                })
            }
        };
        Ok(ty)
    }
}

impl std::str::FromStr for DeviceType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        DeviceType::parse_env(s)
    }
}
