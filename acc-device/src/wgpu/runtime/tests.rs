//! End-to-end: kernels built as IR, lowered, run on the first wgpu adapter (lavapipe in CI).
//! Without an adapter the tests say so and pass, unless `ACC_REQUIRE_DEVICES` names wgpu.

use acc_core::ir::builder::KernelBuilder;
use acc_core::ir::samples::{reduce, saxpy};
use acc_core::ir::*;

use acc_core::ir::args::{KernelArg as Arg, ScalarValue};

use super::*;

fn device() -> Option<WgpuDevice> {
    match WgpuDevice::open(0) {
        Ok(d) => Some(d),
        Err(e) => {
            if required() {
                panic!("ACC_REQUIRE_DEVICES names wgpu, but: {e}");
            }
            eprintln!("wgpu tests: no adapter ({e}); not run");
            None
        }
    }
}

/// Whether `ACC_REQUIRE_DEVICES` names wgpu (CI): then nothing here may skip.
fn required() -> bool {
    std::env::var("ACC_REQUIRE_DEVICES")
        .unwrap_or_default()
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case("wgpu"))
}

fn bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: the element types used here are plain numbers.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

fn bytes_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above, and any bytes form a valid f32/u32.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

#[test]
fn saxpy_runs_on_the_adapter() {
    let Some(dev) = device() else { return };
    let n = 1_000_003;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let mut y = vec![1.0f32; n];
    let k = saxpy(Scalar::F32);
    dev.launch(
        &k,
        &mut [
            Arg::Scalar(ScalarValue::F32(2.0)),
            Arg::Read(bytes(&x)),
            Arg::Write(bytes_mut(&mut y)),
        ],
    )
    .expect("runs");
    for i in 0..n {
        assert_eq!(y[i], 2.0 * x[i] + 1.0, "y[{i}] on {}", dev.name());
    }
    // A second launch reuses the compiled pipeline.
    dev.launch(
        &k,
        &mut [
            Arg::Scalar(ScalarValue::F32(1.0)),
            Arg::Read(bytes(&x)),
            Arg::Write(bytes_mut(&mut y)),
        ],
    )
    .expect("runs");
    assert_eq!(y[7], 3.0 * 7.0 + 1.0);
}

#[test]
fn reductions_combine_every_workgroup() {
    let Some(dev) = device() else { return };
    let x: Vec<u32> = (0..300_001u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 12)
        .collect();
    for (op, want) in [
        (
            ReduceOp::Add,
            x.iter().fold(0u32, |a, &b| a.wrapping_add(b)),
        ),
        (ReduceOp::Max, *x.iter().max().unwrap()),
        (ReduceOp::Min, *x.iter().min().unwrap()),
        (ReduceOp::BitXor, x.iter().fold(0, |a, &b| a ^ b)),
    ] {
        let r = dev
            .launch(
                &reduce(Scalar::U32, op),
                &mut [Arg::Read(bytes(&x)), Arg::Scalar(ScalarValue::U32(0))],
            )
            .expect("runs");
        assert_eq!(r.reductions, vec![(1, ScalarValue::U32(want))], "{op:?}");
    }
}

#[test]
fn collapsed_loops_cover_the_whole_space() {
    let Some(dev) = device() else { return };
    let (n, m) = (123usize, 77usize);
    let mut b = KernelBuilder::new("collapse");
    let out = b.param_array("out", Scalar::U32, true);
    let nn = b.param_scalar("n", Scalar::U32);
    let mm = b.param_scalar("m", Scalar::U32);
    let zero = b.lit_int(0, None);
    let one = b.lit_int(1, None);
    let zero2 = b.lit_int(0, None);
    let one2 = b.lit_int(1, None);
    let t0 = b.cast(nn, Scalar::USize);
    let t1 = b.cast(mm, Scalar::USize);
    b.for_(
        &[
            ("i", Some(Scalar::U32), zero, one, t0),
            ("j", Some(Scalar::U32), zero2, one2, t1),
        ],
        Some(Schedule::default()),
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let m = b.param_scalar_value(2);
            let row = b.binary(BinaryOp::Mul, i, m);
            let j = b.get(v[1]);
            let idx = b.binary(BinaryOp::Add, row, j);
            let idx = b.cast(idx, Scalar::USize);
            let thousand = b.lit_int(1000, None);
            let i = b.get(v[0]);
            let v1 = b.binary(BinaryOp::Mul, i, thousand);
            let j = b.get(v[1]);
            let val = b.binary(BinaryOp::Add, v1, j);
            b.store(out, idx, val);
        },
    );
    let k = b.finish().expect("valid");
    let mut o = vec![0u32; n * m];
    dev.launch(
        &k,
        &mut [
            Arg::Write(bytes_mut(&mut o)),
            Arg::Scalar(ScalarValue::U32(n as u32)),
            Arg::Scalar(ScalarValue::U32(m as u32)),
        ],
    )
    .expect("runs");
    for i in 0..n {
        for j in 0..m {
            assert_eq!(o[i * m + j], (i * 1000 + j) as u32);
        }
    }
}

