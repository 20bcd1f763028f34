//! The `nvidia` device: kernels lowered to PTX by [`crate::ptx`], loaded and launched through
//! the CUDA driver (cudarc, loading `libcuda` at run time: this builds without CUDA, and on a
//! machine without the driver the device is simply absent).
//!
//! Data made present by data clauses lives in device allocations kept by the present table;
//! arrays a kernel uses that are not present are copied in for the launch and out when it
//! writes them. Every launch is synchronous on the device's stream; the bounds-check status
//! is read after it and turned into the same panic as on the other devices.

mod buffer;
mod compile;
mod deferred_checks;
mod dispatch;
mod graph;
mod memory;
mod module_cache;
mod peer;
mod recorded;
mod result;
mod runtime;

pub use runtime::{CudaBackend, CudaDevice};

/// For the GPU tests (feature `gpu-tests`): a test that finds no NVIDIA GPU (`why`) fails
/// when `ACC_REQUIRE_DEVICES` names nvidia (CI, the GPU machine), and otherwise says so and
/// is not run.
#[cfg(all(test, feature = "gpu-tests"))]
fn no_gpu(tests: &str, why: impl std::fmt::Display) {
    let required = std::env::var("ACC_REQUIRE_DEVICES").unwrap_or_default();
    if required
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case("nvidia"))
    {
        panic!("ACC_REQUIRE_DEVICES names nvidia, but: {why}");
    }
    eprintln!("{tests}: no GPU ({why}); not run");
}
