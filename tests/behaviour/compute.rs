//! Compute constructs: parallel, kernels, serial (3.3 section 2.5) and the combined forms
//! (2.11); `if` and `self` (2.5.6, 2.5.7); private, firstprivate and implicit attributes
//! (2.5.13, 2.5.14, 2.6.2).

use std::collections::HashSet;

use acc::DeviceType;

use crate::devices::{on_each_device, parallelism};

#[acc::parallel_loop(copyin(x), copy(y))]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    for i in 0..y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[test]
fn parallel_loop_on_a_function() {
    on_each_device(|_| {
        let x: Vec<f32> = (0..10_000).map(|i| i as f32).collect();
        let mut y = vec![1.0f32; 10_000];
        saxpy(2.0, &x, &mut y);
        for i in 0..y.len() {
            assert_eq!(y[i], 2.0 * i as f32 + 1.0);
        }
    });
}

#[acc::offload]
fn two_loops_in_parallel(a: &mut [i64], b: &mut [i64]) {
    let n = a.len();
    #[acc::parallel(copy(a, b))]
    {
        #[acc::r#loop(gang)]
        for i in 0..n {
            a[i] = i as i64 * 3;
        }
        #[acc::r#loop(gang, vector)]
        for i in 0..n {
            b[i] = a[i] + 1;
        }
    }
}

#[test]
fn parallel_region_runs_its_loops_in_order() {
    on_each_device(|_| {
        let mut a = vec![0i64; 5000];
        let mut b = vec![0i64; 5000];
        two_loops_in_parallel(&mut a, &mut b);
        assert!(b.iter().enumerate().all(|(i, &v)| v == i as i64 * 3 + 1));
    });
}

#[acc::kernels(copyin(x), copyout(y, z))]
fn kernels_nests(x: &[f64], y: &mut [f64], z: &mut [f64]) {
    let n = x.len();
    for i in 0..n {
        y[i] = x[i] * x[i];
    }
    for i in 1..n {
        // Depends on the previous iteration: must stay sequential.
        z[i] = z[i - 1] + y[i];
    }
}

#[test]
fn kernels_runs_each_nest_in_order_and_keeps_dependences() {
    on_each_device(|_| {
        let x: Vec<f64> = (0..20_000).map(|i| (i % 7) as f64).collect();
        let mut y = vec![0.0; x.len()];
        let mut z = vec![0.0; x.len()];
        kernels_nests(&x, &mut y, &mut z);
        let mut acc = 0.0;
        for i in 1..x.len() {
            acc += x[i] * x[i];
            assert_eq!(z[i], acc, "z[{i}]");
        }
    });
}

#[acc::serial(copy(v))]
fn prefix_sum(v: &mut [u32]) {
    for i in 1..v.len() {
        v[i] += v[i - 1];
    }
}

#[test]
fn serial_region_is_sequential() {
    on_each_device(|_| {
        let mut v = vec![1u32; 1000];
        prefix_sum(&mut v);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 + 1));
    });
}

#[acc::offload]
fn where_it_ran(cond: bool, on_self: bool) -> (bool, bool) {
    let mut host = false;
    let mut multicore = false;
    #[acc::parallel_loop(if(cond), self(on_self), reduction(||: host, multicore))]
    for _ in 0..64 {
        host = host || acc::on_device(DeviceType::Host);
        multicore = multicore || acc::on_device(DeviceType::Multicore);
    }
    (host, multicore)
}

#[test]
fn if_false_and_self_run_on_the_host() {
    on_each_device(|ty| {
        assert_eq!(
            where_it_ran(false, false),
            (true, false),
            "if(false) on {ty}"
        );
        assert_eq!(
            where_it_ran(true, true),
            (true, false),
            "self(true) on {ty}"
        );
        // `self` is ignored when `if` is false (3.3 L1159-1163): still the host.
        assert_eq!(where_it_ran(false, true), (true, false));
        let expect = (ty == DeviceType::Host, ty == DeviceType::Multicore);
        assert_eq!(where_it_ran(true, false), expect, "on {ty}");
    });
}

