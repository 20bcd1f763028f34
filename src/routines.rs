//! The runtime routines of OpenACC chapter 3, named without the `acc_` prefix (DESIGN.md
//! section 4.3). Queries return plain values; actions return [`Result`].

use std::sync::OnceLock;

use acc_core::data::{bytes_of, bytes_of_mut, DataVar, DataVarMut};
use acc_core::present::{Absent, Counter, HostBytes, Leave, Named, Release};
use acc_core::queue::Queue;
use acc_core::runtime::Runtime;
use acc_core::{icv, DeviceType, Location, Property, Result};

use crate::__rt::layout;

/// The runtime of this build: its backends and the calling thread's ICVs.
pub(crate) fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| Runtime::new(acc_device::backends()))
}

/// `acc_get_num_devices`: how many devices of type `ty` this build and machine have.
pub fn get_num_devices(ty: DeviceType) -> usize {
    runtime().num_devices(ty)
}

/// `acc_set_device_type`: the device type the calling thread's regions run on from now on.
/// A type with no device makes the next region (or [`init`]) fail with [`Error::NoDevice`](crate::Error::NoDevice).
pub fn set_device_type(ty: DeviceType) {
    runtime().set_device_type(ty)
}

/// `acc_get_device_type`: the calling thread's current device type.
///
/// # Panics
/// When `ACC_DEVICE_TYPE` names no device type; the message lists the valid names. Use
/// [`try_get_device_type`] to get that as an error.
pub fn get_device_type() -> DeviceType {
    try_get_device_type().unwrap_or_else(|e| panic!("acc: {e}"))
}

/// The calling thread's current device type, or the error in `ACC_DEVICE_TYPE`.
pub fn try_get_device_type() -> Result<DeviceType> {
    runtime().current_device_type()
}

/// `acc_set_device_num`: device `num` of type `ty` (a concrete type also becomes the current
/// device type; `DeviceType::Default` keeps it).
pub fn set_device_num(num: usize, ty: DeviceType) {
    runtime().set_device_num(num, ty)
}

/// `acc_get_device_num`: the current device number if `ty` is the current type, else 0.
///
/// # Panics
/// When `ACC_DEVICE_TYPE` or `ACC_DEVICE_NUM` is malformed.
pub fn get_device_num(ty: DeviceType) -> usize {
    runtime()
        .device_num(ty)
        .unwrap_or_else(|e| panic!("acc: {e}"))
}

/// `acc_init`: starts the current device of type `ty` now (keeping start-up cost out of later
/// timings) and makes `ty` the calling thread's device type.
pub fn init(ty: DeviceType) -> Result<()> {
    runtime().init(ty)
}

/// `acc_shutdown`: releases the devices of type `ty`; they start again when next used.
pub fn shutdown(ty: DeviceType) -> Result<()> {
    runtime().shutdown(ty)
}

/// `acc_on_device`: whether the calling code runs on a device of type `ty`.
pub fn on_device(ty: DeviceType) -> bool {
    runtime().on_device(ty)
}

/// The index of the gang running the calling code: on the multicore device, the pool thread
/// running the chunk of a split loop (`0..threads`); 0 on the host and outside split loops.
/// Callable inside compute regions. An extension, after NVHPC's `__pgi_gangidx()`.
pub fn gang_idx() -> usize {
    acc_core::icv::gang_index()
}

/// `acc_get_property` / `acc_get_property_string`: property `p` of device `num` of type `ty`,
/// as text; empty when there is no such device.
pub fn get_property(num: usize, ty: DeviceType, p: Property) -> String {
    runtime().property(num, ty, p).unwrap_or_default()
}

/// Runs a data routine's action on the current device's present table; devices that share
/// host memory have everything present already, and do nothing.
#[track_caller]
fn on_present_table(
    what: &'static str,
    f: impl FnOnce(acc_core::OwnMemory<'_>, Named<'_>) -> Result<()>,
) -> Result<()> {
    let location = Location::caller();
    let dev = runtime().current_device()?;
    match dev.own_memory() {
        None => Ok(()),
        Some(m) => f(
            m,
            Named {
                name: what,
                location,
            },
        ),
    }
}

fn dynamic(release: Release, finalize: bool) -> Leave {
    Leave {
        counter: Counter::Dynamic,
        finalize,
        release,
    }
}

/// `acc_copyin`: makes `a` present on the current device, copying it there if it is not
/// (dynamic reference counter, 3.3 section 2.6.7). Moves nothing on devices that share host
/// memory.
#[track_caller]
pub fn copyin<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    on_present_table("argument of acc::copyin", |m, n| {
        m.table
            .enter(
                m.memory,
                bytes_of(a.elems()),
                layout::<V::Elem>(),
                n,
                Counter::Dynamic,
                Absent::Copyin,
            )
            .map(drop)
    })
}

