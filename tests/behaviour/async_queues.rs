//! Asynchronous execution (3.3 section 2.16): `async`, `wait` clauses and directives, and the
//! queue routines. Operations on one queue complete in order.

use crate::devices::on_each_device;

#[acc::offload]
fn chained(n: usize) -> Vec<u64> {
    let mut v = vec![0u64; n];
    #[acc::parallel_loop(copy(v), async(11))]
    for i in 0..n {
        v[i] = i as u64;
    }
    #[acc::parallel_loop(copy(v), async(11))]
    for i in 0..n {
        v[i] *= 3;
    }
    #[acc::parallel_loop(copy(v), async, wait(11))]
    for i in 0..n {
        v[i] += 1;
    }
    acc::wait!(11);
    acc::wait!();
    v
}

/// `acc::async_test_all` reports every queue done after `wait_all`, once the work other
/// threads keep giving the device ends.
fn all_queues_finish() {
    for _ in 0..10_000 {
        acc::wait_all().unwrap();
        if acc::async_test_all() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("async_test_all never reported every queue done");
}

#[test]
fn operations_on_one_queue_keep_their_order() {
    on_each_device(|_| {
        let v = chained(10_000);
        assert!(v.iter().enumerate().all(|(i, &x)| x == 3 * i as u64 + 1));
        // Queues are the device's, shared with other threads (the suite's other tests run
        // beside this one): this test's own queue is done; every queue is, once the others'
        // work ends.
        assert!(acc::async_test(11));
        acc::wait(11).unwrap();
        all_queues_finish();
    });
}

#[test]
fn queue_arguments_are_checked() {
    on_each_device(|_| {
        assert!(acc::wait(-7).is_err());
        assert_eq!(acc::wait_any(&[acc::ASYNC_SYNC, 4]).unwrap(), Some(1));
        assert_eq!(acc::wait_any(&[acc::ASYNC_SYNC]).unwrap(), None);
        acc::wait_async(1, 2).unwrap();
        assert!(acc::wait_async(1, -9).is_err());
    });
}

#[test]
fn default_async_queue_is_per_thread() {
    on_each_device(|_| {
        assert_eq!(acc::get_default_async(), acc::ASYNC_NOVAL);
        acc::set!(default_async(5));
        assert_eq!(acc::get_default_async(), 5);
        let other = std::thread::spawn(acc::get_default_async).join().unwrap();
        assert_eq!(other, acc::ASYNC_NOVAL);
        acc::set_default_async(acc::ASYNC_NOVAL);
    });
}

#[acc::offload]
fn bad_queue(q: i32) {
    #[acc::parallel(async(q))]
    {}
}

#[test]
fn an_invalid_queue_on_a_region_is_reported_with_its_location() {
    on_each_device(|_| {
        let err = std::panic::catch_unwind(|| bad_queue(-3)).unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("invalid async argument -3") && msg.contains("async_queues.rs:"),
            "{msg}"
        );
    });
}

/// Regions on two queues over present data (3.3 sections 2.16.1 and 2.16.2): the first queue's
/// region is slow; the second queue's `wait(21)` region must see all of its results, and the
/// host sees both queues' results after `wait`. On nvidia each queue is a CUDA stream and the
/// `wait` clause an event, so this checks their order on the GPU.
#[acc::offload]
fn two_queues(n: usize, work: u64) -> (Vec<u64>, Vec<u64>) {
    let mut a = vec![0u64; n];
    let mut b = vec![1u64; n];
    #[acc::data(copy(a, b))]
    {
        #[acc::parallel_loop(present(a), async(21))]
        for i in 0..n {
            a[i] = crate::devices::spin(work) % 7 + i as u64;
        }
        #[acc::parallel_loop(present(b), async(22))]
        for i in 0..n {
            b[i] = 2 * i as u64;
        }
        #[acc::parallel_loop(present(a, b), async(22), wait(21))]
        for i in 0..n {
            b[i] += a[i];
        }
        acc::wait!(22);
        acc::wait_async(22, 23).unwrap();
        acc::wait!(23);
        assert!(acc::async_test(21) && acc::async_test(22) && acc::async_test(23));
    }
    (a, b)
}

#[test]
fn a_wait_clause_orders_one_queue_after_another() {
    on_each_device(|ty| {
        let n = 20_000;
        let (a, b) = two_queues(n, 5000);
        let spun = crate::devices::spin(5000) % 7;
        for i in 0..n {
            assert_eq!(a[i], spun + i as u64, "a[{i}] on {ty}");
            assert_eq!(b[i], 2 * i as u64 + spun + i as u64, "b[{i}] on {ty}");
        }
    });
}

