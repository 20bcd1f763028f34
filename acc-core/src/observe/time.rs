//! `ACC_TIME=1` (docs/guide/tools.md): a table on stderr at process exit, and from
//! `acc::time_report()` on demand, with one row per compute region, data region and data
//! directive, named by function and source location: times entered, kernel launches, device
//! time, host time, bytes and time of transfers each way, and the launch shape.
//!
//! Each row collects what happens while its region is the innermost one entered on the thread
//! (a thread-local stack of rows). Device time comes from CUDA events on nvidia (recorded on the
//! launch's stream and read when the table is made, so timing adds no synchronization), from
//! the queue's completion callbacks on wgpu, and from the wall clock of the region's run on host
//! and multicore; the table says which. With `ACC_TIME` unset every hook returns after one
//! load of a flag.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use crate::error::Location;

/// How a row's device time was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// CUDA events around the region's kernels on their stream.
    CudaEvents,
    /// From submission to the wgpu queue's completion callback.
    WgpuQueue,
    /// The wall clock of the region's run on the host's threads.
    HostWall,
}

impl Clock {
    fn label(self) -> &'static str {
        match self {
            Clock::CudaEvents => "cuda events",
            Clock::WgpuQueue => "wgpu queue",
            Clock::HostWall => "host wall",
        }
    }
}

/// A kernel time the device has not reported yet (its events still on the stream).
pub trait PendingTime: Send {
    /// The time once the device has finished, without waiting: `None` while it runs,
    /// `Some(None)` when the device cannot tell.
    fn poll(&mut self) -> Option<Option<Duration>>;
    /// Waits for the device and gives the time (`None` when the device cannot tell).
    fn wait(self: Box<Self>) -> Option<Duration>;
}

/// A launch's device time: measured, or to be read from the device later.
pub enum DeviceTime {
    /// Known now.
    Measured(Duration, Clock),
    /// Known once the device has run the launch.
    Pending(Box<dyn PendingTime>, Clock),
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    kind: &'static str,
    function: &'static str,
    location: (&'static str, u32, u32),
}

#[derive(Default)]
struct Transfers {
    bytes: u64,
    time: Duration,
    count: u64,
}

struct Row {
    key: Key,
    entered: u64,
    launches: u64,
    device: Duration,
    clock: Option<Clock>,
    /// Launches whose device time the device could not give.
    untimed: u64,
    pending: Vec<Box<dyn PendingTime>>,
    host: Duration,
    /// Host time of the entries made outside any other region (what the totals add up).
    outermost: Duration,
    to_device: Transfers,
    from_device: Transfers,
    shape: String,
    /// Host time spent compiling kernels (a variant's first launch: PTX JIT and module load,
    /// or pipeline creation), and how many were compiled.
    compile: Duration,
    compiles: u64,
}

impl Row {
    fn new(key: Key) -> Row {
        Row {
            key,
            entered: 0,
            launches: 0,
            device: Duration::ZERO,
            clock: None,
            untimed: 0,
            pending: Vec::new(),
            host: Duration::ZERO,
            outermost: Duration::ZERO,
            to_device: Transfers::default(),
            from_device: Transfers::default(),
            shape: String::new(),
            compile: Duration::ZERO,
            compiles: 0,
        }
    }

