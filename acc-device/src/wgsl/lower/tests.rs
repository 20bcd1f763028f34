use acc_core::ir::builder::KernelBuilder;
use acc_core::ir::samples::saxpy;
use acc_core::ir::*;

use super::*;

const FULL: Target = Target::ALL_FEATURES;
const BASIC: Target = Target {
    f64: false,
    int64: false,
    int64_atomics: false,
    ..Target::ALL_FEATURES
};

fn dot(elem: Scalar, op: ReduceOp) -> Kernel {
    let mut b = KernelBuilder::new("dot");
    let x = b.param_array("x", elem, false);
    let y = b.param_array("y", elem, false);
    let _s = b.param_scalar("s", elem);
    let init = b.lit_float(0.0, None);
    let s = b.local("s", Some(elem), Some(init));
    let start = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        Some(Schedule::default()),
        &[(s, op)],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let i = b.get(v[0]);
            let yi = b.load(y, i);
            let p = b.binary(BinaryOp::Mul, xi, yi);
            let cur = b.get(s);
            let next = match op {
                ReduceOp::Max => b.math(MathFn::Max, &[cur, p]),
                _ => b.binary(BinaryOp::Add, cur, p),
            };
            b.set(s, next);
        },
    );
    b.reduce_into(s, op, 2);
    b.finish().expect("valid IR")
}

#[test]
fn saxpy_lowers_to_a_validated_module() {
    let l = lower(&saxpy(Scalar::F32), BASIC).expect("lowers");
    assert_eq!(l.entry_points, vec!["saxpy_gpu".to_string()]);
    assert_eq!(
        l.bindings,
        vec![
            Binding::Array(1),
            Binding::Array(2),
            Binding::Params,
            Binding::Status
        ]
    );
    assert_eq!(
        l.params,
        vec![ParamSlot {
            param: 0,
            ty: Scalar::F32,
            offset: 0
        }]
    );
    assert!(
        l.wgsl.contains("var<storage, read> p1: array<f32>"),
        "{}",
        l.wgsl
    );
    assert!(
        l.wgsl.contains("var<storage, read_write> p2: array<f32>"),
        "{}",
        l.wgsl
    );
    assert!(l.wgsl.contains("acc_in_bounds(2u"), "{}", l.wgsl);
    assert_eq!(l.module.entry_points.len(), 1);
}

#[test]
fn reductions_write_per_workgroup_partials() {
    for op in [ReduceOp::Add, ReduceOp::Max] {
        let l = lower(&dot(Scalar::F32, op), BASIC).expect("lowers");
        assert_eq!(
            l.layout.reductions,
            vec![ReductionSlot {
                op,
                ty: Scalar::F32,
                into: Some(2),
                entry: Some(0),
                local_offset: 0,
                imag_offset: 0,
                len: 1
            }]
        );
        assert!(l.bindings.contains(&Binding::Partials(0)));
        assert!(
            l.wgsl.contains("workgroupBarrier()") && l.wgsl.contains("acc_partials_0[acc_wg.x]"),
            "{}",
            l.wgsl
        );
    }
}

/// A complex product reduces pairs through two workgroup arrays into two words per workgroup.
#[test]
fn complex_products_reduce_pairs() {
    for elem in [Scalar::F32, Scalar::F64] {
        let l = lower(&acc_core::ir::samples::complex_product(elem), FULL).expect("lowers");
        assert_eq!(l.layout.reductions[0].op, ReduceOp::ComplexMul);
        assert_eq!(l.layout.reductions[0].len, 2);
        assert!(
            l.wgsl.contains("acc_shared_0_0_im")
                && l.wgsl.contains("acc_partials_0[2u * acc_wg.x + 1u]"),
            "{}",
            l.wgsl
        );
    }
}

#[test]
fn f64_and_int64_need_the_capabilities() {
    let e = lower(&saxpy(Scalar::F64), BASIC)
        .err()
        .expect("needs f64")
        .to_string();
    assert!(e.contains("no f64") && e.contains("`x`"), "{e}");
    lower(&saxpy(Scalar::F64), FULL).expect("with FLOAT64");
    let e = lower(&saxpy(Scalar::I64), BASIC)
        .err()
        .expect("needs int64")
        .to_string();
    assert!(e.contains("64-bit integers"), "{e}");
    lower(&dot(Scalar::F64, ReduceOp::Add), FULL).expect("f64 reductions");
}

