//! The staging of `cache` windows: what the rewrite gives, and where it leaves a hint.

use super::*;
use crate::builder::KernelBuilder;
use crate::samples::{stencil_cached, GRID};

/// `k` after the target's passes on a CUDA-like target, as the plan runs them.
fn staged(k: Kernel) -> Kernel {
    crate::plan::for_target(&k, &crate::plan::Caps::cuda_like())
}

fn outcomes(k: &Kernel) -> Vec<CacheOutcome> {
    k.caches.iter().map(|c| c.outcome.clone()).collect()
}

#[test]
fn a_gang_rows_window_is_staged_and_its_loads_read_the_copy() {
    let k = staged(stencil_cached());
    assert_eq!(
        outcomes(&k),
        vec![CacheOutcome::Staged {
            round: 512,
            elements: 514,
            reads: 3
        }]
    );
    // The gang loop holds the copy and the run's iterations in a sequential loop over runs,
    // and still runs on a block: the copy is one of its shared arrays.
    let gang = &k
        .function
        .body
        .iter()
        .find(|s| matches!(s, Stmt::For { .. }))
        .expect("the gang loop");
    let phases = gang
        .gang_phases(&k.function, crate::plan::SHARED_ARRAY_BYTES)
        .expect("a block per gang iteration");
    assert_eq!(phases.shared_arrays.len(), 1);
    // The copy and the run reading it, or the run as written where the window is not all
    // inside the array.
    assert_eq!(phases.loops().len(), 3);
    let text = crate::print::print(&k);
    let copy = k
        .function
        .locals
        .iter()
        .position(|l| l.name == "a_cache")
        .expect("the copy");
    // The copy is written once and read by the three loads in the window; the copy reads `a`,
    // the rows above and below still read memory, and the run as written reads all five.
    assert_eq!(text.matches(&format!("l{copy}[")).count(), 1 + 3, "{text}");
    assert_eq!(text.matches("p0[").count(), 1 + 2 + 5, "{text}");
}

/// `for i in 1..n - 1 { cache(a[i - 1..i + 2]); b[i] = a[i - 1] + a[i + 1] }`, with `written`
/// the region writes `a` too.
fn three_point(written: bool, window: (i128, u32)) -> Kernel {
    let mut b = KernelBuilder::new("three_point");
    let a = b.param_array("a", Scalar::F32, written);
    let out = b.param_array("b", Scalar::F32, true);
    let one = b.lit_int(1, None);
    let n = b.len(a);
    let one2 = b.lit_int(1, None);
    let end = b.binary(BinaryOp::Sub, n, one2);
    b.for_range(
        "i",
        Some(Scalar::USize),
        one,
        end,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let d = b.lit_int(window.0, None);
            let start = b.binary(BinaryOp::Add, i, d);
            b.cache(a, start, window.1, 0);
            let mut sum = None;
            for op in [BinaryOp::Sub, BinaryOp::Add] {
                let i = b.get(v[0]);
                let one = b.lit_int(1, None);
                let at = b.binary(op, i, one);
                let x = b.load(a, at);
                sum = Some(match sum {
                    None => x,
                    Some(s) => b.binary(BinaryOp::Add, s, x),
                });
            }
            let i = b.get(v[0]);
            b.store(out, i, sum.expect("two terms"));
            if written {
                let i = b.get(v[0]);
                let z = b.lit_float(0.0, None);
                b.store(a, i, z);
            }
        },
    );
    b.finish().expect("valid IR")
}

#[test]
fn a_flat_loop_becomes_a_gang_loop_over_runs() {
    let k = staged(three_point(false, (-1, 3)));
    assert_eq!(
        outcomes(&k),
        vec![CacheOutcome::Staged {
            round: 512,
            elements: 514,
            reads: 2
        }]
    );
    let Some(
        s @ Stmt::For {
            schedule: Some(sched),
            ..
        },
    ) = k
        .function
        .body
        .iter()
        .find(|s| matches!(s, Stmt::For { .. }))
    else {
        panic!("a loop");
    };
    assert!(sched.gang && !sched.vector);
    assert!(s
        .gang_phases(&k.function, crate::plan::SHARED_ARRAY_BYTES)
        .is_some());
}

#[test]
fn what_cannot_be_staged_stays_a_hint_and_the_kernel_as_it_was() {
    for (k, why) in [
        (three_point(true, (-1, 3)), "writes the array"),
        (three_point(false, (-1, 1)), "one element"),
        // A window that misses the loads: `a[i + 5..i + 8]`.
        (three_point(false, (5, 3)), "no load"),
    ] {
        let k = staged(k);
        match &k.caches[0].outcome {
            CacheOutcome::Hint(w) => assert!(w.contains(why), "{w}"),
            other => panic!("{other:?}"),
        }
        let text = crate::print::print(&k);
        assert!(!text.contains("_cache"), "{text}");
    }
}

#[test]
fn index_forms_see_through_names_and_products() {
    use crate::affine::{forms_before, Affine};
    // l0 = j, l1 = i, l2 = c; p0 = m. Body: `c = j * m + i; x = (j - 1) * m + i; y = c - m`.
    let mut f = Function::default();
    for name in ["j", "i", "c", "x", "y"] {
        f.locals.push(Local {
            name: name.into(),
            ty: Scalar::USize,
            len: None,
        });
    }
    let mut e = |x: Expr| f.exprs.append(x);
    let (j, i, m) = (e(Expr::Local(0)), e(Expr::Local(1)), e(Expr::Param(0)));
    let jm = e(Expr::Binary(BinaryOp::Mul, j, m));
    let c_value = e(Expr::Binary(BinaryOp::Add, jm, i));
    let (j2, one) = (
        e(Expr::Local(0)),
        e(Expr::Literal(Literal::Int(Scalar::USize, 1))),
    );
    let j1 = e(Expr::Binary(BinaryOp::Sub, j2, one));
    let (m2, i2) = (e(Expr::Param(0)), e(Expr::Local(1)));
    let j1m = e(Expr::Binary(BinaryOp::Mul, j1, m2));
    let above = e(Expr::Binary(BinaryOp::Add, j1m, i2));
    let (c, m3) = (e(Expr::Local(2)), e(Expr::Param(0)));
    let c_minus_m = e(Expr::Binary(BinaryOp::Sub, c, m3));
    let body = vec![
        Stmt::Assign {
            local: 2,
            value: c_value,
        },
        Stmt::Assign {
            local: 3,
            value: above,
        },
        Stmt::Assign {
            local: 4,
            value: c_minus_m,
        },
    ];
    let types = vec![Scalar::USize; f.exprs.len()];
    // Before `c` is assigned, it is not known; after, `c - m` is `(j - 1) * m + i`.
    let forms = forms_before(&f, &types, &body, 0, &Default::default());
    assert!(Affine::of(&f, &types, c_minus_m, &forms).is_none());
    let forms = forms_before(&f, &types, &body, 2, &Default::default());
    let x = Affine::of(&f, &types, above, &forms).expect("a form");
    let y = Affine::of(&f, &types, c_minus_m, &forms).expect("a form");
    assert_eq!(x.minus(y).as_constant(), Some(0));
}
