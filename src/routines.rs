//! The runtime routines of OpenACC chapter 3, named without the `acc_` prefix
//! ([`crate::guide::devices`]). Queries return plain values; actions return [`Result`].

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
///
/// # Examples
///
/// ```rust
/// use acc::DeviceType;
///
/// assert_eq!(acc::get_num_devices(DeviceType::Host), 1); // there is always the host
/// assert_eq!(acc::get_num_devices(DeviceType::None), 0);
/// // The default type is one with a device (the host at worst).
/// assert!(acc::get_num_devices(DeviceType::Default) >= 1);
/// let gpus = acc::get_num_devices(DeviceType::Nvidia) + acc::get_num_devices(DeviceType::Wgpu);
/// assert!(acc::get_num_devices(DeviceType::NotHost) >= gpus);
/// ```
pub fn get_num_devices(ty: DeviceType) -> usize {
    runtime().num_devices(ty)
}

/// `acc_set_device_type`: the device type the calling thread's regions run on from now on.
/// A type with no device makes the next region (or [`init`]) fail with [`Error::NoDevice`](crate::Error::NoDevice).
///
/// # Examples
///
/// ```rust
/// use acc::DeviceType;
///
/// #[acc::parallel_loop(copy(v))]
/// fn add_one(v: &mut [u32]) {
///     for i in 0..v.len() {
///         v[i] += 1;
///     }
/// }
///
/// acc::set_device_type(DeviceType::Host); // this thread's regions run on the host from now on
/// assert_eq!(acc::get_device_type(), DeviceType::Host);
/// let mut v = vec![0u32; 100];
/// add_one(&mut v);
/// assert!(v.iter().all(|&x| x == 1));
/// // Each thread has its own device type.
/// let other = std::thread::spawn(|| {
///     acc::set_device_type(DeviceType::Multicore);
///     acc::get_device_type()
/// });
/// assert_eq!(other.join().unwrap(), DeviceType::Multicore);
/// assert_eq!(acc::get_device_type(), DeviceType::Host);
/// ```
pub fn set_device_type(ty: DeviceType) {
    runtime().set_device_type(ty)
}

/// `acc_get_device_type`: the calling thread's current device type.
///
/// # Panics
/// When `ACC_DEVICE_TYPE` names no device type; the message lists the valid names. Use
/// [`try_get_device_type`] to get that as an error.
///
/// # Examples
///
/// ```rust
/// use acc::DeviceType;
///
/// // Unset on this thread: ACC_DEVICE_TYPE, else the best device type present.
/// assert!(acc::get_device_type().is_concrete());
/// acc::set_device_type(DeviceType::Multicore);
/// assert_eq!(acc::get_device_type(), DeviceType::Multicore);
/// // `Default` is the concrete type it stands for.
/// acc::set_device_type(DeviceType::Default);
/// assert!(acc::get_device_type().is_concrete());
/// ```
pub fn get_device_type() -> DeviceType {
    try_get_device_type().unwrap_or_else(|e| panic!("acc: {e}"))
}

/// The calling thread's current device type, or the error in `ACC_DEVICE_TYPE`.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// // A malformed ACC_DEVICE_TYPE is an error here (and a panic in get_device_type).
/// let ty = acc::try_get_device_type()?;
/// assert_eq!(ty, acc::get_device_type());
/// # Ok(())
/// # }
/// ```
pub fn try_get_device_type() -> Result<DeviceType> {
    runtime().current_device_type()
}

/// `acc_set_device_num`: device `num` of type `ty` (a concrete type also becomes the current
/// device type; `DeviceType::Default` keeps it).
///
/// # Examples
///
/// ```rust
/// use acc::DeviceType;
///
/// acc::set_device_num(0, DeviceType::Host); // host device 0; host becomes the device type
/// assert_eq!(acc::get_device_type(), DeviceType::Host);
/// assert_eq!(acc::get_device_num(DeviceType::Host), 0);
/// acc::set_device_num(0, DeviceType::Default); // `Default` keeps the current type
/// assert_eq!(acc::get_device_type(), DeviceType::Host);
/// // The number is checked when the device is next used: there is one host device.
/// acc::set_device_num(3, DeviceType::Host);
/// let e = acc::init(DeviceType::Host).unwrap_err();
/// assert!(matches!(e, acc::Error::DeviceNumOutOfRange { .. }), "{e}");
/// ```
pub fn set_device_num(num: usize, ty: DeviceType) {
    runtime().set_device_num(num, ty)
}