#[test]
fn unsupported_shapes_are_errors_that_say_what() {
    // 8-bit data lowers to 32-bit words, wrapped at 8 bits after arithmetic.
    let l = lower(&saxpy(Scalar::U8), BASIC).expect("u8 lowers");
    assert!(
        l.wgsl.contains("& 0xffu)") && l.wgsl.contains("array<u32>"),
        "{}",
        l.wgsl
    );
    let mut b = KernelBuilder::new("serial");
    let y = b.param_array("y", Scalar::F32, true);
    let i = b.lit_int(0, None);
    let v = b.lit_float(1.0, None);
    b.store(y, i, v);
    // Code outside parallel loops runs in an entry point of one invocation.
    let l = lower(&b.finish().expect("valid"), BASIC).expect("lowers");
    assert_eq!(
        l.layout
            .entries
            .iter()
            .map(|e| e.single)
            .collect::<Vec<_>>(),
        vec![true]
    );
    assert!(
        l.bindings.contains(&Binding::Locals) && l.wgsl.contains("@workgroup_size(1)"),
        "{}",
        l.wgsl
    );
}

#[test]
fn math_and_control_flow_validate() {
    let mut b = KernelBuilder::new("math");
    let x = b.param_array("x", Scalar::F32, true);
    let k = b.param_scalar("k", Scalar::I32);
    let flag = b.param_scalar("flag", Scalar::Bool);
    let zero = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        n,
        false,
        Some(Schedule::default()),
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let mut acc = xi;
            for m in [
                MathFn::Sqrt,
                MathFn::Cbrt,
                MathFn::Round,
                MathFn::Fract,
                MathFn::Log10,
                MathFn::Signum,
                MathFn::Recip,
            ] {
                acc = b.math(m, &[acc]);
            }
            let p = b.math(MathFn::Powi, &[acc, k]);
            let t = b.local("t", Some(Scalar::F32), Some(p));
            let three = b.lit_int(3, None);
            let zero = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::I32),
                zero,
                three,
                true,
                None,
                &[],
                &[],
                |b, w| {
                    let j = b.get(w[0]);
                    let jf = b.cast(j, Scalar::F32);
                    let cur = b.get(t);
                    let s = b.binary(BinaryOp::Add, cur, jf);
                    b.set(t, s);
                    let two = b.lit_int(2, None);
                    let j = b.get(w[0]);
                    let big = b.binary(BinaryOp::Gt, j, two);
                    b.if_(big, |b| b.break_(), |b| b.continue_());
                },
            );
            let tv = b.get(t);
            let one = b.lit_float(1.0, None);
            let alt = b.select(flag, tv, one);
            let i = b.get(v[0]);
            b.store(x, i, alt);
        },
    );
    let k = b.finish().expect("valid IR");
    let l = lower(&k, BASIC).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        l.wgsl.contains("acc_powi_f32") && l.wgsl.contains("(params.p2 != 0u)"),
        "{}",
        l.wgsl
    );
}

#[test]
fn struct_arrays_are_wgsl_structs_with_the_host_layout() {
    let l = lower(&acc_core::ir::samples::particles(), FULL).expect("lowers");
    // x at 0, v at 8, hits at 16 (atomic: an `atomic` statement updates it), 24 bytes in all.
    assert!(l.wgsl.contains("struct S1 { // Particle\n    @size(8) f0: f64,\n    @size(8) f1: f64,\n    @size(8) f2: atomic<u32>,\n}"), "{}", l.wgsl);
    assert!(l.wgsl.contains("array<S1>"), "{}", l.wgsl);
    // Without f64 in shaders the kernel is refused (its f64 scalar `dt` comes first).
    let Err(e) = lower(&acc_core::ir::samples::particles(), BASIC) else {
        panic!("f64 lowered without f64")
    };
    assert!(e.to_string().contains("no f64 in shaders"), "{e}");
}

