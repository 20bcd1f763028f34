//! Data constructs, clauses and routines (3.3 sections 2.6, 2.7, 2.14; chapter 3). On devices
//! that share host memory every variable is present and nothing moves; what must hold
//! everywhere is tested here: the constructs run their bodies, `if(false)` skips them, bounds
//! of subarrays are checked, and errors name the variable and the source line.

use crate::devices::on_each_device;

#[acc::offload]
fn data_region(a: &mut Vec<f64>, b: &[f64], n: usize) -> f64 {
    let mut t = vec![0.0; n];
    let mut total = 0.0;
    #[acc::data(copy(a), copyin(b[0..n]), create(t), copyout(zero: total))]
    {
        #[acc::parallel_loop(present(a, b, t))]
        for i in 0..n {
            t[i] = b[i] * 2.0;
            a[i] += t[i];
        }
        acc::update!(self(a[0..n]), device(t), if_present);
        #[acc::parallel_loop(present(a), reduction(+: total))]
        for i in 0..n {
            total += a[i];
        }
    }
    total
}

#[test]
fn data_region_with_nested_compute_regions() {
    on_each_device(|_| {
        let n = 1000;
        let mut a = vec![1.0; n];
        let b: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let total = data_region(&mut a, &b, n);
        assert!(a
            .iter()
            .enumerate()
            .all(|(i, &v)| v == 1.0 + 2.0 * i as f64));
        assert_eq!(total, n as f64 + (n * (n - 1)) as f64);
    });
}

#[acc::offload]
fn early_exit(a: &mut [i32], stop: bool) -> Result<i32, String> {
    #[acc::data(copy(a))]
    {
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] = 1;
        }
        if stop {
            return Err(String::from("stopped"));
        }
    }
    Ok(a.iter().sum())
}

#[test]
fn leaving_a_data_region_early() {
    on_each_device(|_| {
        let mut a = vec![0; 100];
        assert_eq!(early_exit(&mut a, true), Err("stopped".into()));
        assert_eq!(a.iter().sum::<i32>(), 100);
        assert_eq!(early_exit(&mut a, false), Ok(100));
    });
}

#[acc::data(copyin(x), if(x.len() > 4))]
fn sum_with_conditional_data(x: &[u64]) -> u64 {
    let mut s = 0;
    #[acc::parallel_loop(reduction(+: s))]
    for i in 0..x.len() {
        s += x[i];
    }
    s
}

#[test]
fn data_on_a_function_and_if_clause() {
    on_each_device(|_| {
        assert_eq!(sum_with_conditional_data(&[1, 2, 3]), 6);
        assert_eq!(
            sum_with_conditional_data(&(1..=100).collect::<Vec<_>>()),
            5050
        );
    });
}

#[acc::declare(create(scratch))]
fn with_declare(scratch: &mut [f32]) -> f32 {
    #[acc::parallel_loop]
    for i in 0..scratch.len() {
        scratch[i] = i as f32;
    }
    // `create` data is not copied out (3.3 section 2.7.9): the host sees the results only
    // after an update.
    acc::update!(self(scratch));
    scratch.iter().sum()
}

#[test]
fn declare_on_a_function() {
    on_each_device(|_| {
        let mut s = vec![0.0f32; 64];
        assert_eq!(with_declare(&mut s), (0..64).sum::<i32>() as f32);
    });
}

#[test]
fn enter_exit_and_routines() {
    on_each_device(|ty| {
        let mut a = vec![3u16; 50];
        let b = vec![1u8; 8];
        acc::enter_data!(copyin(a), create(b[2..6]));
        assert!(acc::is_present(&a));
        acc::exit_data!(copyout(a), delete(b[2..6]), finalize);
        acc::copyin(&a).unwrap();
        acc::create(&b[..]).unwrap();
        acc::update_device(&a).unwrap();
        acc::update_self(&mut a).unwrap();
        acc::copyout(&mut a).unwrap();
        acc::delete(&b).unwrap();
        acc::copyout_finalize(&mut a).unwrap();
        acc::delete_finalize(&b).unwrap();
        assert!(
            a.iter().all(|&v| v == 3),
            "nothing changed the data on {ty}"
        );
        // Shared memory is always present; elsewhere every reference was released.
        assert_eq!(
            acc::is_present(&a) || acc::is_present(&b),
            shares_memory(ty),
            "on {ty}"
        );
        if shares_memory(ty) {
            // In memory the device shares, the device address is the host address.
            assert_eq!(
                acc::deviceptr(&a).map(|p| p.addr()),
                Some(a.as_ptr() as usize)
            );
        }
    });
}

