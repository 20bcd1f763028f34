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

#[acc::offload]
fn observed(a: &mut Vec<f32>) {
    #[acc::data(copy(a))]
    {
        #[acc::parallel_loop(unchecked)]
        for i in 0..a.len() {
            a[i] += 1.0;
        }
        acc::update!(self(a));
        acc::update!(device(a));
    }
}

#[acc::offload]
fn compared(flags: &mut [i32], a: &mut Vec<f64>) {
    #[acc::data(copy(a))]
    {
        #[acc::parallel_loop(copy(flags))]
        for i in 0..flags.len() {
            flags[i] = acc::on_device(DeviceType::Host) as i32;
            a[i] = 2.0 * a[i] + 1.0;
        }
    }
}

/// Private arrays and scalars in a region whose arrays are present (`default(present)`): they
/// live on the device, and never travel (issue 16).
#[allow(clippy::needless_range_loop)]
#[acc::offload]
fn privates(a: &mut Vec<f64>) {
    let mut vals = [0.0f64; 4];
    let mut t = 0.0f64;
    #[acc::data(copy(a))]
    {
        for _ in 0..3 {
            #[acc::parallel_loop(private(vals, t), default(present))]
            for i in 0..a.len() {
                for k in 0..4 {
                    vals[k] = a[i] + k as f64;
                }
                t = vals[0] + vals[3];
                a[i] = t;
            }
        }
    }
}

/// The same with the private array on an inner loop of a gang loop, in a region that copies
/// its array in and out itself.
#[allow(clippy::needless_range_loop)]
#[acc::offload]
fn privates_inner(a: &mut Vec<f64>, n: usize) {
    let mut vals = [0.0f64; 4];
    #[acc::parallel_loop(gang, copy(a))]
    for j in 0..a.len() / n {
        #[acc::r#loop(vector, private(vals))]
        for i in 0..n {
            for k in 0..4 {
                vals[k] = a[j * n + i] + k as f64;
            }
            a[j * n + i] = vals[0] + vals[3];
        }
    }
}

/// A private `Vec` on a `parallel` construct, and a `kernels` region's private array.
#[allow(clippy::needless_range_loop)]
#[acc::offload]
fn privates_construct(a: &mut Vec<f64>) {
    let mut vals = vec![0.0f64; 4];
    let mut w = [0.0f64; 2];
    #[acc::parallel(private(vals), copy(a))]
    {
        #[acc::r#loop(gang, vector)]
        for i in 0..a.len() {
            for k in 0..4 {
                vals[k] = a[i] + k as f64;
            }
            a[i] = vals[0] + vals[3];
        }
    }
    #[acc::kernels(copy(a))]
    {
        #[acc::r#loop(independent, private(w))]
        for i in 0..a.len() {
            w[0] = a[i];
            w[1] = 1.0;
            a[i] = w[0] + w[1];
        }
    }
}

/// Four regions in a row, each reading what the one before wrote (on nvidia with an empty
/// kernel cache, the first launches return before their kernels are compiled).
#[acc::offload]
fn chain(a: &mut Vec<i64>) {
    #[acc::data(copy(a))]
    {
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] = a[i] * 3 + 1;
        }
        #[acc::parallel_loop]
        for i in 1..a.len() {
            a[i] -= a[i - 1] % 5;
        }
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] = a[i] * a[i] % 1000;
        }
        #[acc::parallel_loop]
        for i in 0..a.len() {
            a[i] += i as i64;
        }
    }
}

fn chain_plain(a: &mut [i64]) {
    let b: Vec<i64> = a.iter().map(|x| x * 3 + 1).collect();
    a.copy_from_slice(&b);
    let c: Vec<i64> = (0..a.len())
        .map(|i| if i == 0 { a[0] } else { a[i] - a[i - 1] % 5 })
        .collect();
    for (i, x) in a.iter_mut().enumerate() {
        *x = c[i] * c[i] % 1000 + i as i64;
    }
}

