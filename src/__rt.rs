//! What the expansions of `acc`'s macros call. Not a public API: its items change without
//! notice.

pub use acc_core::error::Location;
pub use acc_core::ir::{StructField, StructLayout};
pub use acc_core::parallel::parallel_chunks;
pub use acc_core::region::{
    ComputeKind, Exec, Launch, LaunchClauses, LoopOnThreads, LoopSite, RegionSite,
};
pub use acc_core::{reduce, space};

pub mod autocompare;
mod info;
pub mod kernel;
pub mod nd;
mod private;
pub use private::{Private, PrivateClone, PrivateOwned};

use acc_core::data::DeviceCopy;
use acc_core::queue::Queue;
use acc_core::DeviceType;

use crate::routines::runtime;

/// Panics with an `acc` error found while running a directive, naming where it was written.
#[cold]
#[track_caller]
fn fail(what: &str, loc: Location, e: impl std::fmt::Display) -> ! {
    panic!("acc: {what} at {loc}: {e}")
}

/// Launches a compute region; a region that cannot start panics with the reason.
pub fn launch(site: &RegionSite, clauses: LaunchClauses) -> Launch {
    let kind = match site.kind {
        ComputeKind::Parallel => "parallel",
        ComputeKind::Kernels => "kernels",
        ComputeKind::Serial => "serial",
    };
    let launch = Launch::begin(runtime(), site, &clauses).unwrap_or_else(|e| {
        fail(
            &format!("`{kind}` region in `{}`", site.function),
            site.location,
            e,
        )
    });
    acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
        format!(
            "launch `{kind}` region in `{}` at {} on {}",
            site.function,
            site.location,
            launch.device_type()
        )
    });
    info::host_report(site, &launch);
    launch
}

/// A variable a parallel loop's chunks write, shared between the threads that run them. The
/// loop construct asserts its iterations are independent (3.3 section 2.9.6), so no two
/// threads touch the same element.
pub struct SharedMut<T: ?Sized> {
    ptr: *mut T,
}

// SAFETY: the threads of one parallel loop write disjoint parts of the variable (the user's
// `independent` assertion, or the dependence test for `auto` loops); `T: Send` moves nothing
// across threads that is not itself sendable.
unsafe impl<T: ?Sized + Send> Send for SharedMut<T> {}
unsafe impl<T: ?Sized + Send> Sync for SharedMut<T> {}

impl<T: ?Sized> SharedMut<T> {
    /// Shares `v` for the duration of the loop (the exclusive borrow lasts as long).
    #[inline(always)]
    pub fn new(v: &mut T) -> SharedMut<T> {
        SharedMut { ptr: v }
    }

    /// The shared variable.
    ///
    /// # Safety
    /// Only from the loop's iterations, which touch disjoint parts of it.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get(&self) -> &mut T {
        &mut *self.ptr
    }
}

impl<T: ?Sized> SharedMut<T> {
    /// Shares what `ptr` points to (a variable exclusively borrowed for the loop).
    #[inline(always)]
    pub fn from_raw(ptr: *mut T) -> SharedMut<T> {
        SharedMut { ptr }
    }
}

/// A variable a multicore chunk takes, as a pointer: a `Vec` goes as its slice, so the chunk's
/// loops index a `[T]` without loading the `Vec`'s buffer and length through another pointer
/// on every access. Chosen by method resolution: `(&ChunkArg(p)).chunk()` finds the `Vec`
/// impl on the receiver as it is, the identity one only after one more borrow.
pub struct ChunkArg<V: ?Sized>(pub *mut V);

impl<V: ?Sized> ChunkArg<V> {
    /// The variable `v` (its type decided by the borrow, before any impl is chosen).
    #[inline(always)]
    pub fn of(v: &mut V) -> ChunkArg<V> {
        ChunkArg(v)
    }
}

/// [`ChunkArg`] of a `Vec`: its elements.
pub trait ChunkVec {
    /// The elements' type.
    type Out: ?Sized;
    /// A pointer to them.
    fn chunk(&self) -> *mut Self::Out;
}