#[test]
fn device_memory_routines_check_every_access() {
    on_each_device(|ty| {
        let p = acc::malloc(64).unwrap();
        acc::memcpy_to_device(p, &[1.5f64, 2.5, 3.5]).unwrap();
        acc::memcpy_device(p.offset(32), p, 24).unwrap();
        let mut back = [0.0f64; 3];
        acc::memcpy_from_device(&mut back, p.offset(32)).unwrap();
        assert_eq!(back, [1.5, 2.5, 3.5]);
        let (past, gone) = if shares_memory(ty) {
            ("past the end", "not a live allocation")
        } else {
            ("not inside one allocation", "not inside one allocation")
        };
        let too_far = acc::memcpy_to_device(p.offset(40), &[0u8; 32]).unwrap_err();
        assert!(too_far.to_string().contains(past), "{ty}: {too_far}");
        acc::free(p).unwrap();
        assert!(acc::free(p).is_err());
        let e = acc::memcpy_from_device(&mut back, p).unwrap_err();
        assert!(e.to_string().contains(gone), "{ty}: {e}");
    });
}

/// Copies are checked against the size `acc::malloc` was asked for, not the allocation a
/// device rounds it up to (issue 40, item 3: nvidia took a byte past `malloc(7)` and a byte
/// into `malloc(0)`).
#[test]
fn device_memory_routines_check_the_size_asked_for() {
    on_each_device(|ty| {
        let p = acc::malloc(7).unwrap();
        acc::memcpy_to_device(p, &[1u8; 7]).unwrap();
        acc::memcpy_to_device(p.offset(6), &[2u8]).unwrap();
        assert!(
            acc::memcpy_to_device(p.offset(7), &[3u8]).is_err(),
            "{ty}: a byte past malloc(7)"
        );
        assert!(
            acc::memcpy_to_device(p, &[3u8; 8]).is_err(),
            "{ty}: 8 bytes into malloc(7)"
        );
        let mut eight = [0u8; 8];
        assert!(
            acc::memcpy_from_device(&mut eight, p).is_err(),
            "{ty}: 8 bytes out of malloc(7)"
        );
        assert!(
            acc::memcpy_device(p.offset(4), p, 4).is_err(),
            "{ty}: to bytes 4..8 of malloc(7)"
        );
        let mut seven = [0u8; 7];
        acc::memcpy_from_device(&mut seven, p).unwrap();
        assert_eq!(seven, [1, 1, 1, 1, 1, 1, 2], "{ty}");
        let empty = acc::malloc(0).unwrap();
        assert!(
            acc::memcpy_to_device(empty, &[1u8]).is_err(),
            "{ty}: a byte into malloc(0)"
        );
        let mut one = [0u8; 1];
        assert!(
            acc::memcpy_from_device(&mut one, empty).is_err(),
            "{ty}: a byte out of malloc(0)"
        );
        acc::free(empty).unwrap();
        acc::free(p).unwrap();
    });
}

#[acc::offload]
fn double_present(a: &mut [f32]) {
    #[acc::parallel_loop(present(a))]
    for i in 0..a.len() {
        a[i] *= 2.0;
    }
}

