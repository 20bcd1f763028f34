//! `ACC_DEVICE_TYPE` and `ACC_DEVICE_NUM` (OpenACC chapter 4). The environment is read once
//! per process, so each case runs this binary again as a child with the variables set.

use std::process::Command;

use acc::DeviceType;

#[acc::offload]
fn region_reports(want: DeviceType) -> bool {
    let mut ok = true;
    #[acc::parallel_loop(reduction(&&: ok))]
    for _ in 0..16 {
        ok = ok && acc::on_device(want);
    }
    ok
}

/// What a child does, by `ACC_ENV_CASE`.
fn child(case: &str) {
    match case {
        "unknown" => {
            let e = acc::try_get_device_type().unwrap_err().to_string();
            println!("CHILD-ERROR: {e}");
            let r = std::panic::catch_unwind(|| region_reports(DeviceType::Host));
            println!("CHILD-REGION-PANICKED: {}", r.is_err());
        }
        "notify" => {
            assert!(region_reports(DeviceType::Host));
        }
        "bad-num" => {
            let r = std::panic::catch_unwind(|| region_reports(DeviceType::Host));
            println!("CHILD-REGION-PANICKED: {}", r.is_err());
        }
        want => {
            let want: DeviceType = want.parse().unwrap();
            assert_eq!(acc::get_device_type(), want);
            assert!(region_reports(want));
            println!("SELECTED-OK");
        }
    }
}

fn run_child(case: &str, vars: &[(&str, &str)]) -> String {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.env("ACC_ENV_CASE", case)
        .env_remove("ACC_DEVICE_TYPE")
        .env_remove("ACC_DEVICE_NUM");
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

fn main() {
    if let Ok(case) = std::env::var("ACC_ENV_CASE") {
        return child(&case);
    }
    let mut passed = 0;

    let out = run_child("unknown", &[("ACC_DEVICE_TYPE", "Radeon")]);
    assert!(
        out.contains("CHILD-ERROR: unknown device type \"Radeon\""),
        "{out}"
    );
    assert!(
        out.contains("valid names are: host, multicore, nvidia, wgpu"),
        "{out}"
    );
    assert!(out.contains("CHILD-REGION-PANICKED: true"), "{out}");
    passed += 1;

    for (value, want) in [
        (" MULTICORE ", DeviceType::Multicore),
        ("Host", DeviceType::Host),
    ] {
        if acc::get_num_devices(want) == 0 {
            continue;
        }
        let out = run_child(want.name(), &[("ACC_DEVICE_TYPE", value)]);
        assert!(
            out.contains("SELECTED-OK"),
            "ACC_DEVICE_TYPE={value:?}: {out}"
        );
        passed += 1;
    }

    let out = run_child(
        "bad-num",
        &[("ACC_DEVICE_TYPE", "host"), ("ACC_DEVICE_NUM", "two")],
    );
    assert!(
        out.contains("CHILD-REGION-PANICKED: true") && out.contains("ACC_DEVICE_NUM=\"two\""),
        "{out}"
    );
    passed += 1;

    let out = run_child(
        "bad-num",
        &[("ACC_DEVICE_TYPE", "host"), ("ACC_DEVICE_NUM", "1")],
    );
    assert!(
        out.contains("device number 1 of type host does not exist"),
        "{out}"
    );
    passed += 1;

    let out = run_child(
        "notify",
        &[("ACC_DEVICE_TYPE", "host"), ("ACC_NOTIFY", "1")],
    );
    assert!(
        out.contains("acc: launch `parallel` region in `region_reports` at tests/environment.rs:")
            && out.contains("on host"),
        "{out}"
    );
    passed += 1;

    println!("environment: {passed} passed, 0 failed");
}
