use super::builder::KernelBuilder;
use super::print::print;
use super::validate::validate;
use super::*;

/// `for i in 0..y.len() { y[i] = a * x[i] + y[i]; }` as a gang/vector loop.
fn saxpy() -> Kernel {
    let mut b = KernelBuilder::new("saxpy");
    let a = b.param_scalar("a", Scalar::F32);
    let x = b.param_array("x", Scalar::F32, false);
    let y = b.param_array("y", Scalar::F32, true);
    let start = b.lit_int(0, None);
    let step = b.lit_int(1, None);
    let n = b.len(y);
    let gang_vector = Some(Schedule {
        gang: true,
        worker: false,
        vector: true,
    });
    b.for_(
        &[("i", Some(Scalar::USize), start, step, n)],
        gang_vector,
        &[],
        &[],
        |b, vars| {
            let i = b.get(vars[0]);
            let xi = b.load(x, i);
            let ax = b.binary(BinaryOp::Mul, a, xi);
            let i = b.get(vars[0]);
            let yi = b.load(y, i);
            let sum = b.binary(BinaryOp::Add, ax, yi);
            let i = b.get(vars[0]);
            b.store(y, i, sum);
        },
    );
    b.finish().expect("valid")
}

#[test]
fn builds_validates_and_prints_saxpy() {
    let k = saxpy();
    validate(&k).expect("valid");
    let text = print(&k);
    assert!(text.contains("param p2 y: mut [f32]"), "{text}");
    assert!(
        text.contains("for l0 = 0usize step 1usize x len(p2) parallel(gang vector)"),
        "{text}"
    );
    assert!(text.contains("p2[l0] = ((p0 * p1[l0]) + p2[l0])"), "{text}");
}

#[test]
fn unsuffixed_literals_take_the_type_they_meet() {
    let mut b = KernelBuilder::new("lits");
    let s = b.local("s", None, None);
    let zero = b.lit_float(0.0, None);
    b.set(s, zero);
    let x = b.param_array("x", Scalar::F32, false);
    let i = b.lit_int(3, None);
    let xi = b.load(x, i);
    let cur = b.get(s);
    let two = b.lit_float(2.0, None);
    let scaled = b.binary(BinaryOp::Mul, two, xi);
    let sum = b.binary(BinaryOp::Add, cur, scaled);
    b.set(s, sum);
    let k = b.finish().expect("valid");
    assert_eq!(
        k.function.locals[0].ty,
        Scalar::F32,
        "s takes x's element type"
    );
    let text = print(&k);
    assert!(
        text.contains("l0 = 0.0f32") && text.contains("2.0f32") && text.contains("p0[3usize]"),
        "{text}"
    );
}

#[test]
fn defaults_are_i32_and_f64() {
    let mut b = KernelBuilder::new("defaults");
    let one = b.lit_int(1, None);
    let half = b.lit_float(0.5, None);
    let i = b.local("i", None, Some(one));
    let h = b.local("h", None, Some(half));
    let _ = (i, h);
    let k = b.finish().expect("valid");
    assert_eq!(k.function.locals[0].ty, Scalar::I32);
    assert_eq!(k.function.locals[1].ty, Scalar::F64);
}

#[test]
fn reductions_and_control_flow() {
    let mut b = KernelBuilder::new("dot");
    let x = b.param_array("x", Scalar::F64, false);
    let s_param = b.param_scalar("s", Scalar::F64);
    let _ = s_param;
    let zero = b.lit_float(0.0, None);
    let s = b.local("s", None, Some(zero));
    let start = b.lit_int(0, None);
    let step = b.lit_int(1, None);
    let n = b.len(x);
    b.for_(
        &[("i", Some(Scalar::USize), start, step, n)],
        Some(Schedule::default()),
        &[(s, ReduceOp::Add)],
        &[],
        |f, vars| {
            let i = f.get(vars[0]);
            let limit = f.lit_int(10, None);
            let small = f.binary(BinaryOp::Lt, i, limit);
            f.if_(small, |f| f.continue_(), |_| {});
        },
    );
    b.reduce_into(s, ReduceOp::Add, 1);
    let k = b.finish().expect("valid");
    let text = print(&k);
    assert!(
        text.contains("reduction(Add:l0)")
            && text.contains("continue")
            && text.contains("reduction Add: l0 into p1"),
        "{text}"
    );
}

