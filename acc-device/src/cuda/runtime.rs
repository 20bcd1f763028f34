use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};

use acc_core::ir::args::{KernelArg as Arg, KernelOutput as Launched, ScalarValue};
use acc_core::ir::{Kernel, ParamKind};
use acc_core::present::{BufferId, DeviceMemory, ElemLayout, PresentTable};
use acc_core::queue::Queue;
use acc_core::{DeviceType, Error, Result};

use super::buffer::{self, Buffer};
use super::compile;
use super::deferred_checks::DeferredChecks;
use super::memory::{keep_pool_memory, Pinned, QueuedUploads, Staging};
use super::module_cache;
use super::recorded::{self, Recorder};
use crate::ptx::{lower_with, Lowered, Target, BLOCK_SIZE};

pub(crate) use super::result::cuda_error;

fn no_device(reason: impl Into<String>) -> Error {
    Error::NoDevice {
        device_type: DeviceType::Nvidia,
        reason: reason.into(),
    }
}

/// Whether the CUDA driver library can be loaded (never panics, unlike a call into it).
fn driver_present() -> bool {
    // SAFETY: only tries to load the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Where a reduction's per-block partials go: host memory the kernel writes directly when the
/// host folds them, device memory when a fold entry point reads them on the device.
enum Partials {
    Host(Pinned),
    Device(CudaSlice<u8>),
}

/// A kernel's variant loaded on the device, with the scratch memory its launches reuse.
pub struct Loaded {
    /// The kernel as the region built it (for the errors its deferred checks report).
    kernel: Arc<Kernel>,
    lowered: Lowered,
    /// Its module: loaded, or compiling on a thread of its own ([`compile::Job`]).
    job: Arc<compile::Job>,
    /// Used by one launch at a time (the device's launch lock).
    scratch: Mutex<Scratch>,
}

/// The buffers every launch of a kernel's variant uses besides its arguments.
struct Scratch {
    locals: Option<CudaSlice<u8>>,
    /// The private arrays spilled to device memory, a copy per thread of the largest grid
    /// (`acc_core::ir::spill`).
    spill: Option<CudaSlice<u8>>,
    /// One per reduction an entry point computes, in order.
    partials: Vec<Partials>,
}

/// What one launch at a time uses (the device's launch lock): the bounds-check status words
/// (in host memory the kernels write), and the entry points' parameter slots and their
/// addresses, kept from launch to launch so that a launch allocates none.
pub(super) struct LaunchState {
    status: Pinned,
    /// The parameters, each in a 64-bit slot (`launch::slot`).
    values: Vec<u64>,
    /// The address of each slot, as `cuLaunchKernel` takes them (`*mut c_void`, kept as
    /// integers: the state moves between threads).
    params: Vec<usize>,
}

/// One NVIDIA GPU, opened.
pub struct CudaDevice {
    number: usize,
    name: String,
    target: Target,
    /// Most blocks a launch uses: as many as every multiprocessor holds at once; each thread
    /// then strides over several iterations (unrolled by four where the body is straight
    /// code, so that its loads are in flight together), and reductions have few partials.
    reduction_blocks: u32,
    /// Most blocks of a launch without reductions: 32 per multiprocessor (four times what it
    /// holds at once), unless `ACC_CUDA_BLOCKS_PER_SM` (a tuning knob, read when the device
    /// opens) says otherwise.
    grid_blocks: u32,
    /// Most bytes of a launch's private arrays spilled to device memory (`acc_core::ir::spill`):
    /// a 32nd of the device's memory, between 256 MiB and 4 GiB.
    spill_bytes: u64,
    stream: Arc<CudaStream>,
    ctx: Arc<CudaContext>,
    present: PresentTable,
    /// Looked up at every launch, by ids the runtime hands out: an integer hasher.
    buffers: Mutex<HashMap<BufferId, Buffer, acc_core::int_hash::IntKeys>>,
    next_buffer: AtomicU64,
    /// The kernels loaded, with their variants and bounds proofs.
    kernels: acc_core::gpu::KernelCache<Loaded>,
    /// One launch at a time, with what it uses ([`LaunchState`]).
    launching: Mutex<LaunchState>,
    /// The status words of launches checked at the next synchronization (taken inside the
    /// launch lock, and alone after a synchronization).
    checks: Mutex<DeferredChecks>,
    /// The staging buffers of transfers: a lock of its own, taken last (the present table
    /// transfers while holding its own lock, and a launch looks data up in the table).
    staging: Mutex<Staging>,
    /// The page-locked copies `update device` with `async` sends from (taken after the
    /// present table's lock, as `staging`).
    queued_uploads: Mutex<QueuedUploads>,
    /// A stream per async queue (3.3 section 2.16), made when a launch first uses the queue.
    queues: Mutex<HashMap<u32, Arc<CudaStream>>>,
    /// For an async queue whose last launch ran deferred on the device's stream (one keeping
    /// region locals): an event after it, which `async_test` asks instead of the whole
    /// stream (other threads' work on it says nothing about the queue).
    queue_marks: Mutex<HashMap<u32, cudarc::driver::CudaEvent>>,
    /// Whether a queue's stream may still run something.
    queues_pending: std::sync::atomic::AtomicBool,
    /// Timing events `ACC_TIME` has read, for reuse (creating events costs microseconds).
    events: Arc<Mutex<Vec<cudarc::driver::CudaEvent>>>,
    /// Launches recorded to run later (behind a compiling module, or while the GPU is busy),
    /// and whether the device's stream may still run launches that returned early.
    recorder: Arc<Recorder>,
    /// Whether first launches may be recorded (`ACC_CUDA_DEFER_COMPILE=0`, a tuning knob read
    /// when the device opens, says no: each launch then waits for its module).
    defer_compile: bool,
}

impl Drop for CudaDevice {
    /// Waits for the device's streams first: the buffers, modules and page-locked memory
    /// dropped after this may still be used by kernels and copies queued without waiting
    /// (a device shut down while an async queue runs).
    fn drop(&mut self) {
        self.recorder.shutdown();
        if self.ctx.bind_to_thread().is_ok() {
            let _ = self.flush();
            let _ = self.stream.synchronize();
            for s in self.queue_streams() {
                let _ = s.synchronize();
            }
        }
        self.recorder.release_graphs();
    }
}

impl CudaDevice {
    /// Opens GPU `num`.
    pub fn open(num: usize) -> Result<CudaDevice> {
        if !driver_present() {
            return Err(no_device("no NVIDIA driver (libcuda) was found"));
        }
        let ctx = CudaContext::new(num)
            .map_err(|e| no_device(format!("GPU {num} could not start: {e:?}")))?;
        // One stream, synchronized by the runtime itself: no per-buffer events needed.
        // SAFETY: every use of a buffer is ordered on the one stream.
        unsafe { ctx.disable_event_tracking() };
        keep_pool_memory(&ctx);
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| cuda_error("compute capability", e))?;
        let sms = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .unwrap_or(16)
            .max(1) as u32;
        let name = ctx.name().unwrap_or_else(|_| "NVIDIA GPU".into());
        let total = ctx.total_mem().unwrap_or(8 << 30) as u64;
        let stream = ctx.default_stream();
        let status = Pinned::new(&ctx, acc_core::gpu::status::BYTES)?;
        // `ACC_CUDA_GRAPHS=0`, a tuning knob read when the device opens: no batches.
        let batch = acc_core::config::cuda_graphs();
        Ok(CudaDevice {
            number: num,
            name,
            target: Target {
                sm: (major * 10 + minor) as u32,
                // `ACC_FAST_FLOAT=1`, read when the device opens.
                fast_float: acc_core::config::fast_float(),
            },
            reduction_blocks: sms * (2048 / BLOCK_SIZE),
            grid_blocks: sms * acc_core::config::cuda_blocks_per_sm().unwrap_or(32),
            spill_bytes: (total / 32).clamp(256 << 20, 4 << 30),
            recorder: Recorder::new(Arc::clone(&ctx), Arc::clone(&stream), batch),
            stream,
            ctx,
            present: PresentTable::new(),
            buffers: Mutex::new(HashMap::default()),
            next_buffer: AtomicU64::new(1),
            kernels: Default::default(),
            launching: Mutex::new(LaunchState {
                status,
                values: Vec::new(),
                params: Vec::new(),
            }),
            checks: Mutex::new(DeferredChecks::new()),
            staging: Mutex::new(Staging::new()),
            queued_uploads: Mutex::new(QueuedUploads::default()),
            queues: Mutex::new(HashMap::new()),
            queues_pending: std::sync::atomic::AtomicBool::new(false),
            events: Arc::new(Mutex::new(Vec::new())),
            queue_marks: Mutex::new(HashMap::new()),
            defer_compile: acc_core::config::cuda_defer_compile(),
        })
    }

    /// Submits the recorded launches ([`Recorder::flush`]). Every use of the device but a
    /// launch that may be recorded calls this first.
    fn flush(&self) -> Result<()> {
        self.recorder.flush()
    }

    /// Waits for launches that returned before the GPU ran them, if any: on the device's
    /// stream and on every queue's.
    fn settle(&self) -> Result<()> {
        self.settle_main()?;
        if self.queues_pending.swap(false, Ordering::AcqRel) {
            for s in self.queue_streams() {
                s.synchronize()
                    .map_err(|e| cuda_error("waiting for an async queue", e))?;
            }
        }
        Ok(())
    }

    /// Waits for launches on the device's own stream that returned before the GPU ran them,
    /// and reports the first of this thread's that stopped ([`DeferredChecks`]).
    fn settle_main(&self) -> Result<()> {
        // Counted before the recorded launches are submitted: each counted one has run once
        // the stream is synchronized.
        let covered = self.deferred_checks().listed();
        self.flush()?;
        if self.recorder.pending.swap(false, Ordering::AcqRel) || covered > 0 {
            self.stream
                .synchronize()
                .map_err(|e| cuda_error("waiting for earlier kernels", e))?;
        }
        self.deferred_checks().check(covered, &self.name)
    }

    /// The status words of launches checked at a later synchronization.
    fn deferred_checks(&self) -> std::sync::MutexGuard<'_, DeferredChecks> {
        self.checks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The stream of async queue `n`, made the first time.
    fn queue_stream(&self, n: u32) -> Result<Arc<CudaStream>> {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = queues.get(&n) {
            return Ok(Arc::clone(s));
        }
        let s = self
            .ctx
            .new_stream()
            .map_err(|e| cuda_error("making a stream for an async queue", e))?;
        queues.insert(n, Arc::clone(&s));
        Ok(s)
    }

    /// Makes async queue `n` run on `stream`, a stream another library owns: what the queue
    /// was given before is waited for first, so the queue's order holds across the change.
    ///
    /// # Safety
    /// `stream` is a valid `CUstream` of this device's context that outlives the queue's use
    /// of it.
    /// A null `stream` gives the queue back to a stream of acc's own (made at its next use),
    /// after which the program may destroy its stream.
    unsafe fn adopt_queue_stream(&self, n: u32, stream: usize) -> Result<()> {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = queues.get(&n) {
            old.synchronize()
                .map_err(|e| cuda_error("waiting for a queue before it changes stream", e))?;
        }
        if stream == 0 {
            queues.remove(&n);
            return Ok(());
        }
        // SAFETY: the caller's contract; the wrapper does not destroy the stream.
        let s = unsafe {
            self.ctx
                .wrap_borrowed_stream(stream as cudarc::driver::sys::CUstream)
        };
        queues.insert(n, s);
        Ok(())
    }

    /// The streams of the queues used so far.
    fn queue_streams(&self) -> Vec<Arc<CudaStream>> {
        self.queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Makes `stream` wait for what the queues in `waits` (every queue for `None`) were given
    /// so far, with events: the host does not wait.
    fn join_queues(&self, stream: &CudaStream, waits: Option<&[Queue]>) -> Result<()> {
        let others: Vec<Arc<CudaStream>> = match waits {
            None => self.queue_streams(),
            Some(w) => {
                let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
                w.iter()
                    .filter_map(|q| {
                        if let Queue::Async(n) = q {
                            queues.get(n).cloned()
                        } else {
                            None
                        }
                    })
                    .collect()
            }
        };
        for o in others
            .iter()
            .filter(|o| o.cu_stream() != stream.cu_stream())
        {
            stream
                .join(o)
                .map_err(|e| cuda_error("ordering an async queue after another", e))?;
        }
        Ok(())
    }

    fn address(&self, slice: &CudaSlice<u8>) -> u64 {
        let (ptr, _sync) = slice.device_ptr(&self.stream);
        ptr
    }

    fn insert_buffer(&self, b: Buffer) -> BufferId {
        let id = self.next_buffer.fetch_add(1, Ordering::Relaxed);
        self.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, b);
        id
    }

    fn zeros(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.stream
            .alloc_zeros::<u8>(bytes.max(16))
            .map_err(|_| Error::OutOfMemory { bytes })
    }

    /// The device address `offset` bytes into present buffer `buf`, checked to have `len` bytes.
    fn buffer_address(&self, buf: BufferId, offset: usize, len: usize) -> Result<u64> {
        let buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let b = buffers.get(&buf).ok_or_else(|| Error::Unsupported {
            what: "internal error: no such buffer".into(),
        })?;
        if offset + len > b.len() {
            return Err(Error::Unsupported {
                what: "internal error: a transfer past the end of its buffer".into(),
            });
        }
        Ok(b.address(&self.stream) + offset as u64)
    }

    /// Copies `host` into device memory at `dst` (timed for `ACC_TIME`).
    fn copy_in(&self, dst: u64, host: &[u8]) -> Result<()> {
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        let r = self.copy_in_untimed(dst, host);
        if let Some(t) = start {
            acc_core::observe::time::transfer(true, host.len(), t.elapsed());
        }
        r
    }

    fn copy_in_untimed(&self, dst: u64, host: &[u8]) -> Result<()> {
        self.settle()?;
        if host.len() >= Staging::THRESHOLD {
            return self
                .staging
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .copy_in(&self.stream, dst, host);
        }
        // SAFETY: `dst` has room for `host` (the caller's allocation); the copy of pageable
        // memory is finished when the call returns.
        unsafe { cudarc::driver::result::memcpy_htod_sync(dst, host) }
            .map_err(|e| cuda_error("copying in", e.0))
    }

    /// Copies device memory at `src` into `host` (timed for `ACC_TIME`).
    fn copy_out(&self, src: u64, host: &mut [u8]) -> Result<()> {
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        let r = self.copy_out_untimed(src, host);
        if let Some(t) = start {
            acc_core::observe::time::transfer(false, host.len(), t.elapsed());
        }
        r
    }

    fn copy_out_untimed(&self, src: u64, host: &mut [u8]) -> Result<()> {
        self.settle()?;
        if host.len() >= Staging::THRESHOLD {
            return self
                .staging
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .copy_out(&self.stream, src, host);
        }
        // SAFETY: `src` holds `host.len()` bytes; the stream's work was synchronized before.
        unsafe { cudarc::driver::result::memcpy_dtoh_sync(host, src) }
            .map_err(|e| cuda_error("copying out", e.0))
    }

    /// A timing event recorded on `stream` (from the pool of read ones where it has one).
    fn timing_event(&self, stream: &CudaStream) -> Option<cudarc::driver::CudaEvent> {
        let reused = self.events.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let event = match reused {
            Some(e) => e,
            None => self
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .ok()?,
        };
        event.record(stream).ok()?;
        Some(event)
    }

    /// Runs `kernel` with `args` (one per parameter, in order).
    pub fn launch(&self, kernel: &Kernel, args: &mut [Arg<'_>]) -> Result<Launched> {
        self.launch_on(kernel, args, Queue::Sync, Some(&[]))
    }

    /// Runs `kernel` on `queue` after the queues in `waits` (every queue for `None`). A launch
    /// on an async queue that brings nothing back (see the end of this function) runs on the
    /// queue's stream, after what the device's stream was given before it and after `waits`,
    /// ordered by events; the host goes on. Other launches run on the device's stream, after
    /// their queue and `waits`, and the host waits for them.
    pub fn launch_on(
        &self,
        kernel: &Kernel,
        args: &mut [Arg<'_>],
        queue: Queue,
        waits: Option<&[Queue]>,
    ) -> Result<Launched> {
        acc_core::gpu::launch(
            self,
            kernel,
            None,
            args,
            acc_core::gpu::Order { queue, waits },
        )
    }

    /// [`CudaDevice::launch_on`] for a kernel the device may keep, and know again by its
    /// address (the runtime's regions: see [`acc_core::gpu::KernelCache::find`]).
    pub fn launch_shared(
        &self,
        kernel: &Arc<Kernel>,
        args: &mut [Arg<'_>],
        queue: Queue,
        waits: Option<&[Queue]>,
    ) -> Result<Launched> {
        let order = acc_core::gpu::Order { queue, waits };
        acc_core::gpu::launch(self, kernel, Some(kernel), args, order)
    }
}

impl DeviceMemory for CudaDevice {
    fn buffer_at(&self, addr: u64, bytes: usize) -> Option<(BufferId, usize)> {
        let buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        buffers.iter().find_map(|(&id, b)| {
            let start = b.address(&self.stream);
            (start <= addr && addr + bytes as u64 <= start + b.len() as u64)
                .then(|| (id, (addr - start) as usize))
        })
    }

    fn copy_between(
        &self,
        (dst, dst_at): (BufferId, usize),
        (src, src_at): (BufferId, usize),
        bytes: usize,
    ) -> Result<()> {
        let to = self.buffer_address(dst, dst_at, bytes)?;
        let from = self.buffer_address(src, src_at, bytes)?;
        self.settle()?;
        // SAFETY: both ranges lie inside live buffers of this device (checked above).
        unsafe { cudarc::driver::result::memcpy_dtod_sync(to, from, bytes) }
            .map_err(|e| cuda_error("copying between device buffers", e))?;
        // A device-to-device copy may return before it is done: done before anything later.
        self.ctx
            .synchronize()
            .map_err(|e| cuda_error("copying between device buffers", e))
    }

    fn copy_from_peer(
        &self,
        elem: ElemLayout,
        (dst, dst_first): (BufferId, usize),
        peer: &dyn DeviceMemory,
        (src, src_first): (BufferId, usize),
        len: usize,
    ) -> Result<()> {
        let Some(from) = peer.as_any().and_then(|a| a.downcast_ref::<CudaDevice>()) else {
            // Another kind of device: through host memory.
            return acc_core::present::copy_through_host(
                elem,
                (self, dst, dst_first),
                (peer, src, src_first),
                len,
            );
        };
        let bytes = len * elem.size;
        let to = self.buffer_address(dst, dst_first * elem.size, bytes)?;
        let at = from.buffer_address(src, src_first * elem.size, bytes)?;
        if bytes == 0 {
            return Ok(());
        }
        self.settle()?;
        from.settle()?;
        // SAFETY: both ranges lie inside live buffers of their devices (checked above), and
        // both devices have finished what they were given.
        unsafe { super::peer::copy(&self.ctx, to, &from.ctx, at, bytes) }
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn raw_buffer(&self, buf: BufferId, elem: ElemLayout) -> Option<acc_core::present::RawBuffer> {
        let at = self.buffer_address(buf, 0, 0).ok()?;
        Some(acc_core::present::RawBuffer {
            elem_bytes: elem.size,
            handle: acc_core::present::RawHandle::Cuda(at),
        })
    }
    fn alloc(&self, elem: ElemLayout, len: usize) -> Result<BufferId> {
        let bytes = len
            .checked_mul(elem.size)
            .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
        let b = self.zeros(bytes)?;
        Ok(self.insert_buffer(Buffer::Own(b, bytes)))
    }

    /// CUDA memory of another library, checked to be an allocation of this device holding
    /// `bytes` bytes.
    fn adopt(&self, foreign: acc_core::present::Foreign, bytes: usize) -> Result<BufferId> {
        let acc_core::present::Foreign::Cuda { addr, keep } = foreign else {
            return Err(Error::Unsupported {
                what: "a wgpu buffer on the nvidia device".into(),
            });
        };
        buffer::check_foreign(&self.ctx, addr, bytes)?;
        Ok(self.insert_buffer(Buffer::Foreign {
            addr,
            bytes,
            _keep: keep,
        }))
    }

    fn upload(&self, buf: BufferId, elem: ElemLayout, first: usize, host: &[u8]) -> Result<()> {
        let at = self.buffer_address(buf, first * elem.size, host.len())?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        self.copy_in(at, host)
    }

    /// On an async queue, a copy of up to `QueuedUploads::MOST` bytes returns before it is
    /// done: it runs on the queue's stream after what the device's stream and the queue were
    /// given, from a page-locked copy of `host`, and what reads device memory from the host,
    /// frees it or waits for the queue waits for it.
    fn upload_queued(
        &self,
        buf: BufferId,
        elem: ElemLayout,
        first: usize,
        host: &[u8],
        queue: Queue,
    ) -> Result<()> {
        let Queue::Async(n) = queue else {
            return self.upload(buf, elem, first, host);
        };
        if host.is_empty() || host.len() > QueuedUploads::MOST {
            return self.upload(buf, elem, first, host);
        }
        let at = self.buffer_address(buf, first * elem.size, host.len())?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        self.flush()?;
        let q = self.queue_stream(n)?;
        // After what the device's stream was given: the data's allocation, and kernels
        // launched without `async` that may still read it.
        q.join(&self.stream)
            .map_err(|e| cuda_error("ordering an async queue after the device's stream", e))?;
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        // Before the copy is queued: a free or a wait from another thread then waits for it.
        self.queues_pending.store(true, Ordering::Release);
        self.queued_uploads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(&q, at, host)?;
        if let Some(t) = start {
            acc_core::observe::time::transfer(true, host.len(), t.elapsed());
        }
        Ok(())
    }

    fn download(
        &self,
        buf: BufferId,
        elem: ElemLayout,
        first: usize,
        host: &mut [u8],
    ) -> Result<()> {
        let at = self.buffer_address(buf, first * elem.size, host.len())?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        self.copy_out(at, host)
    }

    fn free(&self, buf: BufferId) {
        // A kernel still running may use the buffer (frees are stream-ordered too; waiting
        // keeps that from depending on how the driver frees).
        if let Err(e) = self.settle() {
            acc_core::observe::notify(acc_core::observe::Notify::Alloc, || format!("cuda: {e}"));
            // Reported by the device's next synchronization that can.
            if matches!(e, Error::EarlierLaunch { .. }) {
                self.deferred_checks().keep(e);
            }
        }
        self.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&buf);
    }
}

mod device;
mod launch;
mod timing;

pub use device::CudaBackend;
use timing::EventPair;

#[cfg(all(test, feature = "gpu-tests"))]
mod tests;
