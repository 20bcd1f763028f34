//! The present table of a device with its own memory (OpenACC 3.3 sections 2.6.7 and 2.7.2):
//! which host ranges have a device copy, in which device buffer, and the structured and
//! dynamic reference counters that decide when the copy goes away.
//!
//! The table is device-independent: a backend provides [`DeviceMemory`] (allocate, copy in
//! and out, free) and the table performs the clause actions on it. Host memory is only ever
//! read through a `&[u8]` and written through a `&mut [u8]` the caller holds, so a stale entry
//! (the host variable was dropped while its data stayed present) can never make the table
//! write to memory nobody owns.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::error::{Error, Location, Result};
use crate::ir::Scalar;

/// A device buffer, as its [`DeviceMemory`] names it.
pub type BufferId = u64;

/// How the elements of a present section are stored on the host: the device may store them
/// differently (wgpu holds 8/16-bit integers and `bool` in 32-bit words) and converts in
/// [`DeviceMemory::upload`] and [`DeviceMemory::download`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ElemLayout {
    /// The element's IR scalar type, when it is one (`None` for structs of scalars).
    pub scalar: Option<Scalar>,
    /// Bytes per element on the host.
    pub size: usize,
}

impl From<crate::ir::Elem> for ElemLayout {
    fn from(e: crate::ir::Elem) -> ElemLayout {
        ElemLayout {
            scalar: e.scalar().map(crate::ir::Scalar::storage),
            size: e.size() as usize,
        }
    }
}