#[test]
fn the_validator_reports_what_is_wrong() {
    let mut b = KernelBuilder::new("bad");
    let x = b.param_array("x", Scalar::F32, false);
    let i = b.lit_int(0, None);
    let v = b.lit_float(1.0, None);
    b.store(x, i, v);
    let e = b.finish().unwrap_err().to_string();
    assert!(
        e.contains("`x` is written but was captured read-only"),
        "{e}"
    );

    let mut b = KernelBuilder::new("mismatch");
    let p = b.param_scalar("p", Scalar::F64);
    let q = b.param_scalar("q", Scalar::F32);
    let _ = b.binary(BinaryOp::Add, p, q);
    let e = b.finish().unwrap_err().to_string();
    assert!(e.contains("types"), "{e}");

    let mut b = KernelBuilder::new("stray");
    b.break_();
    assert!(b
        .finish()
        .unwrap_err()
        .to_string()
        .contains("`break` outside a loop"));
}

#[test]
fn for_range_counts_trips_and_guards_empty_ranges() {
    let mut b = KernelBuilder::new("range");
    let y = b.param_array("y", Scalar::I64, true);
    let lo = b.lit_int(-5, None);
    let hi = b.lit_int(5, None);
    b.for_range(
        "k",
        Some(Scalar::I64),
        lo,
        hi,
        true,
        None,
        &[],
        &[],
        |b, v| {
            let k = b.get(v[0]);
            let idx = b.lit_int(0, None);
            b.store(y, idx, k);
        },
    );
    let k = b.finish().expect("valid");
    let text = print(&k);
    assert!(
        text.contains("select((l0 <= l1), (((l1 - l0) as usize) + 1usize), 0usize)"),
        "{text}"
    );
}

#[test]
fn struct_fields_are_typed_by_the_layout() {
    let k = super::samples::particles();
    validate(&k).unwrap();
    let text = print(&k);
    assert!(
        text.contains("mut p1[Particle]") || text.contains("Particle"),
        "{text}"
    );
    assert!(
        text.contains(".f0") && text.contains(".f1") && text.contains(".f2"),
        "{text}"
    );
    assert_eq!(
        k.access(1, Some(1)),
        Some(Access {
            ty: Scalar::F64,
            stride: 24,
            offset: 8,
            writable: true,
            nested: None,
        })
    );
    assert_eq!(k.access(1, Some(2)).map(|a| a.ty), Some(Scalar::U32));
    assert_eq!(
        k.access(1, None),
        None,
        "a whole struct element is not a scalar access"
    );
}

static NEI: StructLayout = StructLayout {
    name: "Nei",
    size: 16,
    fields: &[
        StructField {
            name: "number",
            offset: 0,
            ty: Some(Scalar::I32),
            array: None,
        },
        StructField {
            name: "offset",
            offset: 8,
            ty: Some(Scalar::I64),
            array: None,
        },
    ],
};

static BOX: StructLayout = StructLayout {
    name: "Box",
    size: 8 + 4 * 16 + 24,
    fields: &[
        StructField {
            name: "nn",
            offset: 0,
            ty: Some(Scalar::I32),
            array: None,
        },
        StructField {
            name: "nei",
            offset: 8,
            ty: None,
            array: Some(FieldArray {
                len: 4,
                stride: 16,
                scalar: None,
                layout: Some(&NEI),
            }),
        },
        StructField {
            name: "pos",
            offset: 72,
            ty: None,
            array: Some(FieldArray {
                len: 3,
                stride: 8,
                scalar: Some(Scalar::F64),
                layout: None,
            }),
        },
    ],
};

