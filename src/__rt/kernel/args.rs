//! The arguments of one launch: captured variables as kernel arguments (arrays by their bytes,
//! scalars by value), the lengths of privatized arrays, and arrays narrowed to the part of
//! them on the device.

use super::*;

/// The arguments of one launch, in parameter order.
#[derive(Default)]
pub struct Args<'a> {
    pub(super) args: Vec<KernelArg<'a>>,
    pub(super) params: Vec<(&'static str, ParamKind)>,
    /// Each parameter's length where its type fixes it.
    pub(super) fixed: Vec<Option<usize>>,
    /// The first argument a kernel cannot take, and why.
    pub(super) unsupported: Option<String>,
    /// Which parameters are aggregates (arrays), which `default(present)` requires present.
    pub(super) aggregate: Vec<bool>,
    /// The length of each privatized array whose type does not fix it (a `Vec`, a slice):
    /// its private copies have that length, so the kernel is built per length.
    pub(super) private_lens: Vec<(usize, usize)>,
    /// The subarray (elements `lo..hi`) the construct's data clauses name for an array
    /// parameter (3.3 section 2.7.1).
    pub(super) parts: Vec<(usize, usize, usize)>,
    /// Array parameters narrowed to the part of their array on the device: the parameter, and
    /// the scalar parameters holding that part's start and the array's length.
    pub(super) windows: Vec<(usize, usize, usize)>,
    /// Complex scalars (`num_complex::Complex`), each passed as two scalar parameters: the
    /// first's index (its real part; the next is the imaginary part).
    pub(super) complex: Vec<usize>,
    /// 2-D arrays (`[[T; M]; N]`, reduced element-wise): the parameter and its row length `M`.
    pub(super) rows: Vec<(usize, usize)>,
}

/// The lists of a launch that ended, emptied, for the thread's next launch: a time loop
/// allocates its argument lists once, not at every launch.
struct Spare {
    args: Vec<KernelArg<'static>>,
    params: Vec<(&'static str, ParamKind)>,
    fixed: Vec<Option<usize>>,
    aggregate: Vec<bool>,
}

thread_local! {
    static SPARE: std::cell::Cell<Option<Spare>> = const { std::cell::Cell::new(None) };
}

impl<'a> Args<'a> {
    /// No arguments yet, with room for `n` parameters (the lists of the thread's last launch,
    /// else allocated once per list).
    pub fn with_capacity(n: usize) -> Args<'a> {
        let spare = SPARE.with(|s| s.take()).unwrap_or_else(|| Spare {
            args: Vec::new(),
            params: Vec::new(),
            fixed: Vec::new(),
            aggregate: Vec::new(),
        });
        let mut a = Args::default();
        a.args = spare.args;
        a.params = spare.params;
        a.fixed = spare.fixed;
        a.aggregate = spare.aggregate;
        a.args.reserve(n);
        a.params.reserve(n);
        a.fixed.reserve(n);
        a.aggregate.reserve(n);
        a
    }

    pub(super) fn refuse(&mut self, name: &str, why: String) -> usize {
        self.unsupported.get_or_insert(format!("`{name}`: {why}"));
        self.args.push(KernelArg::Scalar(ScalarValue::Bool(false)));
        self.params.push(("", ParamKind::Scalar(Scalar::Bool)));
        self.fixed.push(None);
        self.aggregate.push(false);
        self.args.len() - 1
    }

    /// A complex scalar the region reads: its parts as two scalar parameters; returns the
    /// first's index.
    fn complex_scalar(&mut self, name: &'static str, t: Scalar, bytes: &[u8]) -> usize {
        let size = t.size() as usize;
        for part in [&bytes[..size], &bytes[size..2 * size]] {
            let Some(value) = scalar_value(t, part) else {
                return self.refuse(name, format!("a complex number of {t}"));
            };
            self.fixed.push(None);
            self.args.push(KernelArg::Scalar(value));
            self.params.push((name, ParamKind::Scalar(t)));
            self.aggregate.push(false);
        }
        let first = self.args.len() - 2;
        self.complex.push(first);
        first
    }