/// Memory of a device that does not share the host's: what the present table needs.
pub trait DeviceMemory: Send + Sync {
    /// A zero-filled buffer of `len` elements (`len > 0`).
    fn alloc(&self, elem: ElemLayout, len: usize) -> Result<BufferId>;
    /// Copies `host` (whole elements) into `buf` from element `first` on.
    fn upload(&self, buf: BufferId, elem: ElemLayout, first: usize, host: &[u8]) -> Result<()>;
    /// [`DeviceMemory::upload`] on activity queue `queue` (an `update device` with `async`,
    /// 3.3 section 2.14.4): a device may return before the copy is done, ordered after what
    /// the queue was given and before what it is given next; `host` may change as soon as
    /// this returns (what it held now is copied). The default copies at once.
    fn upload_queued(
        &self,
        buf: BufferId,
        elem: ElemLayout,
        first: usize,
        host: &[u8],
        queue: crate::queue::Queue,
    ) -> Result<()> {
        let _ = queue;
        self.upload(buf, elem, first, host)
    }
    /// Copies elements of `buf` from `first` on into `host` (whole elements).
    fn download(
        &self,
        buf: BufferId,
        elem: ElemLayout,
        first: usize,
        host: &mut [u8],
    ) -> Result<()>;
    /// Frees `buf`.
    fn free(&self, buf: BufferId);
    /// `buf`, holding elements of `elem`, as other libraries name it (`host_data
    /// use_device`, 3.3 section 2.8); `None` where the device cannot hand it out.
    fn raw_buffer(&self, buf: BufferId, elem: ElemLayout) -> Option<RawBuffer> {
        let _ = (buf, elem);
        None
    }
    /// Memory another library allocated on this device, made a buffer of this device
    /// (`acc::DeviceVec::from_cuda_slice`, `from_wgpu_buffer`): checked to belong to the
    /// device and to hold `bytes` bytes; [`DeviceMemory::free`] drops what `foreign` owns.
    /// The default refuses.
    fn adopt(&self, foreign: Foreign, bytes: usize) -> Result<BufferId> {
        let _ = (foreign, bytes);
        Err(Error::Unsupported {
            what: "memory of another library on a device without such memory".into(),
        })
    }
    /// `bytes` zeroed bytes of raw memory (`acc_malloc`): no element type, nothing widened.
    fn alloc_bytes(&self, bytes: usize) -> Result<BufferId> {
        self.alloc(BYTES, bytes)
    }
    /// Copies `host` into `buf` from byte `at` on, as they are (`acc_memcpy_to_device`).
    fn upload_bytes(&self, buf: BufferId, at: usize, host: &[u8]) -> Result<()> {
        self.upload(buf, BYTES, at, host)
    }
    /// Copies the bytes of `buf` from byte `at` on into `host`, as they are
    /// (`acc_memcpy_from_device`).
    fn download_bytes(&self, buf: BufferId, at: usize, host: &mut [u8]) -> Result<()> {
        self.download(buf, BYTES, at, host)
    }
    /// The device address of `buf`'s first byte (`acc_malloc`, `acc_deviceptr`): a CUDA
    /// device address on nvidia; on wgpu, whose buffers have none, an address acc makes up
    /// that [`DeviceMemory::buffer_at`] turns back into the buffer (only acc's memory
    /// routines understand it). `None` where the device has none.
    fn address(&self, buf: BufferId) -> Option<u64> {
        match self.raw_buffer(buf, BYTES)?.handle {
            RawHandle::Cuda(a) => Some(a),
            RawHandle::Wgpu(_) => None,
        }
    }
    /// The buffer holding device addresses `addr..addr + bytes`, and the offset of `addr` in
    /// it, on devices whose buffers have addresses (`acc_memcpy_*` on device pointers).
    fn buffer_at(&self, addr: u64, bytes: usize) -> Option<(BufferId, usize)> {
        let _ = (addr, bytes);
        None
    }
    /// Copies `bytes` bytes from byte `src_at` of `src` to byte `dst_at` of `dst`
    /// (`acc_memcpy_device`). The default goes through host memory.
    fn copy_between(
        &self,
        (dst, dst_at): (BufferId, usize),
        (src, src_at): (BufferId, usize),
        bytes: usize,
    ) -> Result<()> {
        let mut staging = vec![0u8; bytes];
        self.download_bytes(src, src_at, &mut staging)?;
        self.upload_bytes(dst, dst_at, &staging)
    }
    /// Copies `len` elements of `elem` from element `src_first` of buffer `src` of another
    /// device's memory, `peer`, to element `dst_first` of `dst` here (`acc_memcpy_d2d`, 3.3
    /// section 3.2.30), once both devices are idle. The default goes through host memory; a
    /// backend whose devices reach each other (CUDA peer copies) overrides it.
    fn copy_from_peer(
        &self,
        elem: ElemLayout,
        (dst, dst_first): (BufferId, usize),
        peer: &dyn DeviceMemory,
        (src, src_first): (BufferId, usize),
        len: usize,
    ) -> Result<()> {
        copy_through_host(elem, (self, dst, dst_first), (peer, src, src_first), len)
    }
    /// This memory as `Any`, so that a backend can recognise a peer of its own kind in
    /// [`DeviceMemory::copy_from_peer`].
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// Copies `len` elements of `elem` from element `src_first` of buffer `src` of `peer` to
/// element `dst_first` of buffer `dst` of `to`, through host memory (devices that cannot reach
/// each other, [`DeviceMemory::copy_from_peer`]).
pub fn copy_through_host(
    elem: ElemLayout,
    (to, dst, dst_first): (&(impl DeviceMemory + ?Sized), BufferId, usize),
    (peer, src, src_first): (&(impl DeviceMemory + ?Sized), BufferId, usize),
    len: usize,
) -> Result<()> {
    let mut staging = vec![0u8; len * elem.size];
    peer.download(src, elem, src_first, &mut staging)?;
    to.upload(dst, elem, dst_first, &staging)
}

/// Plain bytes, for copies that name byte offsets.
pub const BYTES: ElemLayout = ElemLayout {
    scalar: Some(crate::ir::Scalar::U8),
    size: 1,
};

/// A device buffer as other libraries name it ([`DeviceMemory::raw_buffer`]).
pub struct RawBuffer {
    /// Bytes one element takes in the buffer: the host's size, unless the device widens the
    /// type (wgpu holds 8- and 16-bit values and `bool` in 32-bit words).
    pub elem_bytes: usize,
    /// The buffer.
    pub handle: RawHandle,
}

/// Device memory another library allocated ([`DeviceMemory::adopt`]).
pub enum Foreign {
    /// CUDA device memory at `addr`, in the device's primary context. `keep` owns it (the
    /// other library's handle, dropped when the buffer is freed); `None` where acc only
    /// borrows it.
    Cuda {
        /// The device address of its first byte.
        addr: u64,
        /// What owns the memory, if acc was given it.
        keep: Option<Box<dyn std::any::Any + Send + Sync>>,
    },
    /// A `wgpu::Buffer` (of the version `acc-device` uses), type-erased; used from its start.
    Wgpu(Box<dyn std::any::Any + Send + Sync>),
}

/// The handle of a [`RawBuffer`].
pub enum RawHandle {
    /// The device address of the buffer's first byte on a CUDA device.
    Cuda(u64),
    /// The `wgpu::Buffer` (of the version `acc-device` uses), type-erased.
    Wgpu(Box<dyn std::any::Any + Send + Sync>),
}

/// Which reference counter an action changes (3.3 section 2.6.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// Data and compute constructs (and `declare` in a function): RAII guards.
    Structured,
    /// `enter data`/`exit data` and the data routines.
    Dynamic,
}