/// `acc_memcpy_*(acc_deviceptr(a))` on every device (issue 40, item 16): the safe routines
/// refuse a variable's own host memory on devices that share it (acc cannot keep it alive),
/// and the `unsafe` `_raw` routines copy through it on every device, reading and writing the
/// device copy that kernels see.
#[test]
fn memory_routines_reach_a_variable_through_deviceptr() {
    on_each_device(|ty| {
        let mut a: Vec<f32> = (0..64).map(|i| i as f32).collect();
        acc::copyin(&a).unwrap();
        let p = acc::deviceptr(&a).expect("present");
        let mut part = [0.0f32; 4];
        let safe = acc::memcpy_from_device(&mut part, p.offset(8 * 4));
        assert_eq!(safe.is_err(), shares_memory(ty), "{ty}: {safe:?}");
        if let Err(e) = safe {
            assert!(
                e.to_string().contains("memcpy_from_device_raw"),
                "{ty}: {e}"
            );
        }
        // SAFETY: `a` is alive and nothing writes it during the copy; 8..12 is inside it.
        unsafe { acc::memcpy_from_device_raw(&mut part, p.offset(8 * 4)) }.unwrap();
        assert_eq!(part, [8.0, 9.0, 10.0, 11.0], "{ty}");
        let w = acc::deviceptr_mut(&mut a).expect("present");
        assert_eq!(w, p, "{ty}");
        // SAFETY: `a` is alive and unused until the copy returns; 60..64 is inside it.
        unsafe { acc::memcpy_to_device_raw(w.offset(60 * 4), &[-1.0f32, -2.0, -3.0, -4.0]) }
            .unwrap();
        double_present(&mut a);
        // SAFETY: as above.
        unsafe { acc::memcpy_from_device_raw(&mut part, p.offset(60 * 4)) }.unwrap();
        assert_eq!(
            part,
            [-2.0, -4.0, -6.0, -8.0],
            "{ty}: the kernel saw the write"
        );
        // Addresses acc allocated stay checked: past the end of `malloc(8)` is an error.
        let m = acc::malloc(8).unwrap();
        // SAFETY: `m` is an allocation acc made; the routine checks it.
        let past = unsafe { acc::memcpy_to_device_raw(m.offset(4), &[1.0f32, 2.0]) };
        assert!(past.is_err(), "{ty}: 8 bytes at offset 4 of malloc(8)");
        acc::free(m).unwrap();
        acc::copyout(&mut a).unwrap();
        let want: Vec<f32> = (0..64)
            .map(|i| {
                if i < 60 {
                    2.0 * i as f32
                } else {
                    -2.0 * (i - 59) as f32
                }
            })
            .collect();
        assert_eq!(a, want, "{ty}");
    });
}

#[acc::offload]
fn copy_half(src: &[f32], dst: &mut [f32]) {
    #[acc::parallel_loop(present(src, dst))]
    for i in 0..dst.len() {
        dst[i] = src[i] + 1.0;
    }
}

#[acc::offload]
fn halves_of_one_array(a: &mut Vec<f32>) {
    let n = a.len() / 2;
    #[acc::data(copy(a))]
    {
        let (lo, hi) = a.split_at_mut(n);
        copy_half(lo, hi);
        // And back the other way, from the half just written.
        let (lo, hi) = a.split_at_mut(n);
        copy_half(hi, lo);
    }
}

/// Two parts of one present array in one region, one read and one written: Rust's spelling of
/// C's two pointers into one array (NPB MG's levels). Issue 40, item 6: wgpu refused the buffer
/// bound read-only and writable in one dispatch and copied nothing back.
#[test]
fn two_parts_of_one_array_one_read_one_written() {
    on_each_device(|ty| {
        let mut a: Vec<f32> = (0..2000).map(|i| i as f32).collect();
        halves_of_one_array(&mut a);
        let want: Vec<f32> = (0..2000)
            .map(|i| {
                if i < 1000 {
                    i as f32 + 2.0
                } else {
                    (i - 1000) as f32 + 1.0
                }
            })
            .collect();
        assert_eq!(a, want, "on {ty}");
    });
}

/// `acc::map_data` and `acc::unmap_data` errors name the call's place (issue 40, item 17:
/// wgpu's said "(at :0:0)").
#[test]
fn map_data_errors_name_the_call() {
    on_each_device(|ty| {
        if shares_memory(ty) {
            return;
        }
        let a = vec![1.0f32; 16];
        let p = acc::malloc(64).unwrap();
        acc::map_data(&a, p).unwrap();
        let e = acc::map_data(&a, p).unwrap_err().to_string();
        assert!(
            e.contains("tests/behaviour/data.rs:") && !e.contains(":0:0"),
            "{ty}: {e}"
        );
        acc::unmap_data(&a).unwrap();
        let e = acc::unmap_data(&a).unwrap_err().to_string();
        assert!(
            e.contains("tests/behaviour/data.rs:") && !e.contains(":0:0"),
            "{ty}: {e}"
        );
        acc::free(p).unwrap();
    });
}

