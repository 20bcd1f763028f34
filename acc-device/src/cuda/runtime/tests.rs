//! End-to-end on the first NVIDIA GPU: kernels built as IR, lowered to PTX, run through the
//! CUDA driver (feature `gpu-tests`). Without a GPU the tests say so and pass, unless
//! `ACC_REQUIRE_DEVICES` names nvidia (scripts/gpu-test names it).

use acc_core::ir::args::{KernelArg as Arg, ScalarValue};
use acc_core::ir::builder::KernelBuilder;
use acc_core::ir::samples::GRID;
use acc_core::ir::*;

use super::*;

fn device() -> Option<CudaDevice> {
    match CudaDevice::open(0) {
        Ok(d) => Some(d),
        Err(e) => {
            crate::cuda::no_gpu("cuda tests", e);
            None
        }
    }
}

fn bytes_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: plain numbers; any bytes form a valid f64.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

fn bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain numbers.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// `y[i] = a * x[i] + y[i]`, and the sum of `x` reduced into parameter 3.
fn saxpy_and_sum() -> Kernel {
    let mut b = KernelBuilder::new("saxpy and sum");
    let a = b.param_scalar("a", Scalar::F64);
    let x = b.param_array("x", Scalar::F64, false);
    let y = b.param_array("y", Scalar::F64, true);
    let _ = b.param_scalar("s", Scalar::F64);
    let s = b.reduction_local("s", Scalar::F64, ReduceOp::Add);
    b.reduce_into(s, ReduceOp::Add, 3);
    let start = b.lit_int(0, None);
    let n = b.len(y);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[(s, ReduceOp::Add)],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let ax = b.binary(BinaryOp::Mul, a, xi);
            let i = b.get(v[0]);
            let yi = b.load(y, i);
            let r = b.binary(BinaryOp::Add, ax, yi);
            let i = b.get(v[0]);
            b.store(y, i, r);
            let cur = b.get(s);
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let next = b.binary(BinaryOp::Add, cur, xi);
            b.set(s, next);
        },
    );
    b.finish().expect("valid")
}

#[test]
fn saxpy_and_a_sum_run_on_the_gpu() {
    let Some(dev) = device() else { return };
    let n = 1_000_003;
    let x: Vec<f64> = (0..n).map(|i| (i % 1000) as f64).collect();
    let mut y = vec![1.0f64; n];
    let out = dev
        .launch(
            &saxpy_and_sum(),
            &mut [
                Arg::Scalar(ScalarValue::F64(2.0)),
                Arg::Read(bytes(&x)),
                Arg::Write(bytes_mut(&mut y)),
                Arg::Scalar(ScalarValue::F64(0.0)),
            ],
        )
        .unwrap();
    assert!(y.iter().zip(&x).all(|(&y, &x)| y == 2.0 * x + 1.0));
    let want: f64 = x.iter().sum();
    assert_eq!(out.reductions, vec![(3, ScalarValue::F64(want))]);
}

#[test]
fn an_out_of_bounds_access_is_an_error_naming_the_array() {
    let Some(dev) = device() else { return };
    let mut b = KernelBuilder::new("oob");
    let y = b.param_array("y", Scalar::U32, true);
    let start = b.lit_int(0, None);
    let end = b.lit_int(10, Some(Scalar::USize));
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        end,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let one = b.lit_int(1, Some(Scalar::U32));
            b.store(y, i, one);
        },
    );
    let k = b.finish().unwrap();
    let mut v = [0u32; 8];
    let e = dev
        .launch(&k, &mut [Arg::Write(bytes_mut(&mut v))])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("out of bounds") && e.contains("len is 8") && e.contains("`y`"),
        "{e}"
    );
}

/// A tiled nest (a tile per block or workgroup) writes every element once and counts them.
#[test]
fn tiled_nests_cover_their_iterations() {
    let Some(dev) = device() else { return };
    acc_core::ir::samples::check_tiled(|k, args| dev.launch(k, args));
}
