//! Data clauses and data directives as the expansions call them (OpenACC 3.3 sections 2.6,
//! 2.7 and 2.14): each variable becomes a [`ClauseEntry`] (name, source location, host range,
//! element layout), and the construct applies the clause actions to the present table of the
//! current device. Devices that share host memory have every variable present already: the
//! clauses move and count nothing there ("if var is in shared memory, no action is taken").
//!
//! Host memory is written only through `&mut` borrows the expansion takes where the write
//! happens (the end of a data region, an `update self`, an `exit data copyout`), so a variable
//! that was moved while its data was present is never written behind the user's back.

use std::sync::Arc;

use acc_core::observe::{notify, Notify};

use acc_core::data::{
    bytes_of, bytes_of_mut, subarray_bounds, ClauseVar, DataVar, DataVarMut, DeviceCopy,
};
use acc_core::present::{Absent, Counter, ElemLayout, HostBytes, Leave, Named, Release};
use acc_core::queue::Queue;
use acc_core::{Device, Location, OwnMemory};

use super::{fail, Launch};
use crate::routines::runtime;

/// The data clause a variable appears in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum DataClause {
    Copy,
    Copyin,
    Copyout,
    Create,
    NoCreate,
    Present,
    Deviceptr,
    Attach,
    Detach,
    Delete,
    DeviceResident,
    Link,
    UseDevice,
    UpdateSelf,
    UpdateDevice,
}

impl DataClause {
    /// What entering the clause does to absent data (3.3 section 2.7.2).
    fn absent(self) -> Option<Absent> {
        Some(match self {
            DataClause::Copy | DataClause::Copyin => Absent::Copyin,
            DataClause::Copyout | DataClause::Create => Absent::Create,
            DataClause::Present => Absent::Error,
            DataClause::NoCreate => Absent::Nothing,
            _ => return None,
        })
    }
    /// Whether leaving the clause copies the data out.
    fn copies_out(self) -> bool {
        matches!(self, DataClause::Copy | DataClause::Copyout)
    }
}

/// The layout of `T` for the present table.
pub fn layout<T: DeviceCopy>() -> ElemLayout {
    ElemLayout {
        // 16-bit floats are stored as their bits.
        scalar: T::SCALAR.map(acc_core::ir::Scalar::storage),
        size: std::mem::size_of::<T>(),
    }
}

/// A variable of a data clause.
#[derive(Clone, Copy, Debug)]
pub struct ClauseEntry {
    /// The clause.
    pub clause: DataClause,
    /// The variable: name, location, host range.
    pub var: ClauseVar,
    /// Its elements' layout.
    pub elem: ElemLayout,
}

impl ClauseEntry {
    fn named(&self) -> Named<'_> {
        Named {
            name: self.var.name,
            location: self.var.location,
        }
    }
    /// The host bytes, read at the clause (the borrow that produced the entry has just ended
    /// and nothing wrote the variable since).
    fn host(&self) -> &[u8] {
        if self.var.range.bytes == 0 {
            return &[];
        }
        // SAFETY: the range was taken from a live `&V` in the same expression that passes this
        // entry to the directive; the variable is not written in between.
        unsafe {
            std::slice::from_raw_parts(self.var.range.addr as *const u8, self.var.range.bytes)
        }
    }
}

/// Refuses, naming it, a variable whose elements are not one host range (an `ndarray` view
/// with strides).
#[inline]
fn check_layout<V: DataVar + ?Sized>(v: &V, name: &str, loc: Location) {
    if let Some(why) = v.layout_problem() {
        fail("data clause", loc, format!("`{name}`: {why}"))
    }
}

/// The whole of `v` in clause `clause`.
#[inline]
pub fn clause_var<V: DataVar + ?Sized>(
    clause: DataClause,
    v: &V,
    name: &'static str,
    loc: Location,
) -> ClauseEntry {
    check_layout(v, name, loc);
    ClauseEntry {
        clause,
        var: ClauseVar::whole(v, name, loc),
        elem: layout::<V::Elem>(),
    }
}

/// The subarray `v[range]` in clause `clause`; panics, naming it, when it is out of bounds.
#[inline]
pub fn clause_subarray<V: DataVar + ?Sized>(
    clause: DataClause,
    v: &V,
    range: impl std::ops::RangeBounds<usize>,
    name: &'static str,
    loc: Location,
) -> ClauseEntry {
    check_layout(v, name, loc);
    let (s, e) = subarray_bounds(range, v.elems().len());
    match ClauseVar::subarray(v, s, e, name, loc) {
        Ok(var) => ClauseEntry {
            clause,
            var,
            elem: layout::<V::Elem>(),
        },
        Err(err) => fail("data clause", loc, err),
    }
}

