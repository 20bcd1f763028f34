use super::*;
use crate::args::ScalarValue;
use crate::builder::KernelBuilder;
use crate::samples;

#[test]
fn a_host_loop_launches_its_body_per_iteration_with_grids_sized_to_each() {
    let s = Segments::new(&samples::eliminate()).expect("splits");
    assert!(s.program.repeats());
    // Per `k`: the gang loop over the rows below `k`, `k` an argument of each launch.
    assert_eq!(s.program.outline(), "repeat `k`:\n  entry 0 (grid)\n");
    assert_eq!(s.host_vars.len(), 1);
    let mut m = vec![0u8; 8 * 16];
    let args = [
        KernelArg::Write(&mut m),
        KernelArg::Scalar(ScalarValue::USize(4)),
    ];
    let mut launches = Vec::new();
    s.program
        .run::<HostValueError>(&args, &mut |e, n, v| {
            launches.push((e, n, v[0]));
            Ok(())
        })
        .expect("runs");
    assert_eq!(
        launches,
        [
            (0, Some(3), 0),
            (0, Some(2), 1),
            (0, Some(1), 2),
            (0, Some(0), 3)
        ]
    );
}

/// `for t in 0..trips { for i (gang vector) { x[i] += 1 } }`, the trip count given by `trips`.
fn repeated(data_range: bool, leave: bool) -> Kernel {
    let mut b = KernelBuilder::new("repeated");
    let x = b.param_array("x", Scalar::U32, true);
    let steps = b.param_scalar("steps", Scalar::USize);
    let start = b.lit_int(0, None);
    let end = if data_range {
        let zero = b.lit_int(0, Some(Scalar::USize));
        let x0 = b.load(x, zero);
        b.cast(x0, Scalar::USize)
    } else {
        steps
    };
    let par = Some(Schedule {
        gang: true,
        worker: false,
        vector: true,
    });
    b.for_range(
        "t",
        Some(Scalar::USize),
        start,
        end,
        false,
        None,
        &[],
        &[],
        |b, _| {
            if leave {
                let zero = b.lit_int(0, Some(Scalar::USize));
                let x0 = b.load(x, zero);
                let big = b.lit_int(100, None);
                let stop = b.binary(BinaryOp::Gt, x0, big);
                b.if_(stop, |b| b.break_(), |_| {});
            }
            let start = b.lit_int(0, None);
            let len = b.len(x);
            b.for_range(
                "i",
                Some(Scalar::USize),
                start,
                len,
                false,
                par.clone(),
                &[],
                &[],
                |b, v| {
                    let i = b.get(v[0]);
                    let xi = b.load(x, i);
                    let one = b.lit_int(1, None);
                    let y = b.binary(BinaryOp::Add, xi, one);
                    let i = b.get(v[0]);
                    b.store(x, i, y);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

#[test]
fn loops_the_host_cannot_count_or_that_end_early_stay_on_the_device() {
    let counted = repeated(false, false);
    let s = Segments::new(&counted).expect("splits");
    // The variable is not read: nothing sets it, the grid alone repeats.
    assert_eq!(s.program.outline(), "repeat `t`:\n  entry 0 (grid)\n");
    // A range read from device data, and a loop left by `break`: one thread runs them.
    for k in [repeated(true, false), repeated(false, true)] {
        let s = Segments::new(&k).expect("splits");
        assert!(!s.program.repeats(), "{}", crate::print::print(&k));
        assert_eq!(s.program.outline(), "entry 0 (one thread)\n");
    }
}

#[test]
fn acc_info_says_why_the_host_does_not_drive_a_loop() {
    use crate::mapping::describe;
    let w = &crate::plan::Caps::cuda_like();
    let how = |k: &Kernel| {
        describe(k, w)
            .into_iter()
            .find(|m| m.vars == ["t"])
            .map(|m| m.how)
            .unwrap_or_default()
    };
    assert!(how(&repeated(false, false)).contains("driven by the host"));
    assert!(how(&repeated(true, false)).contains("its range is not computed"));
    assert!(how(&repeated(false, true)).contains("`break` or `continue` may leave it"));
}