impl<T> ChunkVec for ChunkArg<Vec<T>> {
    type Out = [T];
    #[inline(always)]
    fn chunk(&self) -> *mut [T] {
        // SAFETY: the pointer is a live exclusive borrow of the variable (`from &mut v`).
        unsafe { (*self.0).as_mut_slice() as *mut [T] }
    }
}

/// [`ChunkArg`] of anything else: itself.
pub trait ChunkSame {
    /// The variable's type.
    type Out: ?Sized;
    /// The pointer.
    fn chunk(&self) -> *mut Self::Out;
}

impl<V: ?Sized> ChunkSame for &ChunkArg<V> {
    type Out = V;
    #[inline(always)]
    fn chunk(&self) -> *mut V {
        self.0
    }
}

/// A variable a multicore chunk reads: a `Vec` (or a reference to one) as its slice, as
/// [`ChunkArg`] does for the variables it writes.
pub struct ChunkRef<'a, V: ?Sized>(pub &'a V);

impl<'a, V: ?Sized> ChunkRef<'a, V> {
    /// The variable `v`.
    #[inline(always)]
    pub fn of(v: &'a V) -> ChunkRef<'a, V> {
        ChunkRef(v)
    }
}

/// [`ChunkRef`] of a `Vec` or a reference to one: its elements.
pub trait ChunkRefVec<'a> {
    /// The elements' type.
    type Out: ?Sized + 'a;
    /// The elements.
    fn chunk(&self) -> &'a Self::Out;
}

impl<'a, T> ChunkRefVec<'a> for ChunkRef<'a, Vec<T>> {
    type Out = [T];
    #[inline(always)]
    fn chunk(&self) -> &'a [T] {
        self.0.as_slice()
    }
}

impl<'a, T> ChunkRefVec<'a> for ChunkRef<'a, &Vec<T>> {
    type Out = [T];
    #[inline(always)]
    fn chunk(&self) -> &'a [T] {
        self.0.as_slice()
    }
}

impl<'a, T> ChunkRefVec<'a> for ChunkRef<'a, &mut Vec<T>> {
    type Out = [T];
    #[inline(always)]
    fn chunk(&self) -> &'a [T] {
        self.0.as_slice()
    }
}

/// [`ChunkRef`] of anything else: itself.
pub trait ChunkRefSame<'a> {
    /// The variable's type.
    type Out: ?Sized + 'a;
    /// The variable.
    fn chunk(&self) -> &'a Self::Out;
}

impl<'a, V: ?Sized> ChunkRefSame<'a> for &ChunkRef<'a, V> {
    type Out = V;
    #[inline(always)]
    fn chunk(&self) -> &'a V {
        self.0
    }
}

/// Atomic accesses for the `atomic` construct.
pub mod atomic {
    use acc_core::atomic::AtomicScalar;

    /// Atomically reads `*p`.
    ///
    /// # Safety
    /// `p` comes from `&raw const` of a live place, accessed atomically by every thread.
    #[inline(always)]
    pub unsafe fn load<T: AtomicScalar>(p: *const T) -> T {
        T::atomic_load(p as *mut T)
    }
    /// Atomically writes `v` to `*p`.
    ///
    /// # Safety
    /// As [`load`], from `&raw mut`.
    #[inline(always)]
    pub unsafe fn store<T: AtomicScalar>(p: *mut T, v: T) {
        T::atomic_store(p, v)
    }
    /// Atomically replaces `*p` by `f(*p)`; returns the old and the new value.
    ///
    /// # Safety
    /// As [`store`].
    #[inline(always)]
    pub unsafe fn update<T: AtomicScalar>(p: *mut T, f: impl FnMut(T) -> T) -> (T, T) {
        T::atomic_update(p, f)
    }
}

pub mod data_clauses;
pub use data_clauses::*;