/// `acc::memcpy_*(acc::deviceptr(&a))` (issue 40, item 16): on the GPUs the device copy of
/// present `a` is acc's memory and the copies work; where the device shares host memory the
/// address is `a`'s own memory, which acc cannot keep alive, so safe code cannot copy through
/// it, and the error says why and what to do instead.
#[test]
fn memory_routines_on_deviceptr_of_present_data() {
    on_each_device(|ty| {
        let a: Vec<f64> = (0..64).map(|i| i as f64).collect();
        acc::copyin(&a).unwrap();
        let p = acc::deviceptr(&a).expect("present");
        let mut back = vec![0.0f64; 8];
        let r = acc::memcpy_from_device(&mut back, p.offset(8 * 8));
        if shares_memory(ty) {
            let e = r.unwrap_err().to_string();
            assert!(e.contains("cannot keep alive"), "{ty}: {e}");
        } else {
            r.unwrap();
            assert_eq!(back, (8..16).map(|i| i as f64).collect::<Vec<_>>(), "{ty}");
            acc::memcpy_to_device(p, &[-1.0f64, -2.0]).unwrap();
            let mut two = [0.0f64; 2];
            acc::memcpy_from_device(&mut two, p).unwrap();
            assert_eq!(two, [-1.0, -2.0], "{ty}");
        }
        acc::delete(&a).unwrap();
    });
}

/// `acc::memcpy_d2d` (3.3 section 3.2.30) from device 0 to the last device of the type
/// (itself where there is one): only the destination's device copy changes where devices have
/// their own memory; `i16` is widened on wgpu, so the copy goes element by element there.
/// `acc::memcpy_peer` does the same with device addresses.
#[test]
fn memcpy_d2d_copies_between_devices() {
    on_each_device(|ty| {
        let (src_dev, dst_dev) = (0, acc::get_num_devices(ty) - 1);
        let a: Vec<i16> = (0..100).collect();
        let mut b = vec![-1i16; 100];
        acc::set_device_num(src_dev, ty);
        acc::copyin(&a).unwrap();
        acc::set_device_num(dst_dev, ty);
        acc::copyin(&b).unwrap();
        acc::memcpy_d2d(&mut b[10..20], &a[50..60], dst_dev, src_dev).unwrap();
        if !shares_memory(ty) {
            assert!(b.iter().all(|&v| v == -1), "{ty}: the host copy changed");
            let mut absent = vec![0i16; 10];
            let e = acc::memcpy_d2d(&mut absent, &a[..10], dst_dev, src_dev).unwrap_err();
            assert!(
                matches!(e, acc::Error::NotPresent { .. }) && e.to_string().contains("destination"),
                "{ty}: {e}"
            );
        }
        let e = acc::memcpy_d2d(&mut b[..3], &a[..4], dst_dev, src_dev).unwrap_err();
        assert!(e.to_string().contains("3 elements"), "{ty}: {e}");
        acc::copyout(&mut b).unwrap();
        for (i, &v) in b.iter().enumerate() {
            let want = if (10..20).contains(&i) {
                i as i16 + 40
            } else {
                -1
            };
            assert_eq!(v, want, "{ty}: element {i}");
        }
        acc::set_device_num(src_dev, ty);
        acc::delete(&a).unwrap();

        let p = acc::malloc(24).unwrap();
        acc::memcpy_to_device(p, &[1.5f64, 2.5, 3.5]).unwrap();
        acc::set_device_num(dst_dev, ty);
        let q = acc::malloc(24).unwrap();
        acc::memcpy_peer(q.offset(8), dst_dev, p, src_dev, 16).unwrap();
        let mut back = [0.0f64; 3];
        acc::memcpy_from_device(&mut back, q).unwrap();
        assert_eq!(back, [0.0, 1.5, 2.5], "{ty}");
        let e = acc::memcpy_peer(q.offset(16), dst_dev, p, src_dev, 16).unwrap_err();
        assert!(
            e.to_string().contains("memcpy_peer (destination)"),
            "{ty}: {e}"
        );
        acc::free(q).unwrap();
        acc::set_device_num(src_dev, ty);
        acc::free(p).unwrap();
    });
}