/// Two rounds of a long region and a short one after it (the first round loads the kernels'
/// modules, which waits for the GPU): on nvidia the second short region comes while the GPU
/// is busy. With `share`, the synchronous queue's CUDA stream is first handed out
/// (`acc::get_cuda_stream`) and another library then sets `x` to 7 on it: work it queues
/// after a region returned must run after that region (issue 16: a region launched while the
/// GPU is busy is otherwise recorded and submitted later). In a child of its own: once the
/// stream is handed out, the device records no launch for the rest of the process.
#[cfg(feature = "cuda")]
#[acc::offload]
fn busy_then_short(x: &mut Vec<u32>, y: &mut Vec<f64>, steps: u64, share: bool) {
    let stream = if share {
        acc::get_cuda_stream(acc::ASYNC_SYNC).expect("nvidia has CUDA streams")
    } else {
        std::ptr::null_mut()
    };
    #[acc::data(copy(x, y))]
    {
        for _round in 0..2 {
            #[acc::parallel_loop]
            for i in 0..y.len() {
                let mut v = y[i];
                for _k in 0..steps {
                    v = v * 0.999 + 1.0;
                }
                y[i] = v;
            }
            #[acc::parallel_loop]
            for i in 0..x.len() {
                x[i] = 5;
            }
        }
        if share {
            let p = acc::deviceptr(&*x).expect("x is present");
            let n = x.len();
            // SAFETY: `p` is `x`'s device memory, `n` words long, present until the data
            // region ends (which waits for the stream); the stream is the device's, whose
            // context acc's launches made current on this thread.
            let r = unsafe {
                acc::cudarc::driver::sys::cuMemsetD32Async(p.addr() as u64, 7, n, stream.cast())
            };
            assert_eq!(r, acc::cudarc::driver::sys::CUresult::CUDA_SUCCESS);
        }
    }
}

/// A reduction `kernels_loop` finds without a clause naming it (ACC_INFO says so).
#[acc::offload]
fn summed_by_kernels(x: &[i64]) -> i64 {
    let mut s = 0;
    #[acc::kernels_loop(copyin(x))]
    for i in 0..x.len() {
        s += x[i];
    }
    s
}

/// A private array larger than a GPU thread holds itself (ACC_INFO says where it lives).
#[acc::offload]
fn with_a_large_private_array(out: &mut [f64]) {
    #[acc::parallel_loop(copyout(out))]
    for i in 0..out.len() {
        let mut t = [0.0f64; 8192];
        for k in 0..8192 {
            t[k] = (i + k) as f64;
        }
        out[i] = t[8191 - i % 8192];
    }
}

/// The nests of two independent loops without `gang`, `worker` or `vector` that the GPUs run
/// as a gang per row, its threads along the row (ACC_INFO says so): `kernels` with `loop
/// independent` on both loops (Rodinia's hotspot), and `parallel loop` with two inner `loop`s.
/// An inner loop of 4 literal iterations stays inside each thread.
#[acc::offload]
fn nests(a: &[f64], b: &mut [f64], c: &mut [f64], n: usize) {
    #[acc::kernels(copyin(a), copyout(b))]
    {
        #[acc::r#loop(independent)]
        for i in 0..n {
            #[acc::r#loop(independent)]
            for j in 0..n {
                b[i * n + j] = 2.0 * a[i * n + j];
            }
        }
    }
    #[acc::parallel_loop(copyin(a), copy(c))]
    for i in 0..n {
        #[acc::r#loop]
        for j in 0..n {
            c[i * n + j] += a[i * n + j];
        }
        #[acc::r#loop]
        for jj in 0..n {
            c[i * n + jj] *= 2.0;
        }
    }
    #[acc::parallel_loop(copy(c))]
    for r in 0..n {
        #[acc::r#loop]
        for k in 0..4 {
            c[r * n + k] += 1.0;
        }
    }
}

/// A matrix-vector product as Rodinia's backprop writes its layers: `parallel loop` over rows,
/// `loop reduction(+: s)` over a row, the sum stored after it (a gang per row on the GPUs).
#[acc::offload]
fn row_sums(a: &[f64], y: &mut [f64], n: usize) {
    #[acc::parallel_loop(copyin(a), copyout(y))]
    for row in 0..n {
        let mut s = 0.0;
        #[acc::r#loop(reduction(+: s))]
        for col in 0..n {
            s += a[row * n + col];
        }
        y[row] = 2.0 * s;
    }
}

