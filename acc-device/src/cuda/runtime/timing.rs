//! What `ACC_TIME` records of a launch: the CUDA events around its kernels.

use super::*;

/// Two events around a launch's kernels on their stream (`ACC_TIME`); once read, they go back
/// to the device's pool.
pub(super) struct EventPair {
    pub(super) start: Option<cudarc::driver::CudaEvent>,
    pub(super) end: Option<cudarc::driver::CudaEvent>,
    pub(super) pool: Arc<Mutex<Vec<cudarc::driver::CudaEvent>>>,
}

impl acc_core::observe::time::PendingTime for EventPair {
    fn poll(&mut self) -> Option<Option<std::time::Duration>> {
        self.end.as_ref()?.is_complete().then(|| self.elapsed())
    }
    fn wait(self: Box<Self>) -> Option<std::time::Duration> {
        self.elapsed()
    }
}

impl EventPair {
    fn elapsed(&self) -> Option<std::time::Duration> {
        let (start, end) = (self.start.as_ref()?, self.end.as_ref()?);
        start
            .elapsed_ms(end)
            .ok()
            .map(|ms| std::time::Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
}

impl Drop for EventPair {
    fn drop(&mut self) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        // Only events that have completed are reused (a dropped pair was read, or its launch
        // is abandoned: then its events are destroyed).
        for e in [self.start.take(), self.end.take()].into_iter().flatten() {
            if e.is_complete() && pool.len() < 256 {
                pool.push(e);
            }
        }
    }
}
