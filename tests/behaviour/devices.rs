//! Which device types the suite runs on, and running a test on each.

use std::sync::OnceLock;

use acc::DeviceType;

fn parse_list(var: &str) -> Option<Vec<DeviceType>> {
    let v = std::env::var(var).ok().filter(|v| !v.trim().is_empty())?;
    Some(
        v.split(',')
            .map(|s| {
                s.trim()
                    .parse::<DeviceType>()
                    .unwrap_or_else(|e| panic!("{var}: {e}"))
            })
            .collect(),
    )
}

/// The device types to test on, checked once. With `ACC_REQUIRE_DEVICES` set (as in CI and on
/// the GPU machine) nothing is skipped: the suite runs on exactly the types
/// `ACC_TEST_DEVICES` names (else the required ones), and a type without a device fails every
/// test. Without it (a developer's machine), every type this build has is tried and one without
/// a device is skipped with its reason printed once.
pub fn devices() -> &'static [DeviceType] {
    static LIST: OnceLock<Vec<DeviceType>> = OnceLock::new();
    LIST.get_or_init(|| {
        let required = parse_list("ACC_REQUIRE_DEVICES");
        let wanted = parse_list("ACC_TEST_DEVICES")
            .or_else(|| required.clone())
            .unwrap_or_else(|| DeviceType::CONCRETE.to_vec());
        let strict = required.is_some();
        let mut run = Vec::new();
        for ty in wanted.iter().chain(required.iter().flatten()) {
            if run.contains(ty) {
                continue;
            }
            match acc::init(*ty) {
                Ok(()) => run.push(*ty),
                Err(e) if strict => {
                    panic!("ACC_REQUIRE_DEVICES is set and the suite is to run on {ty}, but it cannot be used: {e}")
                }
                Err(e) => eprintln!("behaviour suite: not testing on {ty}: {e}"),
            }
        }
        assert!(!run.is_empty(), "no device to test on");
        run
    })
}

/// Runs `test` once per device type, with that type current on this thread. Every device
/// runs even when one fails: the test then fails naming each device it failed on, with its
/// message, and the ones it passed on, so one backend's failure hides no other's.
pub fn on_each_device(test: impl Fn(DeviceType)) {
    let (mut passed, mut failed) = (Vec::new(), Vec::new());
    for &ty in devices() {
        acc::set_device_type(ty);
        assert_eq!(acc::get_device_type(), ty);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| test(ty))) {
            Ok(()) => passed.push(ty.to_string()),
            Err(e) => failed.push(format!("{ty}: {}", panic_message(&*e))),
        }
    }
    acc::set_device_type(DeviceType::Host);
    if !failed.is_empty() {
        panic!(
            "failed on {} device type(s), passed on [{}]:\n  {}",
            failed.len(),
            passed.join(", "),
            failed.join("\n  ")
        );
    }
}

/// Number of threads the multicore device runs loops on (1 elsewhere).
pub fn parallelism(ty: DeviceType) -> usize {
    if ty == DeviceType::Multicore {
        acc::get_property(0, ty, acc::Property::Name)
            .split(['(', ' '])
            .find_map(|w| w.parse().ok())
            .unwrap_or(1)
    } else {
        1
    }
}

/// Busy work for tests that need iterations to take a while: a routine, so regions may call it.
#[acc::routine(seq)]
pub fn spin(n: u64) -> u64 {
    let mut x = 0u64;
    for k in 0..n {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(k);
    }
    x
}

/// The message of a caught panic (`std::panic::catch_unwind`'s error), or "" if it has none.
pub fn panic_message(err: &(dyn std::any::Any + Send)) -> String {
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
