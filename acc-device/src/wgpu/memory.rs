//! Device memory of a wgpu adapter for the present table (OpenACC 3.3 section 2.6): storage
//! buffers named by number, filled with `Queue::write_buffer` and read back through a mapped
//! staging buffer. Elements that wgpu holds in 32-bit words (`bool`, 8/16-bit integers, and
//! `usize`/`isize` where the adapter has no 64-bit integers) are widened on the way in and
//! narrowed on the way out.

use acc_core::present::{BufferId, DeviceMemory, ElemLayout};
use acc_core::{Error, Result};

use super::runtime::{narrow, widen, WgpuDevice};
use crate::wgsl::{widened_in_buffers, Target};

/// Bytes one element takes in a device buffer of `target`.
pub(super) fn device_elem_size(elem: ElemLayout, target: Target) -> Result<usize> {
    match elem.scalar {
        Some(t) if widened_in_buffers(t, target) => Ok(4),
        Some(t) => Ok(t.size() as usize),
        // Structs travel bit for bit; wgpu copies whole 4-byte words.
        None if elem.size % 4 == 0 => Ok(elem.size),
        None => Err(Error::Unsupported {
            what: format!(
                "on wgpu: elements of {} bytes (copies there move whole 4-byte words)",
                elem.size
            ),
        }),
    }
}

/// Buffers the host reads device data through.
pub(super) const STAGING: wgpu::BufferUsages =
    wgpu::BufferUsages::MAP_READ.union(wgpu::BufferUsages::COPY_DST);

/// Storage buffers for kernels, copied both ways.
pub(super) const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

impl WgpuDevice {
    /// A present buffer by number.
    pub(super) fn buffer(&self, buf: BufferId) -> Result<wgpu::Buffer> {
        self.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&buf)
            .cloned()
            .ok_or_else(|| Error::Unsupported {
                what: format!("internal error: wgpu buffer {buf} is not allocated"),
            })
    }

    /// Copies `bytes` bytes of `buffer` from `offset` to the host.
    pub(super) fn read_back(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<Vec<u8>> {
        let size = bytes.next_multiple_of(4).max(4);
        let staging = self.pool.take(&self.device, size, STAGING, "acc download");
        // After the launches waiting in the batch, in its submission.
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch
            .encoder(&self.device)
            .copy_buffer_to_buffer(buffer, offset, &staging, 0, size);
        self.submit(&mut batch)?;
        batch.take_failure()?;
        drop(batch);
        staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Unsupported {
                what: format!("wgpu device lost while copying out: {e}"),
            })?;
        let data = staging
            .slice(..)
            .get_mapped_range()
            .map_err(|e| Error::Unsupported {
                what: format!("wgpu: reading back a buffer: {e}"),
            })?
            .to_vec();
        staging.unmap();
        self.pool.give(staging);
        Ok(data[..bytes as usize].to_vec())
    }
}

/// The addresses acc makes up for wgpu buffers (which have none) for the memory routines:
/// this bit set, the buffer's number from bit 40 up, the byte offset below.
const ADDRESS_TAG: u64 = 1 << 62;
const OFFSET_BITS: u32 = 40;

impl WgpuDevice {
    /// Most bytes of one binding of private arrays spilled to device memory
    /// (`acc_core::ir::spill`): what one storage buffer may hold, at most 1 GiB.
    pub(super) fn spill_bytes(&self) -> u64 {
        let limits = self.device.limits();
        limits
            .max_buffer_size
            .min(limits.max_storage_buffer_binding_size)
            .min(1 << 30)
    }

    /// A zeroed storage buffer of `bytes` bytes (rounded up to whole words).
    fn alloc_raw(&self, bytes: usize) -> Result<BufferId> {
        let limits = self.device.limits();
        let largest = limits
            .max_buffer_size
            .min(limits.max_storage_buffer_binding_size);
        if bytes as u64 > largest {
            return Err(Error::OutOfMemory { bytes });
        }
        let size = (bytes as u64).next_multiple_of(4).max(4);
        let buffer = self.pool.take(&self.device, size, STORAGE, "acc present");
        // `alloc` gives zeroed memory (`create(zero: ..)`); a new buffer is, a reused one is
        // cleared on the queue (in the batch of launches), before anything later uses it.
        self.batch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .encoder(&self.device)
            .clear_buffer(&buffer, 0, None);
        let id = self
            .next_buffer
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, buffer);
        self.buffer_bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, bytes as u64);
        Ok(id)
    }
}

impl DeviceMemory for WgpuDevice {
    fn alloc(&self, elem: ElemLayout, len: usize) -> Result<BufferId> {
        let bytes = len
            .checked_mul(device_elem_size(elem, self.target())?)
            .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
        self.alloc_raw(bytes)
    }

    fn alloc_bytes(&self, bytes: usize) -> Result<BufferId> {
        self.alloc_raw(bytes)
    }