#[test]
fn an_out_of_range_index_is_reported() {
    let Some(dev) = device() else { return };
    let mut b = KernelBuilder::new("oob");
    let x = b.param_array("x", Scalar::F32, true);
    let zero = b.lit_int(0, None);
    let ten = b.lit_int(10, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        ten,
        false,
        Some(Schedule::default()),
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let two = b.lit_int(2, None);
            let idx = b.binary(BinaryOp::Mul, i, two);
            let one = b.lit_float(1.0, None);
            b.store(x, idx, one);
        },
    );
    let k = b.finish().expect("valid");
    let mut v = vec![0.0f32; 10];
    let e = dev
        .launch(&k, &mut [Arg::Write(bytes_mut(&mut v))])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the len is 10") && e.contains("array `x`"),
        "{e}"
    );
    assert!(
        v[..10].iter().step_by(2).all(|&x| x == 1.0),
        "in-range stores still happen: {v:?}"
    );
}

/// A sequential loop of `n` iterations counting into `out[0]`.
fn long_loop(t: Scalar) -> Kernel {
    let mut b = KernelBuilder::new("long loop");
    let n = b.param_scalar("n", t);
    let out = b.param_array("out", Scalar::U32, true);
    let zero = b.lit_int(0, Some(Scalar::U32));
    let count = b.local("count", Some(Scalar::U32), Some(zero));
    let start = b.lit_int(0, Some(t));
    b.for_range("i", Some(t), start, n, false, None, &[], &[], |b, _| {
        let c = b.get(count);
        let one = b.lit_int(1, Some(Scalar::U32));
        let c = b.binary(BinaryOp::Add, c, one);
        b.set(count, c);
    });
    let i = b.lit_int(0, Some(Scalar::USize));
    let c = b.get(count);
    b.store(out, i, c);
    b.finish().expect("valid")
}

#[test]
fn a_loop_the_driver_cuts_short_is_an_error_not_a_wrong_result() {
    let Some(dev) = device() else { return };
    let k = long_loop(Scalar::U32);
    for n in [1_000u32, 200_000] {
        let mut out = [0u32; 1];
        let r = dev.launch(
            &k,
            &mut [
                Arg::Scalar(ScalarValue::U32(n)),
                Arg::Write(bytes_mut(&mut out)),
            ],
        );
        match r {
            Ok(_) => assert_eq!(out[0], n),
            Err(e) => {
                assert!(dev.target().loop_limit.is_some() && n > 65_535, "{e}");
                assert!(e.to_string().contains("65,535"), "{e}");
            }
        }
    }
}

#[test]
fn a_loop_longer_than_its_counter_is_an_error() {
    let Some(dev) = device() else { return };
    if !dev.target().wide_usize() {
        // Without 64-bit integers no trip count exceeds the 32-bit counter.
        assert!(crate::wgsl::lower(&long_loop(Scalar::U64), dev.target()).is_err());
        return;
    }
    let k = long_loop(Scalar::U64);
    let mut out = [0u32; 1];
    let mut args = [
        Arg::Scalar(ScalarValue::U64(1_000)),
        Arg::Write(bytes_mut(&mut out)),
    ];
    dev.launch(&k, &mut args).expect("a short loop runs");
    assert_eq!(out[0], 1_000);
    let mut args = [
        Arg::Scalar(ScalarValue::U64(1 << 33)),
        Arg::Write(bytes_mut(&mut out)),
    ];
    let e = dev
        .launch(&k, &mut args)
        .expect_err("2^33 iterations in one invocation")
        .to_string();
    assert!(e.contains("more iterations than kernels on"), "{e}");
}

