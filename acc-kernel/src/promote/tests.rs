use super::*;
use crate::builder::{ArrayRef, KernelBuilder, Value};
use crate::samples;

/// The statements of the innermost loop of `b` (first loop at each depth).
fn innermost(b: &[Stmt]) -> &[Stmt] {
    for s in b {
        if let Stmt::For { body, .. } = s {
            return innermost(body);
        }
    }
    b
}

fn stores_and_loads_of(k: &Kernel, b: &[Stmt], array: ParamId) -> usize {
    let mut n = 0;
    accesses(&k.function, b, array, &mut |_, _| n += 1);
    n
}

#[test]
fn a_matrix_products_accumulated_element_is_loaded_once_and_stored_once() {
    let mut k = samples::matmul_accumulating();
    let c = 2;
    assert_eq!(stores_and_loads_of(&k, innermost(&k.function.body), c), 2);
    assert_eq!(promote(&mut k), 1);
    crate::validate::expr_types(&k).expect("valid after the pass");
    // The k loop reads and writes a local; the j loop's body loads before and stores after.
    assert_eq!(stores_and_loads_of(&k, innermost(&k.function.body), c), 0);
    let first_loop = |b: &[Stmt]| -> Vec<Stmt> {
        b.iter()
            .find_map(|s| match s {
                Stmt::For { body, .. } => Some(body.clone()),
                _ => None,
            })
            .expect("a loop")
    };
    let columns = first_loop(&first_loop(&k.function.body));
    let shape: Vec<&str> = columns
        .iter()
        .map(|s| match s {
            Stmt::If { .. } => "if",
            Stmt::For { .. } => "for",
            _ => "other",
        })
        .filter(|s| *s != "other")
        .collect();
    assert_eq!(shape, ["if", "for", "if"]);
    let columns = &columns;
    assert_eq!(stores_and_loads_of(&k, columns, c), 2);
    // Its local is named after the array, for dumps.
    assert!(k
        .function
        .locals
        .iter()
        .any(|l| l.name == "c (kept in a register)"));
}

#[test]
fn the_plan_runs_the_pass_for_every_target() {
    let k = samples::matmul_accumulating();
    let caps = crate::plan::Caps::cuda_like();
    let p = crate::plan::prepare(&k, &caps, crate::plan::Variant::default()).expect("prepared");
    assert_eq!(
        stores_and_loads_of(&p.kernel, innermost(&p.kernel.function.body), 2),
        0
    );
    // The kernel as staged (what ACC_INFO reads) says which loop keeps what; the kernel as
    // built (what the bounds proof reads) keeps the accesses.
    assert_eq!(
        stores_and_loads_of(&p.staged, innermost(&p.staged.function.body), 2),
        0
    );
    assert_eq!(p.staged.kept_in_registers.len(), 1);
    assert!(k.kept_in_registers.is_empty());
    assert_eq!(stores_and_loads_of(&k, innermost(&k.function.body), 2), 2);
}