/// `acc_create`: makes `a` present on the current device without copying it.
#[track_caller]
pub fn create<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    on_present_table("argument of acc::create", |m, n| {
        m.table
            .enter(
                m.memory,
                bytes_of(a.elems()),
                layout::<V::Elem>(),
                n,
                Counter::Dynamic,
                Absent::Create,
            )
            .map(drop)
    })
}

fn leave<V: DataVarMut + ?Sized>(
    m: acc_core::OwnMemory<'_>,
    n: Named<'_>,
    a: &mut V,
    leave: Leave,
) -> Result<()> {
    let host = bytes_of_mut(a.elems_mut());
    let range = (host.as_ptr() as usize, host.len());
    m.table.exit(m.memory, range, Some(host), n, leave)
}

/// `acc_copyout`: decrements `a`'s dynamic reference counter; when no reference remains,
/// copies it back from the device and releases it.
#[track_caller]
pub fn copyout<V: DataVarMut + ?Sized>(a: &mut V) -> Result<()> {
    on_present_table("argument of acc::copyout", |m, n| {
        leave(m, n, a, dynamic(Release::Copyout, false))
    })
}

/// `acc_copyout_finalize`: as [`copyout`], setting the dynamic reference counter to 0.
#[track_caller]
pub fn copyout_finalize<V: DataVarMut + ?Sized>(a: &mut V) -> Result<()> {
    on_present_table("argument of acc::copyout_finalize", |m, n| {
        leave(m, n, a, dynamic(Release::Copyout, true))
    })
}

/// `acc_delete`: decrements `a`'s dynamic reference counter; when no reference remains,
/// releases it without copying it back.
#[track_caller]
pub fn delete<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    on_present_table("argument of acc::delete", |m, n| {
        let host = bytes_of(a.elems());
        m.table.exit(
            m.memory,
            (host.as_ptr() as usize, host.len()),
            None,
            n,
            dynamic(Release::Delete, false),
        )
    })
}

/// `acc_delete_finalize`: as [`delete`], setting the dynamic reference counter to 0.
#[track_caller]
pub fn delete_finalize<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    on_present_table("argument of acc::delete_finalize", |m, n| {
        let host = bytes_of(a.elems());
        m.table.exit(
            m.memory,
            (host.as_ptr() as usize, host.len()),
            None,
            n,
            dynamic(Release::Delete, true),
        )
    })
}

/// `acc_update_device`: copies the host's `a` to its device copy; an error if it is not
/// present.
#[track_caller]
pub fn update_device<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    on_present_table("argument of acc::update_device", |m, n| {
        m.table.update(
            m.memory,
            HostBytes::Read(bytes_of(a.elems())),
            layout::<V::Elem>(),
            n,
            false,
        )
    })
}

/// `acc_update_self`: copies the device copy of `a` to the host's; an error if it is not
/// present.
#[track_caller]
pub fn update_self<V: DataVarMut + ?Sized>(a: &mut V) -> Result<()> {
    on_present_table("argument of acc::update_self", |m, n| {
        m.table.update(
            m.memory,
            HostBytes::Write(bytes_of_mut(a.elems_mut())),
            layout::<V::Elem>(),
            n,
            false,
        )
    })
}

/// `acc_update_device_async`: [`update_device`] on activity queue `q` (3.3 section 3.2.20):
/// on nvidia the copy (up to 64 MiB) runs on the queue after what it was given and this
/// returns before it is done, from a page-locked copy of `a` made now (so `a` may change at
/// once); `acc::wait(q)` waits for it. Other devices copy at once.
///
/// ```
/// let mut x = vec![1.0f64; 1000];
/// acc::enter_data!(copyin(x));
/// x.fill(2.0);
/// acc::update_device_async(&x, 1).expect("x is present");
/// acc::wait(1).expect("queue 1 runs");
/// acc::exit_data!(copyout(x));
/// assert!(x.iter().all(|&v| v == 2.0));
/// ```
#[track_caller]
pub fn update_device_async<V: DataVar + ?Sized>(a: &V, q: i32) -> Result<()> {
    let queue = Queue::resolve(Some(q as i64))?;
    on_present_table("argument of acc::update_device_async", |m, n| {
        m.table.update_on(
            m.memory,
            HostBytes::Read(bytes_of(a.elems())),
            layout::<V::Elem>(),
            n,
            false,
            queue,
        )
    })
}

/// `acc_update_self_async`: [`update_self`] for activity queue `q` (3.3 section 3.2.20). `a`
/// is borrowed only for the call, so the copy is done when this returns (after every queue's
/// earlier work, as [`update_self`]).
#[track_caller]
pub fn update_self_async<V: DataVarMut + ?Sized>(a: &mut V, q: i32) -> Result<()> {
    let queue = Queue::resolve(Some(q as i64))?;
    on_present_table("argument of acc::update_self_async", |m, n| {
        m.table.update_on(
            m.memory,
            HostBytes::Write(bytes_of_mut(a.elems_mut())),
            layout::<V::Elem>(),
            n,
            false,
            queue,
        )
    })
}