/// What entering a clause does when the data is not present yet (3.3 section 2.7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Absent {
    /// Allocate and copy in (`copy`, `copyin`).
    Copyin,
    /// Allocate only (`copyout`, `create`).
    Create,
    /// It is an error (`present`).
    Error,
    /// Nothing (`no_create`).
    Nothing,
}

/// What leaving a clause does when both counters reach zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// Copy out, then free (`copy`, `copyout`).
    Copyout,
    /// Free (`copyin`, `create`, `present`, `delete`).
    Delete,
}

/// How a clause is left: which counter goes down (to zero with `finalize`), and what happens
/// when both reach zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leave {
    /// The counter decremented.
    pub counter: Counter,
    /// Set it to zero instead (`finalize`, the `_finalize` routines).
    pub finalize: bool,
    /// Copy out or only free.
    pub release: Release,
}

/// Where a host range lives on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The buffer holding it.
    pub buf: BufferId,
    /// Its first element, counted in elements of the buffer.
    pub first: usize,
    /// Its length in elements.
    pub len: usize,
    /// The layout the buffer was created with.
    pub elem: ElemLayout,
}

/// One present section: a host range with a device copy.
#[derive(Debug)]
struct Section {
    bytes: usize,
    buf: BufferId,
    elem: ElemLayout,
    structured: usize,
    dynamic: usize,
    /// The variable that made it present, for messages.
    name: String,
    /// Its buffer is the program's (`acc_map_data`): not freed when the section ends.
    mapped: bool,
}

/// A host range as a clause names it, for the table's messages.
#[derive(Clone, Copy, Debug)]
pub struct Named<'a> {
    /// The variable as written (`a`, `a[0..n]`).
    pub name: &'a str,
    /// Where the clause or call is.
    pub location: Location,
}

impl Named<'_> {
    /// A name at the place the caller of the `#[track_caller]` routine calling this is (the
    /// runtime routines' messages name the user's call).
    #[track_caller]
    pub fn at_caller(name: &str) -> Named<'_> {
        let at = std::panic::Location::caller();
        Named {
            name,
            location: Location {
                file: at.file(),
                line: at.line(),
                column: at.column(),
            },
        }
    }

    /// A name without a source location (a kernel argument, whose clause, if any, was
    /// checked where it was written).
    pub fn unlocated(name: &str) -> Named<'_> {
        Named {
            name,
            location: Location {
                file: "",
                line: 0,
                column: 0,
            },
        }
    }
}

/// A generation no table has had ([`PresentTable::generation`]).
fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The present table of one device.
#[derive(Debug)]
pub struct PresentTable {
    /// Sections by host start address; they never overlap.
    sections: Mutex<BTreeMap<usize, Section>>,
    /// Bumped whenever a section is added or removed: where data lives is unchanged while it
    /// is the same ([`PresentTable::generation`]).
    generation: std::sync::atomic::AtomicU64,
}

