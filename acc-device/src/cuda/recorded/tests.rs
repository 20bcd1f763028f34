//! The recorder on the first NVIDIA GPU (feature `gpu-tests`): recorded launches of two
//! functions, order-sensitive, submitted as graph chains and one by one, by a flush and by
//! the flusher alone.

use super::*;
use crate::cuda::compile::Code;
use crate::cuda::module_cache;
use cudarc::driver::DevicePtr;

/// `*p = *p * 3 + k` and `*p = *p * 5 ^ k`, one thread each: a sequence of them gives its
/// value only in its order.
const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry times3(.param .u64 p, .param .u64 k)
{
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [k];
    ld.global.u64 %rd3, [%rd1];
    mul.lo.u64 %rd4, %rd3, 3;
    add.u64 %rd4, %rd4, %rd2;
    st.global.u64 [%rd1], %rd4;
    ret;
}
.visible .entry times5(.param .u64 p, .param .u64 k)
{
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [k];
    ld.global.u64 %rd3, [%rd1];
    mul.lo.u64 %rd4, %rd3, 5;
    xor.b64 %rd4, %rd4, %rd2;
    st.global.u64 [%rd1], %rd4;
    ret;
}
"#;

struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    job: Arc<Job>,
    sm: u32,
}

fn gpu() -> Option<Gpu> {
    // SAFETY: only tries to load the driver library.
    let present = unsafe { sys::is_culib_present() };
    let opened = if present {
        CudaContext::new(0).map_err(|e| format!("{e:?}"))
    } else {
        Err("no NVIDIA driver".to_string())
    };
    let ctx = match opened {
        Ok(c) => c,
        Err(e) => {
            crate::cuda::no_gpu("recorder tests", e);
            return None;
        }
    };
    let (major, minor) = ctx.compute_capability().expect("compute capability");
    let sm = (major * 10 + minor) as u32;
    Some(Gpu {
        stream: ctx.default_stream(),
        job: Job::ready("recorder test", code(&ctx, sm).expect("compiles")),
        ctx,
        sm,
    })
}

fn code(ctx: &Arc<CudaContext>, sm: u32) -> Result<Code> {
    let (module, _) = module_cache::compile(ctx, PTX, sm)?;
    Code::new(module, &["times3".into(), "times5".into()])
}

/// The value after launches `(entry, k)` in order, from 1.
fn want(launches: &[(usize, u64)]) -> u64 {
    launches.iter().fold(1u64, |v, &(e, k)| {
        if e == 0 {
            v.wrapping_mul(3).wrapping_add(k)
        } else {
            v.wrapping_mul(5) ^ k
        }
    })
}

impl Gpu {
    /// Records `launches` (grouped `per` dispatches a launch) on `rec`, flushing after the
    /// launch indices in `flush_after`; returns the value once the stream has run them all.
    fn run(
        &self,
        rec: &Arc<Recorder>,
        launches: &[(usize, u64)],
        per: usize,
        flush_after: &[usize],
    ) -> u64 {
        let x = self.stream.clone_htod(&[1u64]).expect("upload");
        let p = {
            let (ptr, _sync) = x.device_ptr(&self.stream);
            ptr
        };
        for (n, group) in launches.chunks(per).enumerate() {
            rec.record(Queued {
                job: Arc::clone(&self.job),
                dispatches: group
                    .iter()
                    .map(|&(entry, k)| Dispatch {
                        entry,
                        grid: 1,
                        block: 1,
                        params: vec![p, k],
                    })
                    .collect(),
            });
            if flush_after.contains(&n) {
                rec.flush().expect("flush");
            }
        }
        rec.flush().expect("flush");
        self.stream.synchronize().expect("run");
        self.stream.clone_dtoh(&x).expect("download")[0]
    }
}

#[test]
fn recorded_launches_run_in_order_as_graphs_and_one_by_one() {
    let Some(gpu) = gpu() else { return };
    // Both functions in every chain, chains full and partial (nodes disabled and enabled
    // again), launches of one and of three dispatches.
    let launches: Vec<(usize, u64)> = (0..301u64)
        .map(|i| ((i % 3 == 1 || i % 7 == 0) as usize, i * 0x9e37_79b9))
        .collect();
    let want = want(&launches);
    for graphs in [true, false] {
        for (per, flushes) in [(1, &[40usize, 41, 90][..]), (3, &[5, 17][..]), (1, &[][..])] {
            let rec = Recorder::new(Arc::clone(&gpu.ctx), Arc::clone(&gpu.stream), graphs);
            let got = gpu.run(&rec, &launches, per, flushes);
            rec.shutdown();
            assert_eq!(
                got, want,
                "graphs {graphs}, {per} a launch, flushed after {flushes:?}"
            );
            assert!(!rec.behind());
            rec.release_graphs();
        }
    }
}