#[test]
fn multicore_uses_several_threads() {
    on_each_device(|ty| {
        #[acc::parallel_loop]
        fn spread(ids: &mut [usize], work: &mut [u64]) {
            for i in 0..ids.len() {
                ids[i] = acc::gang_idx();
                work[i] = crate::devices::spin(50_000);
            }
        }
        // The pool is shared with the tests running beside this one (and, in CI, with
        // lavapipe's threads): a busy worker may leave every chunk to the other in one run, so
        // the chunks must spread in one of a few runs.
        let mut distinct = 0;
        for _ in 0..10 {
            let mut ids = vec![0; 64];
            let mut work = vec![0; 64];
            spread(&mut ids, &mut work);
            assert!(work.iter().all(|&w| w == crate::devices::spin(50_000)));
            distinct = ids.iter().collect::<HashSet<_>>().len();
            if distinct >= 2 {
                break;
            }
        }
        if parallelism(ty) >= 2 {
            assert!(distinct >= 2, "one thread ran every chunk on {ty}");
        } else {
            assert_eq!(distinct, 1, "{ty} ran a loop on several threads");
        }
    });
}

// The private copies are written and never read back: that is what the test checks.
#[allow(unused_mut, unused_assignments)]
#[acc::offload]
fn private_and_firstprivate(n: usize) -> (f64, [f64; 3], Vec<f64>) {
    let mut scale = 2.0;
    let mut tmp = [0.0f64; 3];
    let mut out = vec![0.0; n];
    #[acc::parallel(firstprivate(scale), copyout(out))]
    {
        #[acc::r#loop(gang, private(tmp))]
        for i in 0..n {
            for k in 0..3 {
                tmp[k] = (i + k) as f64;
            }
            out[i] = scale * (tmp[0] + tmp[1] + tmp[2]);
        }
        scale = -1.0;
    }
    (scale, tmp, out)
}

#[test]
fn private_copies_leave_the_originals_alone() {
    on_each_device(|_| {
        let (scale, tmp, out) = private_and_firstprivate(1000);
        assert_eq!(scale, 2.0, "firstprivate copy was written back");
        assert_eq!(tmp, [0.0; 3], "private copy was written back");
        assert!(out
            .iter()
            .enumerate()
            .all(|(i, &v)| v == 2.0 * (3 * i + 3) as f64));
    });
}

#[allow(unused_mut, unused_assignments)]
#[acc::offload]
fn implicit_scalars() -> (i32, i32) {
    let mut p = 1;
    let mut k = 1;
    #[acc::parallel]
    {
        p = 5;
    }
    #[acc::kernels]
    {
        k = 5;
    }
    (p, k)
}

#[test]
fn scalars_are_firstprivate_in_parallel_and_copy_in_kernels() {
    on_each_device(|_| {
        // 3.3 section 2.6.2: firstprivate in parallel and serial, copy in kernels.
        assert_eq!(implicit_scalars(), (1, 5));
    });
}

#[acc::parallel(copyin(x))]
fn region_value(x: &[u64]) -> u64 {
    let mut s = 0;
    #[acc::r#loop(reduction(+: s))]
    for i in 0..x.len() {
        s += x[i];
    }
    s
}

#[test]
fn a_region_on_a_function_returns_its_value() {
    on_each_device(|_| {
        let x: Vec<u64> = (1..=1000).collect();
        assert_eq!(region_value(&x), 500_500);
    });
}

#[acc::offload]
fn statement_forms(n: usize) -> Vec<usize> {
    let mut v = vec![0usize; n];
    #[acc::parallel_loop(copyout(v), num_gangs(8), vector_length(128), async(2), wait(1))]
    for i in 0..n {
        v[i] = i * i;
    }
    acc::wait!(2);
    #[acc::kernels_loop(independent, device_type(nvidia), num_gangs(80))]
    for i in 0..n {
        v[i] += 1;
    }
    #[acc::serial_loop]
    for i in 1..n {
        v[i] += v[i - 1] % 3;
    }
    v
}

#[test]
fn combined_constructs_on_statements() {
    on_each_device(|_| {
        let n = 3000;
        let got = statement_forms(n);
        let mut want: Vec<usize> = (0..n).map(|i| i * i + 1).collect();
        for i in 1..n {
            want[i] += want[i - 1] % 3;
        }
        assert_eq!(got, want);
    });
}