#[test]
fn usize_is_64_bit_where_shaders_have_64_bit_integers() {
    let k = saxpy(Scalar::USize);
    let wide = lower(&k, FULL).expect("lowers with int64");
    assert!(
        wide.wgsl.contains("array<u64>") && wide.wgsl.contains("p0: u64"),
        "{}",
        wide.wgsl
    );
    // Indices are 64-bit values, checked against the length before they index as u32.
    assert!(
        wide.wgsl
            .contains("fn acc_in_bounds(param: u32, i: u64, len: u32)"),
        "{}",
        wide.wgsl
    );
    assert!(
        wide.wgsl.contains("acc_base_g: u64") && wide.wgsl.contains("acc_chunks_g"),
        "{}",
        wide.wgsl
    );
    assert!(!widened_in_buffers(Scalar::USize, FULL) && FULL.index_bytes() == 8);
    // Without 64-bit integers usize values are 32-bit words, and arrays of them are widened.
    let narrow = lower(&k, BASIC).expect("lowers without int64");
    assert!(
        narrow.wgsl.contains("array<u32>") && !narrow.wgsl.contains("u64"),
        "{}",
        narrow.wgsl
    );
    assert!(widened_in_buffers(Scalar::USize, BASIC) && BASIC.index_bytes() == 4);
}

/// `x[i] = f(x[i])` on f64 for every one-argument transcendental function.
fn f64_math() -> Kernel {
    math_kernel(Scalar::F64)
}

fn math_kernel(elem: Scalar) -> Kernel {
    let mut b = KernelBuilder::new("math64");
    let x = b.param_array("x", elem, true);
    let zero = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        n,
        false,
        Some(Schedule::default()),
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let mut acc = b.load(x, i);
            for m in [
                MathFn::Exp,
                MathFn::Ln,
                MathFn::Sin,
                MathFn::Tan,
                MathFn::Asin,
                MathFn::Tanh,
                MathFn::Cbrt,
            ] {
                acc = b.math(m, &[acc]);
            }
            let i = b.get(v[0]);
            b.store(x, i, acc);
        },
    );
    b.finish().expect("valid")
}

#[test]
fn f64_transcendental_functions_are_written_out() {
    let l = lower(&f64_math(), FULL).expect("lowers with f64");
    // One helper per function the kernel calls, written from acc_core's programs.
    for f in [
        "fn acc_exp_f64(",
        "fn acc_ln_f64(",
        "fn acc_sin_f64(",
        "fn acc_tan_f64(",
        "fn acc_asin_f64(",
    ] {
        assert!(l.wgsl.contains(f), "{f} missing:\n{}", l.wgsl);
    }
    assert!(!l.wgsl.contains("fn acc_cos_f64("), "{}", l.wgsl);
    assert!(l.wgsl.contains("acc_tanh_f64(acc_asin_f64("), "{}", l.wgsl);
    let e = lower(&f64_math(), BASIC)
        .err()
        .expect("needs f64")
        .to_string();
    assert!(e.contains("no f64"), "{e}");
}

#[test]
fn f32_transcendental_functions_go_through_f64_where_the_adapter_has_it() {
    // Widened, computed by the same programs, rounded once: nvidia's results.
    let l = lower(&math_kernel(Scalar::F32), FULL).expect("lowers");
    assert!(l.wgsl.contains("fn acc_exp_f32("), "{}", l.wgsl);
    assert!(l.wgsl.contains("f32(acc_exp_f32(f64("), "{}", l.wgsl);
    // Without f64, the driver's builtins.
    let l = lower(&math_kernel(Scalar::F32), BASIC).expect("lowers");
    assert!(!l.wgsl.contains("acc_exp_f32"), "{}", l.wgsl);
    assert!(l.wgsl.contains("exp("), "{}", l.wgsl);
}

static TAGGED: StructLayout = StructLayout {
    name: "Tagged",
    size: 8,
    fields: &[
        StructField {
            name: "id",
            offset: 0,
            ty: Some(Scalar::U32),
            array: None,
        },
        StructField {
            name: "flag",
            offset: 4,
            ty: Some(Scalar::Bool),
            array: None,
        },
        StructField {
            name: "level",
            offset: 6,
            ty: Some(Scalar::I16),
            array: None,
        },
    ],
};