    /// A variable the region only reads; returns its parameter index.
    pub fn read<V: DataVar + ?Sized>(&mut self, name: &'static str, v: &'a V) -> usize {
        if let Some(why) = v.layout_problem() {
            return self.refuse(name, why);
        }
        let bytes = bytes_of(v.elems());
        if V::IS_SCALAR {
            if let Some(t) = V::Elem::LAYOUT.and_then(|l| l.complex()) {
                return self.complex_scalar(name, t, bytes);
            }
            let value = V::Elem::SCALAR.and_then(|t| Some((t, scalar_value(t, bytes)?)));
            let Some((t, value)) = value else {
                return self.refuse(
                    name,
                    format!(
                        "values of type `{}` are not supported in kernels (scalars are)",
                        type_name::<V::Elem>()
                    ),
                );
            };
            self.fixed.push(V::FIXED_LEN);
            self.args.push(KernelArg::Scalar(value));
            self.params.push((name, ParamKind::Scalar(t)));
            self.aggregate.push(false);
            return self.args.len() - 1;
        }
        let Some(elem) = array_elem::<V>() else {
            return self.refuse(name, format!("arrays of `{}` (not a scalar, nor a `#[derive(DeviceCopy)]` struct) are not supported in kernels", type_name::<V::Elem>()));
        };
        self.fixed.push(V::FIXED_LEN);
        self.args.push(KernelArg::Read(bytes));
        self.params.push((
            name,
            ParamKind::Array {
                elem,
                writable: false,
            },
        ));
        self.aggregate.push(true);
        self.args.len() - 1
    }

    /// An array the region writes (or a scalar it writes, as an array of one element);
    /// returns its parameter index.
    pub fn write<V: DataVarMut + ?Sized>(&mut self, name: &'static str, v: &'a mut V) -> usize {
        if let Some(why) = v.layout_problem() {
            return self.refuse(name, why);
        }
        let Some(elem) = array_elem::<V>() else {
            return self.refuse(
                name,
                format!(
                    "writing `{}` in a kernel is not supported yet",
                    type_name::<V>()
                ),
            );
        };
        self.fixed.push(V::FIXED_LEN);
        self.aggregate.push(!V::IS_SCALAR);
        self.args
            .push(KernelArg::Write(bytes_of_mut(v.elems_mut())));
        self.params.push((
            name,
            ParamKind::Array {
                elem,
                writable: true,
            },
        ));
        self.args.len() - 1
    }

    /// Parameter `p` is privatized (`private`, `firstprivate`, 3.3 sections 2.5.13, 2.5.14,
    /// 2.9.10): an array of a length its type does not fix gives its copies its current
    /// length.
    pub fn private_length(&mut self, p: usize) {
        if self.fixed.get(p).copied().flatten().is_some() {
            return;
        }
        if let (Some(KernelArg::Read(_)), Some((len, _))) = (self.args.get(p), self.elements(p)) {
            self.private_lens.push((p, len));
        }
    }

    /// Array parameter `p`'s element count and element size, as it is passed now.
    fn elements(&self, p: usize) -> Option<(usize, usize)> {
        let ParamKind::Array { elem, .. } = &self.params.get(p)?.1 else {
            return None;
        };
        let size = elem.size().max(1) as usize;
        match self.args.get(p)? {
            KernelArg::Read(d) => Some((d.len() / size, size)),
            KernelArg::Write(d) => Some((d.len() / size, size)),
            KernelArg::Scalar(_) => None,
        }
    }