#[test]
fn array_fields_are_indexed_as_nested_accesses() {
    assert_eq!(split_field(1), (1, None));
    assert_eq!(split_field(nested_field(1, Some(0))), (1, Some(Some(0))));
    assert_eq!(split_field(nested_field(2, None)), (2, Some(None)));
    let mut b = KernelBuilder::new("boxes");
    let boxes = b.param_array("boxes", Elem::Struct(&BOX), true);
    let l = b.lit_int(1, Some(Scalar::USize));
    let nei = b.nested(boxes, l, "nei");
    let offset = b.field(nei, "offset");
    let k = b.lit_int(2, Some(Scalar::USize));
    let x = b.load(offset, k);
    let l = b.lit_int(0, Some(Scalar::USize));
    let pos = b.nested(boxes, l, "pos");
    let d = b.lit_int(1, Some(Scalar::USize));
    let y = b.cast(x, Scalar::F64);
    b.store(pos, d, y);
    let n = b.len(pos);
    let _ = b.local("n", Some(Scalar::USize), Some(n));
    let k = b.finish().unwrap();
    validate(&k).unwrap();
    assert_eq!(
        k.access(0, Some(nested_field(1, Some(1)))),
        Some(Access {
            ty: Scalar::I64,
            stride: BOX.size,
            offset: 16,
            writable: true,
            nested: Some((4, 16)),
        })
    );
    assert_eq!(
        k.access(0, Some(nested_field(2, None)))
            .map(|a| (a.ty, a.offset, a.nested)),
        Some((Scalar::F64, 72, Some((3, 8))))
    );
    let text = print(&k);
    assert!(text.contains("p0[1usize][2usize].f1[].f1"), "{text}");
    // Two levels, and an array of a scalar array's elements, are refused naming them.
    let mut b = KernelBuilder::new("deeper");
    let boxes = b.param_array("boxes", Elem::Struct(&BOX), false);
    let l = b.lit_int(0, Some(Scalar::USize));
    let nei = b.nested(boxes, l, "nei");
    let k = b.lit_int(0, Some(Scalar::USize));
    let _ = b.nested(nei, k, "number");
    let l = b.lit_int(0, Some(Scalar::USize));
    let _ = b.nested(boxes, l, "nn");
    let e = b.finish().unwrap_err().to_string();
    assert!(
        e.contains("kernels index one level of arrays inside struct elements"),
        "{e}"
    );
    assert!(
        e.contains("`nn` of `Box` (in `boxes`) is not an array"),
        "{e}"
    );
}

#[test]
fn struct_element_misuse_is_an_error_naming_the_array() {
    let mut b = KernelBuilder::new("bad");
    let p = b.param_array("parts", Elem::Struct(&super::samples::PARTICLE), false);
    let i = b.lit_int(0, Some(Scalar::USize));
    let _ = b.load(p, i);
    let missing = b.field(p, "mass");
    let i = b.lit_int(0, Some(Scalar::USize));
    let _ = b.load(missing, i);
    let e = b.finish().unwrap_err().to_string();
    assert!(
        e.contains("an element of `parts` (a `Particle` struct) as a whole"),
        "{e}"
    );
    assert!(
        e.contains("`Particle` (the elements of `parts`) has no field `mass`"),
        "{e}"
    );

    let mut b = KernelBuilder::new("scalar");
    let a = b.param_array("a", Scalar::F32, false);
    let _ = b.field(a, "x");
    let e = b.finish().unwrap_err().to_string();
    assert!(
        e.contains("`.x` of an element of `a`, whose elements are f32"),
        "{e}"
    );
}