/// Where `addr..addr + bytes` stands in the table.
enum Found {
    /// Inside the section starting at this address.
    Inside(usize),
    /// Overlapping some section without being inside it.
    Partly(usize),
    Absent,
}

fn find(sections: &BTreeMap<usize, Section>, addr: usize, bytes: usize) -> Found {
    let end = addr + bytes.max(1);
    // The last section starting at or before `addr`, and any starting inside the range.
    if let Some((&start, s)) = sections.range(..=addr).next_back() {
        if addr < start + s.bytes {
            return if addr + bytes <= start + s.bytes {
                Found::Inside(start)
            } else {
                Found::Partly(start)
            };
        }
    }
    match sections.range(addr..end).next() {
        Some((&start, _)) => Found::Partly(start),
        None => Found::Absent,
    }
}

fn partly(sections: &BTreeMap<usize, Section>, start: usize, var: Named<'_>) -> Error {
    let other = sections
        .get(&start)
        .map_or("another variable", |s| s.name.as_str());
    Error::PartlyPresent {
        var: var.name.to_string(),
        present: other.to_string(),
        location: var.location,
    }
}

impl Default for PresentTable {
    fn default() -> Self {
        PresentTable {
            sections: Mutex::new(BTreeMap::new()),
            generation: std::sync::atomic::AtomicU64::new(next_generation()),
        }
    }
}

impl PresentTable {
    /// An empty table.
    pub fn new() -> PresentTable {
        PresentTable::default()
    }