/// `acc_get_device_num`: the current device number if `ty` is the current type, else 0.
///
/// # Panics
/// When `ACC_DEVICE_TYPE` or `ACC_DEVICE_NUM` is malformed.
///
/// # Examples
///
/// ```rust
/// use acc::DeviceType;
///
/// acc::set_device_num(0, DeviceType::Host);
/// assert_eq!(acc::get_device_num(DeviceType::Host), 0);
/// acc::set_device_num(2, DeviceType::Wgpu); // checked when the device is next used, not here
/// assert_eq!(acc::get_device_num(DeviceType::Wgpu), 2);
/// assert_eq!(acc::get_device_num(DeviceType::Host), 0); // not the current type
/// ```
pub fn get_device_num(ty: DeviceType) -> usize {
    runtime()
        .device_num(ty)
        .unwrap_or_else(|e| panic!("acc: {e}"))
}

/// `acc_init`: starts the current device of type `ty` now (keeping start-up cost out of later
/// timings) and makes `ty` the calling thread's device type.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// use acc::DeviceType;
///
/// acc::init(acc::get_device_type())?; // start-up cost here, not in the first region
/// acc::init(DeviceType::Host)?; // host starts, and becomes this thread's device type
/// assert_eq!(acc::get_device_type(), DeviceType::Host);
/// // No concrete type, or no device of the type: an error saying so.
/// assert!(acc::init(DeviceType::None).is_err());
/// if acc::get_num_devices(DeviceType::Nvidia) == 0 {
///     let e = acc::init(DeviceType::Nvidia).unwrap_err();
///     assert!(e.to_string().contains("nvidia"), "{e}");
/// }
/// # Ok(())
/// # }
/// ```
pub fn init(ty: DeviceType) -> Result<()> {
    runtime().init(ty)
}

/// `acc_shutdown`: releases the devices of type `ty`; they start again when next used.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::parallel_loop(copy(v))]
/// fn add_one(v: &mut [u32]) {
///     for i in 0..v.len() {
///         v[i] += 1;
///     }
/// }
///
/// let mut v = vec![0u32; 100];
/// add_one(&mut v);
/// acc::shutdown(acc::get_device_type())?; // released, with any data still on it
/// add_one(&mut v); // and started again for this region
/// assert!(v.iter().all(|&x| x == 2));
/// # Ok(())
/// # }
/// ```
pub fn shutdown(ty: DeviceType) -> Result<()> {
    runtime().shutdown(ty)
}

/// `acc_on_device`: whether the calling code runs on a device of type `ty`.
///
/// # Examples
///
/// ```rust
/// use acc::DeviceType;
///
/// // Inside a region on a GPU the argument must be a constant (the kernel is built with it).
/// #[acc::offload]
/// fn on_the_host() -> bool {
///     let mut all = true;
///     #[acc::parallel_loop(reduction(&&: all))]
///     for _ in 0..16 {
///         all = all && acc::on_device(DeviceType::Host);
///     }
///     all
/// }
///
/// assert!(acc::on_device(DeviceType::Host)); // outside regions: the host
/// assert!(!acc::on_device(DeviceType::NotHost));
/// // Inside: the device running the region.
/// assert_eq!(on_the_host(), acc::get_device_type() == DeviceType::Host);
/// ```
pub fn on_device(ty: DeviceType) -> bool {
    runtime().on_device(ty)
}

