//! Device data for other libraries (3.3 section 2.8, `host_data use_device`): inside the
//! construct a variable is an `acc::DeviceSlice` saying where its data is on the device, and
//! a program's own GPU code (a WGSL shader through `acc::wgpu_device()`, a CUDA kernel through
//! `acc::cudarc`) works on acc's buffers between acc's regions, in order with them.

use acc::DeviceType;

use crate::devices::on_each_device;

/// What a `use_device` slice of a present `a` says: (on the host, a CUDA address, a wgpu
/// buffer's offset and bytes, its length, its address).
type View = (bool, Option<u64>, Option<(u64, u64)>, usize, usize);

fn view_of(a: &acc::DeviceSlice<'_, f32>) -> View {
    (
        a.on_host(),
        a.cu_deviceptr(),
        a.wgpu_buffer().map(|(_, offset, bytes)| (offset, bytes)),
        a.len(),
        a.as_ptr() as usize,
    )
}

#[acc::offload]
fn present_view(a: &mut [f32]) -> View {
    let v;
    #[acc::data(copy(a))]
    {
        #[acc::host_data(use_device(a))]
        {
            v = view_of(&a);
        }
    }
    v
}

#[acc::offload]
fn absent_view(a: &mut [f32], cond: bool) -> (View, View) {
    let (v, w);
    #[acc::host_data(use_device(a), if_present)]
    {
        v = view_of(&a);
    }
    #[acc::data(copy(a))]
    {
        #[acc::host_data(use_device(a), if(cond))]
        {
            w = view_of(&a);
        }
    }
    (v, w)
}

/// Present data is the device's buffer: a CUDA address on nvidia, a wgpu buffer (from byte
/// 0, all of it) on wgpu, the host's address where the device shares host memory; data that
/// is not present under `if_present`, and any data under `if(false)`, is the host's.
#[test]
fn use_device_gives_where_the_data_is() {
    on_each_device(|ty| {
        let mut a = vec![1.0f32; 1000];
        let host = a.as_ptr() as usize;
        let (on_host, cuda, wgpu, len, addr) = present_view(&mut a);
        assert_eq!(len, 1000, "{ty}");
        match ty {
            DeviceType::Nvidia => {
                assert!(!on_host && wgpu.is_none(), "{ty}");
                assert_eq!(cuda.map(|c| c as usize), Some(addr), "{ty}");
                assert_ne!(addr, host, "{ty}");
            }
            DeviceType::Wgpu => {
                assert!(!on_host && cuda.is_none() && addr == 0, "{ty}");
                assert_eq!(wgpu, Some((0, 4000)), "{ty}");
            }
            _ => {
                assert!(on_host && cuda.is_none() && wgpu.is_none(), "{ty}");
                assert_eq!(addr, host, "{ty}");
            }
        }
        let (absent, off) = absent_view(&mut a, false);
        for v in [absent, off] {
            assert!(v.0 && v.1.is_none() && v.2.is_none(), "{ty}: {v:?}");
            assert_eq!(v.4, host, "{ty}");
        }
    });
}

/// Doubles each `f32` of `a`'s buffer with a WGSL shader of the program's own, on acc's wgpu
/// device and queue.
fn double_with_wgsl(a: &acc::DeviceSlice<'_, f32>) {
    use acc::wgpu;
    let (device, queue) = acc::wgpu_device().expect("the current device is a wgpu one");
    let (buffer, offset, bytes) = a.wgpu_buffer().expect("a wgpu buffer");
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("double"),
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<storage, read_write> x: array<f32>;
             @compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                 if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] * 2.0; }
             }"
            .into(),
        ),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset,
                size: std::num::NonZeroU64::new(bytes),
            }),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((a.len() as u32).div_ceil(64), 1, 1);
    }
    queue.submit([encoder.finish()]);
}