    /// A number that changes whenever data is added to the table or removed from it: a
    /// launch that looked its arrays up at one generation finds them at the same places
    /// while it is the same. Generations come from one counter for the whole process, so no
    /// two tables (a device shut down and another opened at its address) share one.
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    fn changed(&self) {
        self.generation
            .store(next_generation(), std::sync::atomic::Ordering::Release);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<usize, Section>> {
        self.sections.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Enters a data clause for `host` (3.3 section 2.7.2): a present increment of `counter`
    /// when the whole range is present, otherwise what `absent` says. Returns whether the
    /// counter was changed (a `no_create` of absent data changes nothing, and its exit must
    /// not either). Empty ranges are always present and count nothing.
    pub fn enter(
        &self,
        mem: &dyn DeviceMemory,
        host: &[u8],
        elem: ElemLayout,
        var: Named<'_>,
        counter: Counter,
        absent: Absent,
    ) -> Result<bool> {
        if host.is_empty() {
            return Ok(false);
        }
        let addr = host.as_ptr() as usize;
        let mut sections = self.lock();
        match find(&sections, addr, host.len()) {
            Found::Inside(start) => {
                let s = sections.get_mut(&start).expect("found");
                check_layout(s, elem, addr - start, var)?;
                match counter {
                    Counter::Structured => s.structured += 1,
                    Counter::Dynamic => s.dynamic += 1,
                }
                Ok(true)
            }
            Found::Partly(start) => Err(partly(&sections, start, var)),
            Found::Absent => match absent {
                Absent::Error => Err(Error::NotPresent {
                    var: var.name.to_string(),
                    location: var.location,
                }),
                Absent::Nothing => Ok(false),
                Absent::Copyin | Absent::Create => {
                    let len = host.len() / elem.size;
                    let buf = mem.alloc(elem, len).map_err(|e| at(e, var))?;
                    if absent == Absent::Copyin {
                        if let Err(e) = mem.upload(buf, elem, 0, host) {
                            mem.free(buf);
                            return Err(at(e, var));
                        }
                    }
                    let (structured, dynamic) = match counter {
                        Counter::Structured => (1, 0),
                        Counter::Dynamic => (0, 1),
                    };
                    self.changed();
                    sections.insert(
                        addr,
                        Section {
                            bytes: host.len(),
                            buf,
                            elem,
                            structured,
                            dynamic,
                            name: var.name.to_string(),
                            mapped: false,
                        },
                    );
                    crate::observe::notify(crate::observe::Notify::Alloc, || {
                        format!("present: `{}` ({} bytes) allocated", var.name, host.len())
                    });
                    if absent == Absent::Copyin {
                        crate::observe::notify(crate::observe::Notify::Transfer, || {
                            format!("present: `{}` ({} bytes) copied in", var.name, host.len())
                        });
                    }
                    Ok(true)
                }
            },
        }
    }

    /// Leaves a data clause for the range `addr..addr + bytes` (3.3 section 2.7.2): a present
    /// decrement of `counter` (to zero with `finalize`), and when both counters are zero, the
    /// release: copy out into `host` (when given and `release` is `Copyout`), then free.
    /// Absent data, or a counter already at zero, is left alone (3.3 L1643–1646, L1763).
    pub fn exit(
        &self,
        mem: &dyn DeviceMemory,
        (addr, bytes): (usize, usize),
        host: Option<&mut [u8]>,
        var: Named<'_>,
        Leave {
            counter,
            finalize,
            release,
        }: Leave,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let mut sections = self.lock();
        let start = match find(&sections, addr, bytes) {
            Found::Inside(start) => start,
            Found::Partly(start) => return Err(partly(&sections, start, var)),
            Found::Absent => return Ok(()),
        };
        let s = sections.get_mut(&start).expect("found");
        let c = match counter {
            Counter::Structured => &mut s.structured,
            Counter::Dynamic => &mut s.dynamic,
        };
        if *c == 0 {
            return Ok(());
        }
        *c = if finalize { 0 } else { *c - 1 };
        if s.structured + s.dynamic > 0 {
            return Ok(());
        }
        let s = sections.remove(&start).expect("found");
        self.changed();
        let mut result = Ok(());
        if release == Release::Copyout {
            if let Some(host) = host {
                // Only what the caller can write: the variable's own range.
                if host.as_ptr() as usize == addr && host.len() == bytes {
                    result = mem
                        .download(s.buf, s.elem, (addr - start) / s.elem.size, host)
                        .map_err(|e| at(e, var));
                    crate::observe::notify(crate::observe::Notify::Transfer, || {
                        format!("present: `{}` ({} bytes) copied out", s.name, s.bytes)
                    });
                } else {
                    result = Err(Error::Unsupported {
                        what: format!("`{}` moved or changed length while its data was present (at {}); its device copy was not copied out", var.name, var.location),
                    });
                }
            }
        }
        if !s.mapped {
            mem.free(s.buf);
            crate::observe::notify(crate::observe::Notify::Alloc, || {
                format!("present: `{}` ({} bytes) freed", s.name, s.bytes)
            });
        }
        result
    }

    /// `acc_map_data` (3.3 section 3.2.26): makes `addr..addr + bytes` present in device
    /// buffer `buf` (elements of `elem` from its start), which the program allocated and
    /// keeps: no copy now, and none or a free when the data leaves. Data already present,
    /// even in part, is an error.
    pub fn map(
        &self,
        (addr, bytes): (usize, usize),
        elem: ElemLayout,
        buf: BufferId,
        var: Named<'_>,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let mut sections = self.lock();
        if !matches!(find(&sections, addr, bytes), Found::Absent) {
            return Err(Error::Unsupported {
                what: format!(
                    "acc::map_data: `{}` (at {}) is already present, in whole or in part",
                    var.name, var.location
                ),
            });
        }
        self.changed();
        sections.insert(
            addr,
            Section {
                bytes,
                buf,
                elem,
                structured: 0,
                dynamic: 1,
                name: var.name.to_string(),
                mapped: true,
            },
        );
        Ok(())
    }

    /// `acc_unmap_data` (3.3 section 3.2.27): undoes [`PresentTable::map`] for the data at
    /// `addr`, copying and freeing nothing. Data not mapped by `map`, or in use by a data
    /// construct (its structured counter above zero), is an error.
    pub fn unmap(&self, addr: usize, var: Named<'_>) -> Result<()> {
        let mut sections = self.lock();
        let err = |what: &str| Error::Unsupported {
            what: format!(
                "acc::unmap_data: `{}` (at {}) {what}",
                var.name, var.location
            ),
        };
        match sections.get(&addr) {
            Some(s) if !s.mapped => return Err(err("was not mapped with acc::map_data")),
            Some(s) if s.structured > 0 => return Err(err("is in use by a data construct")),
            Some(_) => {}
            None => return Err(err("is not mapped")),
        }
        sections.remove(&addr);
        self.changed();
        Ok(())
    }

    /// Ends the mapping of the data at `addr` whose owner is going away (an `acc::DeviceVec`
    /// dropped): removed now (`Ok(true)`: the owner frees its buffer), or, while data
    /// constructs still count it, left to them (`Ok(false)`): the section stops being mapped,
    /// so the last construct's exit removes it and frees its buffer. Data not mapped is an
    /// error; absent data is `Ok(true)`.
    pub fn release_mapped(&self, addr: usize) -> Result<bool> {
        let mut sections = self.lock();
        match sections.get_mut(&addr) {
            None => Ok(true),
            Some(s) if !s.mapped => Err(Error::Unsupported {
                what: format!("internal error: `{}` is present but not mapped", s.name),
            }),
            Some(s) if s.structured > 0 => {
                s.mapped = false;
                s.dynamic = 0;
                Ok(false)
            }
            Some(_) => {
                sections.remove(&addr);
                self.changed();
                Ok(true)
            }
        }
    }

    /// The host address of byte `offset` of device buffer `buf`, where a section of the table
    /// is in it (`acc_hostptr`).
    pub fn host_of(&self, buf: BufferId, offset: usize) -> Option<usize> {
        let sections = self.lock();
        sections
            .iter()
            .find(|(_, s)| s.buf == buf && offset < s.bytes)
            .map(|(&start, _)| start + offset)
    }

    /// `update` (3.3 section 2.14.4): copies `host` to the device copy (`to_device`), or the
    /// device copy into `host`. Absent data is an error, or nothing with `if_present`.
    pub fn update(
        &self,
        mem: &dyn DeviceMemory,
        host: HostBytes<'_>,
        elem: ElemLayout,
        var: Named<'_>,
        if_present: bool,
    ) -> Result<()> {
        self.update_on(mem, host, elem, var, if_present, crate::queue::Queue::Sync)
    }

    /// [`PresentTable::update`] on activity queue `queue`: a copy to the device may return
    /// before it is done ([`DeviceMemory::upload_queued`]); a copy to the host is done when
    /// this returns (the host's array is borrowed only for the call).
    pub fn update_on(
        &self,
        mem: &dyn DeviceMemory,
        host: HostBytes<'_>,
        elem: ElemLayout,
        var: Named<'_>,
        if_present: bool,
        queue: crate::queue::Queue,
    ) -> Result<()> {
        let (addr, bytes) = host.range();
        if bytes == 0 {
            return Ok(());
        }
        let sections = self.lock();
        let start = match find(&sections, addr, bytes) {
            Found::Inside(start) => start,
            Found::Partly(start) => return Err(partly(&sections, start, var)),
            Found::Absent if if_present => return Ok(()),
            Found::Absent => {
                return Err(Error::NotPresent {
                    var: var.name.to_string(),
                    location: var.location,
                })
            }
        };
        let s = &sections[&start];
        check_layout(s, elem, addr - start, var)?;
        let first = (addr - start) / s.elem.size;
        crate::observe::notify(crate::observe::Notify::Transfer, || {
            format!(
                "update `{}` at {}: {bytes} bytes {}",
                var.name,
                var.location,
                match host {
                    HostBytes::Read(_) => "to the device",
                    HostBytes::Write(_) => "to the host",
                }
            )
        });
        match host {
            HostBytes::Read(h) => mem.upload_queued(s.buf, s.elem, first, h, queue),
            HostBytes::Write(h) => mem.download(s.buf, s.elem, first, h),
        }
        .map_err(|e| at(e, var))
    }

    /// Where `addr..addr + bytes` is on the device, if all of it is present; an error if only
    /// part of it is.
    pub fn lookup(
        &self,
        addr: usize,
        bytes: usize,
        elem: ElemLayout,
        var: Named<'_>,
    ) -> Result<Option<Placement>> {
        if bytes == 0 {
            return Ok(None);
        }
        let sections = self.lock();
        match find(&sections, addr, bytes) {
            Found::Inside(start) => {
                let s = &sections[&start];
                check_layout(s, elem, addr - start, var)?;
                Ok(Some(Placement {
                    buf: s.buf,
                    first: (addr - start) / s.elem.size,
                    len: bytes / s.elem.size,
                    elem: s.elem,
                }))
            }
            Found::Partly(start) => Err(partly(&sections, start, var)),
            Found::Absent => Ok(None),
        }
    }

    /// The one present section that overlaps `addr..addr + bytes`, when there is exactly one
    /// and it lies inside the range: its offsets from `addr` (start, end). A region that uses
    /// an array of which only a subarray is present runs on that part (3.3 section 2.7.1).
    pub fn present_part(&self, addr: usize, bytes: usize) -> Option<(usize, usize)> {
        let sections = self.lock();
        let end = addr.checked_add(bytes)?;
        // A section starting before `addr` and reaching into the range is not inside it.
        if let Some((&start, s)) = sections.range(..addr).next_back() {
            if start + s.bytes > addr {
                return None;
            }
        }
        let mut inside = sections.range(addr..end);
        let (&start, s) = inside.next()?;
        if inside.next().is_some() || start + s.bytes > end {
            return None;
        }
        Some((start - addr, start + s.bytes - addr))
    }

    /// Whether all of `addr..addr + bytes` is present (`acc_is_present`; empty ranges are).
    pub fn is_present(&self, addr: usize, bytes: usize) -> bool {
        bytes == 0 || matches!(find(&self.lock(), addr, bytes), Found::Inside(_))
    }

    /// The reference counters of the section holding `addr` (for tests and `ACC_NOTIFY`).
    pub fn counters(&self, addr: usize) -> Option<(usize, usize)> {
        let sections = self.lock();
        match find(&sections, addr, 1) {
            Found::Inside(start) | Found::Partly(start) => {
                sections.get(&start).map(|s| (s.structured, s.dynamic))
            }
            Found::Absent => None,
        }
    }

    /// Frees every section without copying anything out (`acc_shutdown`).
    pub fn clear(&self, mem: &dyn DeviceMemory) {
        let sections = {
            let mut guard = self.lock();
            let taken = std::mem::take(&mut *guard);
            // Within the lock: a lookup after it sees the table empty and the new generation.
            self.changed();
            taken
        };
        for (_, s) in sections {
            if !s.mapped {
                mem.free(s.buf);
            }
        }
    }
}

/// Host bytes an update reads or writes.
pub enum HostBytes<'a> {
    /// Copied to the device.
    Read(&'a [u8]),
    /// Written from the device.
    Write(&'a mut [u8]),
}

impl HostBytes<'_> {
    fn range(&self) -> (usize, usize) {
        match self {
            HostBytes::Read(h) => (h.as_ptr() as usize, h.len()),
            HostBytes::Write(h) => (h.as_ptr() as usize, h.len()),
        }
    }
}

/// The same memory seen with another element type, or not on an element boundary, cannot
/// share the section's device copy.
fn check_layout(s: &Section, elem: ElemLayout, offset: usize, var: Named<'_>) -> Result<()> {
    if s.elem == elem && offset % s.elem.size == 0 {
        return Ok(());
    }
    Err(Error::Unsupported {
        what: format!(
            "`{}` (at {}) is present as `{}` with another element type; the same memory cannot be present as two types",
            var.name, var.location, s.name
        ),
    })
}

fn at(e: Error, var: Named<'_>) -> Error {
    match e {
        Error::Unsupported { what } => Error::Unsupported {
            what: format!("{what} (`{}` at {})", var.name, var.location),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests;
