//! `deviceptr` (3.3 section 2.7.4): arrays that live in device memory (`acc::DeviceVec`),
//! used by compute and data constructs without a copy, on every device.

use crate::devices::on_each_device;

#[acc::offload]
fn axpy_into(d: &mut acc::DeviceVec<f32>, x: &[f32], a: f32) {
    #[acc::parallel_loop(deviceptr(d), copyin(x))]
    for i in 0..x.len() {
        d[i] = a * x[i] + d[i];
    }
}

#[acc::offload]
fn total(d: &acc::DeviceVec<f32>) -> f32 {
    let mut s = 0.0;
    #[acc::parallel_loop(deviceptr(d), reduction(+: s))]
    for i in 0..d.len() {
        s += d[i];
    }
    s
}

#[acc::offload]
fn shift_in_data_region(d: &mut acc::DeviceVec<i32>, steps: usize) {
    #[acc::data(deviceptr(d))]
    {
        for _ in 0..steps {
            #[acc::parallel_loop(default(present))]
            for i in 0..d.len() {
                d[i] += i as i32;
            }
        }
    }
}

#[acc::offload]
fn on_host_data(v: &mut Vec<f32>) {
    #[acc::parallel_loop(deviceptr(v))]
    for i in 0..v.len() {
        v[i] += 1.0;
    }
}

#[acc::offload]
fn if_false(d: &mut acc::DeviceVec<f32>, on: bool) {
    #[acc::parallel_loop(deviceptr(d), if(on))]
    for i in 0..d.len() {
        d[i] = 1.0;
    }
}

#[test]
fn device_arrays_are_used_in_place() {
    on_each_device(|ty| {
        let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let mut d = acc::DeviceVec::from_slice(&vec![1.0f32; 1000]).unwrap();
        axpy_into(&mut d, &x, 2.0);
        axpy_into(&mut d, &x, 0.5);
        let want: Vec<f32> = x.iter().map(|&v| 1.0 + 2.5 * v).collect();
        assert_eq!(d.to_vec().unwrap(), want, "{ty}");
        let s = total(&d);
        let exact: f32 = want.iter().sum();
        assert!(
            (s - exact).abs() <= 1e-4 * exact,
            "{s} against {exact} on {ty}"
        );

        let mut k = acc::DeviceVec::<i32>::zeroed(300).unwrap();
        shift_in_data_region(&mut k, 3);
        let want: Vec<i32> = (0..300).map(|i| 3 * i).collect();
        assert_eq!(k.to_vec().unwrap(), want, "{ty}");
        // Its memory is its own: `acc::free` refuses it.
        assert!(acc::free(k.as_ptr()).is_err(), "{ty}");
        // An empty one is device memory too.
        let mut none = acc::DeviceVec::<f32>::zeroed(0).unwrap();
        axpy_into(&mut none, &[], 1.0);
        // The memory routines reach it through its address.
        acc::memcpy_to_device(k.as_ptr().offset(8), &[-5i32]).unwrap();
        assert_eq!(k.to_vec().unwrap()[2], -5, "{ty}");
    });
}

#[test]
fn deviceptr_of_host_memory_or_from_the_host_is_refused_off_the_host() {
    on_each_device(|ty| {
        let shared = acc::get_property(0, ty, acc::Property::SharedMemorySupport) == "1";
        let mut v = vec![0.0f32; 16];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_host_data(&mut v)));
        let mut d = acc::DeviceVec::<f32>::zeroed(16).unwrap();
        let host_run =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| if_false(&mut d, false)));
        let index = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| d[3]));
        if shared {
            // Host memory is device memory.
            assert!(r.is_ok(), "{ty}");
            assert_eq!(v, vec![1.0f32; 16], "{ty}");
            assert!(host_run.is_ok() && index.is_ok(), "{ty}");
            assert_eq!(d.to_vec().unwrap(), vec![1.0f32; 16], "{ty}");
        } else {
            let msg = |e: Box<dyn std::any::Any + Send>| {
                e.downcast_ref::<String>().cloned().unwrap_or_default()
            };
            let e = msg(r.unwrap_err());
            assert!(
                e.contains("`v` in a `deviceptr` clause is not in the")
                    && e.contains("acc::DeviceVec"),
                "{ty}: {e}"
            );
            let e = msg(host_run.unwrap_err());
            assert!(e.contains("runs on the host"), "{ty}: {e}");
            let e = msg(index.unwrap_err());
            assert!(e.contains("indexed on the host"), "{ty}: {e}");
            if_false(&mut d, true);
            assert_eq!(d.to_vec().unwrap(), vec![1.0f32; 16], "{ty}");
        }
    });
}

#[acc::offload]
fn copied_anyway(d: &mut acc::DeviceVec<f32>) {
    #[acc::parallel_loop(copy(d))]
    for i in 0..d.len() {
        d[i] += 1.0;
    }
    #[acc::data(copyin(d))]
    {
        #[acc::parallel_loop(present(d))]
        for i in 0..d.len() {
            d[i] *= 3.0;
        }
    }
}

/// Other data clauses on a `DeviceVec` find it present (it is device memory): they count and
/// copy nothing, and its memory stays until it drops.
#[test]
fn data_clauses_on_device_arrays_find_them_present() {
    on_each_device(|ty| {
        let mut d = acc::DeviceVec::from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
        copied_anyway(&mut d);
        copied_anyway(&mut d);
        assert_eq!(d.to_vec().unwrap(), [21.0, 30.0, 39.0], "{ty}");
    });
}
