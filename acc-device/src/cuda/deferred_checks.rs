//! The status words of launches that returned before the GPU ran them although their
//! accesses are not proven in bounds (issue 42: Rodinia's nw, 16,381 launches, each waiting
//! for the GPU, spent 35 us a launch on the host). Each such launch writes its status words
//! into a slot of its own ([`DeferredChecks::take`]), and is listed once it is submitted or
//! recorded ([`DeferredChecks::commit`]). A synchronization counts the listed launches first
//! ([`DeferredChecks::listed`]), then submits the recorded ones and waits for the stream, so
//! that every launch it counted has run when it reads their slots ([`DeferredChecks::check`]).
//! An error is reported to the thread that made the launch, at its next synchronization, as
//! [`Error::EarlierLaunch`] naming the region; a synchronization on another thread keeps it for
//! that thread. When every slot is taken, a launch waits as before.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::ThreadId;

use cudarc::driver::CudaContext;

use acc_core::gpu::status;
use acc_core::ir::Kernel;
use acc_core::{Error, Result};

use super::memory::Pinned;

/// Launches whose status words may wait for a synchronization at once.
const SLOTS: usize = 4096;

/// A launch checked later: its slot, its kernel, the thread that made it.
struct Listed {
    slot: usize,
    kernel: Arc<Kernel>,
    thread: ThreadId,
}

/// The slots, and the launches that wrote into them since the last check.
pub struct DeferredChecks {
    /// `SLOTS` sets of status words, zeroed (made at the first deferred check).
    slots: Option<Pinned>,
    /// The slots no launch holds.
    free: Vec<usize>,
    /// The launches submitted or recorded since their last check, in launch order.
    listed: Vec<Listed>,
    /// Errors found by a synchronization on another thread than the launch's (or where they
    /// could not be reported): each thread's first, for its next synchronization.
    kept: HashMap<ThreadId, Error>,
}

impl DeferredChecks {
    pub fn new() -> DeferredChecks {
        DeferredChecks {
            slots: None,
            free: (0..SLOTS).rev().collect(),
            listed: Vec::new(),
            kept: HashMap::new(),
        }
    }

    /// A slot for a launch checked later: its number and the device address of its status
    /// words, or `None` when every slot is taken (the launch then waits).
    pub fn take(&mut self, ctx: &Arc<CudaContext>) -> Result<Option<(usize, u64)>> {
        if self.slots.is_none() {
            self.slots = Some(Pinned::new(ctx, SLOTS * status::BYTES)?);
        }
        let Some(slot) = self.free.pop() else {
            return Ok(None);
        };
        let base = self.slots.as_ref().map_or(0, Pinned::device_address);
        Ok(Some((slot, base + (slot * status::BYTES) as u64)))
    }

    /// Lists the launch of `kernel` on `slot`, submitted or recorded by this thread.
    pub fn commit(&mut self, slot: usize, kernel: &Arc<Kernel>) {
        self.listed.push(Listed {
            slot,
            kernel: Arc::clone(kernel),
            thread: std::thread::current().id(),
        });
    }

    /// Gives back `slot`, taken by a launch that failed before it was submitted.
    pub fn abandon(&mut self, slot: usize) {
        self.free.push(slot);
    }

    /// How many launches are listed: what a synchronization about to begin covers.
    pub fn listed(&self) -> usize {
        self.listed.len()
    }

    /// After a synchronization that began with `covered` launches listed: reads their slots
    /// and frees them. Returns the first error of this thread's launches (or one kept for it);
    /// other threads' errors are kept for them.
    pub fn check(&mut self, covered: usize, device: &str) -> Result<()> {
        let me = std::thread::current().id();
        if let Some(slots) = self.slots.as_mut() {
            for l in self.listed.drain(..covered.min(self.listed.len())) {
                let at = l.slot * status::BYTES;
                let words = &slots.bytes()[at..at + status::BYTES];
                if words.iter().any(|&b| b != 0) {
                    if let Err(e) = status::check(words, &l.kernel, device) {
                        self.kept
                            .entry(l.thread)
                            .or_insert_with(|| Error::EarlierLaunch {
                                kernel: l.kernel.name.clone(),
                                error: Box::new(e),
                            });
                    }
                    slots.bytes_mut()[at..at + status::BYTES].fill(0);
                }
                self.free.push(l.slot);
            }
        }
        self.kept.remove(&me).map_or(Ok(()), Err)
    }

    /// Keeps `e`, found by a use of the device that cannot report it, for this thread's next
    /// synchronization.
    pub fn keep(&mut self, e: Error) {
        self.kept.entry(std::thread::current().id()).or_insert(e);
    }
}