/// The index of the gang running the calling code: on the multicore device, the pool thread
/// running the chunk of a split loop (`0..threads`); 0 on the host and outside split loops.
/// Callable inside compute regions. An extension, after NVHPC's `__pgi_gangidx()`.
///
/// # Examples
///
/// ```rust
/// use acc::DeviceType;
///
/// #[acc::parallel_loop(copy(ids))]
/// fn gangs(ids: &mut [usize]) {
///     for i in 0..ids.len() {
///         ids[i] = acc::gang_idx();
///     }
/// }
///
/// assert_eq!(acc::gang_idx(), 0); // outside regions
/// let mut ids = vec![usize::MAX; 1000];
/// acc::set_device_type(DeviceType::Host);
/// gangs(&mut ids);
/// assert!(ids.iter().all(|&g| g == 0)); // the host is one gang
/// if acc::get_num_devices(DeviceType::Multicore) > 0 {
///     acc::set_device_type(DeviceType::Multicore);
///     gangs(&mut ids);
///     // Named "multicore (N threads)": each chunk's gang is the pool thread that ran it.
///     let name = acc::get_property(0, DeviceType::Multicore, acc::Property::Name);
///     let threads: usize = name.split(['(', ' ']).find_map(|w| w.parse().ok()).unwrap();
///     assert!(ids.iter().all(|&g| g < threads));
/// }
/// ```
pub fn gang_idx() -> usize {
    acc_core::icv::gang_index()
}

/// `acc_get_property` / `acc_get_property_string`: property `p` of device `num` of type `ty`,
/// as text; empty when there is no such device.
///
/// # Examples
///
/// ```rust
/// use acc::{DeviceType, Property};
///
/// let name = acc::get_property(0, DeviceType::Host, Property::Name);
/// assert!(!name.is_empty());
/// assert_eq!(acc::get_property(0, DeviceType::Host, Property::SharedMemorySupport), "1");
/// assert_eq!(acc::get_property(7, DeviceType::Host, Property::Name), ""); // no host device 7
/// // Memory sizes are byte counts in decimal (0 where the device cannot tell).
/// let ty = acc::get_device_type();
/// let memory = acc::get_property(acc::get_device_num(ty), ty, Property::Memory);
/// let bytes: u64 = memory.parse().expect("a number");
/// println!("{ty}: {bytes} bytes");
/// ```
pub fn get_property(num: usize, ty: DeviceType, p: Property) -> String {
    runtime().property(num, ty, p).unwrap_or_default()
}