    /// The construct's data clauses name the subarray `range` of array parameter `p` (3.3
    /// section 2.7.1): the region uses that part when only it is on the device.
    pub fn part(&mut self, p: usize, range: impl std::ops::RangeBounds<usize>) {
        let Some((len, _)) = self.elements(p) else {
            return;
        };
        let (lo, hi) = acc_core::data::subarray_bounds(range, len);
        // The clause checked its bounds when it was entered.
        if lo <= hi && hi <= len {
            self.parts.push((p, lo, hi));
        }
    }

    /// Narrows each array parameter of which only a part is on `device` to that part: the
    /// subarray the construct's clauses name, else the one present section inside the array.
    /// The kernel then indexes the part with the array's indices (a window, built from two
    /// extra scalar parameters). An array neither present nor with one present part is left
    /// for the device to report (partly present, or copied in when absent).
    ///
    /// Returns whether every array was wholly present (so nothing was narrowed).
    pub(super) fn narrow_to_present(&mut self, device: &dyn Device) -> bool {
        let Some(mem) = device.own_memory() else {
            return true;
        };
        let mut whole_present = true;
        for p in 0..self.args.len() {
            if !self.aggregate[p] {
                continue;
            }
            let Some((_, size)) = self.elements(p) else {
                continue;
            };
            let (addr, bytes) = match &self.args[p] {
                KernelArg::Read(d) => (d.as_ptr() as usize, d.len()),
                KernelArg::Write(d) => (d.as_ptr() as usize, d.len()),
                KernelArg::Scalar(_) => continue,
            };
            if bytes == 0 || mem.table.is_present(addr, bytes) {
                continue;
            }
            whole_present = false;
            let part = match self.parts.iter().find(|(q, ..)| *q == p) {
                Some(&(_, lo, hi)) => Some((lo, hi)),
                None => mem
                    .table
                    .present_part(addr, bytes)
                    .filter(|(s, e)| s % size == 0 && e % size == 0)
                    .map(|(s, e)| (s / size, e / size)),
            };
            let Some((lo, hi)) = part.filter(|&(lo, hi)| lo < hi) else {
                continue;
            };
            if !mem.table.is_present(addr + lo * size, (hi - lo) * size) {
                continue;
            }
            let whole = bytes / size;
            match &mut self.args[p] {
                KernelArg::Read(d) => *d = &d[lo * size..hi * size],
                KernelArg::Write(d) => {
                    let d = std::mem::take(d);
                    self.args[p] = KernelArg::Write(&mut d[lo * size..hi * size]);
                }
                KernelArg::Scalar(_) => {}
            }
            let start = self.hidden_usize(lo);
            let len = self.hidden_usize(whole);
            self.windows.push((p, start, len));
        }
        whole_present
    }

    /// Each array argument's address and length in bytes, in order (what
    /// [`Args::narrow_to_present`] looked up).
    pub(super) fn arrays(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.args
            .iter()
            .zip(&self.aggregate)
            .filter(|(_, &a)| a)
            .filter_map(|(arg, _)| match arg {
                KernelArg::Read(d) => Some((d.as_ptr() as usize, d.len())),
                KernelArg::Write(d) => Some((d.as_ptr() as usize, d.len())),
                KernelArg::Scalar(_) => None,
            })
    }

    /// The start of the part of array `name` a narrowed parameter holds, and the array's
    /// length.
    pub(super) fn window_of(&self, name: &str) -> Option<(usize, usize)> {
        let value = |q: usize| match self.args.get(q) {
            Some(KernelArg::Scalar(ScalarValue::USize(v))) => Some(*v as usize),
            _ => None,
        };
        self.windows
            .iter()
            .find(|(p, ..)| self.params.get(*p).is_some_and(|(n, _)| *n == name))
            .and_then(|&(_, s, l)| Some((value(s)?, value(l)?)))
    }