#[derive(Clone, Copy, Debug, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Particle {
    x: f64,
    v: f64,
    id: u32,
}

struct System {
    particles: Vec<Particle>,
    dt: f64,
}

impl System {
    #[acc::parallel_loop]
    fn step(&mut self) {
        for i in 0..self.particles.len() {
            self.particles[i].x += self.particles[i].v * self.dt;
        }
    }

    #[acc::offload]
    fn total_x(&self) -> f64 {
        let mut s = 0.0;
        #[acc::parallel_loop(reduction(+: s))]
        for i in 0..self.particles.len() {
            s += self.particles[i].x;
        }
        s
    }
}

#[test]
fn methods_and_device_copy_structs() {
    on_each_device(|_| {
        let particles = (0..1000)
            .map(|i| Particle {
                x: i as f64,
                v: 2.0,
                id: i,
            })
            .collect();
        let mut sys = System { particles, dt: 0.5 };
        sys.step();
        sys.step();
        assert!(sys.particles.iter().all(|p| p.x == p.id as f64 + 2.0));
        assert_eq!(
            sys.total_x(),
            (0..1000).map(|i| i as f64 + 2.0).sum::<f64>()
        );
    });
}

#[acc::parallel_loop(copyin(x), copy(y))]
fn axpy<T>(a: T, x: &[T], y: &mut [T])
where
    T: acc::DeviceCopy + std::ops::Mul<Output = T> + std::ops::AddAssign,
{
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

#[acc::offload]
fn generic_sum<T>(x: &[T]) -> T
where
    T: Copy + Send + Sync + Default + std::ops::AddAssign + acc::reduce::Reduce<acc::reduce::Add>,
{
    let mut s = T::default();
    #[acc::parallel_loop(reduction(+: s))]
    for i in 0..x.len() {
        s += x[i];
    }
    s
}

#[test]
fn generic_functions() {
    on_each_device(|_| {
        let x: Vec<i64> = (0..5000).collect();
        let mut y = vec![1i64; 5000];
        axpy(3, &x, &mut y);
        assert!(y.iter().enumerate().all(|(i, &v)| v == 3 * i as i64 + 1));
        let xf: Vec<f32> = (0..100).map(|i| i as f32).collect();
        let mut yf = vec![0.0f32; 100];
        axpy(0.5, &xf, &mut yf);
        assert_eq!(yf[10], 5.0);
        assert_eq!(generic_sum(&x), 4999 * 5000 / 2);
        assert_eq!(generic_sum(&xf), 4950.0);
    });
}

/// A generic function whose type parameter is not known to be device data: it runs on the
/// host devices; a kernel device refuses it at run time, naming the variable and the fix.
#[acc::offload]
fn generic_fill<T: Copy + Send + Sync>(v: &mut [T], x: T) {
    #[acc::parallel_loop]
    for i in 0..v.len() {
        v[i] = x;
    }
}

#[test]
fn generic_types_not_known_to_be_device_data() {
    on_each_device(|ty| {
        let mut v = vec![0u32; 64];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| generic_fill(&mut v, 7)));
        match acc::get_property(0, ty, acc::Property::SharedMemorySupport).as_str() {
            "1" => assert!(r.is_ok() && v.iter().all(|&x| x == 7), "on {ty}"),
            _ => {
                let msg = r
                    .unwrap_err()
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_default();
                assert!(
                    msg.contains("is not known to be device data")
                        && msg.contains("acc::DeviceCopy"),
                    "{msg}"
                );
            }
        }
    });
}

/// A struct whose methods run regions over its fields.
struct Heat {
    u: Vec<f64>,
    next: Vec<f64>,
    alpha: f64,
    steps: u32,
}

impl Heat {
    #[acc::offload]
    fn step(&mut self) {
        let n = self.u.len();
        #[acc::parallel_loop]
        for i in 1..n - 1 {
            self.next[i] =
                self.u[i] + self.alpha * (self.u[i - 1] - 2.0 * self.u[i] + self.u[i + 1]);
        }
        #[acc::serial]
        {
            self.steps += 1;
        }
        std::mem::swap(&mut self.u, &mut self.next);
    }

