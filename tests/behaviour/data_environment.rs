//! The data environment on devices with their own memory (3.3 sections 2.6.7, 2.7.2, 2.14):
//! what the clauses move, and when. Every test runs on every device; where shared memory
//! (host, multicore) makes a difference, the test says which result each kind of memory gives.

use crate::devices::on_each_device;

fn shares_memory(ty: acc::DeviceType) -> bool {
    acc::get_property(0, ty, acc::Property::SharedMemorySupport) == "1"
}

// A region writing what its own `copyin` brings in is a compile error
// (tests/ui/copyin_written_by_its_region.rs): the write would be lost on GPUs only.

/// Returns what the host saw of `a[0]` before the update.
#[acc::offload]
fn staged(a: &mut Vec<f32>) -> f32 {
    let before;
    #[acc::data(copyout(a))]
    {
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] = 2.0;
        }
        before = a[0];
        acc::update!(self(a));
        a[1] = 5.0;
        acc::update!(device(a[1..2]));
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] += 1.0;
        }
    }
    before
}

#[test]
fn copyout_appears_at_region_exit_and_update_moves_both_ways() {
    on_each_device(|ty| {
        let mut a = vec![0.0f32; 1000];
        let before = staged(&mut a);
        assert_eq!(before, if shares_memory(ty) { 2.0 } else { 0.0 }, "on {ty}");
        assert_eq!((a[0], a[1], a[999]), (3.0, 6.0, 3.0), "on {ty}");
    });
}

/// Returns `a[0]` as the host saw it after the data region and after the loop.
#[acc::offload]
fn counted(a: &mut Vec<i32>) -> (i32, i32) {
    acc::enter_data!(copyin(a));
    #[acc::data(copy(a))]
    {
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] += 1;
        }
    }
    // The dynamic reference keeps the data on the device: nothing was copied out.
    let after_region = a[0];
    #[acc::parallel_loop]
    for i in 0..a.len() {
        a[i] += 1;
    }
    let after_loop = a[0];
    acc::exit_data!(copyout(a));
    (after_region, after_loop)
}

#[test]
fn reference_counts_keep_data_alive_across_regions_and_enter_exit_data() {
    on_each_device(|ty| {
        let mut a = vec![0i32; 513];
        let seen = counted(&mut a);
        let expected = if shares_memory(ty) { (1, 2) } else { (0, 0) };
        assert_eq!(seen, expected, "on {ty}");
        assert!(
            a.iter().all(|&x| x == 2),
            "copied out once, at exit data, on {ty}"
        );
        assert!(
            shares_memory(ty) || !acc::is_present(&a),
            "released on {ty}"
        );
    });
}

#[acc::offload]
fn leave_early(a: &mut [i32], how: u8) -> Result<i32, String> {
    #[acc::data(copy(a))]
    {
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] = 7;
        }
        if how == 0 {
            return Err("returned".into());
        }
        let step: Result<i32, String> = if how == 1 {
            Err("question mark".into())
        } else {
            Ok(1)
        };
        let _ = step?;
    }
    Ok(a[0])
}

#[test]
fn leaving_a_data_region_early_still_copies_out() {
    on_each_device(|ty| {
        for how in 0..3u8 {
            let mut a = vec![0i32; 64];
            let r = leave_early(&mut a, how);
            assert_eq!(r.is_ok(), how == 2, "on {ty}");
            assert!(
                a.iter().all(|&x| x == 7),
                "way out {how} on {ty}: {:?}",
                &a[..4]
            );
            assert!(
                shares_memory(ty) || !acc::is_present(&a),
                "released on {ty}"
            );
        }
    });
}

#[acc::offload]
fn needs_present(a: &mut [f64]) {
    #[acc::parallel_loop(present(a))]
    for i in 0..a.len() {
        a[i] = 1.0;
    }
}

#[test]
fn present_data_that_is_absent_is_an_error_naming_it() {
    on_each_device(|ty| {
        let mut a = vec![0.0f64; 16];
        if shares_memory(ty) {
            needs_present(&mut a);
            assert_eq!(a[0], 1.0);
            return;
        }
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| needs_present(&mut a)))
            .unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("`a` is not present") && msg.contains("data_environment.rs:"),
            "{msg}"
        );
        acc::copyin(&a).unwrap();
        needs_present(&mut a);
        acc::copyout(&mut a).unwrap();
        assert_eq!(a[15], 1.0, "on {ty}");
    });
}

#[acc::offload]
fn scale_present(a: &mut [f64], b: &[f64], k: f64) {
    #[acc::parallel_loop(default(present))]
    for i in 0..a.len() {
        a[i] = b[i] * k;
    }
}

#[acc::offload]
fn scale_in_data_default_present(a: &mut [f64], b: &[f64]) {
    #[acc::data(copyin(b), default(present))]
    {
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] = b[i] + 1.0;
        }
    }
}

/// `default(present)` (3.3 section 2.6.2): arrays no clause names must be present (scalars
/// stay firstprivate); the clause is visible from an enclosing `data` construct too.
#[test]
fn default_present_requires_unlisted_arrays_to_be_present() {
    on_each_device(|ty| {
        let b: Vec<f64> = (0..100).map(f64::from).collect();
        let mut a = vec![0.0f64; 100];
        if shares_memory(ty) {
            scale_present(&mut a, &b, 2.0);
            assert_eq!(a[99], 198.0, "on {ty}");
            return;
        }
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scale_present(&mut a, &b, 2.0)
        }))
        .unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("is not present")
                && msg.contains("default(present)")
                && msg.contains("data_environment.rs:"),
            "{msg}"
        );
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scale_in_data_default_present(&mut a, &b)
        }))
        .unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("`a` is not present"), "{msg}");
        assert!(a.iter().all(|&x| x == 0.0), "nothing ran on {ty}");

        acc::enter_data!(copyin(a, b));
        scale_present(&mut a, &b, 2.0);
        scale_in_data_default_present(&mut a, &b);
        acc::exit_data!(copyout(a), delete(b));
        for i in 0..100 {
            assert_eq!(a[i], i as f64 + 1.0, "a[{i}] on {ty}");
        }
    });
}

/// A `private` array's copies are made on the device: its original never travels, so
/// `default(present)` does not ask for it (3.3 sections 2.5.13 and 2.6.2).
#[acc::offload]
fn private_array_under_default_present(a: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len()];
    let mut vals = [0.0f64; 4];
    #[acc::data(copyin(a), copyout(out))]
    {
        #[acc::parallel_loop(default(present), private(vals))]
        for i in 0..a.len() {
            for k in 0..4 {
                vals[k] = a[i] * k as f64;
            }
            out[i] = vals[0] + vals[1] + vals[2] + vals[3];
        }
    }
    out
}

#[test]
fn private_arrays_need_not_be_present() {
    let a: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
    on_each_device(|ty| {
        let out = private_array_under_default_present(&a);
        for (i, &v) in out.iter().enumerate() {
            assert_eq!(v, a[i] * 6.0, "out[{i}] on {ty}");
        }
    });
}