/// Nests without `tile` that acc tiles itself: a matrix product as `collapse(2)` (16 x 16), and
/// a transpose as `collapse(2)` and as gang/vector loops (32 x 32).
#[acc::offload]
fn slow_spellings(a: &[f64], b: &mut [f64], c: &mut [f64], n: usize) {
    #[acc::parallel_loop(collapse(2), copyin(a), copyout(b))]
    for i in 0..n {
        for j in 0..n {
            let mut s = 0.0;
            for m in 0..n {
                s += a[i * n + m] * a[m * n + j];
            }
            b[i * n + j] = s;
        }
    }
    #[acc::parallel_loop(collapse(2), copyin(a), copyout(c))]
    for i in 0..n {
        for j in 0..n {
            c[j * n + i] = a[i * n + j];
        }
    }
    // The transpose again as a gang loop over a vector loop: tiled the same way.
    #[acc::parallel_loop(gang, copyin(a), copyout(c))]
    for p in 0..n {
        #[acc::r#loop(vector)]
        for q in 0..n {
            c[q * n + p] = a[p * n + q];
        }
    }
}

/// What a child does, by `ACC_ENV_CASE`.
fn child(case: &str) {
    match case {
        #[cfg(feature = "cuda")]
        "shared-stream" => {
            let (mut x, mut y) = (vec![1u32; 4096], vec![0.5f64; 4096]);
            busy_then_short(&mut x, &mut y, 50_000, false);
            // On stderr, between the launches' ACC_NOTIFY lines.
            eprintln!("PHASE-SHARED");
            busy_then_short(&mut x, &mut y, 50_000, true);
            let sevens = x.iter().filter(|&&v| v == 7).count();
            println!("SHARED-STREAM sevens {sevens} of {}", x.len());
        }
        "unknown" => {
            let e = acc::try_get_device_type().unwrap_err().to_string();
            println!("CHILD-ERROR: {e}");
            let r = std::panic::catch_unwind(|| region_reports(DeviceType::Host));
            println!("CHILD-REGION-PANICKED: {}", r.is_err());
        }
        "notify" => {
            assert!(region_reports(DeviceType::Host));
        }
        "privates" => {
            let mut a = vec![1.0f64; 1000];
            privates(&mut a);
            assert!(a.iter().all(|&x| x == 29.0), "{:?}", &a[..4]);
            privates_inner(&mut a, 100);
            assert!(a.iter().all(|&x| x == 61.0), "{:?}", &a[..4]);
            privates_construct(&mut a);
            assert!(a.iter().all(|&x| x == 126.0), "{:?}", &a[..4]);
            println!("PRIVATES-OK");
        }
        "chain" => {
            let mut a: Vec<i64> = (0..5000).map(|i| (i * 37) % 101).collect();
            let mut want = a.clone();
            chain_plain(&mut want);
            chain(&mut a);
            assert_eq!(a, want);
            println!("CHAIN-OK");
        }
        "observe" => {
            let mut a = vec![1.0f32; 1000];
            observed(&mut a);
            assert!(a.iter().all(|&x| x == 2.0));
            println!("OBSERVED-OK");
        }
        "time" => {
            let mut a = vec![1.0f32; 1000];
            for _ in 0..3 {
                observed(&mut a);
            }
            assert!(a.iter().all(|&x| x == 4.0));
            // On demand, then again at exit.
            println!("REPORT-BEGIN\n{}REPORT-END", acc::time_report());
        }
        "recognized" => {
            let x: Vec<i64> = (0..10_000).collect();
            assert_eq!(summed_by_kernels(&x), x.iter().sum::<i64>());
            println!("RECOGNIZED-OK");
        }
        "nests" => {
            let n = 64;
            let a: Vec<f64> = (0..n * n).map(|k| k as f64).collect();
            let (mut b, mut c) = (vec![0.0; n * n], vec![0.0; n * n]);
            nests(&a, &mut b, &mut c, n);
            assert!((0..n * n).all(|k| b[k] == 2.0 * a[k]));
            assert!((0..n * n).all(|k| c[k] == 2.0 * a[k] + if k % n < 4 { 1.0 } else { 0.0 }));
            let (mut p, mut t) = (vec![0.0; n * n], vec![0.0; n * n]);
            slow_spellings(&a, &mut p, &mut t, n);
            assert!((0..n).all(|i| (0..n).all(|j| t[j * n + i] == a[i * n + j])));
            let dot = |i: usize, j: usize| (0..n).map(|k| a[i * n + k] * a[k * n + j]).sum::<f64>();
            assert!((0..n).all(|i| (0..n).all(|j| p[i * n + j] == dot(i, j))));
            let mut y = vec![0.0; n];
            row_sums(&a, &mut y, n);
            assert!((0..n).all(|r| y[r] == 2.0 * (0..n).map(|c| a[r * n + c]).sum::<f64>()));
            println!("NESTS-OK");
        }
        "spilled" => {
            let mut out = vec![0.0; 1000];
            with_a_large_private_array(&mut out);
            assert!((0..1000).all(|i| out[i] == (i + 8191 - i) as f64));
            println!("SPILLED-OK");
        }
        "default" => {
            println!("DEFAULT-DEVICE: {}", acc::get_device_type());
            assert!(region_reports(acc::get_device_type()));
        }
        "autocompare" => {
            // On any device but the host, `flags` differs from the host twin's; `a` does not.
            let (mut flags, mut a) = (vec![0i32; 64], vec![1.0f64; 64]);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                compared(&mut flags, &mut a)
            }));
            match r {
                Ok(()) => println!(
                    "FLAGS {} A {} DIFFERENCES {}",
                    flags.iter().sum::<i32>(),
                    a.iter().sum::<f64>(),
                    acc::autocompare_differences()
                ),
                Err(e) => println!(
                    "ABORTED: {}",
                    e.downcast_ref::<String>().cloned().unwrap_or_default()
                ),
            }
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