/// Doubles each `f32` at `a`'s CUDA address with a PTX kernel of the program's own, loaded
/// and launched through cudarc in acc's context (the device's primary context).
fn double_with_cuda(a: &acc::DeviceSlice<'_, f32>) {
    use acc::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
    use acc::cudarc::nvrtc::Ptx;
    const PTX: &str = ".version 7.0
.target sm_70
.address_size 64
.visible .entry double_it(.param .u64 p, .param .u32 n) {
  .reg .u32 %r<6>;
  .reg .u64 %rd<4>;
  .reg .f32 %f<3>;
  .reg .pred %p1;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r5, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  add.f32 %f2, %f1, %f1;
  st.global.f32 [%rd3], %f2;
DONE:
  ret;
}
";
    let ctx = CudaContext::new(0).expect("the CUDA device");
    let module = ctx.load_module(Ptx::from_src(PTX)).expect("the PTX loads");
    let f = module.load_function("double_it").expect("the kernel");
    let stream = ctx.default_stream();
    let (p, n) = (a.cu_deviceptr().expect("a CUDA address"), a.len() as u32);
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(128), 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `double_it` takes a device address and a count, and writes the `n` f32 there,
    // which the use_device slice holds.
    unsafe { stream.launch_builder(&f).arg(&p).arg(&n).launch(cfg) }.expect("the launch");
}

#[acc::offload]
fn fill_double_add(a: &mut Vec<f32>, ty: DeviceType) {
    let n = a.len();
    #[acc::data(copy(a))]
    {
        #[acc::parallel_loop]
        for i in 0..n {
            a[i] = i as f32;
        }
        #[acc::host_data(use_device(a))]
        {
            match ty {
                DeviceType::Wgpu => double_with_wgsl(&a),
                DeviceType::Nvidia => double_with_cuda(&a),
                _ => {}
            }
        }
        #[acc::parallel_loop]
        for i in 0..n {
            a[i] += 1.0;
        }
    }
}

/// An acc region, the program's own kernel on the same buffer (WGSL on wgpu, PTX through
/// cudarc on nvidia), an acc region again: each sees what the one before wrote.
#[test]
fn a_kernel_of_ones_own_works_on_acc_buffers_in_order() {
    on_each_device(|ty| {
        let mut a = vec![0.0f32; 3000];
        fill_double_add(&mut a, ty);
        let own = matches!(ty, DeviceType::Wgpu | DeviceType::Nvidia);
        for (i, &v) in a.iter().enumerate() {
            let want = if own {
                2.0 * i as f32 + 1.0
            } else {
                i as f32 + 1.0
            };
            assert_eq!(v, want, "{ty}: element {i}");
        }
    });
}

/// `acc::get_cuda_stream` gives a queue's CUDA stream on nvidia (one per async queue, the
/// same each time) and is an error naming the device elsewhere.
#[test]
fn cuda_streams_of_queues() {
    on_each_device(|ty| {
        let (a, b, c) = (
            acc::get_cuda_stream(5),
            acc::get_cuda_stream(5),
            acc::get_cuda_stream(6),
        );
        if ty == DeviceType::Nvidia {
            let (a, b, c) = (a.unwrap(), b.unwrap(), c.unwrap());
            assert!(!a.is_null() && a == b && a != c, "{ty}: {a:?} {b:?} {c:?}");
            // The synchronous queue's stream is tested in tests/environment.rs, in a process
            // of its own: handing it out stops the device recording launches made while the
            // GPU is busy for the rest of the process, which would leave this suite's later
            // tests without them.
        } else {
            let e = a.unwrap_err().to_string();
            assert!(
                e.contains("get_cuda_stream") && e.contains(&ty.to_string()),
                "{ty}: {e}"
            );
        }
    });
}

#[acc::offload]
fn squares_on_queue(v: &mut Vec<u32>, q: i32) {
    let n = v.len();
    #[acc::data(copy(v))]
    {
        #[acc::parallel_loop(present(v), async(q))]
        for i in 0..n {
            v[i] = (i * i) as u32 + 1;
        }
        acc::wait!(q);
    }
}