/// `acc_is_present`: whether all of `a` is present on the current device. Data in memory the
/// device shares with the host is always present (3.3 section 2.6.1).
pub fn is_present<V: DataVar + ?Sized>(a: &V) -> bool {
    let host = bytes_of(a.elems());
    match runtime().current_device() {
        Ok(d) => match d.own_memory() {
            None => d.shares_host_memory(),
            Some(m) => m.table.is_present(host.as_ptr() as usize, host.len()),
        },
        Err(_) => false,
    }
}

/// Waits for what the current device still runs (a GPU may return from a launch whose
/// results nothing on the host reads yet before it has run): on queue `q`, or everywhere.
/// Devices that share host memory complete each operation before enqueueing returns.
fn settle(q: Option<Queue>) -> Result<()> {
    acc_core::observe::notify(acc_core::observe::Notify::Wait, || match q {
        Some(q) => format!("wait for queue {q:?}"),
        None => "wait for every queue".into(),
    });
    match (runtime().current_device(), q) {
        (Ok(d), Some(q)) => d.synchronize_queue(q),
        (Ok(d), None) => d.synchronize(),
        (Err(_), _) => Ok(()),
    }
}

/// `acc_wait`: waits for every operation on queue `q`.
pub fn wait(q: i32) -> Result<()> {
    let q = Queue::for_wait(q as i64)?;
    settle(Some(q))
}

/// `acc_wait_all`: waits for every queue.
pub fn wait_all() -> Result<()> {
    settle(None)
}

/// `acc_wait_any`: waits until one of `queues` has finished its operations and returns its
/// index; `None` when no entry names a queue (`ASYNC_SYNC` entries are skipped).
pub fn wait_any(queues: &[i32]) -> Result<Option<usize>> {
    for (i, &q) in queues.iter().enumerate() {
        if q == acc_core::queue::ASYNC_SYNC {
            continue;
        }
        let q = Queue::for_wait(q as i64)?;
        settle(Some(q))?;
        return Ok(Some(i));
    }
    Ok(None)
}

/// What the `acc-info` binary prints (after NVIDIA's `nvaccelinfo`): every device type of
/// this build in the order a default is picked, each device with its OpenACC properties
/// (name, vendor, driver, memory, free memory) and what matters to `acc` (compute capability
/// or adapter backend, 64-bit support, launch limits), the default device type and why, and
/// the device this program uses. Opens every device it lists.
pub fn device_info() -> String {
    runtime().describe()
}

/// The `ACC_AUTOCOMPARE` summary (DESIGN.md section 7): how many region runs were compared
/// with their host twin, how many variable results differed, how many regions could not be
/// compared. The same line is printed at exit when the variable is set.
pub fn autocompare_report() -> String {
    crate::__rt::autocompare::summary()
}

/// How many variable results `ACC_AUTOCOMPARE` found to differ between the device and the
/// host twin so far (0 when it is off).
pub fn autocompare_differences() -> u64 {
    crate::__rt::autocompare::differences()
}

/// The `ACC_TIME` table (DESIGN.md section 7) as text: one row per compute region, data
/// region and data directive that ran so far, named by function and source location, with
/// times entered, kernel launches, device time (and how it was measured), host time, bytes and
/// time of transfers each way, and the last launch's shape; then a totals line. Device times
/// still running are waited for. With `ACC_TIME` unset nothing is recorded, and the text says
/// that no region ran.
pub fn time_report() -> String {
    acc_core::observe::time::report()
}

/// `acc_wait_async`: makes queue `q2` wait for what is enqueued on `q` so far.
pub fn wait_async(q: i32, q2: i32) -> Result<()> {
    let on = Queue::for_wait(q as i64)?;
    let waiter = Queue::for_wait(q2 as i64)?;
    match runtime().current_device() {
        Ok(d) => d.queue_wait(waiter, on),
        Err(_) => Ok(()),
    }
}

/// `acc_async_test`: whether every operation on queue `q` has finished.
pub fn async_test(q: i32) -> bool {
    let Ok(q) = Queue::for_wait(q as i64) else {
        return false;
    };
    runtime()
        .current_device()
        .map_or(true, |d| d.queue_done(Some(q)))
}

/// `acc_async_test_all`: whether every operation on every queue has finished.
pub fn async_test_all() -> bool {
    runtime()
        .current_device()
        .map_or(true, |d| d.queue_done(None))
}

/// `acc_get_default_async`: the queue `async` without an argument uses on this thread.
pub fn get_default_async() -> i32 {
    icv::current().default_async
}

/// `acc_set_default_async`: sets the queue `async` without an argument uses on this thread.
pub fn set_default_async(q: i32) {
    icv::update(|i| i.default_async = q)
}