/// `wait!`.
pub fn wait_directive(
    loc: Location,
    if_cond: Option<bool>,
    queues: Option<&[i64]>,
    async_arg: Option<i64>,
) {
    check_queues("`wait`", loc, async_arg, &queues.map(|q| q.to_vec()));
    if if_cond == Some(false) {
        return;
    }
    acc_core::observe::notify(acc_core::observe::Notify::Wait, || {
        format!("`wait` at {loc}: queues {queues:?}, async {async_arg:?}")
    });
    let result = runtime()
        .current_device()
        .and_then(|d| wait_for(&*d, queues.unwrap_or(&[]), Queue::resolve(async_arg)?));
    if let Err(e) = result {
        fail("`wait`", loc, e)
    }
}

/// `wait(devnum: d: queues)` on a construct or `wait!` (3.3 section 2.16.3): the host waits
/// for `queues` (every queue when none is named) of device `d` of the current device type.
#[track_caller]
pub fn wait_on_device(devnum: i64, queues: &[i64]) {
    let loc = Location::caller();
    let rt = runtime();
    let result = usize::try_from(devnum)
        .map_err(|_| acc_core::Error::Unsupported {
            what: format!("`devnum: {devnum}` names no device (device numbers are from 0)"),
        })
        .and_then(|n| rt.device(rt.current_device_type()?, n))
        .and_then(|d| wait_for(&*d, queues, Queue::Sync));
    acc_core::observe::notify(acc_core::observe::Notify::Wait, || {
        format!("`wait` at {loc}: device {devnum}, queues {queues:?}")
    });
    if let Err(e) = result {
        fail("`wait(devnum: ..)`", loc, e)
    }
}

/// The `wait` directive's, or a `wait` clause's, ordering (3.3 sections 2.16.2, 2.16.3):
/// without `async` (`waiter` is `Queue::Sync`) the host waits for `queues` (every queue when
/// none is named); with it, the async queue does, and the host goes on.
pub(crate) fn wait_for(
    device: &dyn acc_core::Device,
    queues: &[i64],
    waiter: Queue,
) -> acc_core::Result<()> {
    let named = queues
        .iter()
        .map(|&q| Queue::for_wait(q))
        .collect::<acc_core::Result<Vec<_>>>()?;
    match waiter {
        Queue::Sync if named.is_empty() => device.synchronize(),
        Queue::Sync => named.iter().try_for_each(|&q| device.synchronize_queue(q)),
        // Every queue, for an async queue: the host waits for them, which orders the queue
        // after them too.
        _ if named.is_empty() => device.synchronize(),
        waiter => named.iter().try_for_each(|&q| device.queue_wait(waiter, q)),
    }
}

/// `init!`.
pub fn init_directive(
    loc: Location,
    if_cond: Option<bool>,
    types: &[DeviceType],
    num: Option<usize>,
) {
    if if_cond == Some(false) {
        return;
    }
    let types: Vec<DeviceType> = if types.is_empty() {
        vec![crate::get_device_type()]
    } else {
        types.to_vec()
    };
    for ty in types {
        if let Some(n) = num {
            crate::set_device_num(n, ty);
        }
        if let Err(e) = crate::init(ty) {
            fail("`init`", loc, e)
        }
    }
}

/// `shutdown!`.
pub fn shutdown_directive(
    loc: Location,
    if_cond: Option<bool>,
    types: &[DeviceType],
    _num: Option<usize>,
) {
    if if_cond == Some(false) {
        return;
    }
    let types: Vec<DeviceType> = if types.is_empty() {
        vec![crate::get_device_type()]
    } else {
        types.to_vec()
    };
    for ty in types {
        if let Err(e) = crate::shutdown(ty) {
            fail("`shutdown`", loc, e)
        }
    }
}

/// `set!`.
pub fn set_directive(
    loc: Location,
    if_cond: Option<bool>,
    ty: Option<DeviceType>,
    num: Option<usize>,
    default_async: Option<i32>,
) {
    if if_cond == Some(false) {
        return;
    }
    if let Some(q) = default_async {
        if let Err(e) = Queue::resolve(Some(q as i64)) {
            fail("`set`", loc, e)
        }
        crate::set_default_async(q);
    }
    match (ty, num) {
        (Some(t), Some(n)) => crate::set_device_num(n, t),
        (Some(t), None) => crate::set_device_type(t),
        (None, Some(n)) => crate::set_device_num(n, DeviceType::Default),
        (None, None) => {}
    }
}