/// `acc::set_cuda_stream` puts an async queue on a stream of the program's own (made through
/// cudarc in acc's context) on nvidia: the queue reports it and acc's work on the queue runs
/// on it; elsewhere, and for the synchronous queue, an error naming the routine.
#[test]
fn a_queue_on_a_stream_of_ones_own() {
    on_each_device(|ty| {
        if ty == DeviceType::Nvidia {
            use acc::cudarc::driver::CudaContext;
            let ctx = CudaContext::new(0).expect("the CUDA device");
            let stream = ctx.new_stream().expect("a stream");
            let raw = stream.cu_stream() as *mut std::ffi::c_void;
            // SAFETY: a stream of the primary context, alive past the queue's last use.
            unsafe { acc::set_cuda_stream(7, raw) }.expect("set_cuda_stream");
            assert_eq!(acc::get_cuda_stream(7).unwrap(), raw, "{ty}");
            let mut v = vec![0u32; 5000];
            squares_on_queue(&mut v, 7);
            assert!(
                v.iter().enumerate().all(|(i, &x)| x == (i * i) as u32 + 1),
                "{ty}"
            );
            acc::wait(7).unwrap();
            // Queue 7 goes back to a stream of acc's before the program's stream is dropped.
            // SAFETY: null is always allowed.
            unsafe { acc::set_cuda_stream(7, std::ptr::null_mut()) }.expect("unset");
            assert_ne!(acc::get_cuda_stream(7).unwrap(), raw, "{ty}");
            // SAFETY: as above (the call fails before using the stream).
            let e = unsafe { acc::set_cuda_stream(acc::ASYNC_SYNC, raw) }.unwrap_err();
            assert!(e.to_string().contains("synchronous queue"), "{ty}: {e}");
        } else {
            // SAFETY: no device here takes the (null) stream.
            let e = unsafe { acc::set_cuda_stream(7, std::ptr::null_mut()) }.unwrap_err();
            assert!(
                e.to_string().contains("set_cuda_stream")
                    && e.to_string().contains(&ty.to_string()),
                "{ty}: {e}"
            );
        }
    });
}

#[acc::parallel_loop(copy(v))]
fn squares(v: &mut [u32]) {
    for i in 0..v.len() {
        v[i] = (i * i) as u32;
    }
}

/// A program's own wgpu device given to acc (`acc::wgpu_adopt`) becomes a wgpu device of
/// acc: regions run on it, and `acc::wgpu_device()` is that device (here one without the
/// features acc would have asked for).
#[test]
fn a_wgpu_device_of_ones_own_runs_regions() {
    use acc::wgpu;
    on_each_device(|ty| {
        if ty != DeviceType::Wgpu {
            return;
        }
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
            .into_iter()
            .next()
            .expect("an adapter");
        let (device, queue) =
            pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
                .expect("a device of the program's own");
        let before = acc::get_num_devices(DeviceType::Wgpu);
        let n = acc::wgpu_adopt(device, queue);
        assert_eq!(acc::get_num_devices(DeviceType::Wgpu), before + 1);
        assert_eq!(n, before);
        acc::set_device_num(n, DeviceType::Wgpu);
        let mut v = vec![0u32; 1000];
        squares(&mut v);
        let (own, _) = acc::wgpu_device().expect("the adopted device");
        assert!(
            !own.features().contains(wgpu::Features::SHADER_F64),
            "{:?}",
            own.features()
        );
        acc::set_device_num(0, DeviceType::Wgpu);
        let (first, _) = acc::wgpu_device().expect("device 0");
        assert_ne!(
            own.features(),
            first.features(),
            "device 0 has what acc asks for"
        );
        assert!(v.iter().enumerate().all(|(i, &x)| x == (i * i) as u32));
    });
}

#[acc::offload]
fn set_on_queue(v: &mut Vec<u32>, q: i32, base: u32) {
    #[acc::parallel_loop(present(v), async(q))]
    for i in 0..v.len() {
        v[i] = i as u32 + base;
    }
}

#[acc::offload]
fn add_on_queue(v: &mut Vec<u32>, q: i32, k: u32) {
    #[acc::parallel_loop(present(v), async(q))]
    for i in 0..v.len() {
        v[i] += k;
    }
}

