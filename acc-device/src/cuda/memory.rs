//! Memory the CUDA runtime manages besides the present table's buffers: page-locked host
//! memory mapped into the device's address space (status words and per-block partials the
//! kernels write straight into host memory, and the staging buffers of transfers), and the
//! device's stream-ordered memory pool.

use std::sync::Arc;

use cudarc::driver::result as driver;
use cudarc::driver::{sys, CudaContext, CudaStream};

use acc_core::{Error, Result};

use super::result::{self, cuda_error};

/// `r`, its error as acc reports it while doing `what`.
fn check<T>(what: &str, r: result::DriverResult<T>) -> Result<T> {
    r.map_err(|e| cuda_error(what, e.0))
}

/// Page-locked host memory the device reads and writes through its own address.
pub struct Pinned {
    host: *mut u8,
    device: u64,
    len: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: the allocation is plain bytes owned by this value; the CUDA context it belongs to is
// usable from any thread.
unsafe impl Send for Pinned {}
// SAFETY: as above; shared references only read through `bytes`, after the stream finished.
unsafe impl Sync for Pinned {}

impl Pinned {
    /// `len` zeroed bytes.
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Pinned> {
        ctx.bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        let len = len.max(16);
        // SAFETY: the flags map the memory for the device; its bytes are zeroed below before
        // anything reads them.
        let host = unsafe {
            driver::malloc_host(
                len,
                sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
            )
        }
        .map_err(|_| Error::OutOfMemory { bytes: len })?;
        // SAFETY: `host` was just allocated with DEVICEMAP.
        let device = match check("mapping page-locked memory", unsafe {
            result::mem_host_device_pointer(host)
        }) {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: allocated above, not used since.
                let _ = unsafe { driver::free_host(host) };
                return Err(e);
            }
        };
        let host = host.cast::<u8>();
        // SAFETY: `len` bytes were allocated at `host`.
        unsafe { std::ptr::write_bytes(host, 0, len) };
        Ok(Pinned {
            host,
            device,
            len,
            ctx: Arc::clone(ctx),
        })
    }

    /// The address kernels use.
    pub fn device_address(&self) -> u64 {
        self.device
    }

    /// The bytes, as the device left them (only call when no kernel is writing them).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes live at `host` while `self` does.
        unsafe { std::slice::from_raw_parts(self.host, self.len) }
    }

    /// The bytes, to fill (only call when no kernel or copy is using them).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` makes it the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.host, self.len) }
    }

    /// Zeroes the first `n` bytes.
    pub fn clear(&mut self, n: usize) {
        let n = n.min(self.len);
        self.bytes_mut()[..n].fill(0);
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by cuMemHostAlloc in `new`; nothing uses it any more.
            let _ = unsafe { driver::free_host(self.host.cast()) };
        }
    }
}

/// Chunk size of staged transfers.
const CHUNK: usize = 16 << 20;

/// The bytes each core copies at a time between a chunk and the host's array.
const STRIPE: usize = 1 << 20;