/// A variable's host data, writable: what leaving a `copy`/`copyout` clause or an
/// `update self` writes into. The expansion takes it with `v.acc_mut()`, so the variable
/// must be mutable, as in the C and Fortran bindings where the clause writes it.
pub struct HostMut<'a> {
    bytes: &'a mut [u8],
}

/// `v.acc_mut()`: a mutable borrow of a clause variable, whether it is owned (`Vec`, array,
/// scalar: borrowed, so the binding must be `mut`) or already a `&mut` (reborrowed).
pub trait AccMut<'a> {
    /// The variable's type behind the borrow.
    type Target: ?Sized;
    /// The borrow.
    fn acc_mut(self) -> &'a mut Self::Target;
}

impl<'a, V: ?Sized> AccMut<'a> for &'a mut V {
    type Target = V;
    #[inline]
    fn acc_mut(self) -> &'a mut V {
        self
    }
}

/// A variable's host data, writable.
#[inline]
pub fn host_mut<V: DataVarMut + ?Sized>(v: &mut V) -> HostMut<'_> {
    HostMut {
        bytes: bytes_of_mut(v.elems_mut()),
    }
}

impl HostMut<'_> {
    /// Whether the variable still holds `addr..addr + bytes`.
    fn holds(&self, addr: usize, bytes: usize) -> bool {
        let start = self.bytes.as_ptr() as usize;
        addr >= start && addr + bytes <= start + self.bytes.len()
    }

    /// The part of the variable at `range`, if it still holds it.
    fn part(&mut self, addr: usize, bytes: usize) -> Option<&mut [u8]> {
        let start = self.bytes.as_ptr() as usize;
        if addr < start || addr + bytes > start + self.bytes.len() {
            return None;
        }
        Some(&mut self.bytes[addr - start..addr - start + bytes])
    }
}

/// Where the data at `addr..addr + bytes` is now among the variables leaving a construct:
/// in `hosts[own]`, the variable whose clause entered it, or else in whichever of them holds
/// it now. Programs swap the arrays of a data region between sweeps (`std::mem::swap(a, b)`
/// on two `Vec`s or slices): the device copies follow the buffers, and so does the copy out.
fn holder<'h>(
    hosts: &'h mut [HostMut<'_>],
    own: usize,
    addr: usize,
    bytes: usize,
) -> Option<&'h mut [u8]> {
    let at = if hosts
        .get_mut(own)
        .is_some_and(|h| h.part(addr, bytes).is_some())
    {
        own
    } else {
        hosts
            .iter_mut()
            .position(|h| h.part(addr, bytes).is_some())?
    };
    hosts[at].part(addr, bytes)
}

/// The data environment a construct opened: what it entered on which device, left when
/// [`DataGuard::exit`] is called at the end of the construct. A guard dropped without `exit`
/// (a panic) releases its data without copying anything out.
#[must_use]
pub struct DataGuard {
    device: Option<Arc<dyn Device>>,
    /// The entries, in clause order, and whether each changed a counter.
    entered: Vec<(ClauseEntry, bool)>,
    /// `ACC_TIME`'s timer of a data construct, and what `ACC_NOTIFY` names it by on leaving.
    timer: Option<acc_core::observe::time::RegionTimer>,
    site: Option<(&'static str, Location)>,
}

impl DataGuard {
    fn none() -> DataGuard {
        DataGuard {
            device: None,
            entered: Vec::new(),
            timer: None,
            site: None,
        }
    }