    /// Moves finished pending times into `device`; with `block`, waits for all of them.
    fn settle(&mut self, block: bool) {
        let pending = std::mem::take(&mut self.pending);
        for mut p in pending {
            let got = match block {
                true => Some(p.wait()),
                false => match p.poll() {
                    Some(t) => Some(t),
                    None => {
                        self.pending.push(p);
                        continue;
                    }
                },
            };
            match got {
                Some(Some(d)) => self.device += d,
                Some(None) | None => self.untimed += 1,
            }
        }
    }
}

#[derive(Default)]
struct Table {
    rows: Vec<Row>,
    index: HashMap<Key, usize>,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    f(t.get_or_insert_with(Table::default))
}

thread_local! {
    /// The rows of the regions entered on this thread, innermost last.
    static CURRENT: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

fn current() -> usize {
    CURRENT
        .with(|c| c.borrow().last().copied())
        .unwrap_or_else(|| {
            row_of(Key {
                kind: "outside regions",
                function: "",
                location: ("", 0, 0),
            })
        })
}

fn row_of(key: Key) -> usize {
    with_table(|t| {
        if let Some(&i) = t.index.get(&key) {
            return i;
        }
        t.rows.push(Row::new(key));
        t.index.insert(key, t.rows.len() - 1);
        t.rows.len() - 1
    })
}

/// Times one entry of a region, until dropped.
#[must_use]
pub struct RegionTimer {
    row: usize,
    start: Instant,
    /// Entered outside any other region on its thread.
    outermost: bool,
    /// The shape of a run on the host's threads, whose wall time is the device time.
    host_run: Option<String>,
}

impl RegionTimer {
    /// The region runs on the host's threads (host, multicore) as `shape` describes: its wall
    /// time is its device time, as one launch.
    pub fn runs_on_host(&mut self, shape: String) {
        self.host_run = Some(shape);
    }
}

impl Drop for RegionTimer {
    fn drop(&mut self) {
        let took = self.start.elapsed();
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            if let Some(p) = c.iter().rposition(|&r| r == self.row) {
                c.remove(p);
            }
        });
        let host_run = self.host_run.take();
        with_table(|t| {
            let r = &mut t.rows[self.row];
            r.host += took;
            if self.outermost {
                r.outermost += took;
            }
            if let Some(shape) = host_run {
                r.launches += 1;
                r.device += took;
                r.clock.get_or_insert(Clock::HostWall);
                r.shape = shape;
            }
        });
    }
}

/// Enters a region (`kind`: `parallel`, `data`, `update`, ...) for the table: `None`, at the
/// cost of one flag, when `ACC_TIME` is off.
#[inline]
pub fn enter(
    kind: &'static str,
    function: &'static str,
    location: Location,
) -> Option<RegionTimer> {
    if !super::timing() {
        return None;
    }
    Some(enter_timed(kind, function, location))
}

#[cold]
fn enter_timed(kind: &'static str, function: &'static str, location: Location) -> RegionTimer {
    report_at_exit();
    let row = row_of(Key {
        kind,
        function,
        location: (location.file, location.line, location.column),
    });
    with_table(|t| t.rows[row].entered += 1);
    let outermost = CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        c.push(row);
        c.len() == 1
    });
    RegionTimer {
        row,
        start: Instant::now(),
        outermost,
        host_run: None,
    }
}

/// Records a transfer of `bytes` that took `took`, for the innermost region entered.
#[inline]
pub fn transfer(to_device: bool, bytes: usize, took: Duration) {
    if super::timing() {
        let row = current();
        with_table(|t| {
            let r = &mut t.rows[row];
            let tr = if to_device {
                &mut r.to_device
            } else {
                &mut r.from_device
            };
            tr.bytes += bytes as u64;
            tr.time += took;
            tr.count += 1;
        });
    }
}

/// Records the compilation of a kernel variant (at its first launch) that took `took` of the
/// host's time, for the innermost region entered.
pub fn compile(took: Duration) {
    if !super::timing() {
        return;
    }
    let row = current();
    with_table(|t| {
        let r = &mut t.rows[row];
        r.compile += took;
        r.compiles += 1;
    });
}

/// The row a compilation finishing on another thread is recorded in ([`compile_at`]): the
/// innermost region entered on this thread; `None` when `ACC_TIME` is off.
pub fn compile_row() -> Option<usize> {
    super::timing().then(current)
}

/// Adds `took`, a compilation done on another thread for a launch of row `row`
/// ([`compile_row`]), to that region's compile time.
pub fn compile_at(row: usize, took: Duration) {
    with_table(|t| {
        if let Some(r) = t.rows.get_mut(row) {
            r.compile += took;
        }
    });
}

/// Records a kernel launch of the innermost region entered: its shape (grid and block) and
/// device time.
pub fn launch(shape: impl FnOnce() -> String, time: DeviceTime) {
    if !super::timing() {
        return;
    }
    let row = current();
    let shape = shape();
    with_table(|t| {
        let r = &mut t.rows[row];
        r.launches += 1;
        r.shape = shape;
        match time {
            DeviceTime::Measured(d, clock) => {
                r.device += d;
                r.clock.get_or_insert(clock);
            }
            DeviceTime::Pending(p, clock) => {
                r.clock.get_or_insert(clock);
                r.pending.push(p);
                // Keep the list short: take in what the device has finished.
                if r.pending.len() > 64 {
                    r.settle(false);
                }
            }
        }
    });
}

fn report_at_exit() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| super::at_exit(|| eprint!("{}", report())));
}

fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} us", s * 1e6)
    }
}

