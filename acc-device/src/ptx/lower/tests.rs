//! PTX generated for kernels built as IR, checked by `ptxas` when it is installed (CI sets
//! `ACC_REQUIRE_PTXAS=1`, which makes a missing `ptxas` a failure). `ACC_PTXAS` names it when
//! it is not on the `PATH`.

use acc_core::ir::builder::KernelBuilder;
use acc_core::ir::samples::{reduce, saxpy, GRID};

use super::*;

fn ptxas() -> Option<std::path::PathBuf> {
    let named = std::env::var_os("ACC_PTXAS").map(std::path::PathBuf::from);
    let found = named.or_else(|| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("ptxas"))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() {
        assert!(
            std::env::var("ACC_REQUIRE_PTXAS").is_err(),
            "ACC_REQUIRE_PTXAS is set, but no ptxas was found (ACC_PTXAS or PATH)"
        );
        eprintln!("ptx tests: no ptxas (set ACC_PTXAS or put it on PATH); the generated PTX is not assembled");
    }
    found
}

/// Assembles `l` for `sm` with ptxas when it is there.
fn assemble(l: &Lowered, sm: u32) {
    let Some(ptxas) = ptxas() else { return };
    let dir = std::env::temp_dir().join(format!("acc-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!(
        "k{sm}-{:x}",
        l.ptx.len() * 31 + l.ptx.bytes().map(|b| b as usize).sum::<usize>()
    );
    let src = dir.join(format!("{name}.ptx"));
    std::fs::write(&src, &l.ptx).unwrap();
    let out = std::process::Command::new(ptxas)
        .arg(format!("-arch=sm_{sm}"))
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{name}.cubin")))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Newer toolkits drop old targets (CUDA 13 has no sm_70): nothing to check there.
    // Where ptxas is required (CI installs one that has every target), nothing is skipped.
    if !out.status.success()
        && err.contains("is not defined for option 'gpu-name'")
        && std::env::var("ACC_REQUIRE_PTXAS").is_err()
    {
        eprintln!("ptx tests: this ptxas has no sm_{sm}");
        return;
    }
    assert!(out.status.success(), "ptxas refused:\n{err}\n{}", l.ptx);
}

const TARGETS: [u32; 3] = [70, 80, 90];

#[test]
fn saxpy_assembles_for_float_and_integer_types() {
    for elem in [
        Scalar::F32,
        Scalar::F64,
        Scalar::I32,
        Scalar::U64,
        Scalar::I8,
        Scalar::U16,
    ] {
        for sm in TARGETS {
            let l = lower(&saxpy(elem), Target::exact(sm)).unwrap();
            assert_eq!(l.entry_points, ["saxpy_gpu"]);
            assert!(l.ptx.contains(&format!(".target sm_{sm}")), "{}", l.ptx);
            assemble(&l, sm);
        }
    }
}

/// A complex product reduces pairs: one slot of two words per block, the tree in shared
/// memory of twice the usual size.
#[test]
fn complex_products_reduce_pairs() {
    for elem in [Scalar::F32, Scalar::F64] {
        let k = acc_core::ir::samples::complex_product(elem);
        let l = lower(&k, Target::exact(90)).unwrap();
        assert_eq!(
            l.layout.reductions,
            [ReductionSlot {
                op: ReduceOp::ComplexMul,
                ty: elem,
                into: Some(2),
                entry: Some(0),
                local_offset: 0,
                imag_offset: 0,
                len: 2
            }]
        );
        assert!(
            l.ptx.contains(&format!("acc_shared[{}]", BLOCK_SIZE * 16)),
            "{}",
            l.ptx
        );
        assemble(&l, 90);
    }
}

#[test]
fn reductions_assemble_for_every_operator() {
    let cases = [
        (Scalar::F64, ReduceOp::Add),
        (Scalar::F32, ReduceOp::Mul),
        (Scalar::F64, ReduceOp::Max),
        (Scalar::I32, ReduceOp::Min),
        (Scalar::U64, ReduceOp::BitXor),
        (Scalar::I16, ReduceOp::BitAnd),
        (Scalar::Bool, ReduceOp::BitOr),
        (Scalar::Bool, ReduceOp::And),
    ];
    for (elem, op) in cases {
        let l = lower(&reduce(elem, op), Target::exact(90)).unwrap();
        assert_eq!(
            l.layout.reductions,
            [ReductionSlot {
                op,
                ty: elem,
                into: Some(1),
                entry: Some(0),
                local_offset: 0,
                imag_offset: 0,
                len: 1
            }]
        );
        assert!(l.ptx.contains("bar.sync"), "{}", l.ptx);
        assemble(&l, 90);
    }
}

/// Control flow, casts and math: `y[i] = if x[i] > 0 { floor(sqrt(x[i])) } else { 0 + 1 + .. + (i % 7 - 1) }`.
#[test]
fn control_flow_casts_and_math_assemble() {
    let mut b = KernelBuilder::new("mixed");
    let x = b.param_array("x", Scalar::F64, false);
    let y = b.param_array("y", Scalar::I64, true);
    let flags = b.param_array("flags", Scalar::Bool, true);
    let start = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let zero = b.lit_float(0.0, None);
            let pos = b.binary(BinaryOp::Gt, xi, zero);
            let i2 = b.get(v[0]);
            b.store(flags, i2, pos);
            let out = b.local("out", Some(Scalar::I64), None);
            b.if_(
                pos,
                |b| {
                    let i = b.get(v[0]);
                    let xi = b.load(x, i);
                    let r = b.math(MathFn::Sqrt, &[xi]);
                    let r = b.math(MathFn::Floor, &[r]);
                    let c = b.cast(r, Scalar::I64);
                    b.set(out, c);
                },
                |b| {
                    let z = b.lit_int(0, Some(Scalar::I64));
                    b.set(out, z);
                    let s = b.lit_int(0, None);
                    let i = b.get(v[0]);
                    let seven = b.lit_int(7, None);
                    let e = b.binary(BinaryOp::Rem, i, seven);
                    b.for_range(
                        "k",
                        Some(Scalar::USize),
                        s,
                        e,
                        false,
                        None,
                        &[],
                        &[],
                        |b, k| {
                            let kk = b.get(k[0]);
                            let kk = b.cast(kk, Scalar::I64);
                            let o = b.get(out);
                            let o = b.binary(BinaryOp::Add, o, kk);
                            b.set(out, o);
                        },
                    );
                },
            );
            let i = b.get(v[0]);
            let o = b.get(out);
            b.store(y, i, o);
        },
    );
    let k = b.finish().expect("valid");
    for sm in TARGETS {
        let l = lower(&k, Target::exact(sm)).unwrap();
        assemble(&l, sm);
    }
}