/// `v[2..5][i] = i` for `i` in `0..n`: a subslice as a routine argument sees.
fn subslice_writes(n: i128) -> Kernel {
    let mut b = KernelBuilder::new("subslice");
    let v = b.param_array("v", Scalar::U32, true);
    let (s, e) = (
        b.lit_int(2, Some(Scalar::USize)),
        b.lit_int(5, Some(Scalar::USize)),
    );
    let view = b.subslice(v, s, e);
    let (start, end) = (
        b.lit_int(0, Some(Scalar::USize)),
        b.lit_int(n, Some(Scalar::USize)),
    );
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        end,
        false,
        None,
        &[],
        &[],
        |b, l| {
            let i = b.get(l[0]);
            let x = b.cast(i, Scalar::U32);
            let i = b.get(l[0]);
            b.store(view, i, x);
        },
    );
    b.finish().expect("valid")
}

#[test]
fn subslices_index_from_their_start_and_end_at_their_end() {
    let Some(dev) = device() else { return };
    let mut v = [9u32; 8];
    dev.launch(&subslice_writes(3), &mut [Arg::Write(bytes_mut(&mut v))])
        .expect("in bounds");
    assert_eq!(v, [9, 9, 0, 1, 2, 9, 9, 9]);
    let e = dev
        .launch(&subslice_writes(4), &mut [Arg::Write(bytes_mut(&mut v))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("out of bounds") && e.contains("`v`"), "{e}");
}

/// Temporaries, staging and present buffers come back from the pool: launches after the first
/// make no new buffers, and a reused present buffer is zeroed as `alloc` promises.
#[test]
fn buffers_are_reused_from_the_pool() {
    use acc_core::present::DeviceMemory;
    let Some(dev) = device() else { return };
    let n = 10_000;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y = vec![1.0f32; n];
    let k = saxpy(Scalar::F32);
    let run = |y: &mut Vec<f32>| {
        dev.launch(
            &k,
            &mut [
                Arg::Scalar(ScalarValue::F32(2.0)),
                Arg::Read(bytes(&x)),
                Arg::Write(bytes_mut(y)),
            ],
        )
        .expect("runs")
    };
    run(&mut y);
    let (created, reused) = dev.pool.counts();
    for _ in 0..3 {
        run(&mut y);
    }
    assert_eq!(y[5], 5.0 * 2.0 * 4.0 + 1.0);
    let (created_after, reused_after) = dev.pool.counts();
    assert_eq!(
        created_after, created,
        "launches after the first made new buffers"
    );
    assert!(
        reused_after >= reused + 3 * 3,
        "{reused} then {reused_after}"
    );

    let layout = ElemLayout {
        scalar: Some(Scalar::U32),
        size: 4,
    };
    let a = dev.alloc(layout, 1000).expect("alloc");
    dev.upload(a, layout, 0, bytes(&vec![7u32; 1000]))
        .expect("upload");
    dev.free(a);
    let (c, _) = dev.pool.counts();
    let b = dev.alloc(layout, 1000).expect("alloc");
    assert_eq!(dev.pool.counts().0, c, "the freed buffer is reused");
    let mut back = vec![1u32; 1000];
    dev.download(b, layout, 0, bytes_mut(&mut back))
        .expect("download");
    assert!(back.iter().all(|&v| v == 0), "a reused buffer is zeroed");
    dev.free(b);
}

/// A launch that brings nothing back and cannot fail returns once submitted; its queue's
/// wait sees it done, and a later copy out reads what it wrote.
#[test]
fn a_launch_that_brings_nothing_back_does_not_wait() {
    use acc_core::present::{Absent, Counter, Leave, Release};
    use acc_core::Device;
    let Some(dev) = device() else { return };
    // `y[0] = 2.5` and `y[1] = y[0] + 1`: no loop, every index proven in bounds.
    let mut b = KernelBuilder::new("store");
    let y = b.param_array("y", Scalar::F32, true);
    let i0 = b.lit_int(0, Some(Scalar::USize));
    let v = b.lit_float(2.5, Some(Scalar::F32));
    b.store(y, i0, v);
    let i0 = b.lit_int(0, Some(Scalar::USize));
    let y0 = b.load(y, i0);
    let one = b.lit_float(1.0, Some(Scalar::F32));
    let s = b.binary(BinaryOp::Add, y0, one);
    let i1 = b.lit_int(1, Some(Scalar::USize));
    b.store(y, i1, s);
    let k = Arc::new(b.finish().expect("valid"));

    let mut host = vec![0.0f32; 4];
    let layout = ElemLayout {
        scalar: Some(Scalar::F32),
        size: 4,
    };
    dev.present
        .enter(
            &dev,
            bytes(&host),
            layout,
            acc_core::present::Named::unlocated("y"),
            Counter::Dynamic,
            Absent::Copyin,
        )
        .expect("present");
    let queued = dev.batch.lock().unwrap().queued_count;
    let q = Queue::Async(3);
    let out = dev
        .launch_kernel_queued(&k, &mut [Arg::Write(bytes_mut(&mut host))], q, None)
        .expect("launch");
    assert_eq!(out, Launched::default());
    assert_eq!(
        dev.batch.lock().unwrap().queued_count,
        queued + 1,
        "the launch was queued"
    );
    // It waits in the batch until something needs it: the wait submits it.
    assert!(
        !dev.batch.lock().unwrap().is_empty(),
        "the launch waits in the batch"
    );
    dev.synchronize_queue(q).expect("wait");
    assert!(dev.queue_done(Some(q)));
    assert!(dev.queue_done(None));
    let addr = (host.as_ptr() as usize, 16);
    dev.present
        .exit(
            &dev,
            addr,
            Some(bytes_mut(&mut host)),
            acc_core::present::Named::unlocated("y"),
            Leave {
                counter: Counter::Dynamic,
                finalize: false,
                release: Release::Copyout,
            },
        )
        .expect("copy out");
    assert_eq!(host, [2.5, 3.5, 0.0, 0.0]);
}

/// 64-bit integers ordered on their 32-bit halves (what the lowering does on NVIDIA's Vulkan
/// driver) agree with the host: comparisons, `min`/`max`/`clamp` and max/min reductions of
/// `u64` and `i64`, on pairs that differ in either half, here on whatever adapter runs the tests.
#[test]
fn int64_compare_by_halves_matches_the_host() {
    let Some(mut dev) = device() else { return };
    if !dev.target.int64 {
        assert!(
            !required(),
            "ACC_REQUIRE_DEVICES names wgpu, but {} has no 64-bit integers",
            dev.name()
        );
        eprintln!("wgpu tests: no 64-bit integers on {}; not run", dev.name());
        return;
    }
    dev.target.int64_compare_by_halves = true;
    let (xs, ys) = compare_pairs();
    for ty in [Scalar::U64, Scalar::I64] {
        let signed = ty == Scalar::I64;
        let k = order64_kernel(ty);
        let mut got_flags = vec![0u32; xs.len()];
        let mut got_m = vec![0u64; 3 * xs.len()];
        let start = if signed {
            ScalarValue::I64(i64::MIN)
        } else {
            ScalarValue::U64(0)
        };
        let out = dev
            .launch(
                &k,
                &mut [
                    Arg::Read(bytes(&xs)),
                    Arg::Read(bytes(&ys)),
                    Arg::Write(bytes_mut(&mut got_flags)),
                    Arg::Write(bytes_mut(&mut got_m)),
                    Arg::Scalar(start),
                ],
            )
            .expect("runs");
        check_order64(ty, (&xs, &ys), (&got_flags, &got_m), &out.reductions);
    }
}

/// Pairs of 64-bit values to compare: every pair of edge values (around the 32-bit halves and
/// the sign), then pseudo-random ones, half of them sharing the high word.
fn compare_pairs() -> (Vec<u64>, Vec<u64>) {
    let edges = [
        0u64,
        1,
        2,
        u64::MAX,
        u64::MAX - 1,
        1 << 32,
        (1 << 32) - 1,
        (1 << 32) + 1,
        1 << 63,
        (1 << 63) - 1,
        0xFFFF_FFFF_0000_0000,
        0x0000_0001_FFFF_FFFF,
        0x8000_0000_FFFF_FFFF,
        0x7FFF_FFFF_0000_0001,
    ];
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &a in &edges {
        for &b in &edges {
            xs.push(a);
            ys.push(b);
        }
    }
    let mut r = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..300 {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        xs.push(r);
        // The same high word half the time, so that the low words decide.
        ys.push(if r % 2 == 0 {
            r ^ (r >> 40)
        } else {
            r.rotate_left(17)
        });
    }
    (xs, ys)
}

/// A kernel comparing `x[i]` with `y[i]` of type `ty`: `flags[i] = lt | le << 1 | gt << 2 |
/// ge << 3`, `m[3 i..]` = min, max and a clamp, and the max of `x` reduced.
fn order64_kernel(ty: Scalar) -> Kernel {
    let signed = ty == Scalar::I64;
    // flags = lt | le << 1 | gt << 2 | ge << 3; m = [min, max, clamp(y, lo, hi)].
    let mut b = KernelBuilder::new("order64");
    let x = b.param_array("x", ty, false);
    let y = b.param_array("y", ty, false);
    let flags = b.param_array("flags", Scalar::U32, true);
    let m = b.param_array("m", ty, true);
    let _ = b.param_scalar("top", ty);
    let top = b.reduction_local("top", ty, ReduceOp::Max);
    b.reduce_into(top, ReduceOp::Max, 4);
    let start = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        Some(Schedule::default()),
        &[(top, ReduceOp::Max)],
        &[],
        |b, v| {
            let mut word = None;
            for (bit, op) in [BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge]
                .into_iter()
                .enumerate()
            {
                let i = b.get(v[0]);
                let xi = b.load(x, i);
                let i = b.get(v[0]);
                let yi = b.load(y, i);
                let c = b.binary(op, xi, yi);
                let c = b.cast(c, Scalar::U32);
                let sh = b.lit_int(bit as i128, Some(Scalar::U32));
                let c = b.binary(BinaryOp::Shl, c, sh);
                word = Some(match word {
                    None => c,
                    Some(w) => b.binary(BinaryOp::BitOr, w, c),
                });
            }
            let i = b.get(v[0]);
            b.store(flags, i, word.expect("four flags"));
            for (slot, f) in [MathFn::Min, MathFn::Max, MathFn::Clamp]
                .into_iter()
                .enumerate()
            {
                let i = b.get(v[0]);
                let xi = b.load(x, i);
                let i = b.get(v[0]);
                let yi = b.load(y, i);
                let value = if f == MathFn::Clamp {
                    let lo = b.lit_int(-(1 << 40), Some(ty));
                    let lo = if signed {
                        lo
                    } else {
                        b.lit_int(1 << 20, Some(ty))
                    };
                    let hi = b.lit_int(1 << 50, Some(ty));
                    b.math(f, &[yi, lo, hi])
                } else {
                    b.math(f, &[xi, yi])
                };
                let i = b.get(v[0]);
                let three = b.lit_int(3, Some(Scalar::USize));
                let at = b.binary(BinaryOp::Mul, i, three);
                let s = b.lit_int(slot as i128, Some(Scalar::USize));
                let at = b.binary(BinaryOp::Add, at, s);
                b.store(m, at, value);
            }
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let cur = b.get(top);
            let next = b.math(MathFn::Max, &[cur, xi]);
            b.set(top, next);
        },
    );
    b.finish().expect("valid")
}

