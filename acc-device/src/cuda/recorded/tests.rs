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
            let required = std::env::var("ACC_REQUIRE_DEVICES").unwrap_or_default();
            if required
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("nvidia"))
            {
                panic!("ACC_REQUIRE_DEVICES names nvidia, but: {e}");
            }
            eprintln!("recorder tests: no GPU ({e}); not run");
            return None;
        }
    };
    let (major, minor) = ctx.compute_capability().expect("compute capability");
    let (module, _) =
        module_cache::compile(&ctx, PTX, (major * 10 + minor) as u32).expect("compiles");
    let code = Code::new(module, &["times3".into(), "times5".into()]).expect("entry points");
    Some(Gpu {
        stream: ctx.default_stream(),
        job: Job::ready("recorder test", code),
        ctx,
    })
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
    let p = {
        let (ptr, _sync) = x.device_ptr(&gpu.stream);
        ptr
    };
    for &(entry, k) in &launches {
        rec.record(Queued {
            job: Arc::clone(&gpu.job),
            dispatches: vec![Dispatch {
                entry,
                grid: 1,
                block: 1,
                params: vec![p, k],
            }],
        });
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
