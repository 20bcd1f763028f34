//! The nvidia device as the runtime sees it (`acc_core::Device`: properties, kernel
//! launches, queues, memory) and its backend (`acc_core::device::Backend`: how many devices,
//! opening one).

use super::*;

impl acc_core::Device for CudaDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Nvidia
    }
    fn number(&self) -> usize {
        self.number
    }
    fn property(&self, p: acc_core::Property) -> String {
        use acc_core::Property;
        match p {
            Property::Name => self.name.clone(),
            Property::Vendor => "NVIDIA".into(),
            Property::Driver => format!("CUDA driver, sm_{}", self.target.sm),
            Property::SharedMemorySupport => "0".into(),
            Property::Memory | Property::FreeMemory => {
                let info = self
                    .ctx
                    .bind_to_thread()
                    .and_then(|()| cudarc::driver::result::mem_get_info());
                match (info, p) {
                    (Ok((_, total)), Property::Memory) => total.to_string(),
                    (Ok((free, _)), _) => free.to_string(),
                    (Err(_), _) => "0".into(),
                }
            }
        }
    }
    fn kernel_resources(&self, kernel: &Kernel) -> Vec<String> {
        use cudarc::driver::sys::CUfunction_attribute_enum as F;
        let mut out = Vec::new();
        if self.ctx.bind_to_thread().is_err() {
            return out;
        }
        for (variant, l) in self.kernels.variants(kernel) {
            let Ok(code) = l.job.wait() else { continue };
            for (f, name) in code.functions.iter().zip(&l.lowered.entry_points) {
                let a = |x| f.attribute(x).map_or("?".into(), |v| v.to_string());
                out.push(format!(
                    "entry `{name}`{}: {} registers, {} bytes shared, {} bytes local memory per thread",
                    match (variant.proven, variant.narrow) {
                        (true, true) => " (32-bit indices)",
                        (true, false) => "",
                        _ => " (bounds-checked)",
                    },
                    a(F::CU_FUNC_ATTRIBUTE_NUM_REGS),
                    a(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                    a(F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
                ));
            }
        }
        out
    }
    fn caps(&self) -> Option<acc_core::ir::plan::Caps> {
        Some(crate::ptx::caps())
    }
    fn details(&self) -> Vec<(&'static str, String)> {
        let attr = |a| self.ctx.attribute(a).map_or("?".into(), |v| v.to_string());
        use cudarc::driver::sys::CUdevice_attribute as A;
        vec![
            ("compute capability", format!("sm_{}", self.target.sm)),
            (
                "multiprocessors",
                attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            ),
            (
                "max threads per block",
                attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            ),
            (
                "shared memory per block",
                format!(
                    "{} bytes",
                    attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
                ),
            ),
            ("f64, 64-bit integers and atomics", "yes".into()),
            (
                "float arithmetic",
                if self.target.fast_float {
                    "f32 fast (ACC_FAST_FLOAT=1: fused multiply-adds, approximate division, square root and transcendentals); f64 rounded as Rust's".into()
                } else {
                    "rounded as Rust's (no fused multiply-adds)".into()
                },
            ),
            (
                "acc launches",
                format!(
                    "blocks of {BLOCK_SIZE} threads, up to {} blocks",
                    self.grid_blocks
                ),
            ),
        ]
    }
    fn shares_host_memory(&self) -> bool {
        false
    }
    fn runs_kernels(&self) -> bool {
        true
    }
    fn launch_kernel(&self, kernel: &Kernel, args: &mut [Arg<'_>]) -> Result<Launched> {
        self.launch(kernel, args)
    }
    fn launch_kernel_queued(
        &self,
        kernel: &Arc<Kernel>,
        args: &mut [Arg<'_>],
        queue: Queue,
        waits: Option<&[Queue]>,
    ) -> Result<Launched> {
        self.launch_shared(kernel, args, queue, waits)
    }
    fn synchronize_queue(&self, queue: Queue) -> Result<()> {
        self.settle_main()?;
        if let Queue::Async(n) = queue {
            let s = self
                .queues
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&n)
                .cloned();
            if let Some(s) = s {
                s.synchronize()
                    .map_err(|e| cuda_error("waiting for an async queue", e))?;
            }
        }
        Ok(())
    }
    fn queue_wait(&self, waiter: Queue, on: Queue) -> Result<()> {
        match waiter {
            Queue::Async(n) => {
                self.flush()?;
                let w = self.queue_stream(n)?;
                self.join_queues(&w, Some(&[on]))
            }
            Queue::Sync => self.synchronize_queue(on),
        }
    }
    fn queue_done(&self, queue: Option<Queue>) -> bool {
        let idle = |s: &CudaStream| {
            // SAFETY: a stream of this device's context, alive while `s` is (the context is
            // bound before this is called).
            unsafe { crate::cuda::result::stream_idle(s.cu_stream()) }.unwrap_or(false)
        };
        if self.ctx.bind_to_thread().is_err() {
            return false;
        }
        match queue {
            // The queue's own stream, and its last launch on the device's stream.
            Some(Queue::Async(n)) => {
                self.queues
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&n)
                    .is_none_or(|s| idle(s))
                    && self
                        .queue_marks
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get(&n)
                        .is_none_or(|m| m.is_complete())
            }
            // Every queue: launches the host did not wait for on the device's stream count
            // only as part of their queue (a synchronous one is complete as far as the
            // program can tell, and other threads' work there is none of the queues').
            _ => {
                self.queue_streams().iter().all(|s| idle(s))
                    && self
                        .queue_marks
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .values()
                        .all(|m| m.is_complete())
            }
        }
    }
    fn own_memory(&self) -> Option<acc_core::OwnMemory<'_>> {
        Some(acc_core::OwnMemory {
            table: &self.present,
            memory: self,
        })
    }
    fn synchronize(&self) -> Result<()> {
        self.settle()
    }
    // Before host code hands device addresses to another library, acc's streams have run;
    // after it, whatever that code queued on any stream of the context has (it may use its
    // own streams, which acc's do not wait for).
    fn interop_barrier(&self, entering: bool) -> Result<()> {
        if entering {
            self.settle()
        } else {
            self.ctx
                .synchronize()
                .map_err(|e| cuda_error("waiting for work given to the device outside acc", e))
        }
    }
    fn cuda_stream(&self, queue: Queue) -> Option<Result<usize>> {
        // The device's own stream: another library may queue work on it from now on,
        // whenever it likes, so no launch is recorded any more (noted before the flush, so
        // that no launch is recorded after it) and that work comes after every launch made
        // before it.
        if queue == Queue::Sync {
            self.recorder.share_stream();
        }
        if let Err(e) = self.flush() {
            return Some(Err(e));
        }
        Some(match queue {
            Queue::Sync => Ok(self.stream.cu_stream() as usize),
            Queue::Async(n) => self.queue_stream(n).map(|s| s.cu_stream() as usize),
        })
    }
    unsafe fn set_cuda_stream(&self, queue: Queue, stream: usize) -> Option<Result<()>> {
        let Queue::Async(n) = queue else {
            return Some(Err(acc_core::Error::Unsupported {
                what: "acc::set_cuda_stream of the synchronous queue (its stream is acc's own; give an async queue)".into(),
            }));
        };
        // SAFETY: the caller's contract: a stream of this context that outlives its use.
        Some(unsafe { self.adopt_queue_stream(n, stream) })
    }
    fn shutdown(&self) -> Result<()> {
        self.settle()?;
        self.present.clear(self);
        Ok(())
    }
}

/// Provides the NVIDIA GPUs the CUDA driver sees.
#[derive(Default)]
pub struct CudaBackend {
    count: OnceLock<usize>,
    devices: acc_core::device::Opened<CudaDevice>,
}

impl acc_core::device::Backend for CudaBackend {
    fn device_type(&self) -> DeviceType {
        DeviceType::Nvidia
    }
    fn count(&self) -> usize {
        *self.count.get_or_init(|| {
            if driver_present() {
                CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
            } else {
                0
            }
        })
    }
    fn open(&self, num: usize) -> Result<Arc<dyn acc_core::Device>> {
        self.devices.get_or_open(num, CudaDevice::open)
    }
    fn absent_reason(&self) -> String {
        if driver_present() {
            "the CUDA driver found no GPU".into()
        } else {
            "no NVIDIA driver (libcuda) was found".into()
        }
    }
    fn shutdown(&self) -> Result<()> {
        self.devices.clear();
        Ok(())
    }
}