/// Queued transfers, launches and frees on two queues (the V&V suite's shape): `enter data`
/// on queues 1 and 2, a data region over the present data that copies two results out,
/// regions on each queue inside it, `exit data` on each queue, then `wait`. Repeated over
/// sizes, reusing the device's buffers, so that any misordering between the queued work and
/// the copies shows.
#[acc::offload]
fn queued_transfers(n: usize, round: f64) -> (Vec<f64>, Vec<f64>) {
    let a: Vec<f64> = (0..n).map(|i| i as f64 + round).collect();
    let b: Vec<f64> = (0..n).map(|i| 2.0 * i as f64).collect();
    let d: Vec<f64> = (0..n).map(|i| round - i as f64).collect();
    let e: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let mut f = vec![0.0; n];
    let mut g = vec![0.0; n];
    acc::enter_data!(copyin(a, b), async(1));
    acc::enter_data!(copyin(d, e), async(2));
    #[acc::data(present(a, b, d, e), copyout(f, g))]
    {
        #[acc::parallel_loop(async(1))]
        for i in 0..n {
            f[i] = a[i] + b[i];
        }
        #[acc::parallel_loop(async(2))]
        for i in 0..n {
            g[i] = d[i] * e[i];
        }
        // No `wait` here: leaving the data region copies `f` and `g` out after the queues'
        // work on every device (a transfer waits for the queued launches before it).
    }
    acc::exit_data!(delete(a, b), async(1));
    acc::exit_data!(delete(d, e), async(2));
    acc::wait!();
    (f, g)
}

#[test]
fn queued_transfers_launches_and_frees_keep_their_order() {
    on_each_device(|ty| {
        for (k, n) in [1000usize, 65_536, 4097, 300_000, 17]
            .into_iter()
            .cycle()
            .take(20)
            .enumerate()
        {
            let round = k as f64;
            let (f, g) = queued_transfers(n, round);
            for i in 0..n {
                assert_eq!(
                    f[i],
                    i as f64 + round + 2.0 * i as f64,
                    "f[{i}] of n = {n}, round {k}, on {ty}"
                );
                assert_eq!(
                    g[i],
                    (round - i as f64) * (i % 7) as f64,
                    "g[{i}] of n = {n}, round {k}, on {ty}"
                );
            }
        }
    });
}

/// A pipeline over blocks (3.3 sections 2.14.4 and 2.16): each block of `x` is filled on the
/// host, sent with `update device` on its own queue, and used by a region on that queue; the
/// queues run while the host fills the next block. `wait` then `update self` bring the result.
#[acc::offload]
fn pipelined_blocks(n: usize, blocks: usize) -> Vec<f64> {
    let mut x = vec![0.0f64; n];
    let mut y = vec![0.0f64; n];
    let bs = n.div_ceil(blocks);
    #[acc::data(create(x, y))]
    {
        for blk in 0..blocks {
            let (lo, hi) = (blk * bs, ((blk + 1) * bs).min(n));
            let q = (blk % 3) as i32 + 1;
            for i in lo..hi {
                x[i] = (i % 17) as f64;
            }
            acc::update!(device(x[lo..hi]), async(q));
            #[acc::parallel_loop(present(x, y), async(q))]
            for i in lo..hi {
                y[i] = 2.0 * x[i] + 1.0;
            }
        }
        acc::wait!();
        acc::update!(self(y));
    }
    y
}

#[test]
fn update_device_on_a_queue_comes_before_the_queues_next_region() {
    on_each_device(|_| {
        let y = pipelined_blocks(100_000, 7);
        assert!(y
            .iter()
            .enumerate()
            .all(|(i, &v)| v == 2.0 * (i % 17) as f64 + 1.0));
    });
}

/// `update device` on queue 2 after queue 1's region (`wait(1)`), then a region on queue 2:
/// the region sees the update, and queue 1's region ran on the old values.
#[acc::offload]
fn update_after_another_queue(n: usize) -> (Vec<i64>, Vec<i64>) {
    let mut x: Vec<i64> = (0..n as i64).collect();
    let (mut a, mut b) = (vec![0i64; n], vec![0i64; n]);
    #[acc::data(copyin(x), copyout(a, b))]
    {
        #[acc::parallel_loop(present(x, a), async(1))]
        for i in 0..n {
            a[i] = x[i] * 3;
        }
        // Queue 1's region may still be reading `x`: the host waits before changing it.
        acc::wait!(1);
        for v in x.iter_mut() {
            *v += 100;
        }
        acc::update!(device(x), async(2), wait(1));
        #[acc::parallel_loop(present(x, b), async(2))]
        for i in 0..n {
            b[i] = x[i] - 1;
        }
        acc::wait!(2);
    }
    (a, b)
}