    /// A scalar parameter the region does not name (a window's start or length).
    fn hidden_usize(&mut self, v: usize) -> usize {
        self.fixed.push(None);
        self.aggregate.push(false);
        self.args
            .push(KernelArg::Scalar(ScalarValue::USize(v as u64)));
        self.params
            .push(("(present part)", ParamKind::Scalar(Scalar::USize)));
        self.args.len() - 1
    }

    /// A scalar reduced with `op`: its value goes in, the partial result comes back.
    pub fn reduction<V: DataVar>(&mut self, name: &'static str, v: &'a V, op: ReduceOp) -> usize {
        let _ = op;
        if let (true, Some(t)) = (V::IS_SCALAR, V::Elem::LAYOUT.and_then(|l| l.complex())) {
            // A complex number: its parts reduce as two scalars.
            return self.complex_scalar(name, t, bytes_of(v.elems()));
        }
        match (V::IS_SCALAR, V::Elem::SCALAR) {
            (true, Some(elem)) => match scalar_value(elem, bytes_of(v.elems())) {
                Some(s) => {
                    self.fixed.push(None);
                    self.aggregate.push(false);
                    self.args.push(KernelArg::Scalar(s));
                    self.params.push((name, ParamKind::Scalar(elem)));
                    self.args.len() - 1
                }
                None => self.refuse(name, format!("{elem} reductions are not supported in kernels yet")),
            },
            // An array of a fixed length reduces element-wise; its values stay on the host
            // (combined there with the launch's results), the parameter only names it. A 2-D
            // array (`[[f32; 3]; 5]`) reduces over its scalars, row after row: the kernel
            // indexes `a[i][j]` as `a[i * 3 + j]`.
            (false, scalar) => {
                let flat = scalar.map(|s| (s, 1)).or(V::Elem::ROW);
                let (Some(n), Some((elem, row))) = (V::FIXED_LEN, flat) else {
                    return self.refuse(name, format!("reductions of `{}` are not supported in kernels yet (arrays must have a fixed length, `[T; N]` or `[[T; M]; N]`)", type_name::<V>()));
                };
                self.fixed.push(Some(n * row));
                self.aggregate.push(false);
                self.args.push(KernelArg::Read(bytes_of(v.elems())));
                self.params.push((name, ParamKind::Array { elem: Elem::Scalar(elem), writable: false }));
                if scalar.is_none() {
                    self.rows.push((self.args.len() - 1, row));
                }
                self.args.len() - 1
            }
            _ => self.refuse(name, format!("reductions of `{}` are not supported in kernels yet (arrays must have a fixed length, `[T; N]`)", type_name::<V>())),
        }
    }
}

/// The kernel element type of `V`'s elements: a scalar, or (for arrays) a
/// `#[derive(DeviceCopy)]` struct.
fn array_elem<V: DataVar + ?Sized>() -> Option<Elem> {
    match (V::Elem::SCALAR, V::Elem::LAYOUT) {
        (Some(s), _) => Some(Elem::Scalar(s)),
        (None, Some(layout)) if !V::IS_SCALAR => Some(Elem::Struct(layout)),
        _ => None,
    }
}

impl Drop for Args<'_> {
    /// Keeps the lists, emptied, for the thread's next launch.
    fn drop(&mut self) {
        let mut args = std::mem::take(&mut self.args);
        args.clear();
        // SAFETY: an empty `Vec` holds no `KernelArg`, so no borrow of lifetime `'_` is kept;
        // the layout of `Vec<KernelArg<'_>>` does not depend on the lifetime.
        let args: Vec<KernelArg<'static>> = unsafe { std::mem::transmute(args) };
        let mut spare = Spare {
            args,
            params: std::mem::take(&mut self.params),
            fixed: std::mem::take(&mut self.fixed),
            aggregate: std::mem::take(&mut self.aggregate),
        };
        spare.params.clear();
        spare.fixed.clear();
        spare.aggregate.clear();
        // `try_with`: a thread being torn down keeps nothing.
        let _ = SPARE.try_with(|s| s.set(Some(spare)));
    }
}