    #[acc::offload]
    fn total(&self) -> f64 {
        let mut s = 0.0;
        #[acc::parallel_loop(reduction(+: s))]
        for i in 0..self.u.len() {
            s += self.u[i];
        }
        s
    }
}

#[test]
fn methods_use_the_fields_of_self() {
    on_each_device(|ty| {
        let n = 1000;
        let u: Vec<f64> = (0..n)
            .map(|i| if i == n / 2 { 1000.0 } else { 0.0 })
            .collect();
        let mut h = Heat {
            next: u.clone(),
            u,
            alpha: 0.25,
            steps: 0,
        };
        for _ in 0..10 {
            h.step();
        }
        assert_eq!(h.steps, 10, "on {ty}");
        // Diffusion keeps the total while the heat stays off the boundary.
        assert!((h.total() - 1000.0).abs() < 1e-9, "{} on {ty}", h.total());
        assert!(h.u[n / 2] < 1000.0 && h.u[n / 2 + 3] > 0.0, "on {ty}");
    });
}

#[acc::offload]
fn index_sized(
    base: usize,
    words: &[usize],
    high: &mut [u32],
    signed: &mut [isize],
    wrapped: &mut [usize],
) -> usize {
    let mut top = 0usize;
    #[acc::parallel_loop(copyin(words), copyout(high, wrapped), copy(signed), reduction(max: top))]
    for i in 0..words.len() {
        let w = words[i] + base;
        high[i] = (w >> 32) as u32;
        // A negative i32 widens with its sign, as `as` does on the host.
        let d = (i as i32 - 5) as isize;
        signed[i] = signed[i] * 3_000_000_000 - d;
        wrapped[i] = (i as i32 - 5) as usize;
        top = top.max(w);
    }
    top
}

/// `usize` and `isize` keep the host's 64 bits on every device (4.2): values beyond 32 bits in
/// arrays, scalars, arithmetic, casts and reductions.
#[test]
fn index_sized_integers_keep_their_64_bits() {
    on_each_device(|ty| {
        let n = 3000;
        let words: Vec<usize> = (0..n).map(|i| i << 33).collect();
        let (mut high, mut wrapped) = (vec![0u32; n], vec![0usize; n]);
        let mut signed: Vec<isize> = (0..n as isize).map(|i| i - 1000).collect();
        let top = index_sized(7 << 40, &words, &mut high, &mut signed, &mut wrapped);
        for i in 0..n {
            let w = (i << 33) + (7 << 40);
            assert_eq!(high[i], (w >> 32) as u32, "high[{i}] on {ty}");
            assert_eq!(
                signed[i],
                (i as isize - 1000) * 3_000_000_000 - (i as isize - 5),
                "signed[{i}] on {ty}"
            );
            assert_eq!(wrapped[i], (i as i32 - 5) as usize, "wrapped[{i}] on {ty}");
        }
        assert_eq!(top, ((n - 1) << 33) + (7 << 40), "on {ty}");
    });
}

/// 3.3 section 2.4's conforming example: levels and sizes that differ per device type, each
/// device type seeing one of each. The loop is `gang` only, so calls are vector-single (R121).
#[acc::routine(device_type(nvidia) vector, device_type(*) seq)]
fn halve(x: f64) -> f64 {
    x * 0.5
}

#[acc::parallel_loop(
    gang,
    num_gangs(2),
    device_type(nvidia) num_gangs(80) vector_length(128),
    device_type(wgpu, multicore) num_gangs(64)
)]
fn halve_all(y: &mut [f64]) {
    for i in 0..y.len() {
        y[i] = halve(y[i]);
    }
}

#[test]
fn clauses_differ_per_device_type() {
    on_each_device(|ty| {
        let mut y: Vec<f64> = (0..5000).map(|i| i as f64).collect();
        halve_all(&mut y);
        for (i, v) in y.iter().enumerate() {
            assert_eq!(*v, i as f64 * 0.5, "y[{i}] on {ty}");
        }
    });
}