// The data routines (3.3 sections 3.2.18-3.2.29).
mod data_routines;
pub use data_routines::*;

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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn squares_on(v: &mut [u32], q: i32) {
///     #[acc::parallel_loop(present(v), async(q))]
///     for i in 0..v.len() {
///         v[i] = (i * i) as u32;
///     }
/// }
///
/// let mut v = vec![0u32; 1000];
/// acc::copyin(&v)?;
/// squares_on(&mut v, 1); // on a GPU this may return before the region has run
/// acc::wait(1)?; // everything on queue 1 is done
/// assert!(acc::async_test(1));
/// acc::copyout(&mut v)?;
/// assert!(v.iter().enumerate().all(|(i, &x)| x == (i * i) as u32));
/// assert!(acc::wait(acc::ASYNC_SYNC).is_err()); // not a queue
/// # Ok(())
/// # }
/// ```
pub fn wait(q: i32) -> Result<()> {
    let q = Queue::for_wait(q as i64)?;
    settle(Some(q))
}

/// `acc_wait_all`: waits for every queue.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn squares_on(v: &mut [u32], q: i32) {
///     #[acc::parallel_loop(present(v), async(q))]
///     for i in 0..v.len() {
///         v[i] = (i * i) as u32;
///     }
/// }
///
/// let (mut v, mut w) = (vec![0u32; 1000], vec![0u32; 500]);
/// acc::copyin(&v)?;
/// acc::copyin(&w)?;
/// squares_on(&mut v, 1);
/// squares_on(&mut w, 2);
/// acc::wait_all()?; // both queues are done
/// assert!(acc::async_test_all());
/// acc::copyout(&mut v)?;
/// acc::copyout(&mut w)?;
/// assert_eq!((v[999], w[499]), (999 * 999, 499 * 499));
/// # Ok(())
/// # }
/// ```
pub fn wait_all() -> Result<()> {
    settle(None)
}

/// `acc_wait_any`: waits until one of `queues` has finished its operations and returns its
/// index; `None` when no entry names a queue (`ASYNC_SYNC` entries are skipped).
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn squares_on(v: &mut [u32], q: i32) {
///     #[acc::parallel_loop(present(v), async(q))]
///     for i in 0..v.len() {
///         v[i] = (i * i) as u32;
///     }
/// }
///
/// let mut v = vec![0u32; 1000];
/// acc::copyin(&v)?;
/// squares_on(&mut v, 2);
/// // The index of a queue that has finished; `ASYNC_SYNC` entries are skipped.
/// let done = acc::wait_any(&[acc::ASYNC_SYNC, 2, 3])?;
/// assert!(matches!(done, Some(1) | Some(2)), "{done:?}");
/// assert_eq!(acc::wait_any(&[acc::ASYNC_SYNC])?, None); // no queue named
/// acc::wait(2)?;
/// acc::copyout(&mut v)?;
/// assert_eq!(v[999], 999 * 999);
/// # Ok(())
/// # }
/// ```
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
///
/// # Examples
///
/// ```rust
/// let info = acc::device_info();
/// // Every device type of this build, the default type and why, and the device in use.
/// assert!(info.contains("host"));
/// assert!(info.contains("this program uses: "));
/// println!("{info}");
/// ```
pub fn device_info() -> String {
    runtime().describe()
}

/// The `ACC_AUTOCOMPARE` summary ([`crate::guide::tools`]): how many region runs were compared
/// with their host twin, how many variable results differed, how many regions could not be
/// compared. The same line is printed at exit when the variable is set.
///
/// # Examples
///
/// ```rust
/// // Without ACC_AUTOCOMPARE: "acc: ACC_AUTOCOMPARE: 0 region runs compared with the host
/// // twin, 0 variable results differed; 0 regions could not be compared".
/// let report = acc::autocompare_report();
/// assert!(report.starts_with("acc: ACC_AUTOCOMPARE:"));
/// ```
pub fn autocompare_report() -> String {
    crate::__rt::autocompare::summary()
}

/// How many variable results `ACC_AUTOCOMPARE` found to differ between the device and the
/// host twin so far (0 when it is off).
///
/// # Examples
///
/// ```rust
/// #[acc::parallel_loop(copy(v))]
/// fn halve(v: &mut [f32]) {
///     for i in 0..v.len() {
///         v[i] *= 0.5;
///     }
/// }
///
/// let mut v = vec![3.0f32; 100];
/// halve(&mut v);
/// // With ACC_AUTOCOMPARE set, the region's results were compared with its host twin's;
/// // without it nothing is compared. Either way, no difference here.
/// assert_eq!(acc::autocompare_differences(), 0);
/// ```
pub fn autocompare_differences() -> u64 {
    crate::__rt::autocompare::differences()
}

/// The `ACC_TIME` table ([`crate::guide::tools`]) as text: one row per compute region, data
/// region and data directive that ran so far, named by function and source location, with
/// times entered, kernel launches, device time (and how it was measured), host time, bytes and
/// time of transfers each way, and the last launch's shape; then a totals line. Device times
/// still running are waited for. With `ACC_TIME` unset nothing is recorded, and the text says
/// that no region ran.
///
/// # Examples
///
/// ```rust
/// let report = acc::time_report();
/// // "acc: ACC_TIME: no region ran" without ACC_TIME; with it, the table.
/// assert!(report.starts_with("acc: ACC_TIME:"));
/// eprint!("{report}");
/// ```
pub fn time_report() -> String {
    acc_core::observe::time::report()
}

/// `acc_wait_async`: makes queue `q2` wait for what is enqueued on `q` so far.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn fill_then_double(v: &mut [u32]) {
///     #[acc::parallel_loop(present(v), async(1))]
///     for i in 0..v.len() {
///         v[i] = i as u32;
///     }
///     acc::wait_async(1, 2).expect("queue 2 waits for queue 1");
///     #[acc::parallel_loop(present(v), async(2))]
///     for i in 0..v.len() {
///         v[i] *= 2;
///     }
/// }
///
/// let mut v = vec![0u32; 1000];
/// acc::copyin(&v)?;
/// fill_then_double(&mut v);
/// acc::wait(2)?; // queue 2, which ran after queue 1's region
/// acc::copyout(&mut v)?;
/// assert!(v.iter().enumerate().all(|(i, &x)| x == 2 * i as u32));
/// # Ok(())
/// # }
/// ```
pub fn wait_async(q: i32, q2: i32) -> Result<()> {
    let on = Queue::for_wait(q as i64)?;
    let waiter = Queue::for_wait(q2 as i64)?;
    match runtime().current_device() {
        Ok(d) => d.queue_wait(waiter, on),
        Err(_) => Ok(()),
    }
}

/// `acc_async_test`: whether every operation on queue `q` has finished.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn squares_on(v: &mut [u32], q: i32) {
///     #[acc::parallel_loop(present(v), async(q))]
///     for i in 0..v.len() {
///         v[i] = (i * i) as u32;
///     }
/// }
///
/// let mut v = vec![0u32; 1000];
/// acc::copyin(&v)?;
/// squares_on(&mut v, 1);
/// while !acc::async_test(1) {
///     std::thread::yield_now(); // the host's own work while queue 1 runs
/// }
/// acc::copyout(&mut v)?;
/// assert_eq!(v[999], 999 * 999);
/// assert!(acc::async_test(5)); // a queue given nothing has nothing left to do
/// # Ok(())
/// # }
/// ```
pub fn async_test(q: i32) -> bool {
    let Ok(q) = Queue::for_wait(q as i64) else {
        return false;
    };
    runtime()
        .current_device()
        .map_or(true, |d| d.queue_done(Some(q)))
}

/// `acc_async_test_all`: whether every operation on every queue has finished.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn squares_on(v: &mut [u32], q: i32) {
///     #[acc::parallel_loop(present(v), async(q))]
///     for i in 0..v.len() {
///         v[i] = (i * i) as u32;
///     }
/// }
///
/// let (mut v, mut w) = (vec![0u32; 1000], vec![0u32; 500]);
/// acc::copyin(&v)?;
/// acc::copyin(&w)?;
/// squares_on(&mut v, 1);
/// squares_on(&mut w, 2);
/// while !acc::async_test_all() {
///     std::thread::yield_now(); // the host's own work while the queues run
/// }
/// acc::copyout(&mut v)?;
/// acc::copyout(&mut w)?;
/// assert_eq!((v[999], w[499]), (999 * 999, 499 * 499));
/// # Ok(())
/// # }
/// ```
pub fn async_test_all() -> bool {
    runtime()
        .current_device()
        .map_or(true, |d| d.queue_done(None))
}

/// `acc_get_default_async`: the queue `async` without an argument uses on this thread.
///
/// # Examples
///
/// ```rust
/// // Not set on this thread: `acc::ASYNC_NOVAL`, a queue of acc's choice.
/// assert_eq!(acc::get_default_async(), acc::ASYNC_NOVAL);
/// acc::set_default_async(2);
/// assert_eq!(acc::get_default_async(), 2);
/// // Each thread has its own.
/// let other = std::thread::spawn(acc::get_default_async).join().unwrap();
/// assert_eq!(other, acc::ASYNC_NOVAL);
/// ```
pub fn get_default_async() -> i32 {
    icv::current().default_async
}

/// `acc_set_default_async`: sets the queue `async` without an argument uses on this thread.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// acc::set_default_async(3); // a bare `async`, and `acc::ASYNC_NOVAL`, now mean queue 3
/// assert_eq!(acc::get_default_async(), 3);
/// let mut x = vec![1.0f32; 100];
/// acc::copyin(&x)?;
/// x.fill(2.0);
/// acc::update_device_async(&x, acc::ASYNC_NOVAL)?; // on queue 3
/// acc::wait(3)?;
/// acc::copyout(&mut x)?; // the device copy, updated
/// assert!(x.iter().all(|&v| v == 2.0));
/// acc::set_default_async(acc::ASYNC_NOVAL); // back to acc's choice
/// # Ok(())
/// # }
/// ```
pub fn set_default_async(q: i32) {
    icv::update(|i| i.default_async = q)
}
