//! Launches recorded but not yet submitted (issue 16): on wgpu most of a short region's time is
//! wgpu-core's per-submission work (finishing a command encoder, the queue's maintenance at
//! each submission, a staging buffer per `write_buffer`: `docs/design-notes/launches.md`).
//! So consecutive launches that return without waiting are recorded into one command encoder
//! and, while nothing between them needs the encoder, one compute pass; their parameters and
//! host values go to slots of one upload buffer (bound at dynamic offsets), written with one
//! `write_buffer` when the batch is submitted.
//!
//! The device's one wgpu queue runs submissions in order, and a `write_buffer` lands before
//! the next submission's command buffers. So everything else that submits or writes device
//! memory (a transfer, an allocation, a freed buffer going back to the pool, a wait) submits
//! the batch first ([`WgpuDevice::submit_pending`]), and the program sees the order it wrote.
//! A batch is submitted at once when a launch in it is large (its GPU time then dwarfs a
//! submission's cost, and it should start while the host goes on), every
//! [`LAUNCHES_PER_SUBMISSION`] launches, when its upload buffer is full, and under
//! `ACC_TIME` (which times each launch's submission).

use super::*;

/// Bytes of the upload buffer that holds a batch's parameters and host values.
pub(in crate::wgpu) const UPLOAD_BYTES: u64 = 4 << 20;

/// Launches recorded before a batch is submitted without waiting for a reason.
const LAUNCHES_PER_SUBMISSION: usize = 32;

/// Dispatches recorded before a batch is submitted (a long host loop's earlier dispatches run
/// while later ones are recorded).
const DISPATCHES_PER_SUBMISSION: usize = 4096;

/// Workgroups from which a launch is large: its batch is submitted at once.
pub(in crate::wgpu) const LARGE_LAUNCH_WORKGROUPS: u64 = 256;

/// The batch of launches recorded and not yet submitted, and the queues' last launches.
#[derive(Default)]
pub(in crate::wgpu) struct Batch {
    encoder: Option<wgpu::CommandEncoder>,
    /// The compute pass open on `encoder`, if any (ended before anything else is recorded).
    pass: Option<wgpu::ComputePass<'static>>,
    /// The upload buffer's contents for this batch, from offset 0.
    uploads: Vec<u8>,
    /// Pool buffers of the batch's launches, given back once it is submitted.
    temporaries: Vec<wgpu::Buffer>,
    /// Names of the kernels recorded, for errors.
    kernels: Vec<String>,
    dispatches: usize,
    /// Launches recorded that returned before running.
    launches: usize,
    /// Batches submitted so far: a launch whose uploads were staged in an earlier batch
    /// stages them again.
    pub(in crate::wgpu) generation: u64,
    /// An error of submitting a batch where no caller could be told (a freed buffer), reported
    /// by the next launch or wait.
    failed: Option<Error>,
    /// Per queue, the number of its last launch (in submission order) and the submission
    /// holding it (none while it waits in the batch).
    pub(in crate::wgpu) queued: HashMap<Queue, (u64, Option<wgpu::SubmissionIndex>)>,
    /// Launches that returned before running, so far.
    pub(in crate::wgpu) queued_count: u64,
}