#[test]
fn an_old_target_is_an_error_naming_it() {
    let e = lower(&saxpy(Scalar::F32), Target::exact(60))
        .unwrap_err()
        .to_string();
    assert!(e.contains("on nvidia") && e.contains("7.0 or newer"), "{e}");
}

/// `y[0] = 1; (parallel) s += x[i]; y[1] = s; value = s`: code between loops runs on one
/// thread with the region's locals in a buffer, the loop's reduction into the region local is
/// folded on the device, the value read back.
#[test]
fn segmented_regions_assemble_with_local_reductions_and_a_value() {
    let mut b = KernelBuilder::new("segmented");
    let x = b.param_array("x", Scalar::F32, false);
    let y = b.param_array("y", Scalar::F32, true);
    let i0 = b.lit_int(0, Some(Scalar::USize));
    let one = b.lit_float(1.0, Some(Scalar::F32));
    b.store(y, i0, one);
    let s = b.reduction_local("s", Scalar::F32, ReduceOp::Add);
    let start = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[(s, ReduceOp::Add)],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let cur = b.get(s);
            let next = b.binary(BinaryOp::Add, cur, xi);
            b.set(s, next);
        },
    );
    let i1 = b.lit_int(1, Some(Scalar::USize));
    let sv = b.get(s);
    b.store(y, i1, sv);
    let sv = b.get(s);
    b.result(sv);
    let k = b.finish().expect("valid");
    let l = lower(&k, Target::exact(90)).unwrap();
    assert_eq!(
        l.layout
            .entries
            .iter()
            .map(|e| e.single)
            .collect::<Vec<_>>(),
        [true, false, true, true],
        "{}",
        l.ptx
    );
    assert_eq!(l.layout.reductions.len(), 1);
    assert_eq!(
        (l.layout.reductions[0].into, l.layout.reductions[0].entry),
        (None, Some(1))
    );
    assert!(l.layout.locals_size >= 4 && l.layout.result.is_some());
    for sm in TARGETS {
        assemble(&lower(&k, Target::exact(sm)).unwrap(), sm);
    }
}

