//! The hand-written CUDA side of the nvidia benchmarks: benches/cuda/reference.cu compiled with
//! nvcc for the GPU found and loaded beside acc's kernels, in the same context.

#![allow(dead_code)] // each benchmark uses part of it

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream};

/// The hand-written CUDA side.
pub struct Cuda {
    pub stream: Arc<CudaStream>,
    pub module: Arc<CudaModule>,
    pub sms: u32,
}

impl Cuda {
    pub fn new() -> Cuda {
        let ctx = CudaContext::new(0).expect("GPU 0");
        let (major, minor) = ctx.compute_capability().expect("compute capability");
        let sms = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .expect("SM count") as u32;
        let cubin = compile_reference(major * 10 + minor);
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_file(cubin))
            .expect("the reference cubin loads");
        Cuda {
            stream: ctx.default_stream(),
            module,
            sms,
        }
    }

    pub fn f(&self, name: &str) -> CudaFunction {
        self.module.load_function(name).expect("a reference kernel")
    }

    pub fn upload<T: cudarc::driver::DeviceRepr>(&self, v: &[T]) -> CudaSlice<T> {
        self.stream.clone_htod(v).expect("copy in")
    }

    pub fn sync(&self) {
        self.stream.synchronize().expect("the reference runs");
    }
}

/// `reference.cu` compiled for compute capability `sm` (`ACC_NVCC`, else nvcc).
pub fn compile_reference(sm: i32) -> PathBuf {
    let src = [
        Path::new("benches/cuda/reference.cu").to_path_buf(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/cuda/reference.cu"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .expect("benches/cuda/reference.cu (run from the repository root)");
    let nvcc = std::env::var_os("ACC_NVCC")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let local = Path::new("/usr/local/cuda/bin/nvcc");
            if local.is_file() {
                local.to_path_buf()
            } else {
                PathBuf::from("nvcc")
            }
        });
    let out = std::env::temp_dir().join(format!("acc-bench-reference-sm{sm}.cubin"));
    let status = std::process::Command::new(&nvcc)
        .args(["-O3", &format!("-arch=sm_{sm}"), "-cubin", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("running {}: {e}", nvcc.display()));
    assert!(status.success(), "nvcc failed on {}", src.display());
    out
}