/// Whether `ACC_REQUIRE_DEVICES` (CI, the GPU machine) names `ty`: then it is tested, and a
/// missing device fails rather than being left out.
fn required(ty: DeviceType) -> bool {
    std::env::var("ACC_REQUIRE_DEVICES").is_ok_and(|v| {
        v.split(',')
            .any(|d| d.trim().eq_ignore_ascii_case(ty.name()))
    })
}

/// The device types the observation tools are checked on: host and multicore always, a GPU
/// type where it is required or present.
fn types_to_test() -> Vec<DeviceType> {
    [
        DeviceType::Host,
        DeviceType::Multicore,
        DeviceType::Wgpu,
        DeviceType::Nvidia,
    ]
    .into_iter()
    .filter(|&ty| {
        matches!(ty, DeviceType::Host | DeviceType::Multicore)
            || required(ty)
            || acc::get_num_devices(ty) > 0
    })
    .collect()
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

    // A program on a machine without a GPU runs on multicore without a word on stderr from
    // probing for GPUs (Mesa's software drivers complain when XDG_RUNTIME_DIR is unset).
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.env("ACC_ENV_CASE", "default")
        .env_remove("ACC_DEVICE_TYPE")
        .env_remove("ACC_DEVICE_NUM")
        .env_remove("ACC_NOTIFY")
        .env_remove("XDG_RUNTIME_DIR");
    let out = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.contains("DEFAULT-DEVICE: multicore") {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.trim().is_empty(),
            "stderr of a multicore run: {stderr}"
        );
        passed += 1;
    }

    // ACC_NOTIFY is a mask: 4 alone reports region entry and exit, not launches.
    let out = run_child(
        "notify",
        &[("ACC_DEVICE_TYPE", "host"), ("ACC_NOTIFY", "4")],
    );
    assert!(
        out.contains("acc: enter `parallel` region in `region_reports` at tests/environment.rs:")
            && out.contains("acc: leave `parallel` region in `region_reports`")
            && !out.contains("acc: launch"),
        "{out}"
    );
    passed += 1;

    // ACC_TIME: a row per region and data directive, on demand and at exit, on every device
    // type this build has.
    let types = types_to_test();
    for &ty in &types {
        let out = run_child("time", &[("ACC_DEVICE_TYPE", ty.name()), ("ACC_TIME", "1")]);
        let (report, at_exit) = out
            .split_once("REPORT-END")
            .unwrap_or_else(|| panic!("no report on {ty}:\n{out}"));
        let report = report.split_once("REPORT-BEGIN").map_or(report, |r| r.1);
        let row = |text: &str, name: &str| -> Vec<String> {
            let line = text
                .lines()
                .find(|l| l.contains(name))
                .unwrap_or_else(|| panic!("no row {name:?} on {ty}:\n{text}"));
            line.split("  ")
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect()
        };
        for text in [report, at_exit] {
            assert!(
                text.contains("acc: ACC_TIME: time per region"),
                "{ty}: {text}"
            );
            // region, entered, launches, device time, host time, compile, to device, ...
            let p = row(text, "parallel in observed at tests/environment.rs:");
            assert_eq!((p[2].as_str(), p[3].as_str()), ("3", "3"), "{ty}: {p:?}");
            let clock = match ty {
                DeviceType::Wgpu => "(wgpu queue)",
                DeviceType::Nvidia => "(cuda events)",
                _ => "(host wall)",
            };
            assert!(p[4].ends_with(clock), "{ty}: {p:?}");
            // The kernel's first launch compiled it (a variant at least) on a GPU device.
            if matches!(ty, DeviceType::Wgpu | DeviceType::Nvidia) {
                assert!(p[6].ends_with(')') && p[6] != "-", "{ty}: {p:?}");
            } else {
                assert_eq!(p[6], "-", "{ty}: {p:?}");
            }
            let d = row(text, "data in observed at tests/environment.rs:");
            assert_eq!((d[2].as_str(), d[3].as_str()), ("3", "0"), "{ty}: {d:?}");
            let u = row(text, "update at tests/environment.rs:");
            assert_eq!(u[2], "3", "{ty}: {u:?}");
            let total = row(text, "acc:  total");
            assert_eq!(total[2], "3", "{ty}: {total:?}");
            if matches!(ty, DeviceType::Wgpu | DeviceType::Nvidia) {
                // `copy(a)` in and out, three times 4000 bytes each way; the two updates
                // (a row each) move as much, one each way.
                assert!(
                    d[7].starts_with("11.7 KiB in") && d[8].starts_with("11.7 KiB in"),
                    "{ty}: {d:?}"
                );
                let updates: Vec<&str> = text
                    .lines()
                    .filter(|l| l.contains("update at tests/environment.rs:"))
                    .collect();
                assert_eq!(updates.len(), 2, "{ty}: {text}");
                assert_eq!(
                    updates.iter().filter(|l| l.contains("11.7 KiB in")).count(),
                    2,
                    "{ty}: {text}"
                );
            }
        }
        passed += 1;
    }

    // ACC_INFO: at the first launch of each region, how its loops run and each variable's
    // data attribute, on every device type this build has.
    for &ty in &types {
        let out = run_child("time", &[("ACC_DEVICE_TYPE", ty.name()), ("ACC_INFO", "2")]);
        // Level 2 adds the kernel's resources where a kernel ran.
        match ty {
            DeviceType::Nvidia => assert!(
                out.contains(" registers, ") && out.contains("kernel resources on nvidia"),
                "{out}"
            ),
            DeviceType::Wgpu => assert!(
                out.contains("kernel resources on wgpu\nacc:   not reported by this device"),
                "{out}"
            ),
            _ => assert!(!out.contains("kernel resources"), "{out}"),
        }
        let how = match ty {
            DeviceType::Host => "runs in order on one thread",
            DeviceType::Multicore => "split into chunks of iterations over the",
            DeviceType::Wgpu => "gang vector: grid-stride over workgroups of 256 invocations",
            _ => "gang vector: grid-stride over blocks of 256 threads",
        };
        for line in [
            "acc: ACC_INFO: `parallel` region in `observed` at tests/environment.rs:22:",
            "acc:   line 23, loop `i`",
            how,
            "`a`: present (named by an enclosing data construct)",
        ] {
            assert!(out.contains(line), "{ty}: missing {line:?} in:\n{out}");
        }
        // Once per region and device type, though the region ran three times.
        assert_eq!(
            out.matches("ACC_INFO: `parallel`").count(),
            1 + usize::from(matches!(ty, DeviceType::Wgpu | DeviceType::Nvidia)),
            "{ty}: {out}"
        );
        if matches!(ty, DeviceType::Wgpu | DeviceType::Nvidia) {
            assert!(
                out.contains("bounds checks: none (`unchecked`)"),
                "{ty}: {out}"
            );
        }
        passed += 1;
    }

    // ACC_INFO names a reduction `kernels` found as found, on every device type.
    for &ty in &types {
        let out = run_child(
            "recognized",
            &[("ACC_DEVICE_TYPE", ty.name()), ("ACC_INFO", "1")],
        );
        for line in [
            "RECOGNIZED-OK",
            "`s`: reduction(+) (recognized: the loop only updates it with this operator)",
        ] {
            assert!(out.contains(line), "{ty}: missing {line:?} in:\n{out}");
        }
        passed += 1;
    }

    // ACC_INFO: a nest of independent loops without level clauses runs a gang per outer
    // iteration, its threads along the inner loop; a short literal inner loop does not.
    for &ty in &types {
        let out = run_child(
            "nests",
            &[("ACC_DEVICE_TYPE", ty.name()), ("ACC_INFO", "1")],
        );
        assert!(out.contains("NESTS-OK"), "{ty}: {out}");
        if matches!(ty, DeviceType::Wgpu | DeviceType::Nvidia) {
            for (line, count) in [
                ("loop `i`: gang: a ", 2),
                ("loop `j`: vector: shared by the 256 ", 2),
                ("loop `jj`: vector: shared by the 256 ", 1),
                ("loop `r`: gang vector: grid-stride", 1),
                ("loop `k`: sequential, inside each ", 1),
                // The matrix product as `collapse(2)`: tiled by acc, as `tile(16, 16)` would.
                (
                    "tiled by acc, 256 iterations to a block (16 x 16) (no `tile` clause)",
                    if ty == DeviceType::Wgpu { 0 } else { 1 },
                ),
                (
                    "tiled by acc, 256 iterations to a workgroup (16 x 16) (no `tile` clause)",
                    if ty == DeviceType::Wgpu { 1 } else { 0 },
                ),
                ("each element's loop `m` runs 16 iterations at a time", 1),
                // The transposes, as `collapse(2)` and as gang/vector loops: tiled by acc,
                // as `tile(32, 32)` would.
                (
                    "1024 iterations to a block (32 x 32) (no `tile` clause)",
                    if ty == DeviceType::Wgpu { 0 } else { 2 },
                ),
                (
                    "1024 iterations to a workgroup (32 x 32) (no `tile` clause)",
                    if ty == DeviceType::Wgpu { 2 } else { 0 },
                ),
                ("slow as written", 0),
                ("loop `row`: gang: a ", 1),
                ("loop `col`: vector: shared by the 256 ", 1),
            ] {
                assert_eq!(
                    out.matches(line).count(),
                    count,
                    "{ty}: {line:?} in:\n{out}"
                );
            }
        }
        passed += 1;
    }

    // ACC_INFO says which private arrays the GPUs keep in device memory, and what it costs.
    for &ty in &types {
        let out = run_child(
            "spilled",
            &[("ACC_DEVICE_TYPE", ty.name()), ("ACC_INFO", "1")],
        );
        assert!(out.contains("SPILLED-OK"), "{ty}: {out}");
        if matches!(ty, DeviceType::Wgpu | DeviceType::Nvidia) {
            let line = "the private array `t` (8192 elements of f64, 64 KiB per";
            assert!(out.contains(line), "{ty}: missing {line:?} in:\n{out}");
            assert!(out.contains("it lives in device memory"), "{ty}: {out}");
        }
        passed += 1;
    }

    // ACC_AUTOCOMPARE: the host twin reruns the region; a result that differs is reported by
    // region, variable, index and values, the program's results stay the device's, and
    // `abort` stops at the first difference.
    for &ty in &types {
        let out = run_child(
            "autocompare",
            &[("ACC_DEVICE_TYPE", ty.name()), ("ACC_AUTOCOMPARE", "1")],
        );
        if ty == DeviceType::Host {
            assert!(out.contains("FLAGS 64 A 192 DIFFERENCES 0"), "host: {out}");
            assert!(
                out.contains("acc: ACC_AUTOCOMPARE: 0 region runs compared"),
                "host: {out}"
            );
        } else {
            assert!(out.contains("FLAGS 0 A 192 DIFFERENCES 1"), "{ty}: {out}");
            for line in [
                "acc: ACC_AUTOCOMPARE: `parallel` region in `compared` at tests/environment.rs:".to_string(),
                format!(" on {ty}: `flags` differs from the host's result: first at index 0: device 0, host 1; 64 of 64 elements differ"),
                "acc: ACC_AUTOCOMPARE: 1 region run compared with the host twin, 1 variable result differed".to_string(),
            ] {
                assert!(out.contains(&line), "{ty}: missing {line:?} in:\n{out}");
            }
            assert!(!out.contains("`a` differs"), "{ty}: {out}");
            let out = run_child(
                "autocompare",
                &[("ACC_DEVICE_TYPE", ty.name()), ("ACC_AUTOCOMPARE", "abort")],
            );
            assert!(
                out.contains("ABORTED: acc: ACC_AUTOCOMPARE: `parallel` region in `compared`"),
                "{ty}: {out}"
            );
        }
        passed += 1;
    }

    // Private arrays and scalars never travel (issue 16): ACC_NOTIFY shows no transfer of them
    // on the devices with their own memory.
    for ty in [DeviceType::Wgpu, DeviceType::Nvidia] {
        if !types.contains(&ty) {
            continue;
        }
        let out = run_child(
            "privates",
            &[
                ("ACC_DEVICE_TYPE", ty.to_string().as_str()),
                ("ACC_NOTIFY", "31"),
            ],
        );
        assert!(out.contains("PRIVATES-OK"), "{ty}: {out}");
        assert!(
            out.contains("launch `kernels` region in `privates_construct`"),
            "{ty}: {out}"
        );
        for var in ["vals", "w", "t"] {
            assert!(
                !out.contains(&format!("transfer `{var}`")),
                "{ty}: the private `{var}` travels:\n{out}"
            );
        }
        passed += 1;
    }

    // A first run with an empty kernel cache compiles each kernel (on nvidia on threads of
    // their own, the launches returning before), and gives the same answers; a second run
    // loads them from the disk cache.
    if types.contains(&DeviceType::Nvidia) {
        let dir = std::env::temp_dir().join(format!("acc-cold-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let dir_s = dir.to_string_lossy().into_owned();
        let vars = [
            ("ACC_DEVICE_TYPE", "nvidia"),
            ("ACC_NOTIFY", "31"),
            ("ACC_CACHE_DIR", dir_s.as_str()),
        ];
        let cold = run_child("chain", &vars);
        assert!(cold.contains("CHAIN-OK"), "{cold}");
        assert_eq!(cold.matches("cuda module `chain at ").count(), 4, "{cold}");
        assert!(cold.contains(" compiled by "), "{cold}");
        let warm = run_child("chain", &vars);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(warm.contains("CHAIN-OK"), "{warm}");
        assert!(!warm.contains(" compiled by "), "{warm}");
        assert_eq!(
            warm.matches("loaded from the disk cache").count(),
            4,
            "{warm}"
        );
        passed += 1;
    }

    // The synchronous queue's stream handed to another library: its work comes after the
    // regions before it, though they came while the GPU was busy.
    if types.contains(&DeviceType::Nvidia) {
        let out = run_child(
            "shared-stream",
            &[("ACC_DEVICE_TYPE", "nvidia"), ("ACC_NOTIFY", "1")],
        );
        let (before, after) = out.split_once("PHASE-SHARED").unwrap_or((&out, ""));
        // Recorded while the stream was acc's own, made at once after it was handed out.
        assert!(
            before.contains("` recorded (the GPU is busy)"),
            "no launch recorded:\n{out}"
        );
        assert!(!after.contains("` recorded ("), "a launch recorded:\n{out}");
        assert!(out.contains("SHARED-STREAM sevens 4096 of 4096"), "{out}");
        passed += 1;
    }

    // On a device with its own memory, ACC_NOTIFY reports launches, grids and transfers
    // (updates included) and ACC_DUMP writes each stage (docs/guide/tools.md).
    if types.contains(&DeviceType::Wgpu) {
        let dir = std::env::temp_dir().join(format!("acc-dump-{}", std::process::id()));
        let dir_s = dir.to_string_lossy().into_owned();
        let out = run_child(
            "observe",
            &[
                ("ACC_DEVICE_TYPE", "wgpu"),
                ("ACC_NOTIFY", "31"),
                ("ACC_DUMP", "ir,wgsl"),
                ("ACC_DUMP_DIR", &dir_s),
            ],
        );
        assert!(out.contains("OBSERVED-OK"), "{out}");
        for line in [
            "acc: launch `parallel` region in `observed` at tests/environment.rs:",
            "on wgpu",
            "acc: enter `data` region in `observed` at tests/environment.rs:",
            "acc: present: `a` (4000 bytes) allocated",
            "acc: present: `a` (4000 bytes) copied in",
            "workgroups of",
            "acc: update `a` at tests/environment.rs:",
            "4000 bytes to the host",
            "4000 bytes to the device",
            "acc: present: `a` (4000 bytes) copied out",
            "acc: present: `a` (4000 bytes) freed",
            "acc: leave `data` region in `observed`",
        ] {
            assert!(out.contains(line), "missing {line:?} in:\n{out}");
        }
        let files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("ACC_DUMP_DIR {dir_s}: {e}\n{out}"))
            .map(|e| e.unwrap().path())
            .collect();
        let read = |ext: &str| -> String {
            files
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == ext))
                .map(|p| std::fs::read_to_string(p).unwrap())
                .collect()
        };
        let (ir, wgsl) = (read("ir"), read("wgsl"));
        assert!(
            ir.contains("unchecked"),
            "the IR dump shows `unchecked`: {ir}"
        );
        assert!(
            wgsl.contains("@compute"),
            "the WGSL dump is a shader: {wgsl}"
        );
        // Entry points are named after the region's function and line.
        assert!(
            wgsl.contains("fn observed_22_gpu("),
            "entry points named after the region: {wgsl}"
        );
        let _ = std::fs::remove_dir_all(&dir);
        passed += 1;
    }

    // acc-info lists each device type with its devices' properties, and the default.
    // Built beside this test; on the GPU machine both are copied to one folder.
    let built = std::path::PathBuf::from(env!("CARGO_BIN_EXE_acc-info"));
    let exe = if built.exists() {
        built
    } else {
        std::env::current_exe().unwrap().with_file_name("acc-info")
    };
    let out = Command::new(&exe)
        .env_remove("ACC_DEVICE_TYPE")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for line in [
        "device types of this build, in the order acc picks a default: nvidia, wgpu, multicore, host",
        "multicore 0: multicore (",
        "host 0: host (sequential)",
        "shares host memory: yes",
        "threads: ",
        "\ndefault: ",
        "this program uses: ",
    ] {
        assert!(text.contains(line), "acc-info lacks {line:?}:\n{text}");
    }
    // On an NVIDIA GPU float arithmetic rounds as Rust's unless `ACC_FAST_FLOAT=1` makes f32 fast.
    if text.contains("compute capability") {
        assert!(
            text.contains("float arithmetic: rounded as Rust's (no fused"),
            "{text}"
        );
        let fast = Command::new(&exe)
            .env_remove("ACC_DEVICE_TYPE")
            .env("ACC_FAST_FLOAT", "1")
            .output()
            .unwrap();
        let fast = String::from_utf8_lossy(&fast.stdout);
        assert!(
            fast.contains("float arithmetic: f32 fast (ACC_FAST_FLOAT=1"),
            "{fast}"
        );
    }
    if required(DeviceType::Wgpu) {
        assert!(
            text.contains("wgpu 0: ") && text.contains("64-bit integers: "),
            "{text}"
        );
        // On Vulkan (lavapipe in CI) float arithmetic rounds as Rust's unless
        // `ACC_FAST_FLOAT=1` gives the driver its way.
        if text.contains("(Vulkan, ") {
            assert!(
                text.contains("float arithmetic: rounded as Rust's"),
                "{text}"
            );
            let fast = Command::new(&exe)
                .env_remove("ACC_DEVICE_TYPE")
                .env("ACC_FAST_FLOAT", "1")
                .output()
                .unwrap();
            let fast = String::from_utf8_lossy(&fast.stdout);
            assert!(
                fast.contains("float arithmetic: the driver's (ACC_FAST_FLOAT=1)"),
                "{fast}"
            );
        }
    }
    passed += 1;

    println!("environment: {passed} passed, 0 failed");
}