#[test]
fn update_device_with_wait_orders_after_the_named_queue() {
    on_each_device(|_| {
        let n = 50_000;
        let (a, b) = update_after_another_queue(n);
        assert!(a.iter().enumerate().all(|(i, &v)| v == 3 * i as i64));
        assert!(b.iter().enumerate().all(|(i, &v)| v == i as i64 + 99));
    });
}

#[acc::offload]
fn routine_update_async(n: usize) -> Vec<f32> {
    let mut x = vec![1.0f32; n];
    let mut out = vec![0.0f32; n];
    acc::enter_data!(copyin(x), create(out));
    x.fill(4.0);
    acc::update_device_async(&x, 3).expect("x is present");
    #[acc::parallel_loop(present(x, out), async(3))]
    for i in 0..n {
        out[i] = x[i].sqrt();
    }
    acc::update_self_async(&mut out, 3).expect("out is present");
    acc::exit_data!(delete(x, out));
    out
}

#[test]
fn the_async_update_routines_follow_their_queue() {
    on_each_device(|_| {
        let out = routine_update_async(10_000);
        assert!(out.iter().all(|&v| v == 2.0));
    });
}

#[acc::offload]
fn queue_per_device_type(a: &mut Vec<f32>, bad: i32) {
    #[acc::data(copy(a))]
    {
        // An invalid queue on nvidia only (3.3 section 2.4: `async` may follow `device_type`).
        #[acc::parallel_loop(present(a), async(1), device_type(nvidia), async(bad))]
        for i in 0..a.len() {
            a[i] += 1.0;
        }
        acc::wait_all().unwrap();
    }
}

#[acc::offload]
fn update_per_device_type(a: &mut Vec<f32>, bad: i32) {
    #[acc::data(copy(a))]
    {
        acc::update!(device(a), device_type(wgpu), async(bad));
        acc::wait_all().unwrap();
    }
}

#[test]
fn async_and_wait_in_device_type_sections_apply_on_their_device_type() {
    on_each_device(|ty| {
        let mut a = vec![1.0f32; 64];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            queue_per_device_type(&mut a, -9)
        }));
        let u = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            update_per_device_type(&mut a, -8)
        }));
        let msg = |e: Box<dyn std::any::Any + Send>| {
            e.downcast_ref::<String>().cloned().unwrap_or_default()
        };
        if ty == acc::DeviceType::Nvidia {
            let e = msg(r.unwrap_err());
            assert!(e.contains("invalid async argument -9"), "{ty}: {e}");
        } else {
            assert!(r.is_ok(), "{ty}");
            assert_eq!(a, vec![2.0f32; 64], "{ty}");
        }
        if ty == acc::DeviceType::Wgpu {
            let e = msg(u.unwrap_err());
            assert!(e.contains("invalid async argument -8"), "{ty}: {e}");
        } else {
            assert!(u.is_ok(), "{ty}");
        }
    });
}

#[acc::offload]
fn wait_on_devnum(a: &mut Vec<f64>, dev: i32) {
    #[acc::data(copy(a))]
    {
        #[acc::parallel_loop(present(a), async(2))]
        for i in 0..a.len() {
            a[i] += 1.0;
        }
        // The queue of device `dev` (of the current type), then the host reads.
        #[acc::parallel_loop(present(a), wait(devnum: dev: queues: 2))]
        for i in 0..a.len() {
            a[i] *= 2.0;
        }
        acc::wait!(devnum: dev: 2);
        acc::wait!(devnum: dev: queues: 2, 3);
    }
}

/// `wait(devnum: d: ..)` (3.3 section 2.16.3): the queues of device `d` of the current type;
/// a device number past the last is an error naming it.
#[test]
fn wait_clauses_name_the_device_of_their_queues() {
    on_each_device(|ty| {
        let mut a = vec![1.0f64; 256];
        let dev = acc::get_device_num(ty) as i32;
        wait_on_devnum(&mut a, dev);
        assert_eq!(a, vec![4.0f64; 256], "{ty}");
        let past = acc::get_num_devices(ty) as i32 + 5;
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_on_devnum(&mut a, past)
        }))
        .unwrap_err();
        let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("wait(devnum: ..)"), "{ty}: {msg}");
    });
}
