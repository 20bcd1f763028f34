//! Buffers kept for reuse (docs/design-notes/execution-model.md: device allocations come from a pool). Creating
//! a wgpu buffer is a driver allocation (and, for storage, a zero fill); present data, a
//! launch's temporaries and read-back staging come and go with every region, so freed buffers
//! wait here for the next request of their kind and size class.
//!
//! A buffer is handed out for any size up to its own: kernels know each array's length from
//! their parameters, never from the buffer, and copies name their byte ranges. Sizes are
//! rounded up to classes an eighth of a power of two apart (at most 12.5% unused), and the
//! pool keeps at most [`IDLE_BYTES`] idle; beyond it, freed buffers are destroyed.

use std::collections::HashMap;
use std::sync::Mutex;

/// Idle bytes the pool keeps at most.
pub(super) const IDLE_BYTES: u64 = 256 << 20;

/// Idle buffers of one kind and size class kept at most.
const PER_CLASS: usize = 8;

/// Sizes below this share one class.
const SMALLEST: u64 = 256;

/// The size class `bytes` is rounded up to (never above `largest`, the device's limit).
pub(super) fn size_class(bytes: u64, largest: u64) -> u64 {
    let b = bytes.max(SMALLEST);
    // An eighth of the largest power of two in `b`: less than `b / 8` unused.
    let step = ((1u64 << (63 - b.leading_zeros())) / 8).max(SMALLEST);
    b.next_multiple_of(step).min(largest.max(b))
}

/// Idle buffers by usage and size class.
#[derive(Default)]
pub(super) struct BufferPool {
    idle: Mutex<Idle>,
}

#[derive(Default)]
struct Idle {
    buffers: HashMap<(wgpu::BufferUsages, u64), Vec<wgpu::Buffer>>,
    bytes: u64,
    /// Buffers handed out that were made new, and reused.
    created: u64,
    reused: u64,
}

impl BufferPool {
    /// A buffer of at least `bytes` bytes (rounded to its class) with `usage`: an idle one of
    /// that class, else a new one. Its contents are whatever its last user left.
    pub(super) fn take(
        &self,
        device: &wgpu::Device,
        bytes: u64,
        usage: wgpu::BufferUsages,
        label: &str,
    ) -> wgpu::Buffer {
        let limits = device.limits();
        let class = size_class(bytes, limits.max_buffer_size);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = idle.buffers.get_mut(&(usage, class)).and_then(Vec::pop) {
            idle.bytes -= b.size();
            idle.reused += 1;
            return b;
        }
        idle.created += 1;
        drop(idle);
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: class,
            usage,
            mapped_at_creation: false,
        })
    }

    /// Takes `b` back for reuse (it must not be mapped); past the pool's limits it is
    /// destroyed. wgpu keeps a buffer that submitted work still uses alive until that work is
    /// done, and later uses are ordered after it on the device's one queue.
    pub(super) fn give(&self, b: wgpu::Buffer) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let size = b.size();
        let over = idle.bytes + size > IDLE_BYTES;
        let list = idle.buffers.entry((b.usage(), size)).or_default();
        if list.len() >= PER_CLASS || over {
            drop(idle);
            b.destroy();
            return;
        }
        list.push(b);
        idle.bytes += size;
    }

    /// Destroys every idle buffer (`acc_shutdown`).
    pub(super) fn clear(&self) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        for (_, list) in idle.buffers.drain() {
            for b in list {
                b.destroy();
            }
        }
        idle.bytes = 0;
    }

    /// Buffers made new and buffers reused since the device opened.
    #[cfg(test)]
    pub(super) fn counts(&self) -> (u64, u64) {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        (idle.created, idle.reused)
    }
}

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn size_classes_waste_at_most_an_eighth_and_respect_the_limit() {
        assert_eq!(size_class(1, 1 << 30), 256);
        assert_eq!(size_class(256, 1 << 30), 256);
        assert_eq!(size_class(257, 1 << 30), 512);
        assert_eq!(size_class(4096, 1 << 30), 4096);
        assert_eq!(size_class(4097, 1 << 30), 4096 + 512);
        for b in [1000u64, 12_345, 1 << 20, (1 << 20) + 1, 300_000_000] {
            let c = size_class(b, u64::MAX);
            assert!(c >= b && c - b <= (b / 8).max(256), "{b} -> {c}");
            assert_eq!(c % 4, 0);
        }
        assert_eq!(size_class(1000, 600), 1000);
        assert_eq!(size_class(500, 600), 512);
    }
}