#[acc::parallel_loop(copyin(a), copyout(b))]
fn neighbours(a: &[f64], b: &mut [f64]) {
    for i in 0..b.len() {
        // The arm not taken would index out of range: it must not run (as in Rust).
        let l = if i > 0 { a[i - 1] } else { 0.0 };
        let r = if i + 1 < a.len() {
            let j = i + 1;
            a[j] * 2.0
        } else if i == 0 {
            -1.0
        } else {
            a[i]
        };
        b[i] = l + r + if i % 2 == 0 { a[i] } else { 0.5 };
    }
}

/// `if` as a value runs only the arm taken, so an index guarded by the condition is never out
/// of range; arms may hold statements where the `if` is a `let`'s whole value.
#[test]
fn if_values_run_only_the_arm_taken() {
    on_each_device(|ty| {
        let a: Vec<f64> = (0..1000).map(|i| i as f64).collect();
        let mut b = vec![0.0; a.len()];
        neighbours(&a, &mut b);
        for i in 0..a.len() {
            let l = if i > 0 { a[i - 1] } else { 0.0 };
            let r = if i + 1 < a.len() {
                a[i + 1] * 2.0
            } else {
                a[i]
            };
            let m = if i % 2 == 0 { a[i] } else { 0.5 };
            assert_eq!(b[i], l + r + m, "b[{i}] on {ty}");
        }
    });
}

#[acc::offload]
fn sum_below(n: u64) -> u64 {
    let mut s = 0u64;
    #[acc::parallel_loop(reduction(+: s))]
    for i in 0..n {
        s += i & 0xff;
    }
    s
}

/// A long loop that touches no array: its trip count sizes the grid (3.3 section 2.9; every
/// iteration runs once on every device).
#[test]
fn long_loops_without_arrays() {
    on_each_device(|ty| {
        let n = 20_000_000u64;
        let want = (n / 256) * (255 * 256 / 2);
        assert_eq!(sum_below(n), want, "on {ty}");
    });
}

#[acc::parallel_loop(copyin(a), copyout(b))]
fn shifted_copy(a: &[f32], b: &mut [f32], shift: usize) {
    for i in 0..b.len() {
        b[i] = a[i + shift];
    }
}

/// An index out of range stops the launching call with Rust's message, the array's length,
/// the index and the region's location, on every device (docs/guide/regions.md).
#[test]
fn out_of_range_indices_panic_at_the_region() {
    on_each_device(|ty| {
        let a = vec![1.0f32; 100];
        let mut b = vec![0.0f32; 100];
        shifted_copy(&a, &mut b, 0);
        assert!(b.iter().all(|&x| x == 1.0), "on {ty}");
        let err =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shifted_copy(&a, &mut b, 3)))
                .unwrap_err();
        let msg = err
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        assert!(
            msg.contains("index out of bounds: the len is 100 but the index is 10"),
            "on {ty}: {msg}"
        );
        // The host twin panics where Rust does (the location is in the panic's report, not
        // its message); kernels name the region's location in the message.
        if matches!(ty, DeviceType::Wgpu | DeviceType::Nvidia) {
            assert!(msg.contains("compute.rs:"), "on {ty}: {msg}");
        }
    });
}

/// The same copy with its arrays present: a launch that need not wait (nothing to copy back).
#[acc::offload]
fn shifted_copy_present(a: &Vec<f32>, b: &mut Vec<f32>, shift: usize) {
    #[acc::data(copyin(a), copy(b))]
    {
        #[acc::parallel_loop(present(a, b))]
        for i in 0..b.len() {
            b[i] = a[i + shift];
        }
        // Another launch after the one that stops: it runs, and the error still names the
        // first.
        #[acc::parallel_loop(present(b))]
        for i in 0..b.len() {
            b[i] += 1.0;
        }
    }
}

