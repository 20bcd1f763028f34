//! acc data regions around cuBLAS: the matrices are copied in by an acc data region, acc's own
//! matrix product runs as a region, `host_data use_device` hands the same device buffers to
//! cuBLAS's SGEMM (through cudarc, in acc's CUDA context), and an acc region then works on
//! cuBLAS's result. Both products are checked against each other and against plain Rust on
//! a sample of entries, and their TFLOP/s printed: cuBLAS's GEMM is what no directive
//! compiler matches, and this is how a program uses it on acc's data. Needs the nvidia device
//! and libcublas (loaded at run time).
//!
//! `cargo run --release --features cublas --example cublas_gemm [n]` (default 4096). A program
//! of one's own turns on acc's feature `cublas` and uses `acc::cudarc::cublas`, as here.

use std::time::{Duration, Instant};

use acc::cudarc::cublas::{result::sgemm, sys, CudaBlas};
use acc::cudarc::driver::CudaContext;

/// `c = a b` for row-major `n` x `n` matrices, through cuBLAS on device addresses: column-major
/// cuBLAS computes `c^T = b^T a^T`, which is the same memory.
fn gemm_cublas(
    blas: &CudaBlas,
    a: &acc::DeviceSlice<'_, f32>,
    b: &acc::DeviceSlice<'_, f32>,
    c: &acc::DeviceSlice<'_, f32>,
    n: usize,
) {
    let (alpha, beta) = (1.0f32, 0.0f32);
    let ptr = |s: &acc::DeviceSlice<'_, f32>| s.cu_deviceptr().expect("on the nvidia device");
    let n = n as i32;
    // SAFETY: the three addresses are acc's device buffers of n * n f32 each (use_device),
    // alive for the construct; cuBLAS reads a and b and writes c.
    unsafe {
        sgemm(
            *blas.handle(),
            sys::cublasOperation_t::CUBLAS_OP_N,
            sys::cublasOperation_t::CUBLAS_OP_N,
            n,
            n,
            n,
            &alpha,
            ptr(b) as *const f32,
            n,
            ptr(a) as *const f32,
            n,
            &beta,
            ptr(c) as *mut f32,
            n,
        )
    }
    .expect("cuBLAS SGEMM");
}

/// acc's product, cuBLAS's product, then an acc region on cuBLAS's: `d = 2 c_cublas - c_acc`
/// (equal to c where the two agree). Returns the two products' times.
#[acc::offload]
fn products(
    a: &[f32],
    b: &[f32],
    c_acc: &mut Vec<f32>,
    c_blas: &mut Vec<f32>,
    d: &mut Vec<f32>,
    n: usize,
    blas: &CudaBlas,
) -> (Duration, Duration) {
    let (t_acc, t_blas);
    #[acc::data(copyin(a, b), copyout(c_acc, c_blas, d))]
    {
        let t = Instant::now();
        #[acc::parallel_loop(collapse(2))]
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0f32;
                for k in 0..n {
                    s += a[i * n + k] * b[k * n + j];
                }
                c_acc[i * n + j] = s;
            }
        }
        acc::wait_all().expect("acc's product runs");
        t_acc = t.elapsed();
        let t = Instant::now();
        #[acc::host_data(use_device(a, b, c_blas))]
        {
            gemm_cublas(blas, &a, &b, &c_blas, n);
        }
        t_blas = t.elapsed();
        #[acc::parallel_loop]
        for i in 0..n * n {
            d[i] = 2.0 * c_blas[i] - c_acc[i];
        }
    }
    (t_acc, t_blas)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4096);
    if let Err(e) = acc::init(acc::DeviceType::Nvidia) {
        eprintln!("cublas_gemm needs the nvidia device: {e}");
        std::process::exit(1);
    }
    acc::set_device_type(acc::DeviceType::Nvidia);
    // acc runs on the device's primary context; cuBLAS joins it on the same stream.
    let ctx = CudaContext::new(0).expect("the CUDA device");
    let blas = CudaBlas::new(ctx.default_stream()).expect("cuBLAS (libcublas) loads");
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i * 37) % 101) as f32 / 101.0)
        .collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 53) % 97) as f32 / 97.0).collect();
    let (mut c_acc, mut c_blas, mut d) = (vec![0.0; n * n], vec![0.0; n * n], vec![0.0; n * n]);
    // A first run compiles acc's kernels and loads cuBLAS's; the second is timed.
    products(&a, &b, &mut c_acc, &mut c_blas, &mut d, n, &blas);
    let (t_acc, t_blas) = products(&a, &b, &mut c_acc, &mut c_blas, &mut d, n, &blas);
    let close = |x: f32, y: f32| (x - y).abs() <= 1e-3 * y.abs().max(1.0);
    for i in (0..n * n).step_by(n * n / 997 + 1) {
        let (r, col) = (i / n, i % n);
        let want: f64 = (0..n)
            .map(|k| a[r * n + k] as f64 * b[k * n + col] as f64)
            .sum();
        let want = want as f32;
        assert!(
            close(c_acc[i], want),
            "acc's c[{i}] = {} against {want}",
            c_acc[i]
        );
        assert!(
            close(c_blas[i], want),
            "cuBLAS's c[{i}] = {} against {want}",
            c_blas[i]
        );
        assert!(
            close(d[i], want),
            "the region after cuBLAS: d[{i}] = {}",
            d[i]
        );
    }
    let flops = 2.0 * (n as f64).powi(3);
    let tf = |t: Duration| flops / t.as_secs_f64() / 1e12;
    println!(
        "cublas_gemm: n = {n}, device = nvidia ({}): acc's product {:.1} ms ({:.2} TFLOP/s), cuBLAS SGEMM on the same buffers {:.1} ms ({:.2} TFLOP/s), then an acc region on its result; verified",
        acc::get_property(0, acc::DeviceType::Nvidia, acc::Property::Name),
        t_acc.as_secs_f64() * 1e3,
        tf(t_acc),
        t_blas.as_secs_f64() * 1e3,
        tf(t_blas),
    );
}