/// A private array indexed by a computed value, and an element-wise array reduction.
#[test]
fn private_arrays_and_array_reductions_assemble() {
    let mut b = KernelBuilder::new("arrays");
    let x = b.param_array("x", Scalar::U32, false);
    let _hist = b.param_array("hist", Scalar::I64, true);
    let h = b.reduction_local_array("hist", Scalar::I64, 8, ReduceOp::Add);
    b.reduce_into(h, ReduceOp::Add, 1);
    let start = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[(h, ReduceOp::Add)],
        &[],
        |b, v| {
            let tmp = b.local_array("tmp", Scalar::U16, 4);
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let xi = b.cast(xi, Scalar::USize);
            let four = b.lit_int(4, Some(Scalar::USize));
            let slot = b.binary(BinaryOp::Rem, xi, four);
            let val = b.lit_int(3, Some(Scalar::U16));
            b.set_elem(tmp, slot, val);
            let eight = b.lit_int(8, Some(Scalar::USize));
            let bin = b.binary(BinaryOp::Rem, xi, eight);
            let cur = b.get_elem(h, bin);
            let t = b.get_elem(tmp, slot);
            let t = b.cast(t, Scalar::I64);
            let next = b.binary(BinaryOp::Add, cur, t);
            b.set_elem(h, bin, next);
        },
    );
    let k = b.finish().expect("valid");
    let l = lower(&k, Target::exact(90)).unwrap();
    assert_eq!(l.layout.reductions[0].len, 8);
    assert!(l.ptx.contains(".local .align 8 .b8 acc_pa"), "{}", l.ptx);
    for sm in TARGETS {
        assemble(&lower(&k, Target::exact(sm)).unwrap(), sm);
    }
}

#[test]
fn atomics_assemble_native_and_compare_and_swap() {
    for (elem, op) in [
        (Scalar::F32, AtomicOp::Update(BinaryOp::Add)),
        (Scalar::F64, AtomicOp::Update(BinaryOp::Add)),
        (Scalar::U64, AtomicOp::Update(BinaryOp::BitOr)),
        (Scalar::I64, AtomicOp::Update(BinaryOp::Mul)),
        (Scalar::F64, AtomicOp::Update(BinaryOp::Sub)),
        (Scalar::U32, AtomicOp::Exchange),
        (Scalar::F64, AtomicOp::Read),
        (Scalar::I8, AtomicOp::Update(BinaryOp::Add)),
        (Scalar::U16, AtomicOp::Update(BinaryOp::Mul)),
        (Scalar::U8, AtomicOp::Exchange),
        (Scalar::I16, AtomicOp::Read),
        (Scalar::Bool, AtomicOp::Update(BinaryOp::BitOr)),
    ] {
        let mut b = KernelBuilder::new("atomics");
        let c = b.param_array("c", elem, true);
        let start = b.lit_int(0, None);
        let end = b.lit_int(1000, Some(Scalar::USize));
        b.for_range(
            "i",
            Some(Scalar::USize),
            start,
            end,
            false,
            GRID,
            &[],
            &[],
            |b, _| {
                let zero = b.lit_int(0, Some(Scalar::USize));
                let one = if elem.is_float() {
                    b.lit_float(1.0, Some(elem))
                } else if elem == Scalar::Bool {
                    b.lit_bool(true)
                } else {
                    b.lit_int(1, Some(elem))
                };
                let old = b.local("old", Some(elem), None);
                let new = b.local("new", Some(elem), None);
                let (o, n) = match op {
                    AtomicOp::Read => (Some(old), None),
                    _ => (Some(old), Some(new)),
                };
                b.atomic(c, zero, op, one, o, n);
            },
        );
        let k = b.finish().expect("valid");
        for sm in TARGETS {
            let l = lower(&k, Target::exact(sm)).unwrap();
            assert!(
                l.ptx.contains("atom.global") || l.ptx.contains("ld.relaxed"),
                "{}",
                l.ptx
            );
            assemble(&l, sm);
        }
    }
}