#[acc::offload]
fn add_one_present(a: &mut [f32]) {
    #[acc::parallel_loop(present(a))]
    for i in 0..a.len() {
        a[i] += 1.0;
    }
}

/// `acc::map_data` of `acc::malloc` memory (3.3 sections 3.2.26-27): the data is present
/// there without a copy; a region works on it; the routines move it; `unmap_data` leaves the
/// memory to `free`. `deviceptr` and `hostptr` name each other's addresses.
#[test]
fn mapped_device_memory_is_present_data() {
    on_each_device(|ty| {
        let mut a = vec![0.0f32; 100];
        let p = acc::malloc(400).unwrap();
        acc::memcpy_to_device(p, &(0..100).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
        acc::map_data(&a, p).unwrap();
        assert!(acc::is_present(&a), "{ty}");
        if !shares_memory(ty) {
            assert_eq!(acc::deviceptr(&a), Some(p), "{ty}");
            assert_eq!(
                acc::hostptr(p.offset(8)),
                Some(a[2..].as_ptr().cast()),
                "{ty}"
            );
            // Mapped again, even in part: an error.
            assert!(acc::map_data(&a[10..20], p).is_err(), "{ty}");
        }
        add_one_present(&mut a);
        acc::update_self(&mut a).unwrap();
        let want: Vec<f32> = (0..100).map(|i| i as f32 + 1.0).collect();
        if shares_memory(ty) {
            // The host's data is the device's: it started at zero.
            assert!(a.iter().all(|&v| v == 1.0), "{ty}");
        } else {
            assert_eq!(a, want, "{ty}");
        }
        acc::unmap_data(&a).unwrap();
        if !shares_memory(ty) {
            assert!(!acc::is_present(&a), "{ty}");
            assert!(acc::unmap_data(&a).is_err(), "{ty}");
            // The memory is still the program's, with the region's result.
            let mut back = vec![0.0f32; 100];
            acc::memcpy_from_device(&mut back, p).unwrap();
            assert_eq!(back, want, "{ty}");
        }
        acc::free(p).unwrap();
    });
}

#[acc::offload]
fn out_of_bounds_subarray(a: &[f32]) {
    #[acc::data(copyin(a[2..40]))]
    {}
}

#[test]
fn subarray_out_of_bounds_names_the_variable_and_line() {
    on_each_device(|ty| {
        let a = vec![0.0f32; 10];
        let err = std::panic::catch_unwind(|| out_of_bounds_subarray(&a)).unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("a[2..40]") && msg.contains("length 10"),
            "{msg} on {ty}"
        );
        assert!(msg.contains("tests/behaviour/data.rs:"), "{msg}");
    });
}

#[acc::offload]
fn host_data_addresses(a: &mut [i32]) -> usize {
    let addr;
    #[acc::host_data(use_device(a))]
    {
        addr = a.as_ptr() as usize;
    }
    addr
}

#[test]
fn host_data_in_shared_memory_gives_the_host_address() {
    on_each_device(|ty| {
        let mut a = vec![0; 4];
        let shared = acc::get_property(0, ty, acc::Property::SharedMemorySupport) == "1";
        let host_addr = a.as_ptr() as usize;
        if shared {
            assert_eq!(host_data_addresses(&mut a), host_addr, "on {ty}");
        } else {
            // Not present: an error (3.3 section 2.8.1); present, a device address Rust code
            // cannot use: an error saying so.
            let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                host_data_addresses(&mut a)
            }))
            .unwrap_err();
            let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(msg.contains("`a` is not present"), "{msg}");
        }
    });
}

fn shares_memory(ty: acc::DeviceType) -> bool {
    acc::get_property(0, ty, acc::Property::SharedMemorySupport) == "1"
}

#[acc::declare(copyin(COEFFS))]
static COEFFS: [f64; 3] = [0.5, 0.25, 0.125];

