//! Every program of the suite at its small size on every device type, verified against its
//! plain-Rust twin. Device types as the behaviour suite picks them: `ACC_TEST_DEVICES`, else
//! `ACC_REQUIRE_DEVICES` (CI: a device that cannot be used fails), else every type this build
//! has (a missing one is skipped with its reason printed).

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

fn devices() -> Vec<DeviceType> {
    let required = parse_list("ACC_REQUIRE_DEVICES");
    let wanted = parse_list("ACC_TEST_DEVICES")
        .or_else(|| required.clone())
        .unwrap_or_else(|| DeviceType::CONCRETE.to_vec());
    let mut run = Vec::new();
    for ty in wanted.iter().chain(required.iter().flatten()) {
        if run.contains(ty) {
            continue;
        }
        match acc::init(*ty) {
            Ok(()) => run.push(*ty),
            Err(e) if required.is_some() => {
                panic!("ACC_REQUIRE_DEVICES is set and the suite is to run on {ty}, but: {e}")
            }
            Err(e) => eprintln!("application suite: not testing on {ty}: {e}"),
        }
    }
    assert!(!run.is_empty(), "no device to test on");
    run
}

/// Runs `name` at its small size on each device; every device runs, and a failure names each
/// device it failed on.
fn on_each_device(name: &str) {
    let program = acc_apps::programs()
        .into_iter()
        .find(|p| p.name == name)
        .expect("a program of the suite");
    let mut failed = Vec::new();
    for ty in devices() {
        acc::set_device_type(ty);
        match (program.run)(false) {
            Ok(o) => eprintln!("{name} on {ty}: {}", o.verified),
            Err(e) => failed.push(format!("{ty}: {e}")),
        }
    }
    acc::set_device_type(DeviceType::Host);
    assert!(
        failed.is_empty(),
        "{name} failed:\n  {}",
        failed.join("\n  ")
    );
}

#[test]
fn every_program_is_tested() {
    let tested = [
        "hotspot",
        "kmeans",
        "lavamd",
        "lud",
        "nw",
        "pathfinder",
        "srad",
        "backprop",
        "bfs",
        "cg",
        "ep",
        "cfd",
        "mg",
        "miniweather",
    ];
    for p in acc_apps::programs() {
        assert!(tested.contains(&p.name), "{} has no test here", p.name);
    }
}

#[test]
fn hotspot() {
    on_each_device("hotspot");
}

#[test]
fn kmeans() {
    on_each_device("kmeans");
}

#[test]
fn lavamd() {
    on_each_device("lavamd");
}

#[test]
fn lud() {
    on_each_device("lud");
}

#[test]
fn nw() {
    on_each_device("nw");
}

#[test]
fn pathfinder() {
    on_each_device("pathfinder");
}

#[test]
fn srad() {
    on_each_device("srad");
}

#[test]
fn backprop() {
    on_each_device("backprop");
}

#[test]
fn bfs() {
    on_each_device("bfs");
}

#[test]
fn cg() {
    on_each_device("cg");
}

#[test]
fn ep() {
    on_each_device("ep");
}

#[test]
fn cfd() {
    on_each_device("cfd");
}

#[test]
fn mg() {
    on_each_device("mg");
}

#[test]
fn miniweather() {
    on_each_device("miniweather");
}