/// A gang loop over rows whose body is a vector loop over columns, with a max reduction (the
/// Jacobi sweep of examples/jacobi.rs): one block per row, its threads over the columns.
#[test]
fn a_gang_loop_around_a_vector_loop_takes_a_block_per_iteration() {
    let mut b = KernelBuilder::new("rows");
    let a = b.param_array("a", Scalar::F64, true);
    let m = b.param_scalar("m", Scalar::USize);
    let _ = b.param_scalar("err", Scalar::F64);
    let err = b.reduction_local("err", Scalar::F64, ReduceOp::Max);
    b.reduce_into(err, ReduceOp::Max, 2);
    let start = b.lit_int(0, None);
    let rows = b.lit_int(100, Some(Scalar::USize));
    b.for_range(
        "j",
        Some(Scalar::USize),
        start,
        rows,
        false,
        Some(Schedule {
            gang: true,
            worker: false,
            vector: false,
        }),
        &[(err, ReduceOp::Max)],
        &[],
        |b, j| {
            let row = b.get(j[0]);
            let base = b.binary(BinaryOp::Mul, row, m);
            let base_l = b.local("base", Some(Scalar::USize), Some(base));
            let zero = b.lit_int(0, None);
            b.for_range(
                "i",
                Some(Scalar::USize),
                zero,
                m,
                false,
                Some(Schedule {
                    gang: false,
                    worker: false,
                    vector: true,
                }),
                &[],
                &[],
                |b, i| {
                    let bl = b.get(base_l);
                    let ii = b.get(i[0]);
                    let at = b.binary(BinaryOp::Add, bl, ii);
                    let v = b.load(a, at);
                    let two = b.lit_float(2.0, None);
                    let w = b.binary(BinaryOp::Mul, v, two);
                    let at2 = b.binary(BinaryOp::Add, bl, ii);
                    b.store(a, at2, w);
                    let e = b.get(err);
                    let e = b.math(MathFn::Max, &[e, w]);
                    b.set(err, e);
                },
            );
        },
    );
    let k = b.finish().expect("valid");
    let l = lower(&k, Target::exact(90)).unwrap();
    assert_eq!(
        l.layout
            .entries
            .iter()
            .map(|e| e.block_per_iteration)
            .collect::<Vec<_>>(),
        [true],
        "{}",
        l.ptx
    );
    assert!(
        l.ptx.contains("%tid.x") && l.ptx.contains("shfl.sync.down"),
        "{}",
        l.ptx
    );
    for sm in TARGETS {
        assemble(&lower(&k, Target::exact(sm)).unwrap(), sm);
    }
}

#[test]
fn struct_fields_are_addressed_by_stride_and_offset() {
    let k = acc_core::ir::samples::particles();
    for sm in TARGETS {
        let l = lower(&k, Target::exact(sm)).unwrap();
        // Element i of a 24-byte struct, field `v` at byte 8, `hits` at 16 (atomically).
        assert!(l.ptx.contains(", 24, "), "{}", l.ptx);
        assert!(
            l.ptx.contains(", 8;") && l.ptx.contains(", 16;"),
            "{}",
            l.ptx
        );
        assert!(l.ptx.contains("atom.global.add.u32"), "{}", l.ptx);
        assemble(&l, sm);
    }
}