/// Copies `src` into `dst` (of the same length) with rayon's pool, a stripe per task: one core
/// copies about 10 GB/s into page-locked memory, less than the link (25-50 GB/s), and a host
/// array the program has not touched yet (`vec![0.0; n]`) takes a page fault per page on its
/// first write, which several cores take in parallel.
fn copy_parallel(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    if src.len() <= STRIPE {
        dst.copy_from_slice(src);
        return;
    }
    dst.par_chunks_mut(STRIPE)
        .zip(src.par_chunks(STRIPE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Host transfers of large arrays go through two page-locked chunks: several cores fill (or
/// empty) one ([`copy_parallel`]) while the copy engine moves the other, instead of the
/// driver staging pageable memory one synchronous piece at a time.
pub struct Staging {
    chunks: Option<[Pinned; 2]>,
}

impl Staging {
    pub fn new() -> Staging {
        Staging { chunks: None }
    }

    /// Transfers of at least this many bytes are staged.
    pub const THRESHOLD: usize = 1 << 20;

    fn chunks(&mut self, ctx: &Arc<CudaContext>) -> Result<&mut [Pinned; 2]> {
        if self.chunks.is_none() {
            self.chunks = Some([Pinned::new(ctx, CHUNK)?, Pinned::new(ctx, CHUNK)?]);
        }
        Ok(self.chunks.as_mut().expect("set above"))
    }

    /// Copies `host` to device address `dst`, finishing before it returns.
    pub fn copy_in(&mut self, stream: &Arc<CudaStream>, dst: u64, host: &[u8]) -> Result<()> {
        let ctx = Arc::clone(stream.context());
        let chunks = self.chunks(&ctx)?;
        let (s, events) = (stream.cu_stream(), [new_event()?, new_event()?]);
        let result = (|| {
            for (n, piece) in host.chunks(CHUNK).enumerate() {
                let k = n % 2;
                // The chunk's previous copy must be done before the CPU refills it.
                if n >= 2 {
                    // SAFETY: the event was recorded on this stream.
                    check("waiting for a copy", unsafe {
                        driver::event::synchronize(events[k])
                    })?;
                }
                copy_parallel(&mut chunks[k].bytes_mut()[..piece.len()], piece);
                let at = dst + (n * CHUNK) as u64;
                // SAFETY: the chunk holds `piece.len()` bytes and stays untouched until the
                // event recorded after the copy completes; `dst` has room (the caller's buffer).
                check("copying in", unsafe {
                    driver::memcpy_htod_async(at, &chunks[k].bytes()[..piece.len()], s)
                })?;
                // SAFETY: an event and a stream of the bound context.
                check("recording an event", unsafe {
                    driver::event::record(events[k], s)
                })?;
            }
            // SAFETY: the stream of the bound context.
            check("copying in", unsafe { driver::stream::synchronize(s) })
        })();
        destroy_events(events);
        result
    }

    /// Copies device address `src` to `host`, finishing before it returns.
    pub fn copy_out(&mut self, stream: &Arc<CudaStream>, src: u64, host: &mut [u8]) -> Result<()> {
        let ctx = Arc::clone(stream.context());
        let chunks = self.chunks(&ctx)?;
        let (s, events) = (stream.cu_stream(), [new_event()?, new_event()?]);
        let pieces: Vec<&mut [u8]> = host.chunks_mut(CHUNK).collect();
        let count = pieces.len();
        let result = (|| {
            let issue = |n: usize, len: usize, chunks: &mut [Pinned; 2]| -> Result<()> {
                let k = n % 2;
                let at = src + (n * CHUNK) as u64;
                // SAFETY: the chunk has room for `len` bytes and is not read until its event.
                check("copying out", unsafe {
                    driver::memcpy_dtoh_async(&mut chunks[k].bytes_mut()[..len], at, s)
                })?;
                // SAFETY: an event and a stream of the bound context.
                check("recording an event", unsafe {
                    driver::event::record(events[k], s)
                })
            };
            let lens: Vec<usize> = pieces.iter().map(|p| p.len()).collect();
            if count > 0 {
                issue(0, lens[0], chunks)?;
            }
            for (n, piece) in pieces.into_iter().enumerate() {
                // The next piece moves while this one is copied out of its chunk.
                if n + 1 < count {
                    issue(n + 1, lens[n + 1], chunks)?;
                }
                // SAFETY: the event was recorded on this stream after the piece's copy.
                check("copying out", unsafe {
                    driver::event::synchronize(events[n % 2])
                })?;
                copy_parallel(piece, &chunks[n % 2].bytes()[..piece.len()]);
            }
            Ok(())
        })();
        destroy_events(events);
        result
    }
}

/// The page-locked copies of host data that `update device` with `async` sends from (3.3
/// section 2.14.4): the host's array is copied here at the call, so that it may change at
/// once, and the device copies from here on the queue's stream. A copy is reused once the
/// event recorded after its transfer has passed.
#[derive(Default)]
pub struct QueuedUploads {
    /// Copies free for reuse.
    free: Vec<Pinned>,
    /// Copies a transfer may still read, each with the event after its transfer.
    busy: Vec<(cudarc::driver::CudaEvent, Pinned)>,
}

impl QueuedUploads {
    /// The largest transfer sent this way; larger ones copy at once (a page-locked copy of
    /// their size would cost more to allocate than the overlap gains).
    pub const MOST: usize = 64 << 20;

    /// How many free copies are kept for reuse.
    const KEPT: usize = 8;

    /// Most bytes of copies whose transfers may still run (a deep queue of updates waits for
    /// its oldest beyond this instead of allocating more page-locked memory).
    const MOST_BUSY: usize = 512 << 20;

    /// Sends `host` to device address `dst` on `stream` (which runs it after what it was
    /// given): returns once `host` is copied to page-locked memory, before the transfer.
    pub fn send(&mut self, stream: &Arc<CudaStream>, dst: u64, host: &[u8]) -> Result<()> {
        let ctx = stream.context();
        // Copies whose transfers are done are free again.
        let (done, busy): (Vec<_>, Vec<_>) = std::mem::take(&mut self.busy)
            .into_iter()
            .partition(|(e, _)| e.is_complete());
        self.busy = busy;
        self.free.extend(done.into_iter().map(|(_, p)| p));
        let at = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, p)| p.len >= host.len())
            .min_by_key(|(_, p)| p.len)
            .map(|(i, _)| i);
        let mut copy = match at {
            Some(i) => self.free.swap_remove(i),
            None => Pinned::new(ctx, host.len().next_power_of_two().max(64 << 10))?,
        };
        copy_parallel(&mut copy.bytes_mut()[..host.len()], host);
        // SAFETY: `copy` holds `host.len()` bytes and is kept untouched (in `busy`) until the
        // event recorded after the transfer has passed; `dst` has room (the caller's buffer).
        check("copying in on a queue", unsafe {
            driver::memcpy_htod_async(dst, &copy.bytes()[..host.len()], stream.cu_stream())
        })?;
        let done = match stream.record_event(None) {
            Ok(e) => e,
            Err(e) => {
                // The transfer may still read `copy`: it is freed only after the stream.
                let _ = stream.synchronize();
                return Err(cuda_error("recording an event", e));
            }
        };
        self.busy.push((done, copy));
        // At most `MOST_BUSY` bytes of copies in flight: past it, the oldest are waited for.
        while self.busy.iter().map(|(_, p)| p.len).sum::<usize>() > Self::MOST_BUSY {
            let (oldest, p) = self.busy.remove(0);
            oldest
                .synchronize()
                .map_err(|e| cuda_error("waiting for a queued copy", e))?;
            self.free.push(p);
        }
        self.free.truncate(Self::KEPT);
        Ok(())
    }
}

impl Drop for QueuedUploads {
    fn drop(&mut self) {
        // A transfer may still read its copy (a device shut down with a queue running):
        // its page-locked memory is freed only after it.
        for (done, _) in &self.busy {
            let _ = done.synchronize();
        }
    }
}

fn new_event() -> Result<sys::CUevent> {
    check(
        "creating an event",
        driver::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING),
    )
}

fn destroy_events(events: [sys::CUevent; 2]) {
    for e in events {
        // SAFETY: created by `new_event`, no longer waited on.
        let _ = unsafe { driver::event::destroy(e) };
    }
}

/// Makes the device's stream-ordered pool keep freed memory for later allocations instead of
/// returning it to the driver at each synchronization (the pool behind every allocation of
/// the runtime: present data, temporaries and scratch).
pub fn keep_pool_memory(ctx: &CudaContext) {
    // SAFETY: the device handle comes from a live context.
    if let Ok(pool) = unsafe { driver::device::get_default_mem_pool(ctx.cu_device()) } {
        let mut keep = u64::MAX;
        // SAFETY: the attribute takes a pointer to a u64.
        let _ = unsafe {
            driver::mem_pool::set_attribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast(),
            )
        };
    }
}
