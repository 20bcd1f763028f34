//! What `acc` tells a user about what it does (docs/guide/tools.md, contract names):
//! `ACC_NOTIFY` (a bit mask with NVIDIA's meanings, [`Notify`]) prints lines on stderr as things
//! happen, `ACC_TIME` ([`time`]) a table of where the time went, `ACC_DUMP=ir,wgsl,ptx` writes
//! what each stage produced for a kernel to `ACC_DUMP_DIR` (default `acc-dump`).
//!
//! The environment is read once per process. With none of these set, each hook costs one load
//! of a flag.

pub mod time;

use std::path::PathBuf;
use std::sync::OnceLock;

/// What an `ACC_NOTIFY` line reports: the variable is a sum of these (NVIDIA's
/// `NV_ACC_NOTIFY` bits). `ACC_NOTIFY=1` prints kernel launches, `3` launches and transfers,
/// `31` everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Notify {
    /// A region launch and each kernel it runs (region, source location, device, grid).
    Launch = 1,
    /// Data moving between host and device (variable, bytes, direction): clause copies,
    /// updates, implicit transfers.
    Transfer = 2,
    /// Entering and leaving compute and data regions.
    Region = 4,
    /// Waits and synchronizations (`wait`, `acc::wait*`).
    Wait = 8,
    /// Device allocations and frees (the present table's).
    Alloc = 16,
}

struct Settings {
    notify: u32,
    time: bool,
    info: u8,
    dump: Vec<String>,
    dir: PathBuf,
}

/// `ACC_NOTIFY`: a decimal (or `0x` hexadecimal) mask; any other non-empty value is 1 with a
/// warning saying so.
fn parse_notify(v: Option<String>) -> u32 {
    let Some(v) = v else { return 0 };
    let t = v.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.unwrap_or_else(|_| {
        eprintln!(
            "acc: ACC_NOTIFY={v:?} is not a number; using 1 (kernel launches). The variable is a \
             sum of 1 launches, 2 transfers, 4 region entry/exit, 8 waits, 16 allocations"
        );
        1
    })
}

fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        use crate::config;
        Settings {
            notify: parse_notify(config::notify()),
            time: config::time(),
            info: config::info(),
            dump: config::dump(),
            dir: config::dump_dir()
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("acc-dump")),
        }
    })
}

/// Whether `ACC_NOTIFY` asks for lines of this kind.
#[inline]
pub fn notifying(kind: Notify) -> bool {
    settings().notify & kind as u32 != 0
}

/// Prints `line` on stderr when `ACC_NOTIFY` asks for lines of this kind.
#[inline]
pub fn notify(kind: Notify, line: impl FnOnce() -> String) {
    if notifying(kind) {
        eprintln!("acc: {}", line());
    }
}

/// Whether `ACC_TIME` is on.
#[inline]
pub fn timing() -> bool {
    settings().time
}

/// `ACC_INFO`'s level: 0 off, 1 how each region's loops and variables were mapped, 2 also
/// the kernels' resources where the driver reports them.
#[inline]
pub fn info_level() -> u8 {
    settings().info
}

/// Whether `ACC_INFO` is on and has not reported the region at `site` (its address) on
/// device type `device` yet; marks it reported.
pub fn info_first(site: usize, device: crate::DeviceType) -> bool {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashSet<(usize, crate::DeviceType)>>> = Mutex::new(None);
    if info_level() == 0 {
        return false;
    }
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    seen.get_or_insert_with(HashSet::new).insert((site, device))
}

/// Runs `report` at normal process exit (the C runtime's `atexit`), after those registered
/// before it: the `ACC_TIME` table and the `ACC_AUTOCOMPARE` summary.
pub fn at_exit(report: fn()) {
    use std::sync::{Mutex, Once};
    static REPORTS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());
    static ONCE: Once = Once::new();
    REPORTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(report);
    ONCE.call_once(|| {
        extern "C" fn run_reports() {
            let reports = REPORTS.lock().map(|r| r.clone()).unwrap_or_default();
            for r in reports {
                let _ = std::panic::catch_unwind(r);
            }
        }
        extern "C" {
            fn atexit(f: extern "C" fn()) -> std::os::raw::c_int;
        }
        // SAFETY: `atexit` registers a function the C runtime calls once at normal exit;
        // `run_reports` catches every panic, so nothing unwinds out of it.
        unsafe {
            atexit(run_reports);
        }
    });
}

/// Writes `text` as `<name>.<stage>` in the dump directory when `ACC_DUMP` names `stage`; a
/// dump that cannot be written is reported on stderr, never fatal.
pub fn dump(stage: &str, name: &str, text: impl FnOnce() -> String) {
    let s = settings();
    if !s.dump.iter().any(|d| d == stage || d == "all") {
        return;
    }
    let file: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = s.dir.join(format!("{file}.{stage}"));
    // Through a file of this writer's own, renamed into place: threads that build the same
    // kernel at once (a test suite's) each replace the file whole, never interleave in it.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = s
        .dir
        .join(format!(".{file}.{stage}.{}.{n}", std::process::id()));
    let result = std::fs::create_dir_all(&s.dir)
        .and_then(|_| std::fs::write(&tmp, text()))
        .and_then(|_| std::fs::rename(&tmp, &path));
    match result {
        Ok(()) => notify(Notify::Launch, || format!("dumped {}", path.display())),
        Err(e) => eprintln!("acc: ACC_DUMP could not write {}: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_masks() {
        assert_eq!(parse_notify(None), 0);
        assert_eq!(parse_notify(Some("3".into())), 3);
        assert_eq!(parse_notify(Some(" 0x1f ".into())), 31);
        assert_eq!(parse_notify(Some("0".into())), 0);
        assert_eq!(parse_notify(Some("yes".into())), 1);
    }
}