impl Batch {
    /// The batch's encoder, with no pass open (to record copies and clears).
    pub(in crate::wgpu) fn encoder(&mut self, device: &wgpu::Device) -> &mut wgpu::CommandEncoder {
        self.pass = None;
        self.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("acc launches"),
            })
        })
    }

    /// The batch's open compute pass.
    pub(in crate::wgpu) fn pass(
        &mut self,
        device: &wgpu::Device,
    ) -> &mut wgpu::ComputePass<'static> {
        if self.pass.is_none() {
            let pass = self
                .encoder(device)
                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: None,
                })
                .forget_lifetime();
            self.pass = Some(pass);
        }
        self.pass.as_mut().expect("opened above")
    }

    /// Places `bytes` (padded to `size`) at the next offset aligned to `align` of the upload
    /// buffer; `None` when it is full.
    pub(in crate::wgpu) fn stage(&mut self, bytes: &[u8], size: u64, align: u64) -> Option<u32> {
        let at = (self.uploads.len() as u64).next_multiple_of(align);
        let end = at + size.max(bytes.len() as u64);
        if end > UPLOAD_BYTES {
            return None;
        }
        self.uploads.resize(at as usize, 0);
        self.uploads.extend_from_slice(bytes);
        self.uploads.resize(end as usize, 0);
        Some(at as u32)
    }

    /// Counts a recorded dispatch; whether the batch should be submitted now.
    pub(in crate::wgpu) fn dispatched(&mut self) -> bool {
        self.dispatches += 1;
        self.dispatches >= DISPATCHES_PER_SUBMISSION
    }

    /// Takes a launch that returns before running (its temporaries wait for the submission);
    /// whether the batch should be submitted now.
    pub(in crate::wgpu) fn keep(&mut self, queue: Queue, temporaries: Vec<wgpu::Buffer>) -> bool {
        self.queued_count += 1;
        self.queued.insert(queue, (self.queued_count, None));
        self.temporaries.extend(temporaries);
        self.launches += 1;
        self.launches >= LAUNCHES_PER_SUBMISSION
    }

    /// Pool buffers given back once the batch is submitted (a pending launch may use them).
    pub(in crate::wgpu) fn keep_temporaries(
        &mut self,
        buffers: impl IntoIterator<Item = wgpu::Buffer>,
    ) {
        self.temporaries.extend(buffers);
    }

    /// Notes that a launch of `kernel` is recorded.
    pub(in crate::wgpu) fn recorded(&mut self, kernel: &str) {
        if self.kernels.last().is_none_or(|k| k != kernel) {
            self.kernels.push(kernel.to_string());
        }
    }

    /// Takes the error of an earlier submission that no caller was told of.
    pub(in crate::wgpu) fn take_failure(&mut self) -> Result<()> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether launches wait in the batch.
    pub(in crate::wgpu) fn is_empty(&self) -> bool {
        self.encoder.is_none() && self.uploads.is_empty()
    }
}

impl WgpuDevice {
    /// Submits the batch (see the module's documentation), before other work of the device.
    pub(in crate::wgpu) fn submit_pending(&self) -> Result<()> {
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        self.submit(&mut batch)?;
        batch.take_failure()
    }

    /// [`WgpuDevice::submit_pending`] where no error can be returned: a failure waits for the
    /// next launch or wait.
    pub(in crate::wgpu) fn submit_pending_quietly(&self) {
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = self.submit(&mut batch) {
            batch.failed.get_or_insert(e);
        }
    }

    /// Submits `batch` with `extra` work recorded after it (a launch's read-back copies),
    /// writing its uploads first; the submission's index, if anything was submitted.
    pub(in crate::wgpu) fn submit(
        &self,
        batch: &mut Batch,
    ) -> Result<Option<wgpu::SubmissionIndex>> {
        if batch.is_empty() {
            return Ok(None);
        }
        batch.pass = None;
        if !batch.uploads.is_empty() {
            self.queue.write_buffer(&self.uploads, 0, &batch.uploads);
            batch.uploads.clear();
        }
        let encoder = batch.encoder.take();
        // A pass's errors surface when its encoder finishes.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let index = self.queue.submit(encoder.map(wgpu::CommandEncoder::finish));
        let error = pollster::block_on(scope.pop());
        for (_, (_, at)) in batch.queued.iter_mut() {
            at.get_or_insert_with(|| index.clone());
        }
        let number = batch.queued_count;
        let finished = Arc::clone(&self.finished);
        self.queue.on_submitted_work_done(move || {
            finished.fetch_max(number, Ordering::Relaxed);
        });
        for t in batch.temporaries.drain(..) {
            self.pool.give(t);
        }
        batch.generation += 1;
        batch.dispatches = 0;
        batch.launches = 0;
        let kernels = std::mem::take(&mut batch.kernels);
        match error {
            Some(e) => Err(Error::Unsupported {
                what: format!(
                    "internal error: wgpu refused the launches of `{}`: {e}",
                    kernels.join("`, `")
                ),
            }),
            None => Ok(Some(index)),
        }
    }

    /// The upload buffer's offset alignment (dynamic storage offsets).
    pub(in crate::wgpu) fn upload_align(&self) -> u64 {
        u64::from(self.device.limits().min_storage_buffer_offset_alignment).max(8)
    }
}