#[test]
fn unchecked_kernels_access_without_predicates() {
    let mut k = saxpy(Scalar::F64);
    k.unchecked = true;
    let l = lower(&k, Target::exact(90)).unwrap();
    let predicated = |op: &str| {
        l.ptx
            .lines()
            .any(|x| x.trim_start().starts_with('@') && x.contains(op))
    };
    assert!(
        !predicated(" ld.global")
            && !predicated(" st.global")
            && l.ptx.contains("ld.global.nc.f64 %fd"),
        "{}",
        l.ptx
    );
    assert!(
        !l.ptx.contains("acc_status]"),
        "an unchecked kernel reports nothing: {}",
        l.ptx
    );
    assemble(&l, 90);
}

#[test]
fn a_tiled_nest_takes_a_block_per_tile() {
    let l = lower(&acc_core::ir::samples::tiled(), Target::exact(90)).unwrap();
    assert_eq!(
        l.layout
            .entries
            .iter()
            .map(|e| e.block_per_iteration)
            .collect::<Vec<_>>(),
        [true],
        "{}",
        l.ptx
    );
    assert!(
        l.ptx.contains("%tid.x") && l.ptx.contains("%ctaid.x"),
        "{}",
        l.ptx
    );
}

/// An inner loop over all of `x` for each `i` (the n-body shape): a short straight-line body is
/// unrolled four times with the remainder after; one that can `break` is not.
#[test]
fn short_inner_sequential_loops_are_unrolled() {
    for with_break in [false, true] {
        let mut b = KernelBuilder::new("inner");
        let x = b.param_array("x", Scalar::F32, false);
        let y = b.param_array("y", Scalar::F32, true);
        let start = b.lit_int(0, None);
        let n = b.len(x);
        b.for_range(
            "i",
            Some(Scalar::USize),
            start,
            n,
            false,
            GRID,
            &[],
            &[],
            |b, v| {
                let zero = b.lit_float(0.0, Some(Scalar::F32));
                let s = b.local("s", Some(Scalar::F32), Some(zero));
                let start = b.lit_int(0, None);
                let n = b.len(x);
                b.for_range(
                    "j",
                    Some(Scalar::USize),
                    start,
                    n,
                    false,
                    None,
                    &[],
                    &[],
                    |b, w| {
                        let j = b.get(w[0]);
                        let xj = b.load(x, j);
                        let r = b.math(MathFn::Sqrt, &[xj]);
                        let cur = b.get(s);
                        let next = b.binary(BinaryOp::Add, cur, r);
                        b.set(s, next);
                        if with_break {
                            let big = b.lit_float(1e30, Some(Scalar::F32));
                            let over = b.binary(BinaryOp::Gt, next, big);
                            b.if_(over, |b| b.break_(), |_| {});
                        }
                    },
                );
                let i = b.get(v[0]);
                let total = b.get(s);
                b.store(y, i, total);
            },
        );
        let k = b.finish().expect("valid");
        let l = lower(&k, Target::exact(90)).unwrap();
        assert_eq!(l.ptx.contains("$L_unrolled"), !with_break, "{}", l.ptx);
        for sm in TARGETS {
            assemble(&lower(&k, Target::exact(sm)).unwrap(), sm);
        }
    }
}

/// The matrix-vector shape: a block per row, whose sum only the block's first thread needs
/// (it stores `y[i]`): one barrier per row (two slot sets in turn), and one after the loop.
#[test]
fn a_row_sum_the_first_thread_stores_takes_one_barrier_per_row() {
    let k = acc_core::ir::samples::matvec();
    let l = lower(&k, Target::exact(90)).unwrap();
    let versions = l.ptx.matches("$L_versions").count().max(1);
    let bars = l.ptx.matches("bar.sync").count();
    assert!(bars <= 2 * versions + 1, "{bars} barriers:\n{}", l.ptx);
    assert!(l.ptx.contains("xor.b32"), "{}", l.ptx);
    for sm in TARGETS {
        assemble(&lower(&k, Target::exact(sm)).unwrap(), sm);
    }
}