/// An index out of range in a region whose arrays are present: on nvidia the launch returns
/// before the GPU runs it (its accesses are not proven in bounds) and the device reports the
/// error at its next synchronization, here the data region's end, naming the region; the
/// other devices stop at the region. Every device gives Rust's message.
#[test]
fn out_of_range_indices_of_present_arrays_panic_by_the_data_regions_end() {
    on_each_device(|ty| {
        let a = vec![1.0f32; 100];
        let mut b = vec![0.0f32; 100];
        shifted_copy_present(&a, &mut b, 0);
        assert!(b.iter().all(|&x| x == 2.0), "on {ty}");
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shifted_copy_present(&a, &mut b, 3)
        }))
        .unwrap_err();
        let msg = crate::devices::panic_message(&*err);
        assert!(
            msg.contains("index out of bounds: the len is 100 but the index is 10"),
            "on {ty}: {msg}"
        );
        if ty == DeviceType::Nvidia {
            assert!(
                msg.contains(
                    "in the region in `shifted_copy_present` at tests/behaviour/compute.rs:"
                ),
                "on {ty}: {msg}"
            );
        }
        // The device is usable afterwards.
        shifted_copy_present(&a, &mut b, 0);
        assert!(b.iter().all(|&x| x == 2.0), "on {ty}");
    });
}

const TAPS: usize = 3;

#[acc::parallel_loop(copyin(x), copyout(y))]
fn local_arrays(x: &[f64], y: &mut [f64]) {
    for i in 0..y.len() {
        // A hint that the window is reused (OpenACC 2.0 section 2.8): it changes no result.
        acc::cache!(x[i..i + 3]);
        // Private arrays declared in the region (docs/guide/regions.md), by repetition and by list.
        let mut w = [0.0; TAPS];
        let k: [f64; 3] = [0.25, 0.5, 0.25];
        let mut acc = 0.0;
        for t in 0..TAPS {
            let j = (i + t) % x.len();
            w[t] = x[j];
        }
        for t in 0..w.len() {
            acc += k[t] * w[t];
        }
        y[i] = acc;
    }
}

#[test]
fn arrays_declared_in_a_region_are_private() {
    on_each_device(|ty| {
        let x: Vec<f64> = (0..500).map(|i| (i * i % 17) as f64).collect();
        let mut y = vec![0.0; 500];
        local_arrays(&x, &mut y);
        for i in 0..500 {
            let w = [x[i], x[(i + 1) % 500], x[(i + 2) % 500]];
            let want = 0.25 * w[0] + 0.5 * w[1] + 0.25 * w[2];
            assert_eq!(y[i], want, "y[{i}] on {ty}");
        }
    });
}

/// Constructs written before a loop statement, as C writes `#pragma acc data` and
/// `#pragma acc kernels` before a `for`: the statement is the construct's body.
#[acc::offload]
fn constructs_on_loop_statements(a: &mut Vec<f64>, n: usize) -> f64 {
    let mut s = 0.0;
    #[acc::data(copy(a))]
    for sweep in 0..3 {
        #[acc::kernels]
        for i in 0..n {
            a[i] += 1.0 + sweep as f64;
        }
    }
    #[acc::serial(copyin(a), copy(s))]
    for i in 0..n {
        s += a[i];
    }
    s
}

#[test]
fn data_and_compute_constructs_on_loop_statements() {
    on_each_device(|ty| {
        let n = 500;
        let mut a = vec![1.0; n];
        let s = constructs_on_loop_statements(&mut a, n);
        assert!(a.iter().all(|&v| v == 7.0), "on {ty}");
        assert_eq!(s, 7.0 * n as f64, "on {ty}");
    });
}

// Private copies of arrays whose type does not fix their length (3.3 sections 2.5.13, 2.5.14,
// 2.9.10): `Vec`s and slices, each copy as long as the original is at the launch.

// The private copy is written and never read back: that is what the test checks.
#[allow(unused_mut)]
#[acc::offload]
fn private_vectors(n: usize, base: &[f64], scratch: &mut [f64]) -> (Vec<f64>, Vec<f64>) {
    let m = base.len();
    let mut tmp = vec![-1.0f64; m];
    let mut out = vec![0.0; n];
    #[acc::parallel_loop(private(tmp, scratch), firstprivate(base), copyout(out))]
    for i in 0..n {
        for k in 0..m {
            tmp[k] = (i + k) as f64 + base[k];
            scratch[k] = tmp[k] * 2.0;
        }
        let mut s = 0.0;
        for k in 0..m {
            s += tmp[k] + scratch[k];
        }
        out[i] = s;
    }
    (tmp, out)
}