/// A sequential loop `for j in 0..n { body(i, j, x, y) }` in a parallel loop over `i`, in a
/// kernel of `x` (f64, written) and `y` (f64, read).
fn kernel_with(body: impl Fn(&mut KernelBuilder, Value, Value, ArrayRef, ArrayRef)) -> Kernel {
    let mut b = KernelBuilder::new("sample");
    let x = b.param_array("x", Scalar::F64, true);
    let y = b.param_array("y", Scalar::F64, false);
    let n = b.param_scalar("n", Scalar::USize);
    let parallel = Some(Schedule {
        gang: true,
        ..Schedule::default()
    });
    let start = b.lit_int(0, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        parallel,
        &[],
        &[],
        |b, iv| {
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                None,
                &[],
                &[],
                |b, jv| {
                    let (i, j) = (b.get(iv[0]), b.get(jv[0]));
                    body(b, i, j, x, y);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

/// `x[i] += y[j]`, the accumulation the pass is for.
fn accumulate(b: &mut KernelBuilder, i: Value, j: Value, x: ArrayRef, y: ArrayRef) {
    let (xi, yj) = (b.load(x, i), b.load(y, j));
    let s = b.binary(BinaryOp::Add, xi, yj);
    b.store(x, i, s);
}

#[test]
fn an_accumulation_at_an_index_the_loop_does_not_change_is_kept() {
    let mut k = kernel_with(accumulate);
    assert_eq!(promote(&mut k), 1);
    crate::validate::expr_types(&k).expect("valid after the pass");
}

#[test]
fn an_index_the_loop_changes_is_not_kept() {
    // x[j] += y[j]
    let mut k = kernel_with(|b, _, j, x, y| accumulate(b, j, j, x, y));
    assert_eq!(promote(&mut k), 0);
}

#[test]
fn another_index_of_the_same_array_keeps_the_loads_and_stores() {
    // x[i] += y[j]; x[0] = x[j]: x[j] or x[0] may be x[i].
    let mut k = kernel_with(|b, i, j, x, y| {
        accumulate(b, i, j, x, y);
        let xj = b.load(x, j);
        let zero = b.lit_int(0, Some(Scalar::USize));
        b.store(x, zero, xj);
    });
    assert_eq!(promote(&mut k), 0);
}

#[test]
fn a_store_under_a_condition_only_is_not_kept() {
    // if y[j] > 0 { x[i] = y[j] }: an iteration may not write x[i].
    let mut k = kernel_with(|b, i, j, x, y| {
        let yj = b.load(y, j);
        let zero = b.lit_float(0.0, Some(Scalar::F64));
        let c = b.binary(BinaryOp::Gt, yj, zero);
        b.if_(
            c,
            |b| {
                let yj = b.load(y, j);
                b.store(x, i, yj);
            },
            |_| {},
        );
    });
    assert_eq!(promote(&mut k), 0);
}

#[test]
fn a_loop_with_a_break_is_not_changed() {
    let mut k = kernel_with(|b, i, j, x, y| {
        accumulate(b, i, j, x, y);
        b.break_();
    });
    assert_eq!(promote(&mut k), 0);
}

#[test]
fn equal_trees_are_the_same_value() {
    let mut b = KernelBuilder::new("t");
    let n = b.param_scalar("n", Scalar::USize);
    let one = b.lit_int(1, Some(Scalar::USize));
    let two = b.lit_int(2, Some(Scalar::USize));
    let (p, q, r) = (
        b.binary(BinaryOp::Add, n, one),
        b.binary(BinaryOp::Add, n, one),
        b.binary(BinaryOp::Add, n, two),
    );
    let y = b.param_array("y", Scalar::F64, true);
    let s = b.binary(BinaryOp::Mul, p, q);
    let _ = r;
    let zero = b.lit_int(0, Some(Scalar::USize));
    let v = b.cast(s, Scalar::F64);
    b.store(y, zero, v);
    let k = b.finish().expect("valid IR");
    let f = &k.function;
    let adds: Vec<_> = f
        .exprs
        .iter()
        .filter(|(_, e)| matches!(e, Expr::Binary(BinaryOp::Add, ..)))
        .map(|(h, _)| h)
        .collect();
    assert_eq!(adds.len(), 3);
    assert!(same_value(f, adds[0], adds[1]));
    assert!(!same_value(f, adds[0], adds[2]));
}

#[test]
fn acc_info_says_which_elements_a_loop_keeps_in_registers() {
    let k = samples::matmul_accumulating();
    let lines = crate::mapping::describe(&k, &crate::plan::Caps::cuda_like());
    let k_loop = lines
        .iter()
        .find(|m| m.vars == ["k"])
        .expect("the k loop is described");
    assert!(
        k_loop
            .how
            .contains("(`c[..]`) kept in registers across it, written back after it"),
        "{}",
        k_loop.how
    );
    let j_loop = lines.iter().find(|m| m.vars == ["j"]).expect("the j loop");
    assert!(!j_loop.how.contains("registers"), "{}", j_loop.how);
}

#[test]
fn a_store_just_before_the_loop_starts_the_local_and_the_store_after_is_unguarded() {
    let k = samples::matmul_collapsed_in_c();
    let mut p = k.clone();
    assert_eq!(promote(&mut p), 1);
    crate::validate::expr_types(&p).expect("valid after the pass");
    let Some(Stmt::For { body, .. }) = p
        .function
        .body
        .iter()
        .find(|s| matches!(s, Stmt::For { .. }))
    else {
        panic!("the nest")
    };
    // No store of `c` before the `k` loop, one unguarded store after it, no `if`.
    let at = body
        .iter()
        .position(|s| matches!(s, Stmt::For { .. }))
        .expect("the k loop");
    assert!(body[..at].iter().all(|s| matches!(s, Stmt::Assign { .. })));
    assert!(matches!(body[at + 1], Stmt::Store { array: 2, .. }));
    assert!(!body.iter().any(|s| matches!(s, Stmt::If { .. })));
    // Which plan::prepare then tiles as the scalar sum it is.
    let caps = crate::plan::Caps::cuda_like();
    let staged = crate::plan::for_target(&k, &caps);
    assert_eq!(staged.auto_tiled.len(), 1);
}