    /// wgpu writes whole words at word offsets: the words at either end are read first where
    /// the bytes do not cover them.
    fn upload_bytes(&self, buf: BufferId, at: usize, host: &[u8]) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        let buffer = self.buffer(buf)?;
        let (lo, hi) = (at & !3, (at + host.len()).next_multiple_of(4));
        let words = if lo == at && hi == at + host.len() {
            host.to_vec()
        } else {
            let mut w = self.read_back(&buffer, lo as u64, (hi - lo) as u64)?;
            w[at - lo..at - lo + host.len()].copy_from_slice(host);
            w
        };
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        self.submit_pending()?;
        self.queue.write_buffer(&buffer, lo as u64, &words);
        self.queue.submit([]);
        if let Some(t) = start {
            acc_core::observe::time::transfer(true, host.len(), t.elapsed());
        }
        Ok(())
    }

    fn download_bytes(&self, buf: BufferId, at: usize, host: &mut [u8]) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        let buffer = self.buffer(buf)?;
        let lo = at & !3;
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        let words = self.read_back(&buffer, lo as u64, (at + host.len() - lo) as u64)?;
        if let Some(t) = start {
            acc_core::observe::time::transfer(false, host.len(), t.elapsed());
        }
        host.copy_from_slice(&words[at - lo..at - lo + host.len()]);
        Ok(())
    }

    fn address(&self, buf: BufferId) -> Option<u64> {
        (buf < 1 << (62 - OFFSET_BITS) && self.buffer(buf).is_ok())
            .then_some(ADDRESS_TAG | buf << OFFSET_BITS)
    }

    fn buffer_at(&self, addr: u64, bytes: usize) -> Option<(BufferId, usize)> {
        if addr & !((1 << 62) - 1) != ADDRESS_TAG {
            return None;
        }
        let buf = (addr & ((1 << 62) - 1)) >> OFFSET_BITS;
        let at = addr & ((1 << OFFSET_BITS) - 1);
        let size = *self
            .buffer_bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&buf)?;
        (at + bytes as u64 <= size).then_some((buf, at as usize))
    }

    fn upload(&self, buf: BufferId, elem: ElemLayout, first: usize, host: &[u8]) -> Result<()> {
        let buffer = self.buffer(buf)?;
        let size = device_elem_size(elem, self.target())?;
        let data = match elem.scalar {
            Some(t) if widened_in_buffers(t, self.target()) => widen(t, host, "data")?,
            _ => host.to_vec(),
        };
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        // A write lands before the next submission: the launches waiting go first.
        self.submit_pending()?;
        self.queue
            .write_buffer(&buffer, (first * size) as u64, &data);
        self.queue.submit([]);
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
        let buffer = self.buffer(buf)?;
        let size = device_elem_size(elem, self.target())?;
        let len = host.len() / elem.size;
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        let words = self.read_back(&buffer, (first * size) as u64, (len * size) as u64)?;
        if let Some(t) = start {
            acc_core::observe::time::transfer(false, host.len(), t.elapsed());
        }
        match elem.scalar {
            Some(t) if widened_in_buffers(t, self.target()) => narrow(t, &words, host),
            _ => host.copy_from_slice(&words[..host.len()]),
        }
        Ok(())
    }

    fn raw_buffer(&self, buf: BufferId, elem: ElemLayout) -> Option<acc_core::present::RawBuffer> {
        Some(acc_core::present::RawBuffer {
            elem_bytes: device_elem_size(elem, self.target()).ok()?,
            handle: acc_core::present::RawHandle::Wgpu(Box::new(self.buffer(buf).ok()?)),
        })
    }

    /// A `wgpu::Buffer` of another library's, used from its start: it must have been made on
    /// this device with `STORAGE | COPY_SRC | COPY_DST` usage and hold `bytes` bytes.
    fn adopt(&self, foreign: acc_core::present::Foreign, bytes: usize) -> Result<BufferId> {
        let acc_core::present::Foreign::Wgpu(any) = foreign else {
            return Err(Error::Unsupported {
                what: "CUDA memory on the wgpu device".into(),
            });
        };
        let buffer = any
            .downcast::<wgpu::Buffer>()
            .map_err(|_| Error::Unsupported {
                what: "a wgpu buffer of another wgpu version than acc's (use `acc::wgpu`)".into(),
            })?;
        if !buffer.usage().contains(STORAGE) {
            return Err(Error::Unsupported {
                what: format!(
                    "a wgpu buffer with usage {:?}: acc needs STORAGE | COPY_SRC | COPY_DST",
                    buffer.usage()
                ),
            });
        }
        // (Copies move whole 4-byte words.)
        if buffer.size() < (bytes as u64).next_multiple_of(4) {
            return Err(Error::Unsupported {
                what: format!(
                    "a wgpu buffer of {} bytes holding {bytes} bytes of elements",
                    buffer.size()
                ),
            });
        }
        let limits = self.device.limits();
        if buffer.size() > limits.max_storage_buffer_binding_size {
            return Err(Error::Unsupported {
                what: format!(
                    "a wgpu buffer of {} bytes: the device binds at most {} bytes",
                    buffer.size(),
                    limits.max_storage_buffer_binding_size
                ),
            });
        }
        let id = self
            .next_buffer
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.adopted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id);
        self.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, *buffer);
        self.buffer_bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, bytes as u64);
        Ok(id)
    }

    fn free(&self, buf: BufferId) {
        self.buffer_bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&buf);
        let adopted = self
            .adopted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&buf);
        if let Some(b) = self
            .buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&buf)
        {
            // A launch waiting in the batch may still use it.
            let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
            if adopted {
                // The other library's: never reused by acc. wgpu keeps it alive for the
                // launches that use it.
                drop(b);
            } else if batch.is_empty() {
                self.pool.give(b);
            } else {
                batch.keep_temporaries([b]);
            }
        }
    }
}