    /// Leaves the construct (3.3 section 2.7.2, structured exit): each clause's present
    /// decrement, and at zero its copy out into `hosts` (the `copy`/`copyout` variables in
    /// clause order, as the expansion lists them) and free.
    pub fn exit(mut self, loc: Location, hosts: &mut [HostMut<'_>]) {
        if let Err(e) = self.leave(Some(hosts)) {
            fail("leaving a data region", loc, e)
        }
    }

    fn leave(&mut self, mut hosts: Option<&mut [HostMut<'_>]>) -> acc_core::Result<()> {
        let Some(device) = self.device.take() else {
            return Ok(());
        };
        let Some(mem) = device.own_memory() else {
            return Ok(());
        };
        let entries = std::mem::take(&mut self.entered);
        // The k-th `copy`/`copyout` entry writes into `hosts[k]`.
        let mut rank = Vec::with_capacity(entries.len());
        let mut k = 0;
        for (e, _) in &entries {
            rank.push(k);
            k += e.clause.copies_out() as usize;
        }
        // Each `copy`/`copyout` variable's own data, by its rank.
        let own: Vec<(usize, usize)> = entries
            .iter()
            .filter(|(e, _)| e.clause.copies_out())
            .map(|(e, _)| (e.var.range.addr, e.var.range.bytes))
            .collect();
        // Whether the `k`-th `copy`/`copyout` variable was swapped away from its own data.
        let swapped = |h: &[HostMut<'_>], k: usize| {
            own.get(k)
                .is_some_and(|&(a, b)| h.get(k).is_some_and(|v| !v.holds(a, b)))
        };
        let mut first_error = Ok(());
        // The reverse of entering.
        for (i, (e, counted)) in entries.iter().enumerate().rev() {
            if !counted {
                continue;
            }
            let (addr, bytes) = (e.var.range.addr, e.var.range.bytes);
            let (host, release) = match (&mut hosts, e.clause.copies_out()) {
                // Another clause's data (`create`, `copyin`) that a `copy`/`copyout` variable
                // holds now, swapped with it: copied out into that variable, as C copies out
                // what its pointer points to when the region ends.
                (Some(h), false) => match h
                    .iter()
                    .position(|v| v.holds(addr, bytes))
                    .filter(|&k| swapped(h, k))
                {
                    Some(k) => (h[k].part(addr, bytes), Release::Copyout),
                    None => (None, Release::Delete),
                },
                (Some(h), true) => {
                    // Swapped with a variable of another clause, whose data this one holds now
                    // and gets (above); its own data is released, as in C.
                    let traded = swapped(h, rank[i])
                        && entries.iter().any(|(o, _)| {
                            !o.clause.copies_out()
                                && h.get(rank[i])
                                    .is_some_and(|v| v.holds(o.var.range.addr, o.var.range.bytes))
                        });
                    match holder(h, rank[i], addr, bytes) {
                        Some(host) => (Some(host), Release::Copyout),
                        None if traded => (None, Release::Delete),
                        None => {
                            if first_error.is_ok() {
                                first_error = Err(acc_core::Error::Unsupported {
                                what: format!(
                                    "`{}` (at {}) no longer holds the data its clause made present (moved or resized); its device copy was not copied out",
                                    e.var.name, e.var.location
                                ),
                            });
                            }
                            (None, Release::Delete)
                        }
                    }
                }
                _ => (None, Release::Delete),
            };
            let leave = Leave {
                counter: Counter::Structured,
                finalize: false,
                release,
            };
            let r = mem
                .table
                .exit(mem.memory, (addr, bytes), host, e.named(), leave);
            if first_error.is_ok() {
                first_error = r;
            }
        }
        first_error
    }
}

impl Drop for DataGuard {
    fn drop(&mut self) {
        // Only a panic leaves a construct without `exit`: release without copying out, and
        // report nothing more (the panic is the report).
        let _ = self.leave(None);
        if let Some((function, loc)) = self.site {
            notify(Notify::Region, || {
                format!("leave `data` region in `{function}` at {loc}")
            });
        }
    }
}

/// Enters `entries` on `device` (3.3 section 2.7.2, structured entry).
fn enter_on(
    device: &Arc<dyn Device>,
    what: &str,
    loc: Location,
    entries: &[ClauseEntry],
) -> DataGuard {
    // A compute construct without data clauses (most of a time loop's) enters nothing.
    if entries.is_empty() {
        return DataGuard::none();
    }
    let Some(mem) = device.own_memory() else {
        return DataGuard::none();
    };
    let mut guard = DataGuard {
        device: Some(Arc::clone(device)),
        entered: Vec::new(),
        timer: None,
        site: None,
    };
    for e in entries {
        if e.clause == DataClause::Deviceptr && e.host().is_empty() {
            guard.entered.push((*e, false));
            continue;
        }
        if e.clause == DataClause::Deviceptr {
            // Device memory already (an `acc::DeviceVec`, or data `acc::map_data` put in
            // `acc::malloc` memory): present, and nothing to count or copy (3.3 section 2.7.4).
            match mem.table.lookup(
                e.host().as_ptr() as usize,
                e.host().len(),
                e.elem,
                e.named(),
            ) {
                Ok(Some(_)) => {
                    guard.entered.push((*e, false));
                    continue;
                }
                Ok(None) => {
                    drop(guard);
                    fail(what, loc, acc_core::Error::Unsupported {
                        what: format!("`{}` in a `deviceptr` clause is not in the {} device's memory: a `deviceptr` variable is an `acc::DeviceVec` made on that device (or host data `acc::map_data` put in `acc::malloc` memory); for host data use `copyin`, `copy` or `present`", e.var.name, device.device_type()),
                    });
                }
                Err(err) => {
                    drop(guard);
                    fail(what, loc, err)
                }
            }
        }
        let Some(absent) = e.clause.absent() else {
            guard.entered.push((*e, false));
            if e.clause == DataClause::Attach
                || e.clause == DataClause::DeviceResident
                || e.clause == DataClause::Link
            {
                drop(guard);
                fail(what, loc, acc_core::Error::Unsupported {
                    what: format!("`{}` in a `{:?}` clause on the {} device (device pointers are not supported there yet)", e.var.name, e.clause, device.device_type()),
                });
            }
            continue;
        };
        match mem.table.enter(
            mem.memory,
            e.host(),
            e.elem,
            e.named(),
            Counter::Structured,
            absent,
        ) {
            Ok(counted) => guard.entered.push((*e, counted)),
            Err(err) => {
                drop(guard);
                fail(what, loc, err)
            }
        }
    }
    guard
}

fn current(what: &str, loc: Location) -> Arc<dyn Device> {
    runtime()
        .current_device()
        .unwrap_or_else(|e| fail(what, loc, e))
}

/// The data clauses of a compute construct, on the device it was launched on (none when it
/// runs on the local thread).
pub fn region_data(launch: &Launch, loc: Location, entries: &[ClauseEntry]) -> DataGuard {
    match launch.device() {
        Some(d) => enter_on(d, "data clause", loc, entries),
        None => {
            deviceptr_on_the_host(loc, entries);
            DataGuard::none()
        }
    }
}

/// A construct that runs on the host (its `if` is false) cannot use device memory
/// (`deviceptr` of an `acc::DeviceVec` on a GPU): its host code would read what is not the data.
fn deviceptr_on_the_host(loc: Location, entries: &[ClauseEntry]) {
    let Some(e) = entries.iter().find(|e| e.clause == DataClause::Deviceptr) else {
        return;
    };
    let Ok(d) = runtime().current_device() else {
        return;
    };
    let Some(mem) = d.own_memory() else { return };
    if let Ok(Some(_)) = mem.table.lookup(
        e.host().as_ptr() as usize,
        e.host().len(),
        e.elem,
        e.named(),
    ) {
        fail("data clause", loc, acc_core::Error::Unsupported {
            what: format!(
                "`{}` in a `deviceptr` clause is in the {} device's memory, but the construct runs on the host (its `if` is false): the host cannot use device memory",
                e.var.name,
                d.device_type()
            ),
        });
    }
}

pub(crate) fn check_queues(
    what: &str,
    loc: Location,
    async_arg: Option<i64>,
    wait: &Option<Vec<i64>>,
) {
    if let Err(e) = Queue::resolve(async_arg) {
        fail(what, loc, e)
    }
    for &q in wait.iter().flatten() {
        if let Err(e) = Queue::for_wait(q) {
            fail(what, loc, e)
        }
    }
}

/// A `data` construct (or `declare` on a function) in function `function`.
pub fn data_region(
    loc: Location,
    function: &'static str,
    if_cond: Option<bool>,
    async_arg: Option<i64>,
    wait: Option<Vec<i64>>,
    entries: &[ClauseEntry],
) -> DataGuard {
    notify(Notify::Region, || {
        format!("enter `data` region in `{function}` at {loc}")
    });
    let timer = acc_core::observe::time::enter("data", function, loc);
    check_queues("`data`", loc, async_arg, &wait);
    let mut guard = if if_cond == Some(false) {
        DataGuard::none()
    } else {
        enter_on(&current("`data`", loc), "`data`", loc, entries)
    };
    guard.timer = timer;
    guard.site = Some((function, loc));
    guard
}

/// A `host_data` construct (3.3 section 2.8): checks its variables (each present, unless
/// `if_present`), and orders the device's work before the body
/// ([`acc_core::Device::interop_barrier`]); the guard it returns does after it.
pub fn host_data(
    loc: Location,
    if_cond: Option<bool>,
    if_present: bool,
    entries: &[ClauseEntry],
) -> HostData {
    let device = current("`host_data`", loc);
    let mut guard = HostData {
        device: None,
        loc,
        on_host: if_cond == Some(false),
    };
    if guard.on_host {
        return guard;
    }
    let Some(mem) = device.own_memory() else {
        return guard;
    };
    for e in entries {
        let present = mem.table.is_present(e.var.range.addr, e.var.range.bytes);
        if !present && !if_present {
            fail(
                "`host_data`",
                loc,
                acc_core::Error::NotPresent {
                    var: e.var.name.to_string(),
                    location: e.var.location,
                },
            )
        }
    }
    if let Err(e) = device.interop_barrier(true) {
        fail("`host_data`", loc, e)
    }
    guard.device = Some(device);
    guard
}

/// The scope of a `host_data` construct ([`host_data`]): when it ends, what the body gave the
/// device through another API comes before the device's next work.
pub struct HostData {
    device: Option<std::sync::Arc<dyn acc_core::Device>>,
    loc: Location,
    /// `if(false)`: the variables are the host's.
    on_host: bool,
}

impl Drop for HostData {
    fn drop(&mut self) {
        if let Some(d) = &self.device {
            if let Err(e) = d.interop_barrier(false) {
                if !std::thread::panicking() {
                    fail("`host_data`", self.loc, e)
                }
            }
        }
    }
}

/// A `use_device` variable of a `host_data` construct, as the body sees it: where its data is
/// on the device ([`crate::DeviceSlice`]).
pub fn use_device<'a, V: acc_core::data::DataVar + ?Sized>(
    v: &'a V,
    entry: &ClauseEntry,
    scope: &HostData,
) -> crate::DeviceSlice<'a, V::Elem> {
    check_layout(v, entry.var.name, entry.var.location);
    match crate::interop::device_slice(v.elems(), entry.elem, entry.named(), scope.on_host) {
        Ok(s) => s,
        Err(e) => fail("`host_data`", scope.loc, e),
    }
}

/// A variable of `update!` or `exit_data!`: read (`device`, `delete`) or written (`self`,
/// `host`, `copyout`).
pub enum DirectiveVar<'a> {
    /// Read from the host, or not touched there.
    Read(ClauseEntry),
    /// Written on the host: the clause and the variable's writable data.
    Write(ClauseEntry, HostMut<'a>),
}

/// The whole of a written variable in clause `clause`.
pub fn clause_var_mut<'a, V: DataVarMut + ?Sized>(
    clause: DataClause,
    v: &'a mut V,
    name: &'static str,
    loc: Location,
) -> DirectiveVar<'a> {
    let e = clause_var(clause, &*v, name, loc);
    DirectiveVar::Write(e, host_mut(v))
}