/// Checks `order64_kernel`'s results against the host's, on the bits as `u64` or `i64`.
fn check_order64(
    ty: Scalar,
    (xs, ys): (&[u64], &[u64]),
    (got_flags, got_m): (&[u32], &[u64]),
    reductions: &[(u32, ScalarValue)],
) {
    let signed = ty == Scalar::I64;
    // The host's answers, on the bits as `u64` or `i64`.
    let (lo, hi) = if signed {
        (-(1i128 << 40), 1i128 << 50)
    } else {
        (1 << 20, 1 << 50)
    };
    let value = |v: u64| if signed { v as i64 as i128 } else { v as i128 };
    for i in 0..xs.len() {
        let (a, c) = (value(xs[i]), value(ys[i]));
        let want = (a < c) as u32
            | ((a <= c) as u32) << 1
            | ((a > c) as u32) << 2
            | ((a >= c) as u32) << 3;
        assert_eq!(
            got_flags[i], want,
            "{ty:?} order of {:#x} and {:#x}",
            xs[i], ys[i]
        );
        let want = [a.min(c), a.max(c), c.clamp(lo, hi)];
        for (j, w) in want.into_iter().enumerate() {
            assert_eq!(
                value(got_m[3 * i + j]),
                w,
                "{ty:?} min/max/clamp {j} of {:#x} and {:#x}",
                xs[i],
                ys[i]
            );
        }
    }
    let top = xs.iter().map(|&v| value(v)).max().expect("values");
    let want = if signed {
        ScalarValue::I64(top as i64)
    } else {
        ScalarValue::U64(top as u64)
    };
    assert_eq!(reductions, [(4, want)], "{ty:?} max reduction");
}