/// Every std method built from IR operations (`builder::methods`) gives valid IR of the type
/// std gives, for every type it applies to; a method of another type is a failure naming it.
#[test]
fn std_methods_build_valid_ir_of_std_result_types() {
    use Scalar::*;
    let float: &[(&str, usize, Option<Scalar>)] = &[
        ("log", 2, None),
        ("exp_m1", 1, None),
        ("ln_1p", 1, None),
        ("asinh", 1, None),
        ("acosh", 1, None),
        ("atanh", 1, None),
        ("copysign", 2, None),
        ("to_degrees", 1, None),
        ("to_radians", 1, None),
        ("rem_euclid", 2, None),
        ("div_euclid", 2, None),
        ("is_nan", 1, Some(Bool)),
        ("is_finite", 1, Some(Bool)),
        ("is_infinite", 1, Some(Bool)),
        ("is_sign_positive", 1, Some(Bool)),
        ("is_sign_negative", 1, Some(Bool)),
    ];
    // (name, arguments, result type: None = the receiver's, Some(U32) = u32, Some(Bool))
    let int: &[(&str, usize, Option<Scalar>)] = &[
        ("count_ones", 1, Some(U32)),
        ("count_zeros", 1, Some(U32)),
        ("leading_zeros", 1, Some(U32)),
        ("trailing_zeros", 1, Some(U32)),
        ("ilog2", 1, Some(U32)),
        ("reverse_bits", 1, None),
        ("swap_bytes", 1, None),
        ("rotate_left", 2, None),
        ("rotate_right", 2, None),
        ("wrapping_neg", 1, None),
        ("wrapping_shl", 2, None),
        ("wrapping_shr", 2, None),
        ("saturating_add", 2, None),
        ("saturating_sub", 2, None),
        ("saturating_mul", 2, None),
        ("rem_euclid", 2, None),
        ("div_euclid", 2, None),
        ("isqrt", 1, None),
    ];
    let check = |t: Scalar, name: &str, arity: usize, result: Option<Scalar>| {
        let mut b = KernelBuilder::new("m");
        let x = b.param_scalar("x", t);
        let counts = matches!(
            name,
            "rotate_left" | "rotate_right" | "wrapping_shl" | "wrapping_shr"
        );
        let mut args = vec![x];
        if arity == 2 {
            args.push(b.param_scalar("y", if counts { U32 } else { t }));
        }
        let v = b.method(name, &args);
        let out = b.param_array("out", result.unwrap_or(t), true);
        let zero = b.lit_int(0, Some(USize));
        b.store(out, zero, v);
        let k = b.finish().unwrap_or_else(|e| panic!("{t}::{name}: {e}"));
        validate(&k).unwrap_or_else(|e| panic!("{t}::{name}: {e:?}"));
    };
    for t in [F32, F64] {
        for &(name, arity, result) in float {
            check(t, name, arity, result);
        }
    }
    for t in [I8, I16, I32, I64, ISize, U8, U16, U32, U64, USize] {
        for &(name, arity, result) in int {
            check(t, name, arity, result);
        }
        let unsigned_only = [("is_power_of_two", Some(Bool)), ("next_power_of_two", None)];
        let signed_only = [("is_positive", Some(Bool)), ("is_negative", Some(Bool))];
        for (name, result) in if t.is_signed() {
            signed_only
        } else {
            unsigned_only
        } {
            check(t, name, 1, result);
        }
        check(
            t,
            "abs_diff",
            2,
            Some(match t {
                I8 => U8,
                I16 => U16,
                I32 => U32,
                I64 => U64,
                ISize => USize,
                u => u,
            }),
        );
    }
    let mut b = KernelBuilder::new("m");
    let x = b.param_scalar("x", F64);
    b.method("count_ones", &[x]);
    let e = b.finish().expect_err("count_ones of f64");
    assert!(e.message.contains("f64::count_ones"), "{e}");
}

/// `for i in 0..n, j in 0..m tile(8, *) { out[i * m + j] = s }` (reducing into `s` when
/// `reduce`), with the schedule given.
fn tiled(schedule: Option<Schedule>, reduce: bool, assign_bound: bool) -> Kernel {
    let mut b = KernelBuilder::new("tiled");
    let out = b.param_array("out", Scalar::U32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let m = b.param_scalar("m", Scalar::USize);
    let _ = b.param_scalar("s", Scalar::U32);
    let s = b.reduction_local("s", Scalar::U32, ReduceOp::Add);
    b.reduce_into(s, ReduceOp::Add, 3);
    let bound = b.local("bound", Some(Scalar::USize), Some(m));
    let (z0, o0, z1, o1) = (
        b.lit_int(0, None),
        b.lit_int(1, None),
        b.lit_int(0, None),
        b.lit_int(1, None),
    );
    let mb = b.get(bound);
    let reductions = if reduce {
        vec![(s, ReduceOp::Add)]
    } else {
        vec![]
    };
    b.for_tiled(
        &[
            ("i", Some(Scalar::USize), z0, o0, n),
            ("j", Some(Scalar::USize), z1, o1, mb),
        ],
        &[Some(8), None],
        schedule,
        &reductions,
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let m = b.param_scalar_value(2);
            let row = b.binary(BinaryOp::Mul, i, m);
            let j = b.get(v[1]);
            let at = b.binary(BinaryOp::Add, row, j);
            let one = b.lit_int(1, Some(Scalar::U32));
            b.store(out, at, one);
            let cur = b.get(s);
            let one = b.lit_int(1, Some(Scalar::U32));
            let next = b.binary(BinaryOp::Add, cur, one);
            b.set(s, next);
            if assign_bound {
                let z = b.lit_int(0, Some(Scalar::USize));
                b.set(bound, z);
            }
        },
    );
    b.finish().expect("valid")
}

