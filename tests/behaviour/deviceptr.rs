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

/// Device memory another library allocated becomes a `DeviceVec` (a cudarc slice or a CUDA
/// address on nvidia, a `wgpu::Buffer` on wgpu): regions use it in place, `map_data` maps
/// host data onto it, and memory that is not the current device's, or too small, is refused
/// naming what is wrong.
#[test]
fn memory_of_other_libraries_becomes_device_arrays() {
    on_each_device(|ty| {
        let x: Vec<f32> = (0..500).map(|i| i as f32).collect();
        let start: Vec<f32> = (0..500).map(|i| (i % 7) as f32).collect();
        let want: Vec<f32> = x.iter().zip(&start).map(|(x, s)| 3.0 * x + s).collect();
        let check = |mut d: acc::DeviceVec<f32>| {
            axpy_into(&mut d, &x, 3.0);
            assert_eq!(d.to_vec().unwrap(), want, "{ty}");
            // `map_data` makes host data present in it.
            let mut host = vec![0.0f32; 500];
            acc::map_data(&host, d.as_ptr()).unwrap();
            scale_present(&mut host);
            acc::update_self(&mut host).unwrap();
            acc::unmap_data(&host).unwrap();
            let doubled: Vec<f32> = want.iter().map(|v| 2.0 * v).collect();
            assert_eq!(host, doubled, "{ty}");
            assert_eq!(d.to_vec().unwrap(), doubled, "{ty}");
        };
        match ty {
            #[cfg(feature = "cuda")]
            acc::DeviceType::Nvidia => {
                use acc::cudarc::driver::{CudaContext, DevicePtr};
                let ctx = CudaContext::new(acc::get_device_num(ty)).unwrap();
                let stream = ctx.default_stream();
                // Owned: acc frees it.
                let slice = stream.clone_htod(&start).unwrap();
                check(acc::DeviceVec::from_cuda_slice(slice).unwrap());
                // Borrowed: checked against its allocation.
                let slice = stream.clone_htod(&start).unwrap();
                stream.synchronize().unwrap();
                let addr = slice.device_ptr(&stream).0;
                // SAFETY: `slice` outlives the `DeviceVec`s, and only they use it.
                let e = unsafe { acc::DeviceVec::<f32>::from_cuda_ptr(addr + 4, 500) }.unwrap_err();
                assert!(
                    e.to_string().contains("past the end of its allocation"),
                    "{e}"
                );
                let host = [1.0f32; 4];
                let e = unsafe { acc::DeviceVec::<f32>::from_cuda_ptr(host.as_ptr() as u64, 4) }
                    .unwrap_err();
                assert!(e.to_string().contains("from_cuda_ptr"), "{e}");
                check(unsafe { acc::DeviceVec::from_cuda_ptr(addr, 500) }.unwrap());
                drop(slice);
            }
            #[cfg(feature = "wgpu")]
            acc::DeviceType::Wgpu => {
                use acc::wgpu::{self, util::DeviceExt};
                let (device, _queue) = acc::wgpu_device().unwrap();
                let usage = wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST;
                let init = |usage| {
                    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("the program's"),
                        contents: f32_bytes(&start),
                        usage,
                    })
                };
                check(acc::DeviceVec::from_wgpu_buffer(init(usage), 500).unwrap());
                let e = acc::DeviceVec::<f32>::from_wgpu_buffer(init(usage), 501).unwrap_err();
                assert!(e.to_string().contains("2000 bytes holding 2004"), "{e}");
                let e =
                    acc::DeviceVec::<f32>::from_wgpu_buffer(init(wgpu::BufferUsages::STORAGE), 500)
                        .unwrap_err();
                assert!(e.to_string().contains("COPY_SRC | COPY_DST"), "{e}");
                // Bytes are held in words there: not the layout of the buffer's bytes.
                let e = acc::DeviceVec::<u8>::from_wgpu_buffer(init(usage), 16).unwrap_err();
                assert!(e.to_string().contains("held in 4 bytes"), "{e}");
            }
            _ => {
                // Devices sharing host memory have no other library's device memory.
                #[cfg(feature = "cuda")]
                {
                    // SAFETY: refused before the address is used.
                    let e = unsafe { acc::DeviceVec::<f32>::from_cuda_ptr(0x1000, 4) }.unwrap_err();
                    assert!(
                        e.to_string()
                            .contains(&format!("the current device is {ty}")),
                        "{e}"
                    );
                }
            }
        }
    });
}

#[acc::offload]
fn scale_present(v: &mut [f32]) {
    #[acc::parallel_loop(present(v))]
    for i in 0..v.len() {
        v[i] *= 2.0;
    }
}

/// The bytes of `v`.
#[cfg(feature = "wgpu")]
fn f32_bytes(v: &[f32]) -> &[u8] {
    // SAFETY: f32s are plain bytes, and the view lives as long as `v`.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}
