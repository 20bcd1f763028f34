//! The wgpu device as the runtime sees it (`acc_core::Device`: properties, kernel launches,
//! queues, memory), its backend (`acc_core::device::Backend`: adapters, opening one), and the
//! `ACC_TIME` record of a queued launch.

use super::*;

impl acc_core::Device for WgpuDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Wgpu
    }
    fn number(&self) -> usize {
        self.number
    }
    fn property(&self, p: acc_core::Property) -> String {
        use acc_core::Property;
        match p {
            Property::Name => self.name(),
            Property::Vendor => format!("{:#06x}", self.info.vendor),
            Property::Driver => format!("{} {}", self.info.driver, self.info.driver_info)
                .trim()
                .to_string(),
            Property::SharedMemorySupport => "0".into(),
            // wgpu reports no memory sizes; through Vulkan, the device-local heaps' total.
            Property::Memory => self.vulkan_memory().unwrap_or(0).to_string(),
            Property::FreeMemory => "0".into(),
        }
    }
    fn caps(&self) -> Option<acc_core::ir::plan::Caps> {
        Some(crate::wgsl::caps(self.target))
    }
    fn details(&self) -> Vec<(&'static str, String)> {
        let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
        let limits = self.device.limits();
        vec![
            (
                "adapter",
                format!("{:?} {:?}", self.info.backend, self.info.device_type),
            ),
            ("f64", yes(self.target.f64)),
            (
                "float arithmetic",
                if self.spirv.is_some() {
                    "rounded as Rust's (SPIR-V written by acc, NoContraction)".into()
                } else if self.target.fast_float {
                    "the driver's (ACC_FAST_FLOAT=1)".into()
                } else {
                    "the driver's (products may be fused: no SPIR-V passthrough)".into()
                },
            ),
            ("64-bit integers", yes(self.target.int64)),
            ("64-bit atomics", yes(self.target.int64_atomics)),
            (
                "max workgroup size",
                limits.max_compute_invocations_per_workgroup.to_string(),
            ),
            (
                "max workgroups per dimension",
                limits.max_compute_workgroups_per_dimension.to_string(),
            ),
            (
                "workgroup memory",
                format!("{} bytes", limits.max_compute_workgroup_storage_size),
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
    // Queues are submissions to the device's one wgpu queue, which runs them in order: a
    // queue's work is done when its last queued launch is, and `waits` hold already.
    fn launch_kernel_queued(
        &self,
        kernel: &Arc<Kernel>,
        args: &mut [Arg<'_>],
        queue: Queue,
        _waits: Option<&[Queue]>,
    ) -> Result<Launched> {
        self.launch_shared(kernel, args, queue)
    }
    fn synchronize_queue(&self, queue: Queue) -> Result<()> {
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        let last = batch.queued.get(&queue).cloned();
        match last {
            // Its last launch waits in the batch: the batch goes now.
            Some((_, None)) => {
                let index = self.submit(&mut batch)?;
                drop(batch);
                self.wait_for(index)
            }
            Some((_, Some(index))) => {
                drop(batch);
                self.wait_for(Some(index))
            }
            None => Ok(()),
        }
    }
    fn queue_done(&self, queue: Option<Queue>) -> bool {
        // A launch waiting in the batch never finishes unless it is submitted.
        self.submit_pending_quietly();
        // Runs the callbacks of finished submissions.
        if self.device.poll(wgpu::PollType::Poll).is_err() {
            return false;
        }
        let finished = self.finished.load(Ordering::Relaxed);
        let batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        match queue {
            Some(q) => batch.queued.get(&q).is_none_or(|&(n, _)| n <= finished),
            // `acc_async_test_all` asks after async queues: a synchronous launch that
            // returned before running (another thread's, perhaps) is not one of them.
            None => batch
                .queued
                .iter()
                .all(|(q, &(n, _))| *q == Queue::Sync || n <= finished),
        }
    }
    fn synchronize(&self) -> Result<()> {
        self.wait_for(None)
    }
    // Host code using the device's buffers through wgpu submits to the same queue, which runs
    // submissions in order: the launches waiting in the batch go first, and nothing is
    // needed after.
    fn interop_barrier(&self, entering: bool) -> Result<()> {
        if entering {
            self.submit_pending()
        } else {
            Ok(())
        }
    }
    fn interop_handles(&self) -> Option<Box<dyn std::any::Any + Send + Sync>> {
        Some(Box::new((self.device.clone(), self.queue.clone())))
    }
    fn own_memory(&self) -> Option<acc_core::OwnMemory<'_>> {
        Some(acc_core::OwnMemory {
            table: &self.present,
            memory: self,
        })
    }
    fn shutdown(&self) -> Result<()> {
        self.synchronize()?;
        self.present.clear(self);
        self.pool.clear();
        Ok(())
    }
}

/// Provides the wgpu adapters as devices, best first.
#[derive(Default)]
pub struct WgpuBackend {
    /// How many adapters there are, and whether the best is a GPU rather than a software
    /// renderer (one enumeration).
    found: std::sync::OnceLock<(usize, bool)>,
    devices: acc_core::device::Opened<WgpuDevice>,
}

impl WgpuBackend {
    fn found(&self) -> (usize, bool) {
        *self.found.get_or_init(|| {
            let list = adapters();
            let hardware = list
                .first()
                .is_some_and(|a| is_hardware(a.get_info().device_type));
            (list.len(), hardware)
        })
    }
}

impl acc_core::device::Backend for WgpuBackend {
    fn device_type(&self) -> DeviceType {
        DeviceType::Wgpu
    }
    fn count(&self) -> usize {
        self.found().0 + super::adopted_count()
    }
    fn open(&self, num: usize) -> Result<Arc<dyn acc_core::Device>> {
        self.devices.get_or_open(num, WgpuDevice::open)
    }
    // A hardware adapter is a default choice (after nvidia, docs/guide/devices.md); a software
    // one (lavapipe, llvmpipe, WARP) runs regions only when asked for (`ACC_DEVICE_TYPE=wgpu`),
    // since all host cores run them faster.
    //
    // On Linux, a machine with no GPU device node has no hardware adapter: the adapters are
    // not enumerated then, since probing Mesa's software drivers prints noise on stderr
    // (`XDG_RUNTIME_DIR is invalid`) in a program that will run on the multicore device.
    fn is_default_candidate(&self) -> bool {
        gpu_device_nodes() && self.found().1
    }
    fn absent_reason(&self) -> String {
        "wgpu found no adapter (it needs a Vulkan, Metal or DX12 driver; on Linux without a GPU, \
         Mesa's software Vulkan: `apt-get install mesa-vulkan-drivers`)"
            .into()
    }
    fn shutdown(&self) -> Result<()> {
        self.devices.clear();
        Ok(())
    }
}

/// Whether the machine may have a GPU a hardware adapter drives: on Linux, a render node
/// (`/dev/dri/renderD*`), an NVIDIA device (`/dev/nvidia*`) or WSL's GPU (`/dev/dxg`); other
/// systems are asked through wgpu.
fn gpu_device_nodes() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    let has = |dir: &str, prefix: &str| {
        std::fs::read_dir(dir).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(prefix))
        })
    };
    has("/dev/dri", "renderD") || has("/dev", "nvidia") || std::path::Path::new("/dev/dxg").exists()
}

/// A queued launch's time on the wgpu queue, known once the queue reports it ran
/// (`ACC_TIME`).
pub(super) struct QueuedTime {
    pub(super) submitted: std::time::Instant,
    pub(super) done: Arc<Mutex<Option<std::time::Instant>>>,
    pub(super) device: wgpu::Device,
}

impl acc_core::observe::time::PendingTime for QueuedTime {
    fn poll(&mut self) -> Option<Option<std::time::Duration>> {
        let _ = self.device.poll(wgpu::PollType::Poll);
        let done = *self.done.lock().unwrap_or_else(|e| e.into_inner());
        done.map(|d| Some(d.saturating_duration_since(self.submitted)))
    }
    fn wait(mut self: Box<Self>) -> Option<std::time::Duration> {
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
        self.poll().flatten()
    }
}
