//! Golden files: for each sample kernel (`acc_core::ir::samples`), its IR, the plan the GPU
//! backends share (how each loop runs, `ir::mapping`, in each backend's words), its PTX (sm_90)
//! and its WGSL, checked in under `tests/golden/`, so that a change to the lowering shows in a
//! review as a change to these files. `ACC_GOLDEN=bless cargo test -p acc-device --test golden`
//! rewrites them (as naga's snapshot tests do). WGSL needs the `wgpu` feature.
#![cfg(feature = "wgpu")]

use std::path::PathBuf;

use acc_core::ir::mapping::describe;
use acc_core::ir::{samples, Kernel, ReduceOp, Scalar};

fn kernels() -> Vec<(&'static str, Kernel)> {
    vec![
        ("saxpy_f32", samples::saxpy(Scalar::F32)),
        (
            "reduce_add_f64",
            samples::reduce(Scalar::F64, ReduceOp::Add),
        ),
        ("tiled", samples::tiled()),
        ("particles", samples::particles()),
        ("matvec", samples::matvec()),
        ("softmax", samples::softmax()),
        ("row_smooth", samples::row_smooth()),
        ("transpose", samples::transpose()),
        ("row_sweeps", samples::row_sweeps()),
        ("matmul_tiled", samples::matmul_tiled()),
        ("eliminate", samples::eliminate()),
        ("stencil_cached", samples::stencil_cached()),
        ("bin_sums", samples::bin_sums()),
        ("matmul_accumulating", samples::matmul_accumulating()),
        ("matmul_collapsed", samples::matmul_collapsed()),
        ("matmul_gang_vector", samples::matmul_gang_vector()),
        ("matmul_collapsed_in_c", samples::matmul_collapsed_in_c()),
    ]
}

/// The wgpu target the golden files are written for: an adapter with every feature.
const WGPU: acc_device::wgsl::Target = acc_device::wgsl::Target::ALL_FEATURES;

fn plan(k: &Kernel) -> String {
    let mut out = String::new();
    for (backend, caps) in [
        ("nvidia", acc_device::ptx::caps()),
        ("wgpu", acc_device::wgsl::caps(WGPU)),
    ] {
        out.push_str(&format!("{backend}:\n"));
        // What ACC_INFO says of each loop.
        for m in describe(k, &caps) {
            out.push_str(&format!("  loop {}: {}\n", m.vars.join(", "), m.how));
        }
        // The plan it reads, as the emitters get it.
        match acc_core::ir::plan::prepare(k, &caps, Default::default()) {
            Ok(prepared) => {
                for line in prepared.plan(&caps).outline().lines() {
                    out.push_str(&format!("  {line}\n"));
                }
            }
            Err(e) => out.push_str(&format!("  not split: {e}\n")),
        }
    }
    out
}

fn outputs(k: &Kernel) -> Vec<(&'static str, String)> {
    let ptx = acc_device::ptx::lower(k, acc_device::ptx::Target::exact(90))
        .map(|l| l.ptx)
        .unwrap_or_else(|e| format!("not lowered: {e}\n"));
    let wgsl = acc_device::wgsl::lower(k, WGPU)
        .map(|l| l.wgsl)
        .unwrap_or_else(|e| format!("not lowered: {e}\n"));
    vec![
        ("ir", acc_core::ir::print::print(k)),
        ("plan", plan(k)),
        ("ptx", ptx),
        ("wgsl", wgsl),
    ]
}

#[test]
fn lowered_kernels_match_their_golden_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var("ACC_GOLDEN").is_ok_and(|v| v == "bless");
    let mut differ = Vec::new();
    for (name, k) in kernels() {
        for (ext, text) in outputs(&k) {
            let path = dir.join(format!("{name}.{ext}"));
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            if want != text {
                differ.push(path.display().to_string());
            }
        }
    }
    assert!(
        differ.is_empty(),
        "output differs from its golden file (rewrite them with ACC_GOLDEN=bless and review the diff): {}",
        differ.join(", ")
    );
}

/// Lowering the same kernel twice gives the same text: the golden files are stable.
#[test]
fn lowering_is_deterministic() {
    for (name, k) in kernels() {
        assert_eq!(outputs(&k), outputs(&k), "{name}");
    }
}