#[test]
fn vecs_and_slices_are_privatized() {
    on_each_device(|ty| {
        for m in [3, 7] {
            let base: Vec<f64> = (0..m).map(|k| k as f64 * 0.5).collect();
            let mut scratch = vec![9.0; m];
            let (tmp, out) = private_vectors(500, &base, &mut scratch);
            assert_eq!(tmp, vec![-1.0; m], "private copy written back on {ty}");
            assert_eq!(scratch, vec![9.0; m], "private slice written back on {ty}");
            for (i, &o) in out.iter().enumerate() {
                let want: f64 = (0..m).map(|k| 3.0 * ((i + k) as f64 + base[k])).sum();
                assert_eq!(o, want, "out[{i}] with m = {m} on {ty}");
            }
        }
    });
}

// A `firstprivate` array the region writes before its gang loop: every gang's copy starts with
// the original's values, and the loop sees what the gang-redundant code wrote.
#[allow(unused_mut, unused_assignments)]
#[acc::offload]
fn firstprivate_arrays_written(n: usize) -> ([i32; 4], Vec<i32>, Vec<i32>) {
    let mut w = [1, 2, 3, 4];
    let mut v = vec![10, 20, 30];
    let mut out = vec![0; n];
    #[acc::parallel(firstprivate(w, v), copyout(out))]
    {
        w[0] = 100;
        v[2] += 5;
        #[acc::r#loop(gang, vector)]
        for i in 0..n {
            out[i] = w[0] + w[3] + v[0] + v[2] + i as i32;
        }
    }
    (w, v, out)
}

#[test]
fn firstprivate_arrays_carry_gang_redundant_writes_into_loops() {
    on_each_device(|ty| {
        let (w, v, out) = firstprivate_arrays_written(1000);
        assert_eq!(
            (w, v),
            ([1, 2, 3, 4], vec![10, 20, 30]),
            "copies written back on {ty}"
        );
        assert!(
            out.iter()
                .enumerate()
                .all(|(i, &o)| o == 100 + 4 + 10 + 35 + i as i32),
            "on {ty}: {:?}",
            &out[..4]
        );
    });
}

// The OpenACC V&V suite's `parallel firstprivate` cases, as a Rust port writes them: a
// firstprivate `[f64; 10]` each gang fills and reads in worker loops, inside a data region, and
// one whose original's values the gangs read (issue 40, item 5: the H200's Vulkan driver failed
// leaving the data region, a buffer freed while its read-back was pending).
#[allow(unused_mut)]
#[acc::offload]
fn vv_firstprivate(a: &[f64], b: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut c = [0.0f64; 10];
    let mut init = [0.0f64; 10];
    for y in 0..10 {
        init[y] = y as f64 * 0.5;
    }
    let mut d = vec![0.0; 10 * n];
    let mut e = vec![0.0; 10 * n];
    #[acc::data(copyin(a, b), copy(d, e))]
    {
        #[acc::parallel(firstprivate(c))]
        {
            #[acc::r#loop(gang)]
            for x in 0..n {
                #[acc::r#loop(worker)]
                for y in 0..10 {
                    c[y] = a[x * 10 + y] - b[x * 10 + y];
                }
                #[acc::r#loop(worker)]
                for y in 0..10 {
                    d[x * 10 + y] = c[y];
                }
            }
        }
        #[acc::parallel(firstprivate(init))]
        {
            #[acc::r#loop(gang)]
            for x in 0..n {
                #[acc::r#loop(worker)]
                for y in 0..10 {
                    e[x * 10 + y] = a[x * 10 + y] + b[x * 10 + y] + init[y];
                }
            }
        }
    }
    (d, e)
}

#[test]
fn firstprivate_arrays_of_the_validation_suite() {
    let n = 1000;
    let a: Vec<f64> = (0..10 * n).map(|i| (i % 97) as f64 * 1.25).collect();
    let b: Vec<f64> = (0..10 * n).map(|i| (i % 13) as f64 * 0.5).collect();
    on_each_device(|ty| {
        for _ in 0..3 {
            let (d, e) = vv_firstprivate(&a, &b, n);
            for i in 0..10 * n {
                assert_eq!(d[i], a[i] - b[i], "d[{i}] on {ty}");
                assert_eq!(e[i], a[i] + b[i] + (i % 10) as f64 * 0.5, "e[{i}] on {ty}");
            }
        }
    });
}