#[test]
fn the_flusher_submits_recorded_launches_without_another_use_of_the_device() {
    let Some(gpu) = gpu() else { return };
    let rec = Recorder::new(Arc::clone(&gpu.ctx), Arc::clone(&gpu.stream), true);
    let launches: Vec<(usize, u64)> = (0..5u64).map(|i| ((i % 2) as usize, i + 7)).collect();
    let x = gpu.stream.clone_htod(&[1u64]).expect("upload");
    let p = address(&gpu, &x);
    for &(entry, k) in &launches {
        rec.record(one(&gpu.job, entry, p, k));
    }
    // Nothing else uses the device: the flusher alone submits them, within LINGER and a
    // thread's wake-up (a second is ample).
    let start = std::time::Instant::now();
    while rec.behind() && start.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(!rec.behind(), "still recorded after {:?}", start.elapsed());
    gpu.stream.synchronize().expect("run");
    assert_eq!(
        gpu.stream.clone_dtoh(&x).expect("download")[0],
        want(&launches)
    );
    rec.shutdown();
    rec.release_graphs();
}

fn address(gpu: &Gpu, x: &cudarc::driver::CudaSlice<u64>) -> u64 {
    let (ptr, _sync) = x.device_ptr(&gpu.stream);
    ptr
}

/// A launch of one dispatch of `job`'s entry point `entry` on `p` with `k`.
fn one(job: &Arc<Job>, entry: usize, p: u64, k: u64) -> Queued {
    Queued {
        job: Arc::clone(job),
        dispatches: vec![Dispatch {
            entry,
            grid: 1,
            block: 1,
            params: vec![p, k],
        }],
    }
}

/// Waits (up to 5 s) until nothing is recorded.
fn drained(rec: &Recorder) {
    let start = std::time::Instant::now();
    while rec.behind() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(!rec.behind(), "still recorded after {:?}", start.elapsed());
}

#[test]
fn the_flusher_submits_what_is_compiled_before_waiting_for_a_module_still_compiling() {
    let Some(gpu) = gpu() else { return };
    let rec = Recorder::new(Arc::clone(&gpu.ctx), Arc::clone(&gpu.stream), true);
    let (ctx, sm) = (Arc::clone(&gpu.ctx), gpu.sm);
    let slow = Job::spawn("slow", move || {
        std::thread::sleep(Duration::from_millis(600));
        code(&ctx, sm)
    });
    let x = gpu.stream.clone_htod(&[1u64]).expect("upload");
    let p = address(&gpu, &x);
    let first: Vec<(usize, u64)> = (0..6u64).map(|i| ((i % 2) as usize, i + 3)).collect();
    let then: Vec<(usize, u64)> = (0..5u64)
        .map(|i| (((i + 1) % 2) as usize, i * 11))
        .collect();
    for &(e, k) in &first {
        rec.record(one(&gpu.job, e, p, k));
    }
    rec.record(one(&slow, 0, p, 99));
    for &(e, k) in &then {
        rec.record(one(&gpu.job, e, p, k));
    }
    // While `slow` compiles, the flusher has launched the six before it and waits.
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        slow.get().is_none(),
        "the slow module compiled early: the test proves nothing"
    );
    assert!(rec.behind());
    let seen = gpu.stream.clone_dtoh(&x).expect("download")[0];
    assert_eq!(
        seen,
        want(&first),
        "the launches before the compiling module"
    );
    drained(&rec);
    gpu.stream.synchronize().expect("run");
    let all: Vec<(usize, u64)> = first.iter().copied().chain([(0, 99)]).chain(then).collect();
    assert_eq!(gpu.stream.clone_dtoh(&x).expect("download")[0], want(&all));
    rec.shutdown();
    rec.release_graphs();
}

#[test]
fn a_failed_recorded_launch_is_reported_by_every_later_use() {
    let Some(gpu) = gpu() else { return };
    let rec = Recorder::new(Arc::clone(&gpu.ctx), Arc::clone(&gpu.stream), true);
    let broken = Job::spawn("broken", || {
        Err(Error::Unsupported {
            what: "no such module".into(),
        })
    });
    let x = gpu.stream.clone_htod(&[1u64]).expect("upload");
    let p = address(&gpu, &x);
    rec.record(one(&gpu.job, 0, p, 1));
    rec.record(one(&broken, 0, p, 2));
    rec.record(one(&gpu.job, 1, p, 3));
    // Whoever submits (this thread or the flusher) meets the failure; every use after
    // reports it.
    let first = rec.flush();
    drained(&rec);
    for e in [first, rec.flush(), rec.check()] {
        let e = e.expect_err("the failure sticks").to_string();
        assert!(e.contains("broken") && e.contains("no such module"), "{e}");
    }
    rec.shutdown();
    rec.release_graphs();
}