/// The subarray `v[range]` of a written variable in clause `clause`.
pub fn clause_subarray_mut<'a, V: DataVarMut + ?Sized>(
    clause: DataClause,
    v: &'a mut V,
    range: impl std::ops::RangeBounds<usize>,
    name: &'static str,
    loc: Location,
) -> DirectiveVar<'a> {
    let e = clause_subarray(clause, &*v, range, name, loc);
    DirectiveVar::Write(e, host_mut(v))
}

/// A read variable of a directive.
pub fn directive_var(e: ClauseEntry) -> DirectiveVar<'static> {
    DirectiveVar::Read(e)
}

impl DirectiveVar<'_> {
    fn entry(&self) -> &ClauseEntry {
        match self {
            DirectiveVar::Read(e) | DirectiveVar::Write(e, _) => e,
        }
    }
    fn host_mut(&mut self) -> Option<&mut [u8]> {
        match self {
            DirectiveVar::Read(_) => None,
            DirectiveVar::Write(e, h) => h.part(e.var.range.addr, e.var.range.bytes),
        }
    }
}

/// `update!` (3.3 section 2.14.4): `self`/`host` copy device data to the host, `device` host
/// data to the device. Absent data is an error, or skipped with `if_present`.
pub fn update_directive(
    loc: Location,
    if_cond: Option<bool>,
    async_arg: Option<i64>,
    wait: Option<Vec<i64>>,
    if_present: bool,
    vars: &mut [DirectiveVar<'_>],
) {
    let _timer = acc_core::observe::time::enter("update", "", loc);
    check_queues("`update`", loc, async_arg, &wait);
    if if_cond == Some(false) {
        return;
    }
    let device = current("`update`", loc);
    let Some(mem) = device.own_memory() else {
        return;
    };
    // With `async`, copies to the device run on the queue (and return before they are done);
    // copies to the host are done when the directive returns (3.3 section 2.14.4).
    let queue = Queue::resolve(async_arg).unwrap_or(Queue::Sync);
    if let Some(w) = &wait {
        if let Err(e) = super::wait_for(&*device, w, queue) {
            fail("`update`", loc, e)
        }
    }
    for v in vars {
        let e = *v.entry();
        let host = match (e.clause, v.host_mut()) {
            (DataClause::UpdateDevice, _) => HostBytes::Read(e.host()),
            (_, Some(h)) => HostBytes::Write(h),
            (_, None) => continue,
        };
        if let Err(err) =
            mem.table
                .update_on(mem.memory, host, e.elem, e.named(), if_present, queue)
        {
            fail("`update`", loc, err)
        }
    }
}

/// `enter_data!` (3.3 section 2.14.6): `copyin`/`create` with the dynamic counter.
pub fn enter_data_directive(
    loc: Location,
    if_cond: Option<bool>,
    async_arg: Option<i64>,
    wait: Option<Vec<i64>>,
    entries: &[ClauseEntry],
) {
    let _timer = acc_core::observe::time::enter("enter data", "", loc);
    check_queues("`enter data`", loc, async_arg, &wait);
    if if_cond == Some(false) {
        return;
    }
    let device = current("`enter data`", loc);
    let Some(mem) = device.own_memory() else {
        return;
    };
    for e in entries {
        let Some(absent) = e.clause.absent() else {
            continue;
        };
        if let Err(err) = mem.table.enter(
            mem.memory,
            e.host(),
            e.elem,
            e.named(),
            Counter::Dynamic,
            absent,
        ) {
            fail("`enter data`", loc, err)
        }
    }
}

/// `exit_data!` (3.3 section 2.14.7): `copyout`/`delete` with the dynamic counter (set to
/// zero with `finalize`).
pub fn exit_data_directive(
    loc: Location,
    if_cond: Option<bool>,
    async_arg: Option<i64>,
    wait: Option<Vec<i64>>,
    finalize: bool,
    vars: &mut [DirectiveVar<'_>],
) {
    let _timer = acc_core::observe::time::enter("exit data", "", loc);
    check_queues("`exit data`", loc, async_arg, &wait);
    if if_cond == Some(false) {
        return;
    }
    let device = current("`exit data`", loc);
    let Some(mem) = device.own_memory() else {
        return;
    };
    for v in vars {
        let e = *v.entry();
        let release = match e.clause {
            DataClause::Copyout => Release::Copyout,
            DataClause::Delete => Release::Delete,
            _ => continue,
        };
        let leave = Leave {
            counter: Counter::Dynamic,
            finalize,
            release,
        };
        if let Err(err) = mem.table.exit(
            mem.memory,
            (e.var.range.addr, e.var.range.bytes),
            v.host_mut(),
            e.named(),
            leave,
        ) {
            fail("`exit data`", loc, err)
        }
    }
}

/// After a kernel's reduction was combined into the host's variable: a present device copy
/// gets the result too, so that leaving its data region does not overwrite it (3.3 section
/// 2.5.15: a reduction variable is copied back, to wherever it lives).
pub fn reduction_to_device<V: DataVar + ?Sized>(device: &dyn Device, v: &V) {
    let Some(OwnMemory { table, memory }) = device.own_memory() else {
        return;
    };
    let host = bytes_of(v.elems());
    let named = Named::unlocated("reduction variable");
    let _ = table.update(
        memory,
        HostBytes::Read(host),
        layout::<V::Elem>(),
        named,
        true,
    );
}

/// `?` inside a data region, rewritten to leave the region before it returns: the value, or
/// what `?` on `Self` returns from the function.
pub trait TryLeave {
    /// The value `?` gives.
    type Output;
    /// What the function returns, as a value `?` turns into that return.
    type Residual;
    /// The value, or the residual.
    fn split(self) -> Result<Self::Output, Self::Residual>;
}

impl<T, E> TryLeave for Result<T, E> {
    type Output = T;
    type Residual = Result<std::convert::Infallible, E>;
    #[inline]
    fn split(self) -> Result<T, Self::Residual> {
        self.map_err(Err)
    }
}

impl<T> TryLeave for Option<T> {
    type Output = T;
    type Residual = Option<std::convert::Infallible>;
    #[inline]
    fn split(self) -> Result<T, Self::Residual> {
        self.ok_or(None)
    }
}
