//! `ACC_INFO` ([`crate::guide::tools`], after NVHPC's `-Minfo=accel`): at the first launch of each
//! region on each device type, on stderr, how each of its loops runs there and why, each
//! variable's data attribute (implicit ones marked), and whether its bounds checks were
//! proven away.

use acc_core::ir::Kernel;
use acc_core::region::{Launch, LoopOnThreads, RegionSite};
use acc_core::{Device, DeviceType};

fn header(site: &RegionSite, on: &str) -> String {
    format!(
        "acc: ACC_INFO: `{}` region in `{}` at {} on {on}",
        site.kind.name(),
        site.function,
        site.location
    )
}

fn vars(site: &RegionSite, out: &mut String) {
    if site.vars.is_empty() {
        return;
    }
    out.push_str("acc:   data:\n");
    for (name, attr) in site.vars {
        out.push_str(&format!("acc:     `{name}`: {attr}\n"));
    }
}

/// The report of a region that runs its host twin (host, multicore, or a local run for
/// `if(false)` / `self`).
pub(crate) fn host_report(site: &RegionSite, launch: &Launch) {
    let device = launch.device();
    let ty = launch.device_type();
    if device.is_some_and(|d| d.runs_kernels())
        || !acc_core::observe::info_first(site as *const _ as usize, ty)
    {
        return;
    }
    let threads = device
        .and_then(|d| d.host_threads())
        .map(|t| t.parallelism());
    let on = match (device, threads) {
        (None, _) => "the local thread (`if(false)` or `self`)".to_string(),
        (Some(_), Some(n)) => format!("{ty} ({n} threads)"),
        (Some(_), None) => format!("{ty} (one thread)"),
    };
    let mut out = header(site, &on);
    out.push('\n');
    for l in site.loops {
        let how = match (threads, l.on_threads) {
            (None, _) => "runs in order on one thread".to_string(),
            (Some(n), LoopOnThreads::Split) => {
                format!("split into chunks of iterations over the {n} threads")
            }
            (Some(_), LoopOnThreads::InsideSplit) => "runs inside each chunk of the enclosing split loop: only the outermost parallel loop of a nest is split".into(),
            (Some(_), LoopOnThreads::Seq) => "runs in order on one thread (`seq`, or a `serial` region)".into(),
            (Some(_), LoopOnThreads::NotParallel) => "runs in order on one thread: not a parallel loop here (in `kernels`, the dependence test could not show its iterations independent; add `independent` if they are)".into(),
        };
        let directive = if l.directive.is_empty() {
            String::new()
        } else {
            format!(" ({})", l.directive)
        };
        out.push_str(&format!(
            "acc:   line {}, loop `{}`{directive}: {how}\n",
            l.line, l.vars
        ));
    }
    vars(site, &mut out);
    eprint!("{out}");
}

/// The report of a region that runs as a kernel on `device` (the caller checked it is its
/// first launch there): the loop mapping shared by the GPU backends (`acc_core::ir::mapping`),
/// the variables, and the bounds checks.
pub(crate) fn kernel_report(
    site: &RegionSite,
    device: &dyn Device,
    kernel: &Kernel,
    proof: acc_core::ir::bounds::Proof,
) {
    let ty: DeviceType = device.device_type();
    let name = device.property(acc_core::Property::Name);
    let mut out = header(
        site,
        &format!("{ty} ({name}), kernel `{}`", kernel.entry_name(0)),
    );
    out.push('\n');
    if let Some(caps) = device.caps() {
        for m in acc_core::ir::mapping::describe(kernel, &caps) {
            let vars: Vec<String> = m.vars.iter().map(|v| format!("`{v}`")).collect();
            out.push_str(&format!(
                "acc:   line {}, loop {}: {}\n",
                m.line,
                vars.join(", "),
                m.how
            ));
        }
    }
    vars(site, &mut out);
    out.push_str(&format!(
        "acc:   bounds checks: {}\n",
        if kernel.unchecked {
            "none (`unchecked`)"
        } else if proof.in_bounds
            && proof.fits_32
            && matches!(ty, DeviceType::Nvidia | DeviceType::Wgpu)
            && acc_core::gpu::kernel_cache::narrowing_enabled()
            && acc_core::ir::narrow::narrowable(kernel)
        {
            "proven in bounds for these arguments on the host: the kernel runs without them, its index arithmetic in 32 bits (every index value fits)"
        } else if proof.in_bounds {
            "proven in bounds for these arguments on the host: the kernel runs without them"
        } else {
            "kept (each access is checked; an index out of range stops the region with an error)"
        }
    ));
    eprint!("{out}");
}

/// `ACC_INFO=2`, after the first launch: what the device's compiler made of the kernel.
pub(crate) fn kernel_resources(site: &RegionSite, device: &dyn Device, kernel: &Kernel) {
    let lines = device.kernel_resources(kernel);
    let mut out = format!(
        "acc: ACC_INFO: `{}` region in `{}` at {}: kernel resources on {}\n",
        site.kind.name(),
        site.function,
        site.location,
        device.device_type()
    );
    if lines.is_empty() {
        out.push_str("acc:   not reported by this device\n");
    }
    for l in lines {
        out.push_str(&format!("acc:   {l}\n"));
    }
    eprint!("{out}");
}