#[acc::offload]
fn weigh(y: &mut [f64]) {
    #[acc::declare(copyin(SHIFT))]
    static SHIFT: [f64; 2] = [1.0, -1.0];
    #[acc::parallel_loop(copyout(y))]
    for i in 0..y.len() {
        y[i] = COEFFS[i % 3] * i as f64 + SHIFT[i % 2];
    }
}

/// Statics named by a `declare` (3.3 section 2.13) are read by regions on every device.
#[test]
fn declared_statics_in_regions() {
    on_each_device(|ty| {
        let mut y = vec![0.0f64; 1000];
        weigh(&mut y);
        for (i, &v) in y.iter().enumerate() {
            assert_eq!(
                v,
                COEFFS[i % 3] * i as f64 + [1.0, -1.0][i % 2],
                "y[{i}] on {ty}"
            );
        }
    });
}

/// `declare` on local variables (3.3 section 2.13): data regions from each declaration to the
/// end of the enclosing block; regions inside find the data present, and `copyout` copies back
/// when the block ends, before the block's value is taken.
#[acc::offload]
fn declared_locals(n: usize) -> (Vec<f64>, bool) {
    #[acc::declare(copyin(x))]
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    #[acc::declare(create(t))]
    let mut t = vec![0.0f64; n];
    #[acc::declare(copyout(y))]
    let mut y = vec![0.0f64; n];
    let present = acc::is_present(&x) && acc::is_present(&t) && acc::is_present(&y);
    #[acc::parallel_loop(present(x, t))]
    for i in 0..n {
        t[i] = 2.0 * x[i];
    }
    #[acc::parallel_loop(present(t, y), default(present))]
    for i in 0..n {
        y[i] = t[i] + 1.0;
    }
    (y, present)
}

#[test]
fn declare_on_local_variables() {
    on_each_device(|ty| {
        let (y, present) = declared_locals(1000);
        assert!(present, "declared locals are present on {ty}");
        assert!(
            y.iter()
                .enumerate()
                .all(|(i, &v)| v == 2.0 * i as f64 + 1.0),
            "on {ty}"
        );
    });
}

// Data clauses on subarrays only (3.3 section 2.7.1): a region uses just the part its clauses
// (or an enclosing data construct's) name, indexing it as the whole array.

#[acc::offload]
fn subarray_halves(a: &[f64], n: usize) -> Vec<f64> {
    let mut b = vec![0.0; n];
    let h = n / 2;
    #[acc::data(copyin(a[0..h]), copyout(b[0..h]))]
    {
        #[acc::parallel_loop(present(a[0..h], b[0..h]))]
        for i in 0..h {
            b[i] = a[i] * 2.0;
        }
    }
    #[acc::parallel_loop(copyin(a[h..n]), copy(b[h..n]))]
    for i in h..n {
        b[i] = a[i] + 1.0;
    }
    b
}

#[acc::offload]
fn subarray_blocks(a: &[f64], blocks: usize) -> Vec<f64> {
    let n = a.len();
    let mut b = vec![-1.0; n];
    let bs = n / blocks;
    #[acc::data(create(b))]
    {
        for blk in 0..blocks {
            let lo = blk * bs;
            let hi = if blk + 1 == blocks { n } else { lo + bs };
            acc::enter_data!(copyin(a[lo..hi]), async(blk as i32 + 1));
            // The block's part of `a`, present from the enter_data on the same queue.
            #[acc::parallel_loop(present(a[lo..hi], b), async(blk as i32 + 1))]
            for i in lo..hi {
                b[i] = a[i] * a[i];
            }
            acc::update!(self(b[lo..hi]), async(blk as i32 + 1));
            acc::exit_data!(delete(a[lo..hi]), async(blk as i32 + 1));
        }
        acc::wait!();
    }
    b
}

#[acc::offload]
fn subarray_from_enclosing(a: &[i64], lo: usize, hi: usize) -> i64 {
    let mut s = 0;
    #[acc::data(copyin(a[lo..hi]))]
    {
        // No clause names `a` here: the region uses the part the data construct made present.
        #[acc::parallel_loop(reduction(+: s))]
        for i in lo..hi {
            s += a[i];
        }
    }
    s
}