/// Compile-time check that a struct field is device data (used by `#[derive(DeviceCopy)]`).
pub fn assert_device_copy<T: DeviceCopy>() {}

/// Reading without a bounds check, for the copy of a parallel loop's body that runs only when
/// every such index of the chunk was checked to be in bounds before the chunk started.
pub trait UncheckedIndex {
    /// The element type.
    type Output: ?Sized;
    /// The number of elements.
    fn length(&self) -> usize;
    /// Element `i`.
    ///
    /// # Safety
    /// `i < self.length()`.
    unsafe fn at(&self, i: usize) -> &Self::Output;
}

/// Writing without a bounds check (see [`UncheckedIndex`]).
pub trait UncheckedIndexMut: UncheckedIndex {
    /// Element `i`.
    ///
    /// # Safety
    /// `i < self.length()`.
    unsafe fn at_mut(&mut self, i: usize) -> &mut Self::Output;
}

impl<T> UncheckedIndex for [T] {
    type Output = T;
    #[inline(always)]
    fn length(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    unsafe fn at(&self, i: usize) -> &T {
        debug_assert!(i < self.len());
        self.get_unchecked(i)
    }
}

impl<T> UncheckedIndexMut for [T] {
    #[inline(always)]
    unsafe fn at_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.len());
        self.get_unchecked_mut(i)
    }
}

macro_rules! unchecked_via_slice {
    ($($ty:ty => [$($g:tt)*]),*) => {$(
        impl<$($g)*> UncheckedIndex for $ty {
            type Output = T;
            #[inline(always)]
            fn length(&self) -> usize { self.len() }
            #[inline(always)]
            unsafe fn at(&self, i: usize) -> &T { <[T]>::at(self, i) }
        }
        impl<$($g)*> UncheckedIndexMut for $ty {
            #[inline(always)]
            unsafe fn at_mut(&mut self, i: usize) -> &mut T { <[T]>::at_mut(self, i) }
        }
    )*};
}
unchecked_via_slice!(Vec<T> => [T], Box<[T]> => [T], [T; N] => [T, const N: usize]);

// One-dimensional `ndarray` arrays (indexed `a[i]`), with their own strides.
#[cfg(feature = "ndarray")]
impl<T, S: ndarray::Data<Elem = T>> UncheckedIndex for ndarray::ArrayBase<S, ndarray::Ix1> {
    type Output = T;
    #[inline(always)]
    fn length(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    unsafe fn at(&self, i: usize) -> &T {
        debug_assert!(i < self.len());
        self.uget(i)
    }
}

#[cfg(feature = "ndarray")]
impl<T, S: ndarray::DataMut<Elem = T>> UncheckedIndexMut for ndarray::ArrayBase<S, ndarray::Ix1> {
    #[inline(always)]
    unsafe fn at_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.len());
        self.uget_mut(i)
    }
}

impl<U: UncheckedIndex + ?Sized> UncheckedIndex for &U {
    type Output = U::Output;
    #[inline(always)]
    fn length(&self) -> usize {
        (**self).length()
    }
    #[inline(always)]
    unsafe fn at(&self, i: usize) -> &U::Output {
        (**self).at(i)
    }
}

impl<U: UncheckedIndex + ?Sized> UncheckedIndex for &mut U {
    type Output = U::Output;
    #[inline(always)]
    fn length(&self) -> usize {
        (**self).length()
    }
    #[inline(always)]
    unsafe fn at(&self, i: usize) -> &U::Output {
        (**self).at(i)
    }
}

impl<U: UncheckedIndexMut + ?Sized> UncheckedIndexMut for &mut U {
    #[inline(always)]
    unsafe fn at_mut(&mut self, i: usize) -> &mut U::Output {
        (**self).at_mut(i)
    }
}