#[test]
fn tiled_nests_expand_to_tile_loops_around_element_loops() {
    let gang_vector = Some(Schedule {
        gang: true,
        worker: false,
        vector: true,
    });
    let k = tiled(gang_vector, true, false);
    // The IR keeps the annotation, outermost level first (`*` for the outer loop: 8 wide).
    let Stmt::For { tile, .. } = k.function.body.last().expect("a loop") else {
        panic!("a loop last")
    };
    assert_eq!(tile, &[8, 8]);
    assert!(print(&k).contains("tile[8, 8]"), "{}", print(&k));
    let e = tile::expand(&k, plan::SHARED_ARRAY_BYTES);
    validate(&e).expect("the expansion is valid IR");
    let outer = e.function.body.last().expect("a loop");
    let Stmt::For {
        levels,
        schedule,
        reductions,
        tile,
        ..
    } = outer
    else {
        panic!("a loop last")
    };
    assert!(tile.is_empty());
    assert_eq!(levels.len(), 2);
    assert_eq!(
        schedule,
        &Some(Schedule {
            gang: true,
            worker: false,
            vector: false
        })
    );
    assert_eq!(reductions.len(), 1);
    // One vector loop over a tile's elements: the split GPU backends run a tile per gang with.
    let phases = outer
        .gang_phases(&e.function, plan::SHARED_ARRAY_BYTES)
        .filter(|p| !p.synchronizes())
        .expect("tile loops over element loops");
    let [gang_phases::Step::Shared(only)] = phases.steps.as_slice() else {
        panic!("one shared loop: {:?}", phases.steps)
    };
    let Stmt::For {
        levels, schedule, ..
    } = &*only.vector
    else {
        panic!("an element loop")
    };
    assert_eq!(levels.len(), 2);
    assert!(schedule.as_ref().is_some_and(|s| s.vector && !s.gang));
    // Tiles counted for the grid: ceil(37 / 8) * ceil(53 / 8) = 5 * 7.
    use super::args::{KernelArg, ScalarValue};
    let mut out = vec![0u8; 4 * 37 * 53];
    let args = [
        KernelArg::Write(&mut out),
        KernelArg::Scalar(ScalarValue::USize(37)),
        KernelArg::Scalar(ScalarValue::USize(53)),
        KernelArg::Scalar(ScalarValue::U32(0)),
    ];
    let mut counts = Vec::new();
    segments::Segments::new(&k)
        .expect("splits")
        .program
        .run::<segments::HostValueError>(&args, &mut |_, n, _| {
            counts.push(n);
            Ok(())
        })
        .expect("runs");
    assert_eq!(counts, [Some(35)]);
    // A kernel without tiles is not copied.
    let plain = saxpy();
    assert!(matches!(
        tile::expand(&plain, plan::SHARED_ARRAY_BYTES),
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn tile_levels_follow_the_nest_schedule() {
    let sched = |gang, worker, vector| {
        Some(Schedule {
            gang,
            worker,
            vector,
        })
    };
    for (given, outer, inner) in [
        (None, None, None),
        (sched(true, false, false), sched(true, false, false), None),
        (
            sched(true, true, true),
            sched(true, true, false),
            sched(false, false, true),
        ),
        (
            sched(true, true, false),
            sched(true, false, false),
            sched(false, true, false),
        ),
    ] {
        let k = tiled(given.clone(), false, false);
        let e = tile::expand(&k, plan::SHARED_ARRAY_BYTES);
        let Stmt::For { schedule, body, .. } = e.function.body.last().expect("a loop") else {
            panic!("a loop")
        };
        assert_eq!(schedule, &outer, "{given:?}");
        let Stmt::For { schedule, .. } = &body[0] else {
            panic!("an element loop")
        };
        assert_eq!(schedule, &inner, "{given:?}");
    }
}

#[test]
fn a_nest_whose_body_assigns_its_bounds_runs_untiled() {
    let k = tiled(None, false, true);
    let e = tile::expand(&k, plan::SHARED_ARRAY_BYTES);
    let Stmt::For { levels, tile, .. } = e.function.body.last().expect("a loop") else {
        panic!("a loop")
    };
    assert!(tile.is_empty());
    assert_eq!(levels.len(), 2);
    validate(&e).expect("valid");
}

#[test]
fn the_validator_checks_tile_sizes() {
    let mut k = tiled(None, false, false);
    let Some(Stmt::For { tile, .. }) = k.function.body.last_mut() else {
        panic!("a loop")
    };
    *tile = vec![4];
    assert!(validate(&k)
        .unwrap_err()
        .message
        .contains("a nest of 2 loops with 1 tile sizes"));
    let Some(Stmt::For { tile, .. }) = k.function.body.last_mut() else {
        panic!("a loop")
    };
    *tile = vec![4, 0];
    assert!(validate(&k)
        .unwrap_err()
        .message
        .contains("a tile size of 0"));
}

#[test]
fn entry_points_are_named_after_the_region() {
    let named = |name: &str| Kernel {
        name: name.into(),
        ..crate::samples::saxpy(Scalar::F32)
    };
    let k = named("jacobi at examples/jacobi.rs:27:9");
    assert_eq!(k.entry_name(0), "jacobi_27_gpu");
    assert_eq!(k.entry_name(2), "jacobi_27_gpu_2");
    assert_eq!(
        named("Grid::step at src/a.rs:3:1").entry_name(0),
        "Grid_step_3_gpu"
    );
    assert_eq!(named("__x at a.rs:1:1").entry_name(0), "x_1_gpu");
    assert_eq!(named("é1 at a.rs:1:1").entry_name(0), "acc_1_1_gpu");
    assert_eq!(named("größe at a.rs:5:1").entry_name(0), "gr_e_5_gpu");
    assert_eq!(named("saxpy").entry_name(0), "saxpy_gpu");
}

#[test]
fn loop_mappings_say_how_and_why() {
    use crate::mapping::describe;
    let w = &crate::plan::Caps::cuda_like();
    let flat = describe(&crate::samples::saxpy(Scalar::F32), w);
    assert_eq!(flat.len(), 1);
    assert!(
        flat[0]
            .how
            .starts_with("gang vector: grid-stride over blocks of 256 threads"),
        "{flat:?}"
    );
    let tiled = describe(&crate::samples::tiled(), w);
    assert!(
        tiled[0].how.contains("tile(") && tiled[0].how.contains("a block per tile"),
        "{tiled:?}"
    );
}

#[test]
fn gang_redundant_updates_of_a_reduction_are_read_beside_the_loop_partials() {
    // `s += 1.0` before a loop that reduces `s`: the kernel runs in segments and the local's
    // value joins the loop's partials (3.3 section 2.5.15).
    let mut b = KernelBuilder::new("redundant");
    let x = b.param_array("x", Scalar::F64, false);
    let _s_param = b.param_scalar("s", Scalar::F64);
    let s = b.reduction_local("s", Scalar::F64, ReduceOp::Add);
    let one = b.lit_float(1.0, None);
    let cur = b.get(s);
    let sum = b.binary(BinaryOp::Add, cur, one);
    b.set(s, sum);
    let start = b.lit_int(0, None);
    let step = b.lit_int(1, None);
    let n = b.len(x);
    b.for_(
        &[("i", Some(Scalar::USize), start, step, n)],
        Some(Schedule::default()),
        &[(s, ReduceOp::Add)],
        &[],
        |_, _| {},
    );
    b.reduce_into(s, ReduceOp::Add, 1);
    let k = b.finish().expect("valid");
    assert_eq!(
        k.reductions_updated_outside_loops()
            .into_iter()
            .collect::<Vec<_>>(),
        vec![s.id()]
    );
    assert!(k.needs_segments());
    let loops = [s.id()].into_iter().collect();
    let slots = super::args::sequential_reduction_slots(&k, &loops, |_| Some((Scalar::F64, 8)))
        .expect("a scalar");
    assert_eq!(
        (slots.len(), slots[0].local_offset, slots[0].into),
        (1, 8, Some(1))
    );
}

#[test]
fn narrowed_kernels_are_valid_ir() {
    use super::samples;
    let kernels = [
        samples::saxpy(Scalar::F32),
        samples::matvec(),
        samples::softmax(),
        samples::tiled(),
        samples::row_smooth(),
        samples::transpose(),
        samples::particles(),
    ];
    let mut narrowed = 0;
    for k in &kernels {
        // As a backend narrows: after tiling.
        let e = tile::expand(k, plan::SHARED_ARRAY_BYTES);
        if !narrow::narrowable(&e) {
            continue;
        }
        let n = narrow::to_32(&e);
        validate(&n).unwrap_or_else(|err| panic!("{}: {err:?}", k.name));
        assert!(
            n.function.locals.iter().all(|l| l.ty != Scalar::USize),
            "{}: a usize local is left",
            k.name
        );
        narrowed += 1;
    }
    assert!(narrowed >= 5, "only {narrowed} sample kernels narrowable");
    // A sum of usize elements keeps 64 bits (its array and partials hold them in memory).
    assert!(!narrow::narrowable(&samples::reduce(
        Scalar::USize,
        ReduceOp::Add
    )));
}

/// `for i in 0..n (gang vector) { s = 0; for k in 0..trips { s += w[k] * x[i] }; y[i] = s }`,
/// the inner loop's length a literal or the parameter `m`.
fn weighted(trips: Option<i128>) -> Kernel {
    let mut b = KernelBuilder::new("weighted");
    let w = b.param_array("w", Scalar::F32, false);
    let x = b.param_array("x", Scalar::F32, false);
    let y = b.param_array("y", Scalar::F32, true);
    let m = b.param_scalar("m", Scalar::USize);
    let start = b.lit_int(0, None);
    let n = b.len(y);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        samples::GRID,
        &[],
        &[],
        |b, v| {
            let zero = b.lit_float(0.0, Some(Scalar::F32));
            let s = b.local("s", Some(Scalar::F32), Some(zero));
            let start = b.lit_int(0, None);
            let end = match trips {
                Some(t) => b.lit_int(t, Some(Scalar::USize)),
                None => m,
            };
            b.for_range(
                "k",
                Some(Scalar::USize),
                start,
                end,
                false,
                None,
                &[],
                &[],
                |b, kv| {
                    let k = b.get(kv[0]);
                    let wk = b.load(w, k);
                    let i = b.get(v[0]);
                    let xi = b.load(x, i);
                    let p = b.binary(BinaryOp::Mul, wk, xi);
                    let cur = b.get(s);
                    let next = b.binary(BinaryOp::Add, cur, p);
                    b.set(s, next);
                },
            );
            let i = b.get(v[0]);
            let sv = b.get(s);
            b.store(y, i, sv);
        },
    );
    b.finish().expect("valid IR")
}

#[test]
fn flat_loops_over_shared_reads_are_tiled_unless_short() {
    // The inner loop's length is known only at the launch, or is long: tiled by acc.
    let staged = |k: Kernel| plan::for_target(&k, &plan::Caps::cuda_like());
    for k in [weighted(None), weighted(Some(1000))] {
        let k = staged(k);
        let Some(Stmt::For { tile, levels, .. }) = k.function.body.last() else {
            panic!("a loop last")
        };
        assert_eq!(k.auto_tiled, vec![levels[0].var], "{}", print(&k));
        assert_eq!(tile, &[tile::AUTO_TILE]);
        validate(&tile::expand(&k, plan::SHARED_ARRAY_BYTES)).expect("the expansion is valid IR");
    }
    // A short loop of known length (a stencil's taps): left as it is.
    let short = staged(weighted(Some(3)));
    assert!(short.auto_tiled.is_empty());
    // Loops without such reads are left as they are.
    assert!(staged(saxpy()).auto_tiled.is_empty());
}