#[test]
fn regions_use_just_the_subarray_their_clauses_name() {
    on_each_device(|ty| {
        let n = 10_000;
        let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let b = subarray_halves(&a, n);
        for i in 0..n {
            let want = if i < n / 2 {
                2.0 * i as f64
            } else {
                i as f64 + 1.0
            };
            assert_eq!(b[i], want, "b[{i}] on {ty}");
        }
        let b = subarray_blocks(&a, 4);
        assert!(
            b.iter().enumerate().all(|(i, &v)| v == (i * i) as f64),
            "blocks on {ty}"
        );
        let x: Vec<i64> = (0..1000).collect();
        assert_eq!(
            subarray_from_enclosing(&x, 100, 300),
            (100..300).sum::<i64>(),
            "on {ty}"
        );
    });
}

#[acc::offload]
fn two_parts_present(a: &[i64]) -> i64 {
    let mut s = 0;
    acc::enter_data!(copyin(a[20..30]));
    #[acc::data(copyin(a[0..10]))]
    {
        #[acc::parallel_loop(reduction(+: s))]
        for i in 0..10 {
            s += a[i];
        }
    }
    acc::exit_data!(delete(a[20..30]));
    s
}

#[acc::offload]
fn outside_the_present_part(a: &[i64]) -> i64 {
    let mut s = 0;
    #[acc::data(copyin(a[0..10]))]
    {
        #[acc::parallel_loop(reduction(+: s))]
        for i in 0..11 {
            s += a[i];
        }
    }
    s
}

#[test]
fn which_part_a_region_uses_is_an_error_when_unclear_or_overstepped() {
    on_each_device(|ty| {
        let a: Vec<i64> = (0..40).collect();
        let past = std::panic::catch_unwind(|| outside_the_present_part(&a));
        let two = std::panic::catch_unwind(|| two_parts_present(&a));
        // The panic skipped the `exit_data`.
        if !shares_memory(ty) {
            acc::delete(&a[20..30]).unwrap();
        }
        if shares_memory(ty) {
            assert_eq!((two.ok(), past.ok()), (Some(45), Some(55)), "on {ty}");
        } else {
            let msg = |e: Box<dyn std::any::Any + Send>| {
                e.downcast_ref::<String>().cloned().unwrap_or_default()
            };
            let m = msg(two.unwrap_err());
            assert!(
                m.contains("`a` is partly present") && m.contains("present(a[lo..hi])"),
                "{m} on {ty}"
            );
            let m = msg(past.unwrap_err());
            assert!(
                m.contains(
                    "`a` is accessed at index 10, outside the part of it on the device, `a[0..10]`"
                ),
                "{m} on {ty}"
            );
        }
    });
}

// The pointer-swap idiom: two arrays of a data region swapped between sweeps. The device
// copies follow the buffers, and so does the copy out at the end.

#[acc::offload]
fn swapped_vecs(a: &mut Vec<f64>, b: &mut Vec<f64>, steps: usize) {
    let n = a.len();
    #[acc::data(copy(a, b))]
    {
        for _ in 0..steps {
            #[acc::parallel_loop(present(a, b))]
            for i in 1..n - 1 {
                b[i] = 0.5 * (a[i - 1] + a[i + 1]);
            }
            std::mem::swap(a, b);
        }
    }
}

#[acc::offload]
fn swapped_slices<'s>(mut a: &'s mut [f64], mut b: &'s mut [f64], steps: usize) -> f64 {
    let n = a.len();
    #[acc::data(copy(a, b))]
    {
        for _ in 0..steps {
            #[acc::parallel_loop(present(a, b))]
            for i in 1..n - 1 {
                b[i] = 0.5 * (a[i - 1] + a[i + 1]);
            }
            std::mem::swap(&mut a, &mut b);
        }
    }
    a[1]
}