/// `call_n(a1, .., an, f)` calls `f(a1, .., an)`. A parallel loop's chunk body takes its
/// variables as parameters of `f` (`&T` for those it reads, `&mut T` for those it writes),
/// which tells the compiler they do not alias, so it can keep them in registers and vectorize.
/// The parameter types are inferred from the arguments, which rustc checks before the closure.
macro_rules! call_with {
    ($($name:ident: $($a:ident),*;)*) => {$(
        #[inline(always)]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub fn $name<$($a,)* R>($($a: $a,)* f: impl FnOnce($($a),*) -> R) -> R {
            f($($a),*)
        }
    )*};
}

call_with! {
    call_0: ;
    call_1: A1;
    call_2: A1, A2;
    call_3: A1, A2, A3;
    call_4: A1, A2, A3, A4;
    call_5: A1, A2, A3, A4, A5;
    call_6: A1, A2, A3, A4, A5, A6;
    call_7: A1, A2, A3, A4, A5, A6, A7;
    call_8: A1, A2, A3, A4, A5, A6, A7, A8;
    call_9: A1, A2, A3, A4, A5, A6, A7, A8, A9;
    call_10: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10;
    call_11: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11;
    call_12: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12;
}

/// The first and last value of a non-empty `usize` range (for loop versioning).
#[inline(always)]
pub fn range_bounds<R: RangeLimits>(r: &R) -> Option<(usize, usize)> {
    r.first_last()
}

/// Ranges a versioned loop may iterate over.
pub trait RangeLimits {
    /// The first and last value, when there is one.
    fn first_last(&self) -> Option<(usize, usize)>;
}

impl RangeLimits for std::ops::Range<usize> {
    #[inline(always)]
    fn first_last(&self) -> Option<(usize, usize)> {
        (self.start < self.end).then(|| (self.start, self.end - 1))
    }
}

impl RangeLimits for std::ops::RangeInclusive<usize> {
    #[inline(always)]
    fn first_last(&self) -> Option<(usize, usize)> {
        (self.start() <= self.end() && !self.is_empty()).then(|| (*self.start(), *self.end()))
    }
}

/// The marker `#[acc::routine]` leaves next to its function (`<name>_must_be_an_acc_routine`):
/// each call in a region refers to the callee's marker, so a call to a function that is not a
/// routine does not compile (3.3 section 2.15), and kernels inline the routine's body with
/// `build`.
/// `S` is the type whose `&self` (or `&mut self`) a method routine takes; `F` adds the fields
/// its body uses to a launch's arguments ([`SelfArgs`], or [`SelfArgsMut`] for `&mut self`).
pub struct RoutineMarker<S: ?Sized = (), F = SelfArgs<S>> {
    /// Builds the routine's body into a kernel, with the call's arguments; gives its result
    /// (a placeholder for routines without one). Problems are recorded in the builder.
    pub build: fn(&mut kernel::KernelBuilder, &[kernel::RoutineArg]) -> kernel::Value,
    /// For a method: adds the fields of `self` its body uses to a launch's arguments, giving
    /// their parameter indices (the first arguments `build` takes).
    pub self_args: Option<F>,
    /// The routine's level of parallelism (seq 0, vector 1, worker 2, gang 3; the highest over
    /// device types), which call sites check (3.3 section 2.15.1, R121).
    pub level: u8,
    /// The method's `Self`.
    pub receiver: std::marker::PhantomData<fn(&S)>,
}

/// How a `&self` routine adds the fields it reads to a launch's arguments.
pub type SelfArgs<S> = for<'a> fn(&'a S, &mut kernel::Args<'a>) -> Vec<usize>;
/// How a `&mut self` routine adds the fields it uses to a launch's arguments (those whose
/// elements it writes as written arrays).
pub type SelfArgsMut<S> = for<'a> fn(&'a mut S, &mut kernel::Args<'a>) -> Vec<usize>;

impl<S: ?Sized, F: Copy> Clone for RoutineMarker<S, F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: ?Sized, F: Copy> Copy for RoutineMarker<S, F> {}
