//! Runtime routines and environment variables (chapters 3 and 4; ICVs, 3.3 section 2.3).

use acc::{DeviceType, Property};

use crate::devices::on_each_device;

#[test]
fn device_counts() {
    assert_eq!(acc::get_num_devices(DeviceType::Host), 1);
    assert_eq!(acc::get_num_devices(DeviceType::None), 0);
    assert_eq!(
        acc::get_num_devices(DeviceType::Multicore),
        usize::from(cfg!(feature = "multicore"))
    );
    // Another test may give acc a wgpu device between two counts (`acc::wgpu_adopt`): the
    // counts agree once no device is being added.
    let counts = || {
        (
            acc::get_num_devices(DeviceType::NotHost),
            acc::get_num_devices(DeviceType::Multicore)
                + acc::get_num_devices(DeviceType::Nvidia)
                + acc::get_num_devices(DeviceType::Wgpu),
        )
    };
    let (first, second) = (counts(), counts());
    let (not_host, sum) = if first.0 == first.1 { first } else { second };
    assert_eq!(not_host, sum);
    assert!(acc::get_num_devices(DeviceType::Default) >= 1);
}

#[test]
fn device_type_is_per_thread_and_on_device_follows_regions() {
    on_each_device(|ty| {
        assert_eq!(acc::get_device_type(), ty);
        assert_eq!(acc::get_device_num(ty), 0);
        // Outside regions the code runs on the host.
        assert!(acc::on_device(DeviceType::Host));
        assert!(!acc::on_device(DeviceType::NotHost));
        assert!(!acc::on_device(DeviceType::None));
        let t = std::thread::spawn(move || {
            acc::set_device_type(DeviceType::Host);
            acc::get_device_type()
        });
        assert_eq!(t.join().unwrap(), DeviceType::Host);
        assert_eq!(
            acc::get_device_type(),
            ty,
            "another thread's setting leaked"
        );
    });
}

#[test]
fn properties() {
    on_each_device(|ty| {
        assert!(!acc::get_property(0, ty, Property::Name).is_empty());
        assert!(!acc::get_property(0, ty, Property::Vendor).is_empty());
        assert!(
            acc::get_property(0, ty, Property::Driver).contains(env!("CARGO_PKG_VERSION"))
                || ty != DeviceType::Host
        );
        let bytes = |p| {
            acc::get_property(0, ty, p)
                .parse::<u64>()
                .unwrap_or_else(|e| panic!("{p:?} of {ty}: {e}"))
        };
        let (total, free) = (bytes(Property::Memory), bytes(Property::FreeMemory));
        // Every device says how much memory it has: the GPU's on nvidia, the device-local
        // heaps on wgpu through Vulkan, the host's on host and multicore (on Linux). Free
        // memory: all but wgpu, which has no query for it.
        if ty == DeviceType::Nvidia || cfg!(target_os = "linux") {
            assert!(total > 0, "{ty}: {total}");
        }
        if ty == DeviceType::Nvidia || (cfg!(target_os = "linux") && ty != DeviceType::Wgpu) {
            assert!(free > 0 && free <= total, "{ty}: {free} of {total}");
        }
        assert_eq!(acc::get_property(7, ty, Property::Name), "", "no device 7");
    });
}

#[test]
fn missing_devices_are_errors_that_say_why() {
    for ty in [DeviceType::Nvidia, DeviceType::Wgpu] {
        if acc::get_num_devices(ty) > 0 {
            continue;
        }
        let e = acc::init(ty).unwrap_err().to_string();
        assert!(e.contains(ty.name()), "{e}");
    }
    let e = acc::init(DeviceType::None).unwrap_err().to_string();
    assert!(e.contains("concrete"), "{e}");
}

#[acc::offload]
fn tiny_region() -> bool {
    let mut ran = false;
    #[acc::parallel_loop(reduction(||: ran))]
    for _ in 0..4 {
        ran = true;
    }
    ran
}

#[test]
fn a_region_on_a_missing_device_panics_with_the_reason() {
    std::thread::spawn(|| {
        acc::set_device_num(3, DeviceType::Host);
        let err = std::panic::catch_unwind(tiny_region).unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("device number 3 of type host does not exist"),
            "{msg}"
        );
        assert!(
            msg.contains("`parallel` region in `tiny_region`") && msg.contains("runtime.rs:"),
            "{msg}"
        );
    })
    .join()
    .unwrap();
}

#[test]
fn init_shutdown_and_set_directives() {
    on_each_device(|ty| {
        acc::init(ty).unwrap();
        acc::shutdown(ty).unwrap();
        // A device that was shut down starts again when next used.
        assert!(tiny_region());
        acc::init!(device_type(host));
        assert_eq!(acc::get_device_type(), DeviceType::Host);
        acc::set!(device_type(multicore), device_num(0));
        assert_eq!(acc::get_device_type(), DeviceType::Multicore);
        acc::shutdown!(device_type(multicore));
        acc::set_device_type(ty);
    });
}

/// Without a setting the best device present runs regions: an NVIDIA GPU, then a GPU wgpu
/// reaches (a software adapter such as lavapipe only on request), then multicore (docs/guide/devices.md).
#[test]
fn the_default_device_is_the_best_one_present() {
    let software = |name: String| name.contains(", Cpu)");
    let set = std::env::var("ACC_DEVICE_TYPE").ok();
    let want = if let Some(set) = set {
        // The variable chooses instead.
        DeviceType::CONCRETE
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(set.trim()))
            .expect("a valid ACC_DEVICE_TYPE")
    } else if acc::get_num_devices(DeviceType::Nvidia) > 0 {
        DeviceType::Nvidia
    } else if acc::get_num_devices(DeviceType::Wgpu) > 0
        && !software(acc::get_property(0, DeviceType::Wgpu, Property::Name))
    {
        DeviceType::Wgpu
    } else if cfg!(feature = "multicore") {
        DeviceType::Multicore
    } else {
        DeviceType::Host
    };
    let got = std::thread::spawn(acc::get_device_type).join().unwrap();
    assert_eq!(got, want);
}