/// Another library's work on acc's CUDA streams, twice (issue 40, item 5b: the second round
/// hung or died on an H200). Each round: an async region on queue `q`, then on the queue's
/// stream a memset of a buffer of the program's own and an NVRTC kernel doubling acc's array,
/// another async region, the queue put on a stream of the program's own for a third region and
/// handed back (null), and the array copied out. Other devices run the regions alone.
#[test]
fn other_libraries_on_acc_streams_round_after_round() {
    const Q: i32 = 11;
    let n = 2_000_000usize;
    on_each_device(|ty| {
        let nvidia = ty == DeviceType::Nvidia;
        let cuda = nvidia.then(|| {
            use acc::cudarc::driver::CudaContext;
            let ctx = CudaContext::new(0).expect("the CUDA device");
            let src = r#"extern "C" __global__ void twice(unsigned* v, unsigned long long n) {
                unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) v[i] *= 2u;
            }"#;
            let ptx = acc::cudarc::nvrtc::compile_ptx(src).expect("NVRTC compiles the kernel");
            let module = ctx.load_module(ptx).expect("the module loads");
            let f = module.load_function("twice").expect("the kernel");
            let scratch = ctx
                .default_stream()
                .alloc_zeros::<u32>(n)
                .expect("a buffer");
            (ctx, module, f, scratch)
        });
        for round in 0..3u32 {
            let mut v = vec![0u32; n];
            acc::copyin(&v).unwrap();
            set_on_queue(&mut v, Q, round);
            if let Some((_, _, f, scratch)) = &cuda {
                use acc::cudarc::driver::{sys, DevicePtr};
                let stream = acc::get_cuda_stream(Q).unwrap() as sys::CUstream;
                let addr = acc::deviceptr(&v).expect("present").addr() as u64;
                let (sp, _guard) = scratch.device_ptr(scratch.stream());
                // SAFETY: `scratch` holds n u32 of this context; `addr` is acc's buffer of `v`
                // (n u32), alive until the copyout below; both on queue Q's stream, in order
                // with acc's regions on it.
                unsafe {
                    sys::cuMemsetD32Async(sp, 7, n, stream)
                        .result()
                        .expect("memset");
                    let mut p = addr;
                    let mut len = n as u64;
                    let mut params = [
                        (&mut p) as *mut u64 as *mut std::ffi::c_void,
                        (&mut len) as *mut u64 as *mut std::ffi::c_void,
                    ];
                    acc::cudarc::driver::result::launch_kernel(
                        f.cu_function(),
                        (n.div_ceil(256) as u32, 1, 1),
                        (256, 1, 1),
                        0,
                        stream,
                        &mut params,
                    )
                    .expect("the kernel launches");
                }
            }
            add_on_queue(&mut v, Q, 1);
            if let Some((ctx, ..)) = &cuda {
                let own = ctx.new_stream().expect("a stream");
                // SAFETY: a stream of the primary context, alive until handed back below.
                unsafe { acc::set_cuda_stream(Q, own.cu_stream() as *mut std::ffi::c_void) }
                    .expect("set_cuda_stream");
                add_on_queue(&mut v, Q, 10);
                acc::wait(Q).unwrap();
                // SAFETY: null is always allowed.
                unsafe { acc::set_cuda_stream(Q, std::ptr::null_mut()) }.expect("hand back");
            } else {
                add_on_queue(&mut v, Q, 10);
            }
            acc::wait(Q).unwrap();
            acc::copyout(&mut v).unwrap();
            let doubled = if nvidia { 2 } else { 1 };
            for (i, &x) in v.iter().enumerate() {
                assert_eq!(
                    x,
                    (i as u32 + round) * doubled + 11,
                    "{ty}, round {round}, element {i}"
                );
            }
            if let Some((_, _, _, scratch)) = &cuda {
                let back = scratch
                    .stream()
                    .clone_dtoh(scratch)
                    .expect("the buffer back");
                assert!(
                    back.iter().all(|&x| x == 7),
                    "{ty}, round {round}: the memset"
                );
            }
        }
    });
}