#[test]
fn narrow_struct_fields_are_bits_of_a_shared_word() {
    // t[i].level = t[i].level + 1 when t[i].flag.
    let mut b = KernelBuilder::new("tagged");
    let t = b.param_array("t", Elem::Struct(&TAGGED), true);
    let zero = b.lit_int(0, None);
    let n = b.len(t);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        n,
        false,
        Some(Schedule::default()),
        &[],
        &[],
        |b, v| {
            let (flag, level) = (b.field(t, "flag"), b.field(t, "level"));
            let i = b.get(v[0]);
            let f = b.load(flag, i);
            let i = b.get(v[0]);
            let l = b.load(level, i);
            let one = b.lit_int(1, Some(Scalar::I16));
            let l1 = b.binary(BinaryOp::Add, l, one);
            let nl = b.select(f, l1, l);
            let i = b.get(v[0]);
            b.store(level, i, nl);
        },
    );
    let l = lower(&b.finish().expect("valid"), BASIC).expect("lowers");
    // Word 1 (bytes 4..8) holds both narrow fields; written, so atomic.
    assert!(
        l.wgsl
            .contains("@size(4) f0: u32,\n    @size(4) w1: atomic<u32>,"),
        "{}",
        l.wgsl
    );
    assert!(
        l.wgsl.contains("extractBits(atomicLoad(&") && l.wgsl.contains("!= 0u)"),
        "{}",
        l.wgsl
    );
    assert!(
        l.wgsl.contains("extractBits(bitcast<i32>(atomicLoad(&"),
        "{}",
        l.wgsl
    );
    assert!(
        l.wgsl
            .contains("insertBits(acc_old_w, bitcast<u32>(acc_v), 16u, 16u)"),
        "{}",
        l.wgsl
    );
}

#[test]
fn a_tiled_nest_takes_a_workgroup_per_tile() {
    for target in [FULL, BASIC] {
        let l = lower(&acc_core::ir::samples::tiled(), target).unwrap();
        assert_eq!(
            l.layout
                .entries
                .iter()
                .map(|e| e.block_per_iteration)
                .collect::<Vec<_>>(),
            [true],
            "{}",
            l.wgsl
        );
        // Tiles stride over workgroups, a tile's elements over the workgroup's invocations.
        assert!(
            l.wgsl.contains("acc_k_g: u32 = acc_wg.x") && l.wgsl.contains("acc_k_v: u32 = acc_lid"),
            "{}",
            l.wgsl
        );
    }
}

/// As on nvidia (`ptx::lower::tests`): the WGSL, the launch layout and ACC_INFO agree on which
/// histograms a workgroup combines in its own memory first (32-bit integers only); a float
/// histogram, updated by compare-exchange loops, keeps to the workgroups the device holds.
#[test]
fn privatized_histograms_are_what_acc_info_says() {
    use acc_core::ir::mapping::describe;
    let words = &caps(FULL);
    for (elem, privatized) in [
        (Scalar::U32, true),
        (Scalar::I32, true),
        (Scalar::F32, false),
        (Scalar::F64, false),
    ] {
        let k = acc_core::ir::samples::histogram(elem);
        let l = lower(&k, FULL).unwrap();
        let info: String = describe(&k, words).into_iter().map(|m| m.how).collect();
        assert_eq!(
            l.wgsl.contains("acc_priv"),
            privatized,
            "{elem}: {}",
            l.wgsl
        );
        // Privatized, or updated by compare-exchange loops: the grid keeps to what the device
        // holds either way.
        assert!(l.layout.entries[0].merges_per_block, "{elem}");
        assert_eq!(
            l.wgsl.contains("atomicCompareExchangeWeak(&p1"),
            !privatized,
            "{elem}: {}",
            l.wgsl
        );
        assert_eq!(
            info.contains("combine in its own shared memory first"),
            privatized,
            "{elem}: {info}"
        );
    }
}