fn bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

/// The compile column: the time and how many kernel variants, or `-`.
fn compiled(d: Duration, n: u64) -> String {
    if n == 0 {
        "-".into()
    } else {
        format!("{} ({n})", duration(d))
    }
}

fn transfers(t: &Transfers) -> String {
    if t.count == 0 {
        "-".into()
    } else {
        format!("{} in {}", bytes(t.bytes), duration(t.time))
    }
}

/// The `ACC_TIME` table as text (`acc::time_report()`): rows sorted by host time, then a
/// totals line. Device times still on the device are waited for.
pub fn report() -> String {
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = table.as_mut() else {
        return "acc: ACC_TIME: no region ran\n".into();
    };
    for r in &mut t.rows {
        r.settle(true);
    }
    let mut rows: Vec<&Row> = t.rows.iter().collect();
    rows.sort_by(|a, b| {
        b.host
            .cmp(&a.host)
            .then(a.key.location.cmp(&b.key.location))
    });
    let header = [
        "region",
        "entered",
        "launches",
        "device time",
        "host time",
        "compile",
        "to device",
        "from device",
        "launch shape",
    ];
    let mut lines: Vec<[String; 9]> = Vec::new();
    let (mut tot_dev, mut tot_host) = (Duration::ZERO, Duration::ZERO);
    let (mut tot_compile, mut tot_compiles) = (Duration::ZERO, 0);
    let (mut tot_to, mut tot_from) = (Transfers::default(), Transfers::default());
    let mut tot_launches = 0;
    for r in rows {
        let k = &r.key;
        let name = match (k.function, k.location) {
            (_, ("", _, _)) => k.kind.to_string(),
            ("", (f, l, _)) => format!("{} at {f}:{l}", k.kind),
            (func, (f, l, _)) => format!("{} in {func} at {f}:{l}", k.kind),
        };
        let device = match (r.launches, r.clock) {
            (0, _) => "-".to_string(),
            (_, Some(c)) => {
                let mut s = format!("{} ({})", duration(r.device), c.label());
                if r.untimed > 0 {
                    let _ = write!(s, ", {} untimed", r.untimed);
                }
                s
            }
            (_, None) => "-".to_string(),
        };
        tot_dev += r.device;
        // Nested regions' host time is inside their parents': only outermost entries add up.
        tot_host += r.outermost;
        tot_launches += r.launches;
        tot_compile += r.compile;
        tot_compiles += r.compiles;
        for (tot, tr) in [(&mut tot_to, &r.to_device), (&mut tot_from, &r.from_device)] {
            tot.bytes += tr.bytes;
            tot.time += tr.time;
            tot.count += tr.count;
        }
        lines.push([
            name,
            r.entered.to_string(),
            r.launches.to_string(),
            device,
            if k.kind == "outside regions" {
                "-".into()
            } else {
                duration(r.host)
            },
            compiled(r.compile, r.compiles),
            transfers(&r.to_device),
            transfers(&r.from_device),
            if r.shape.is_empty() {
                "-".into()
            } else {
                r.shape.clone()
            },
        ]);
    }
    lines.push([
        "total".into(),
        String::new(),
        tot_launches.to_string(),
        duration(tot_dev),
        duration(tot_host),
        compiled(tot_compile, tot_compiles),
        transfers(&tot_to),
        transfers(&tot_from),
        String::new(),
    ]);
    let mut width = header.map(str::len);
    for l in &lines {
        for (w, c) in width.iter_mut().zip(l) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::from(
        "acc: ACC_TIME: time per region, most host time first (device time: kernels only; host \
         time: the whole construct, nested ones included; compile: host time compiling kernels \
         at their first launch, and how many)\n",
    );
    let mut put = |cells: &[String]| {
        let mut s = String::from("acc:");
        for (i, (c, w)) in cells.iter().zip(width).enumerate() {
            let pad = w - c.chars().count();
            if i == 0 || i >= 3 {
                let _ = write!(s, "  {c}{}", " ".repeat(pad));
            } else {
                let _ = write!(s, "  {}{c}", " ".repeat(pad));
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    put(&header.map(String::from));
    for l in &lines {
        put(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(bytes(10), "10 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
        assert_eq!(duration(Duration::from_micros(12)), "12.0 us");
        assert_eq!(duration(Duration::from_millis(12)), "12.000 ms");
        assert_eq!(duration(Duration::from_secs(2)), "2.000 s");
    }
}