/// Whether a histogram's atomic updates combine in shared memory first is decided once
/// (`privatize::privatized`): the PTX, the launch layout and ACC_INFO agree, for the 4-byte
/// types the PTX privatizes and for `f64`, which it does not (its `atom.add.f64` needs no
/// cap on the grid); a 16-bit histogram, updated by compare-and-swap loops, keeps to the blocks
/// the device holds.
#[test]
fn privatized_histograms_are_what_acc_info_says() {
    use acc_core::ir::mapping::describe;
    let words = &caps();
    for (elem, privatized) in [
        (Scalar::U32, true),
        (Scalar::I32, true),
        (Scalar::F32, true),
        (Scalar::F64, false),
        (Scalar::U64, false),
        (Scalar::U16, false),
    ] {
        let k = acc_core::ir::samples::histogram(elem);
        let l = lower(&k, Target::exact(90)).unwrap();
        let info: String = describe(&k, words).into_iter().map(|m| m.how).collect();
        assert_eq!(l.ptx.contains("acc_priv"), privatized, "{elem}: {}", l.ptx);
        let capped = privatized || elem == Scalar::U16;
        assert_eq!(l.layout.entries[0].merges_per_block, capped, "{elem}");
        assert_eq!(
            info.contains("combine in its own shared memory first"),
            privatized,
            "{elem}: {info}"
        );
    }
}

/// `ACC_FAST_FLOAT=1` ([`Target::fast_float`]): f32's `exp`, division, `1 / sqrt` and
/// multiply-adds by the fast instructions; f64 and the default stay exact.
#[test]
fn fast_float_takes_the_approximate_instructions_for_f32_only() {
    let kernel = |ty: Scalar| {
        let mut b = KernelBuilder::new("fast");
        let x = b.param_array("x", ty, false);
        let y = b.param_array("y", ty, true);
        let start = b.lit_int(0, None);
        let n = b.len(x);
        b.for_range(
            "i",
            Some(Scalar::USize),
            start,
            n,
            false,
            GRID,
            &[],
            &[],
            |b, v| {
                let i = b.get(v[0]);
                let xi = b.load(x, i);
                let one = b.lit_float(1.0, Some(ty));
                let root = b.math(MathFn::Sqrt, &[xi]);
                let r = b.binary(BinaryOp::Div, one, root);
                let e = b.math(MathFn::Exp, &[xi]);
                let q = b.binary(BinaryOp::Div, e, xi);
                let p = b.binary(BinaryOp::Mul, q, xi);
                let s = b.binary(BinaryOp::Add, r, p);
                let i = b.get(v[0]);
                b.store(y, i, s);
            },
        );
        b.finish().expect("valid")
    };
    let fast = Target {
        sm: 90,
        fast_float: true,
    };
    let l = lower(&kernel(Scalar::F32), fast).unwrap();
    for op in [
        "rsqrt.approx.f32",
        "ex2.approx.ftz.f32",
        "div.full.f32",
        "mul.f32",
        "add.f32",
    ] {
        assert!(l.ptx.contains(op), "{op}:\n{}", l.ptx);
    }
    let exact = lower(&kernel(Scalar::F32), Target::exact(90)).unwrap();
    assert!(!exact.ptx.contains("approx") && exact.ptx.contains("div.rn.f32"));
    let wide = lower(&kernel(Scalar::F64), fast).unwrap();
    assert!(!wide.ptx.contains("approx") && wide.ptx.contains("div.rn.f64"));
    for sm in TARGETS {
        assemble(
            &lower(
                &kernel(Scalar::F32),
                Target {
                    sm,
                    fast_float: true,
                },
            )
            .unwrap(),
            sm,
        );
    }
}