/// A tiled nest (a tile per block or workgroup) writes every element once and counts them.
#[test]
fn tiled_nests_cover_their_iterations() {
    let Some(dev) = device() else { return };
    acc_core::ir::samples::check_tiled(|k, args| dev.launch(k, args));
}

/// Launches waiting in the device's batch run before what the program does next: an update
/// of their array waits for them, and a buffer freed while a waiting launch uses it is not
/// handed to another launch's copy-in before that launch ran. Loop-free kernels, so that no
/// launch reads its status back, even on lavapipe (whose loops may hit its iteration limit).
#[test]
fn batched_launches_keep_the_program_order() {
    use acc_core::present::{Absent, Counter, HostBytes, Leave, Release};
    let Some(dev) = device() else { return };
    // `y[0] = y[0] + 1`.
    let mut b = KernelBuilder::new("inc");
    let y = b.param_array("y", Scalar::F32, true);
    let i0 = b.lit_int(0, Some(Scalar::USize));
    let y0 = b.load(y, i0);
    let one = b.lit_float(1.0, Some(Scalar::F32));
    let s = b.binary(BinaryOp::Add, y0, one);
    let i0 = b.lit_int(0, Some(Scalar::USize));
    b.store(y, i0, s);
    let k = Arc::new(b.finish().expect("valid"));
    let layout = ElemLayout {
        scalar: Some(Scalar::F32),
        size: 4,
    };
    let name = acc_core::present::Named::unlocated("y");
    let enter = |host: &[f32]| {
        dev.present
            .enter(
                &dev,
                bytes(host),
                layout,
                name,
                Counter::Dynamic,
                Absent::Copyin,
            )
            .expect("present");
    };
    let inc = |host: &mut [f32]| {
        let out = dev
            .launch_shared(&k, &mut [Arg::Write(bytes_mut(host))], Queue::Sync)
            .expect("launch");
        assert_eq!(out, Launched::default());
    };
    let leave = |host: &mut [f32], release| {
        dev.present
            .exit(
                &dev,
                (host.as_ptr() as usize, 4 * host.len()),
                Some(bytes_mut(host)),
                name,
                Leave {
                    counter: Counter::Dynamic,
                    finalize: false,
                    release,
                },
            )
            .expect("exit");
    };

    // Three increments wait in the batch; an update of `y` comes after them, two more after it.
    let mut host = vec![0.0f32; 64];
    enter(&host);
    for _ in 0..3 {
        inc(&mut host);
    }
    assert!(
        !dev.batch.lock().unwrap().is_empty(),
        "the launches wait in the batch"
    );
    host[0] = 10.0;
    dev.present
        .update(&dev, HostBytes::Read(bytes(&host)), layout, name, false)
        .expect("update");
    for _ in 0..2 {
        inc(&mut host);
    }
    leave(&mut host, Release::Copyout);
    assert_eq!(host[0], 12.0, "the update ran after the first increments");

    // An increment of `a` waits in the batch while `a` is deleted; a launch copying in an
    // array of the same size may get a pool buffer, and its copy must not be the one the
    // waiting increment then adds to.
    let mut a = vec![5.0f32; 64];
    enter(&a);
    inc(&mut a);
    leave(&mut a, Release::Delete);
    let mut c = vec![100.0f32; 64];
    let out = dev
        .launch(&k, &mut [Arg::Write(bytes_mut(&mut c))])
        .expect("launch");
    assert_eq!(out, Launched::default());
    assert_eq!(c[0], 101.0, "the copied-in array was incremented once");
    acc_core::Device::synchronize(&dev).expect("wait");
}