#[test]
fn arrays_swapped_inside_a_data_region() {
    let sweep = |a: &mut Vec<f64>, b: &mut Vec<f64>, steps: usize| {
        for _ in 0..steps {
            for i in 1..a.len() - 1 {
                b[i] = 0.5 * (a[i - 1] + a[i + 1]);
            }
            std::mem::swap(a, b);
        }
    };
    on_each_device(|ty| {
        for steps in [3, 4] {
            let start: Vec<f64> = (0..500).map(|i| ((i * 7) % 13) as f64).collect();
            let (mut wa, mut wb) = (start.clone(), start.clone());
            sweep(&mut wa, &mut wb, steps);
            let (mut a, mut b) = (start.clone(), start.clone());
            swapped_vecs(&mut a, &mut b, steps);
            assert_eq!((&a, &b), (&wa, &wb), "{steps} sweeps on {ty}");
            let (mut a, mut b) = (start.clone(), start.clone());
            let last = swapped_slices(&mut a, &mut b, steps);
            // The slices swapped back and forth; the buffers hold what the sweeps wrote.
            let (sa, sb) = if steps % 2 == 1 {
                (&wb, &wa)
            } else {
                (&wa, &wb)
            };
            assert_eq!((&a, &b), (sa, sb), "{steps} sweeps of slices on {ty}");
            assert_eq!(last, wa[1], "on {ty}");
        }
    });
}

/// A `copy` array swapped with a `create` one between sweeps (Rodinia's pathfinder swaps its
/// rows so): at the region's end the `copy` variable gets the data of the buffer it holds then,
/// as C copies out what its pointer points to, so it holds the last sweep on every device; the
/// `create` array is scratch.
#[acc::offload]
fn swapped_with_scratch(a: &mut Vec<f64>, b: &mut Vec<f64>, steps: usize) {
    let n = a.len();
    #[acc::data(copy(a), create(b))]
    {
        for _ in 0..steps {
            #[acc::parallel_loop(present(a, b))]
            for i in 0..n {
                b[i] = if i == 0 || i == n - 1 {
                    a[i]
                } else {
                    0.5 * (a[i - 1] + a[i + 1])
                };
            }
            std::mem::swap(a, b);
        }
    }
}

#[test]
fn a_copy_array_swapped_with_a_create_one_gets_the_last_sweep() {
    on_each_device(|ty| {
        for steps in [1, 2, 3] {
            let start: Vec<f64> = (0..500).map(|i| ((i * 7) % 13) as f64).collect();
            let mut want = start.clone();
            for _ in 0..steps {
                let old = want.clone();
                for i in 1..want.len() - 1 {
                    want[i] = 0.5 * (old[i - 1] + old[i + 1]);
                }
            }
            let (mut a, mut b) = (start.clone(), vec![0.0; 500]);
            swapped_with_scratch(&mut a, &mut b, steps);
            assert_eq!(a, want, "{steps} sweeps on {ty}");
        }
    });
}

/// The memory routines copy bytes at any offset (wgpu moves whole 4-byte words: the bytes
/// around a copy keep their values), and device memory in the host's layout cannot hold
/// elements a device widens (8-bit ones on wgpu).
#[test]
fn device_memory_copies_bytes_at_any_offset() {
    on_each_device(|ty| {
        let p = acc::malloc(16).unwrap();
        let bytes: Vec<u8> = (1..=16).collect();
        acc::memcpy_to_device(p, &bytes).unwrap();
        acc::memcpy_to_device(p.offset(5), &[0xAAu8, 0xBB, 0xCC]).unwrap();
        let mut back = [0u8; 7];
        acc::memcpy_from_device(&mut back, p.offset(3)).unwrap();
        assert_eq!(back, [4, 5, 0xAA, 0xBB, 0xCC, 9, 10], "{ty}");
        acc::memcpy_device(p.offset(13), p.offset(5), 3).unwrap();
        let mut all = [0u8; 16];
        acc::memcpy_from_device(&mut all, p).unwrap();
        assert_eq!(
            all,
            [1, 2, 3, 4, 5, 0xAA, 0xBB, 0xCC, 9, 10, 11, 12, 13, 0xAA, 0xBB, 0xCC],
            "{ty}"
        );
        let small = vec![0i8; 16];
        let mapped = acc::map_data(&small, p);
        if ty == acc::DeviceType::Wgpu {
            let e = mapped.unwrap_err().to_string();
            assert!(e.contains("widens"), "{e}");
        } else {
            mapped.unwrap();
            acc::unmap_data(&small).unwrap();
        }
        acc::free(p).unwrap();
    });
}
