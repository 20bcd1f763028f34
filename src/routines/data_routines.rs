//! The data routines of OpenACC chapter 3 (sections 3.2.18-3.2.29): `copyin`, `create`,
//! `copyout`, `delete` (and their `finalize` forms), `update_device`, `update_self` (and
//! their async forms), `is_present`, each on the current device's present table.

use super::*;

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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn sum_present(a: &[f32]) -> f32 {
///     let mut s = 0.0f32;
///     #[acc::parallel_loop(present(a), reduction(+: s))]
///     for i in 0..a.len() {
///         s += a[i];
///     }
///     s
/// }
///
/// let a = vec![1.0f32; 100];
/// acc::copyin(&a)?; // present from now on (dynamic reference count 1)
/// assert!(acc::is_present(&a));
/// assert_eq!(sum_present(&a), 100.0);
/// acc::delete(&a)?; // count 0: released
/// # Ok(())
/// # }
/// ```
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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn fill_present(out: &mut [u32]) {
///     #[acc::parallel_loop(present(out))]
///     for i in 0..out.len() {
///         out[i] = 2 * i as u32;
///     }
/// }
///
/// let mut out = vec![0u32; 100];
/// acc::create(&out)?; // room on the device; nothing copied there
/// fill_present(&mut out);
/// acc::copyout(&mut out)?; // the device's values come back
/// assert!(out.iter().enumerate().all(|(i, &v)| v == 2 * i as u32));
/// # Ok(())
/// # }
/// ```
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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn double_present(a: &mut [f32]) {
///     #[acc::parallel_loop(present(a))]
///     for i in 0..a.len() {
///         a[i] *= 2.0;
///     }
/// }
///
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let mut a = vec![1.0f32; 100];
/// acc::copyin(&a)?;
/// double_present(&mut a); // on a GPU the host's `a` is still all 1.0 here
/// acc::copyout(&mut a)?; // count 0: copied back and released
/// assert!(a.iter().all(|&v| v == 2.0));
/// assert_eq!(acc::is_present(&a), shared); // shared memory is always present
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn copyout<V: DataVarMut + ?Sized>(a: &mut V) -> Result<()> {
    on_present_table("argument of acc::copyout", |m, n| {
        leave(m, n, a, dynamic(Release::Copyout, false))
    })
}

/// `acc_copyout_finalize`: as [`copyout`], setting the dynamic reference counter to 0.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let mut a = vec![1.0f32; 100];
/// acc::copyin(&a)?;
/// acc::copyin(&a)?; // count 2: `copyout` would leave it present
/// acc::copyout_finalize(&mut a)?; // count 0 at once: copied back and released
/// assert!(a.iter().all(|&v| v == 1.0));
/// assert_eq!(acc::is_present(&a), shared); // shared memory is always present
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn copyout_finalize<V: DataVarMut + ?Sized>(a: &mut V) -> Result<()> {
    on_present_table("argument of acc::copyout_finalize", |m, n| {
        leave(m, n, a, dynamic(Release::Copyout, true))
    })
}

/// `acc_delete`: decrements `a`'s dynamic reference counter; when no reference remains,
/// releases it without copying it back.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let a = vec![1.0f32; 100];
/// acc::copyin(&a)?;
/// acc::copyin(&a)?; // count 2
/// acc::delete(&a)?; // 1: still present
/// assert!(acc::is_present(&a));
/// acc::delete(&a)?; // 0: released, nothing copied back
/// assert_eq!(acc::is_present(&a), shared); // shared memory is always present
/// # Ok(())
/// # }
/// ```
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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let a = vec![1.0f32; 100];
/// acc::copyin(&a)?;
/// acc::copyin(&a)?; // count 2
/// acc::delete_finalize(&a)?; // 0 at once: released
/// assert_eq!(acc::is_present(&a), shared); // shared memory is always present
/// acc::delete_finalize(&a)?; // data that is not present: nothing to do
/// # Ok(())
/// # }
/// ```
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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn sum_present(a: &[f32]) -> f32 {
///     let mut s = 0.0f32;
///     #[acc::parallel_loop(present(a), reduction(+: s))]
///     for i in 0..a.len() {
///         s += a[i];
///     }
///     s
/// }
///
/// let mut a = vec![1.0f32; 100];
/// acc::copyin(&a)?;
/// a.fill(2.0); // the host's copy changes; a GPU's copy does not...
/// acc::update_device(&a)?; // ...until it is updated
/// assert_eq!(sum_present(&a), 200.0);
/// acc::delete(&a)?;
/// // Data that is not present is an error (shared memory has everything present).
/// let b = vec![0.0f32; 8];
/// assert_eq!(acc::update_device(&b).is_ok(), acc::is_present(&b));
/// # Ok(())
/// # }
/// ```
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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn double_present(a: &mut [f32]) {
///     #[acc::parallel_loop(present(a))]
///     for i in 0..a.len() {
///         a[i] *= 2.0;
///     }
/// }
///
/// let mut a = vec![1.0f32; 100];
/// acc::copyin(&a)?;
/// double_present(&mut a); // on a GPU the host's `a` is still all 1.0 here...
/// acc::update_self(&mut a)?; // ...until the device copy is copied back
/// assert!(a.iter().all(|&v| v == 2.0));
/// acc::delete(&a)?;
/// // Data that is not present is an error (shared memory has everything present).
/// let mut b = vec![0.0f32; 8];
/// assert_eq!(acc::update_self(&mut b).is_ok(), acc::is_present(&b));
/// # Ok(())
/// # }
/// ```
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
/// # Examples
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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// #[acc::offload]
/// fn double_on_queue_1(x: &mut [f32]) {
///     #[acc::parallel_loop(present(x), async(1))]
///     for i in 0..x.len() {
///         x[i] *= 2.0;
///     }
/// }
///
/// let mut x = vec![1.0f32; 1000];
/// acc::copyin(&x)?;
/// double_on_queue_1(&mut x);
/// acc::update_self_async(&mut x, 1)?; // after queue 1's region; done when it returns
/// assert!(x.iter().all(|&v| v == 2.0));
/// acc::delete(&x)?;
/// # Ok(())
/// # }
/// ```
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
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let a = vec![1.0f32; 100];
/// assert_eq!(acc::is_present(&a), shared); // shared memory is always present
/// acc::copyin(&a[..50])?;
/// assert!(acc::is_present(&a[..50]));
/// assert!(acc::is_present(&a[10..20])); // inside present data
/// assert_eq!(acc::is_present(&a), shared); // only half of `a` is on a GPU
/// acc::delete(&a[..50])?;
/// # Ok(())
/// # }
/// ```
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
