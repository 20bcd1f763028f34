//! Running a region as a kernel (what the `Exec::Kernel` arm of an expansion calls): the
//! captured variables become kernel arguments through traits (their types are known to rustc,
//! not to the macro), the kernel's IR is built once per call site and argument signature, and
//! the launch's reductions are combined back into the host's variables.

mod args;
mod struct_value;
pub use args::Args;
pub use struct_value::{whole_struct, StructArray, StructValue};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use acc_core::ir::args::{KernelArg, KernelOutput, ScalarValue};
pub use acc_core::ir::builder::{ArrayRef, KernelBuilder, Value, Var};
pub use acc_core::ir::ReduceOp as Op;
pub use acc_core::ir::{
    AtomicOp, BinaryOp, Elem, Kernel, MathFn, ParamKind, ReduceOp, Scalar, Schedule, UnaryOp,
};
use acc_core::region::RegionSite;
use acc_core::Device;

use acc_core::data::{bytes_of, bytes_of_mut, DataVar, DataVarMut, DeviceCopy};

/// A scalar of IR type `t` from its bytes.
/// A scalar of type `t` from its bytes, as Rust prints it.
pub(crate) fn show_scalar(t: Scalar, b: &[u8]) -> String {
    match scalar_value(t, b) {
        Some(ScalarValue::Bool(x)) => x.to_string(),
        Some(ScalarValue::I32(x)) => x.to_string(),
        Some(ScalarValue::U32(x)) => x.to_string(),
        Some(ScalarValue::F32(x)) => format!("{x:?}"),
        Some(ScalarValue::I64(x) | ScalarValue::ISize(x)) => x.to_string(),
        Some(ScalarValue::U64(x) | ScalarValue::USize(x)) => x.to_string(),
        Some(ScalarValue::F64(x)) => format!("{x:?}"),
        None => format!("{b:02x?}"),
    }
}

fn scalar_value(t: Scalar, b: &[u8]) -> Option<ScalarValue> {
    let w4 = |b: &[u8]| -> Option<[u8; 4]> { b.get(..4)?.try_into().ok() };
    let w8 = |b: &[u8]| -> Option<[u8; 8]> { b.get(..8)?.try_into().ok() };
    Some(match t {
        Scalar::Bool => ScalarValue::Bool(*b.first()? != 0),
        Scalar::I32 => ScalarValue::I32(i32::from_le_bytes(w4(b)?)),
        Scalar::U32 => ScalarValue::U32(u32::from_le_bytes(w4(b)?)),
        Scalar::F32 => ScalarValue::F32(f32::from_le_bytes(w4(b)?)),
        Scalar::I64 => ScalarValue::I64(i64::from_le_bytes(w8(b)?)),
        Scalar::U64 => ScalarValue::U64(u64::from_le_bytes(w8(b)?)),
        Scalar::ISize => ScalarValue::ISize(i64::from_le_bytes(w8(b)?)),
        Scalar::USize => ScalarValue::USize(u64::from_le_bytes(w8(b)?)),
        Scalar::F64 => ScalarValue::F64(f64::from_le_bytes(w8(b)?)),
        // Narrow integers travel widened to 32 bits.
        Scalar::I8 => ScalarValue::I32(*b.first()? as i8 as i32),
        Scalar::U8 => ScalarValue::U32(*b.first()? as u32),
        Scalar::I16 => ScalarValue::I32(i16::from_le_bytes(b.get(..2)?.try_into().ok()?) as i32),
        Scalar::U16 => ScalarValue::U32(u16::from_le_bytes(b.get(..2)?.try_into().ok()?) as u32),
        // A 16-bit float travels as the f32 it stands for (exact).
        Scalar::F16 => ScalarValue::F32(acc_core::ir::builder::half::f16_bits_to_f32(
            u16::from_le_bytes(b.get(..2)?.try_into().ok()?),
        )),
        Scalar::BF16 => ScalarValue::F32(acc_core::ir::builder::half::bf16_bits_to_f32(
            u16::from_le_bytes(b.get(..2)?.try_into().ok()?),
        )),
    })
}

/// A scalar's bytes, as the host stores a value of type `t` (narrow integers truncate, as
/// the device's wrapping arithmetic does).
fn value_bytes(v: ScalarValue, t: Scalar) -> Vec<u8> {
    if let (true, ScalarValue::F32(x)) = (t.is_half(), v) {
        use acc_core::ir::builder::half::{f32_to_bf16_bits, f32_to_f16_bits};
        let bits = if t == Scalar::F16 {
            f32_to_f16_bits(x)
        } else {
            f32_to_bf16_bits(x)
        };
        return bits.to_le_bytes().to_vec();
    }
    let mut b = value_bytes_wide(v);
    b.truncate(t.size() as usize);
    b
}

fn value_bytes_wide(v: ScalarValue) -> Vec<u8> {
    match v {
        ScalarValue::Bool(b) => vec![b as u8],
        ScalarValue::I32(x) => x.to_le_bytes().to_vec(),
        ScalarValue::U32(x) => x.to_le_bytes().to_vec(),
        ScalarValue::F32(x) => x.to_le_bytes().to_vec(),
        ScalarValue::I64(x) | ScalarValue::ISize(x) => x.to_le_bytes().to_vec(),
        ScalarValue::U64(x) | ScalarValue::USize(x) => x.to_le_bytes().to_vec(),
        ScalarValue::F64(x) => x.to_le_bytes().to_vec(),
    }
}

fn type_name<T: ?Sized>() -> &'static str {
    std::any::type_name::<T>()
}

/// An argument of a routine call inside a kernel.
#[derive(Clone)]
pub enum RoutineArg {
    /// A value.
    Scalar(Value),
    /// An array (a slice argument).
    Array(ArrayRef),
    /// A struct value (`let p = ps[i]; f(p)`), which the routine copies; a complex number
    /// loaded whole is one too, and a routine taking a value reads it as one.
    Struct(StructValue),
    /// A scalar local of the caller passed by reference (`&mut seed`): routines are inlined, so
    /// the routine reads and writes the caller's local itself.
    Local(Var),
    /// A private array of the caller passed as a slice (`&mut x`, `&mut x[..]`): the routine
    /// indexes the caller's array itself.
    LocalArray(Var),
}

/// The fields of `self` a `&self` routine reads, as its call passes them (the first
/// arguments): what `__acc_h` is in a routine's builder, as [`Params`] is in a region's.
pub struct RoutineSelf<'a> {
    args: &'a [RoutineArg],
    /// A local holding each scalar field's value (one expression, used many times).
    locals: Vec<Option<Var>>,
}

impl<'a> RoutineSelf<'a> {
    /// The fields `args` (named `names`, for messages).
    pub fn new(b: &mut KernelBuilder, args: &'a [RoutineArg], names: &[&str]) -> RoutineSelf<'a> {
        let locals = args
            .iter()
            .zip(names)
            .map(|(a, name)| match a {
                RoutineArg::Scalar(v) => Some(b.local(name, None, Some(*v))),
                RoutineArg::Local(v) => Some(*v),
                RoutineArg::Array(_) | RoutineArg::Struct(_) | RoutineArg::LocalArray(_) => None,
            })
            .collect();
        RoutineSelf { args, locals }
    }
    /// The value of scalar field `i`.
    pub fn scalar(&self, b: &mut KernelBuilder, i: usize) -> Value {
        match self.locals.get(i).copied().flatten() {
            Some(v) => b.get(v),
            None => {
                b.fail(format!(
                    "a field of `self` (argument {i} of a routine) is an array, used as a value"
                ));
                b.lit_bool(false)
            }
        }
    }
    /// Array field `i`.
    pub fn array(&self, i: usize) -> Option<ArrayRef> {
        match self.args.get(i) {
            Some(RoutineArg::Array(a)) => Some(*a),
            _ => None,
        }
    }
}

/// The value of a `const` or `static` item a routine reads (its value is rustc's), as a
/// literal of its type in the kernel.
pub trait RoutineConst {
    /// The literal.
    fn literal(&self, b: &mut KernelBuilder) -> Value;
}

macro_rules! routine_const_int {
    ($($t:ty => $s:ident),*) => {$(
        impl RoutineConst for $t {
            fn literal(&self, b: &mut KernelBuilder) -> Value {
                b.lit_int(*self as i128, Some(Scalar::$s))
            }
        }
    )*};
}
routine_const_int!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, isize => ISize, u8 => U8, u16 => U16, u32 => U32, u64 => U64, usize => USize);

impl RoutineConst for f32 {
    fn literal(&self, b: &mut KernelBuilder) -> Value {
        b.lit_float(f64::from(*self), Some(Scalar::F32))
    }
}

impl RoutineConst for f64 {
    fn literal(&self, b: &mut KernelBuilder) -> Value {
        b.lit_float(*self, Some(Scalar::F64))
    }
}

impl RoutineConst for bool {
    fn literal(&self, b: &mut KernelBuilder) -> Value {
        b.lit_bool(*self)
    }
}

/// A parameter as the kernel builder sees it.
#[derive(Clone, Copy)]
pub enum Param {
    /// A scalar's value.
    Scalar(Value),
    /// An array.
    Array(ArrayRef),
}

/// The parameters of a kernel under construction, by index.
pub struct Params {
    device_type: acc_core::DeviceType,
    params: Vec<Param>,
    fixed: Vec<Option<usize>>,
    /// The complex scalars: the index of each one's first (real) part.
    complex: Vec<usize>,
    /// 2-D arrays: the parameter and its row length.
    rows: Vec<(usize, usize)>,
}

impl Params {
    /// The row length of 2-D array parameter `i` (`M` of `[[T; M]; N]`), for `a[r][c]`
    /// indexed as `a[r * M + c]`; the kernel's error where `i` is not such an array.
    pub fn row(&self, b: &mut KernelBuilder, i: usize, name: &str) -> Value {
        match self.rows.iter().find(|(p, _)| *p == i) {
            Some(&(_, m)) => b.lit_int(m as i128, Some(Scalar::USize)),
            None => {
                b.fail(format!("`{name}[..][..]`: kernels index two levels of an array only for the reduction of a fixed-size 2-D array (`[[T; M]; N]`)"));
                b.lit_int(1, Some(Scalar::USize))
            }
        }
    }

    /// Scalar parameter `i` (a fresh expression each time).
    pub fn scalar(&self, b: &mut KernelBuilder, i: usize) -> Value {
        let _ = &self.params[i];
        if self.complex.contains(&i) {
            let re = b.param_scalar_value(i as u32);
            let im = b.param_scalar_value(i as u32 + 1);
            return b.complex(re, im);
        }
        b.param_scalar_value(i as u32)
    }
    /// Array parameter `i`.
    pub fn array(&self, i: usize) -> Option<ArrayRef> {
        match self.params.get(i) {
            Some(Param::Array(a)) => Some(*a),
            _ => None,
        }
    }
    /// A private copy of parameter `i` for the region or a loop (3.3 sections 2.5.13, 2.5.14,
    /// 2.9.10): a local initialized from the parameter when `first`; an array parameter needs a
    /// length its type fixes (`[T; N]`). What cannot be privatized is recorded as the
    /// kernel's error.
    pub fn private(
        &self,
        b: &mut KernelBuilder,
        i: usize,
        name: &str,
        first: bool,
        array: bool,
    ) -> Var {
        match (self.params.get(i), array) {
            (Some(Param::Scalar(_)), false) if self.complex.contains(&i) => {
                // A complex scalar's private copy: a complex local (from its value when
                // `first`, else from zero, which the body assigns before reading).
                let init = if first {
                    self.scalar(b, i)
                } else {
                    let (re, im) = (b.lit_float(0.0, None), b.lit_float(0.0, None));
                    let t = b.param_type(i as u32);
                    let re = b.cast(re, t);
                    b.complex(re, im)
                };
                b.local(name, None, Some(init))
            }
            (Some(Param::Scalar(_)), false) => {
                let t = b.param_type(i as u32);
                let init = if first {
                    Some(b.param_scalar_value(i as u32))
                } else {
                    None
                };
                b.local(name, Some(t), init)
            }
            (Some(Param::Array(a)), true) => {
                let a = *a;
                let Some(elem) = a.elem().scalar() else {
                    b.fail(format!("a private copy of `{name}`: arrays of structs cannot be private in kernels yet (arrays of scalars can)"));
                    return b.local(name, Some(Scalar::I32), None);
                };
                // Each thread's copy: in its own memory up to 32 KiB, else in device memory
                // (`acc_core::ir::spill`), the grid capped to the copies that fit.
                let Some(n) = self
                    .fixed
                    .get(i)
                    .copied()
                    .flatten()
                    .and_then(|n| u32::try_from(n).ok())
                else {
                    b.fail(format!("a private copy of `{name}`: its length is {}, and private arrays in kernels hold at most {} elements", self.fixed.get(i).copied().flatten().map_or("unknown".to_string(), |n| n.to_string()), u32::MAX));
                    // Of the right element type, so that no type error follows this one.
                    return b.local_array(name, elem, 1);
                };
                let v = b.local_array(name, elem, n);
                if first {
                    b.copy_into(v, a);
                }
                v
            }
            _ => {
                b.fail(format!(
                    "a private copy of `{name}`: it is {} here",
                    if array {
                        "indexed but not an array"
                    } else {
                        "an array used as a scalar"
                    }
                ));
                b.local(name, Some(Scalar::I32), None)
            }
        }
    }

    /// `acc::on_device(ty)` in the kernel (3.3 section 3.2.13): whether the device the kernel
    /// is built for is of type `ty`.
    pub fn on_device(&self, ty: acc_core::DeviceType) -> bool {
        use acc_core::DeviceType as T;
        match ty {
            T::NotHost | T::Default => true,
            T::None | T::Host => false,
            t => t == self.device_type,
        }
    }

    /// The private array of an element-wise reduction of array parameter `i` (its type fixes
    /// its length).
    pub fn reduction_array(
        &self,
        b: &mut KernelBuilder,
        i: usize,
        name: &str,
        op: ReduceOp,
    ) -> Var {
        match (self.params.get(i), self.fixed.get(i).copied().flatten()) {
            (Some(Param::Array(a)), Some(n)) if n <= 1024 && a.elem().scalar().is_some() => b
                .reduction_local_array(
                    name,
                    a.elem().scalar().unwrap_or(Scalar::I32),
                    n as u32,
                    op,
                ),
            _ => {
                b.fail(format!("the reduction of `{name}`: arrays reduce in kernels when their type fixes a length up to 1024 (`[T; N]`)"));
                b.local(name, Some(Scalar::I32), None)
            }
        }
    }

    /// The private copy of scalar reduction variable `i` (3.3 section 2.5.15), reduced into
    /// its parameter: a complex number's parts into its two.
    pub fn reduction_local(
        &self,
        b: &mut KernelBuilder,
        i: usize,
        name: &str,
        op: ReduceOp,
    ) -> Var {
        let t = b.param_type(i as u32);
        if self.complex.contains(&i) {
            return b.complex_reduction_local(name, t, op, i as u32, i as u32 + 1);
        }
        let v = b.reduction_local(name, t, op);
        b.reduce_into(v, op, i as u32);
        v
    }
}

/// A kernel built for one argument signature, or why it could not be.
type Built = Arc<Result<Arc<Kernel>, String>>;

/// What a kernel is built for: the device type, the parameters' kinds, the lengths of
/// privatized arrays whose type does not fix them, and the array parameters narrowed to a
/// part of their array.
type Signature = (
    acc_core::DeviceType,
    Vec<ParamKind>,
    Vec<(usize, usize)>,
    Vec<(usize, usize, usize)>,
);

/// Kernels built at one call site, by device type and argument signature.
pub struct KernelCache {
    map: Mutex<Option<SiteKernels>>,
}

/// A call site's kernels, and the last one launched (a time loop launches the same one again:
/// found without making or hashing its signature).
struct SiteKernels {
    all: HashMap<Signature, Built>,
    last: Option<(Signature, Built)>,
    /// The last launch whose arrays were all wholly present: its device (by address), the
    /// present table's generation then and its arrays (address, bytes). The same arrays on
    /// the same device at the same generation are present still: nothing to narrow.
    present: Option<PresentArrays>,
}

/// A device (by address), a present-table generation and arrays (address, bytes).
type PresentArrays = (usize, u64, Vec<(usize, usize)>);

impl KernelCache {
    /// An empty cache (for a `static`).
    pub const fn new() -> KernelCache {
        KernelCache {
            map: Mutex::new(None),
        }
    }
}

impl Default for KernelCache {
    fn default() -> Self {
        KernelCache::new()
    }
}

/// Whether `s` is the signature of a launch on `ty` with `args`.
fn same_signature(s: &Signature, ty: acc_core::DeviceType, args: &Args<'_>) -> bool {
    s.0 == ty
        && s.1.len() == args.params.len()
        && s.1.iter().zip(&args.params).all(|(a, (_, b))| a == b)
        && s.2 == args.private_lens
        && s.3 == args.windows
}

/// The function building a region's kernel body.
pub type BuildFn<'f> = &'f dyn Fn(&mut KernelBuilder, &Params) -> Result<(), String>;

/// Builds (once per signature) and launches the region's kernel; panics, naming the region,
/// when it cannot run there.
pub fn launch(
    device: &dyn Device,
    on: &acc_core::region::Launch,
    site: &RegionSite,
    cache: &KernelCache,
    args: &mut Args<'_>,
    build: BuildFn<'_>,
) -> KernelOutput {
    let kernel = {
        let mut map = cache.map.lock().unwrap_or_else(|e| e.into_inner());
        let map = map.get_or_insert_with(|| SiteKernels {
            all: HashMap::new(),
            last: None,
            present: None,
        });
        let here = device as *const dyn Device as *const () as usize;
        let generation = device.own_memory().map_or(0, |m| m.table.generation());
        let known = map.present.as_ref().is_some_and(|(d, g, arrays)| {
            *d == here && *g == generation && arrays.iter().copied().eq(args.arrays())
        });
        if !known {
            map.present = args
                .narrow_to_present(device)
                .then(|| (here, generation, args.arrays().collect()));
        }
        let ty = device.device_type();
        match &map.last {
            Some((s, k)) if same_signature(s, ty, args) => Arc::clone(k),
            _ => {
                let signature: Signature = (
                    ty,
                    args.params.iter().map(|(_, k)| k.clone()).collect(),
                    args.private_lens.clone(),
                    args.windows.clone(),
                );
                let k = Arc::clone(map.all.entry(signature.clone()).or_insert_with(|| {
                    Arc::new(build_kernel(ty, site, args, build).map(Arc::new))
                }));
                map.last = Some((signature, Arc::clone(&k)));
                k
            }
        }
    };
    if let Some(why) = &args.unsupported {
        fail(site, device, why);
    }
    let kernel = match kernel.as_ref() {
        Ok(k) => k,
        Err(e) => fail(site, device, e),
    };
    if on.default_present() {
        require_present(device, site, args, kernel);
    }
    let first_info = acc_core::observe::info_first(site as *const _ as usize, device.device_type());
    if first_info {
        let proof = acc_core::ir::bounds::prove(kernel, &args.args, true);
        super::info::kernel_report(site, device, kernel, proof);
    }
    match device.launch_kernel_queued(kernel, &mut args.args, on.queue(), on.waits()) {
        Ok(out) => {
            if first_info && acc_core::observe::info_level() >= 2 {
                super::info::kernel_resources(site, device, kernel);
            }
            out
        }
        // An index outside the part of the array on the device (a window, above).
        Err(acc_core::Error::IndexOutOfBounds { array, index, len })
            if args.window_of(&array).is_some() =>
        {
            let (lo, whole) = args.window_of(&array).unwrap_or_default();
            let at = if index >= u64::MAX - lo as u64 {
                "below it".to_string()
            } else {
                format!("at index {}", index + lo as u64)
            };
            panic!(
                "acc: `{array}` is accessed {at}, outside the part of it on the device, `{array}[{lo}..{}]` (of length {whole}), in the region in `{}` at {}, on the {} device: only that part was put on the device, by a data clause naming a subarray (3.3 section 2.7.1)",
                lo as u64 + len,
                site.function,
                site.location,
                device.device_type()
            )
        }
        // As Rust reports it, at the region (docs/guide/regions.md).
        Err(e @ acc_core::Error::IndexOutOfBounds { .. }) => panic!(
            "acc: {e} in the region in `{}` at {}, on the {} device",
            site.function,
            site.location,
            device.device_type()
        ),
        Err(e) => fail(site, device, &e.to_string()),
    }
}

/// `default(present)` (3.3 section 2.6.2): every array the region uses is present already.
/// Arrays in the region's own data clauses were made present when it began, so an absent one
/// is an array no clause names.
fn require_present(device: &dyn Device, site: &RegionSite, args: &Args<'_>, kernel: &Kernel) {
    let Some(mem) = device.own_memory() else {
        return;
    };
    // An array the kernel never touches (a `private` copy's original) need not be there.
    let accessed = kernel.accessed_params();
    for (p, (name, _)) in args.params.iter().enumerate() {
        if !accessed.get(p).copied().unwrap_or(true) {
            continue;
        }
        let bytes: &[u8] = match &args.args[p] {
            KernelArg::Read(d) => d,
            KernelArg::Write(d) => d,
            KernelArg::Scalar(_) => continue,
        };
        if args.aggregate[p]
            && !bytes.is_empty()
            && !mem.table.is_present(bytes.as_ptr() as usize, bytes.len())
        {
            fail(site, device, &format!(
                "`{name}` is not present on the device, and the region has `default(present)`: put it in a data clause of this region or an enclosing `data` construct, or `acc::enter_data!` it first (3.3 section 2.6.2)"
            ));
        }
    }
}

fn build_kernel(
    device_type: acc_core::DeviceType,
    site: &RegionSite,
    args: &Args<'_>,
    build: BuildFn<'_>,
) -> Result<Kernel, String> {
    let mut b = KernelBuilder::new(format!("{} at {}", site.function, site.location));
    let mut params = Vec::new();
    for (name, kind) in &args.params {
        params.push(match kind {
            ParamKind::Scalar(s) => Param::Scalar(b.param_scalar(name, *s)),
            ParamKind::Array { elem, writable } => {
                Param::Array(b.param_array(name, *elem, *writable))
            }
        });
    }
    for &(p, start, len) in &args.windows {
        if let Param::Array(a) = params[p] {
            let (start, len) = (
                b.param_scalar_value(start as u32),
                b.param_scalar_value(len as u32),
            );
            params[p] = Param::Array(b.window(a, start, len));
        }
    }
    let mut fixed = args.fixed.clone();
    for &(p, len) in &args.private_lens {
        if let Some(f) = fixed.get_mut(p) {
            *f = Some(len);
        }
    }
    let params = Params {
        device_type,
        params,
        fixed,
        complex: args.complex.clone(),
        rows: args.rows.clone(),
    };
    build(&mut b, &params)?;
    let k = b.finish().map_err(|e| e.to_string())?;
    acc_core::observe::dump("ir", &k.name, || acc_core::ir::print::print(&k));
    // Where the kernel runs elsewhere, `ACC_DUMP=ptx` still shows what the nvidia device would
    // run (for sm_80, which ptxas also assembles for newer targets): CI assembles every
    // kernel of the behaviour suite this way, on a machine without a GPU.
    if device_type != acc_core::DeviceType::Nvidia {
        acc_core::observe::dump("ptx", &k.name, || {
            match acc_device::ptx::lower(&k, acc_device::ptx::Target::exact(80)) {
                Ok(l) => l.ptx,
                Err(e) => format!("// acc: not lowered to PTX: {e}\n"),
            }
        });
        // And the variant with 32-bit indices that launches proven in bounds may run.
        if acc_core::ir::narrow::narrowable(&k) {
            let narrow = acc_core::ir::plan::Variant {
                proven: true,
                narrow: true,
            };
            acc_core::observe::dump("ptx", &format!("{} narrow", k.name), || {
                match acc_device::ptx::lower_with(&k, acc_device::ptx::Target::exact(80), narrow) {
                    Ok(l) => l.ptx,
                    Err(e) => format!("// acc: not lowered to PTX: {e}\n"),
                }
            });
        }
    }
    Ok(k)
}

/// The reduction of parameter `i`'s launch: `original op partial`, written into `var`.
pub fn reduce_back<V: DataVar + DataVarMut>(
    device: &dyn Device,
    var: &mut V,
    out: &KernelOutput,
    i: usize,
    op: ReduceOp,
) {
    if let (true, Some(t)) = (V::IS_SCALAR, V::Elem::LAYOUT.and_then(|l| l.complex())) {
        // A complex number: the partials of its parts, parameters `i` and `i + 1`.
        let size = t.size() as usize;
        let dst = bytes_of_mut(var.elems_mut());
        if op == ReduceOp::Mul {
            // A product: the partials come as pairs (`ReduceOp::ComplexMul`), in order.
            let part = |p: usize| {
                out.reductions
                    .iter()
                    .filter(move |(q, _)| *q as usize == p)
                    .map(|(_, v)| *v)
            };
            let (Some(re), Some(im)) = (
                scalar_value(t, &dst[..size]),
                scalar_value(t, &dst[size..2 * size]),
            ) else {
                return;
            };
            let mut value = (re, im);
            for pair in part(i).zip(part(i + 1)) {
                if let Some(v) = ScalarValue::complex_mul(value, pair) {
                    value = v;
                }
            }
            dst[..size].copy_from_slice(&value_bytes(value.0, t));
            dst[size..2 * size].copy_from_slice(&value_bytes(value.1, t));
            super::data_clauses::reduction_to_device(device, &*var);
            return;
        }
        for (part, p) in [(0, i), (1, i + 1)] {
            let cell = &mut dst[part * size..(part + 1) * size];
            let Some(mut value) = scalar_value(t, cell) else {
                return;
            };
            for (_, partial) in out.reductions.iter().filter(|(q, _)| *q as usize == p) {
                value = value.combine(op, *partial);
            }
            cell.copy_from_slice(&value_bytes(value, t));
        }
        super::data_clauses::reduction_to_device(device, &*var);
        return;
    }
    // (The scalars of a 2-D array's rows, row after row.)
    let Some(elem) = V::Elem::SCALAR.or(V::Elem::ROW.map(|(s, _)| s)) else {
        return;
    };
    // A variable may have several results: its gang loops' partials and what gang-redundant
    // code contributed; each is combined in, in the order the kernel produced them.
    let mut array = out
        .array_reductions
        .iter()
        .filter(|(p, _)| *p as usize == i)
        .peekable();
    if array.peek().is_some() {
        // Element by element (3.3 section 2.5.15).
        let size = elem.size() as usize;
        let dst = bytes_of_mut(var.elems_mut());
        for (_, partials) in array {
            for (k, partial) in partials.iter().enumerate() {
                let Some(cell) = dst.get_mut(k * size..(k + 1) * size) else {
                    break;
                };
                if let Some(original) = scalar_value(elem, cell) {
                    cell.copy_from_slice(&value_bytes(original.combine(op, *partial), elem));
                }
            }
        }
        super::data_clauses::reduction_to_device(device, &*var);
        return;
    }
    let mut scalar = out
        .reductions
        .iter()
        .filter(|(p, _)| *p as usize == i)
        .peekable();
    if scalar.peek().is_none() {
        return;
    }
    let Some(mut value) = scalar_value(elem, bytes_of(var.elems())) else {
        return;
    };
    for (_, partial) in scalar {
        value = value.combine(op, *partial);
    }
    let bytes = value_bytes(value, elem);
    let dst = bytes_of_mut(var.elems_mut());
    if dst.len() == bytes.len() {
        dst.copy_from_slice(&bytes);
    }
    super::data_clauses::reduction_to_device(device, &*var);
}

/// The region's value, read back from the launch (the kernel arm of a region that ends with
/// one of its scalar variables).
pub fn region_value<T: DeviceCopy>(out: &KernelOutput) -> T {
    let bytes = match (out.value, T::SCALAR) {
        (Some(v), Some(t)) => value_bytes(v, t),
        _ => panic!("acc: internal error: a kernel did not give back its region's value"),
    };
    assert_eq!(
        bytes.len(),
        std::mem::size_of::<T>(),
        "acc: internal error: the region's value has the wrong size"
    );
    // SAFETY: `bytes` holds a value of `T`'s scalar type, as the host stores it (`bool` as 0
    // or 1), and `T` is that scalar.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) }
}

#[cold]
fn fail(site: &RegionSite, device: &dyn Device, why: &str) -> ! {
    let kind = match site.kind {
        acc_core::region::ComputeKind::Parallel => "parallel",
        acc_core::region::ComputeKind::Kernels => "kernels",
        acc_core::region::ComputeKind::Serial => "serial",
    };
    panic!(
        "acc: `{kind}` region in `{}` at {}: cannot run on the {} device: {why}",
        site.function,
        site.location,
        device.device_type()
    )
}

/// The type of the device a kernel arm launches on: a region with `device_type` sections has
/// an arm per GPU device type (3.3 section 2.4).
pub fn device_type_of(device: &dyn Device) -> acc_core::DeviceType {
    device.device_type()
}

/// The arm of a region the macro could not translate for kernel devices.
#[cold]
pub fn unsupported(site: &RegionSite, device: &dyn Device, why: &str) -> ! {
    fail(
        site,
        device,
        &format!("not supported on kernel devices yet: {why}"),
    )
}

/// A captured variable's type, probed for how it becomes a kernel argument: the expansion
/// calls `(&&Probe::of(&v)).acc_kind()` with [`KindData`], [`KindScalar`] and [`KindRefuse`] in
/// scope, and method resolution takes the first that applies. Data-clause types give
/// [`DataTag`], other device scalars (a generic `T: DeviceCopy`) [`ScalarTag`], and anything
/// else (a generic type not known to be device data) [`RefuseTag`]: a refusal at run time, on
/// kernel devices only, instead of a compile error in code that also runs on the host.
pub struct Probe<V: ?Sized>(std::marker::PhantomData<V>);

impl<V: ?Sized> Probe<V> {
    /// The probe of `v`'s type.
    pub fn of(_: &V) -> Probe<V> {
        Probe(std::marker::PhantomData)
    }
}

impl<V: ?Sized> Clone for Probe<V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<V: ?Sized> Copy for Probe<V> {}

/// See [`Probe`]: data-clause types.
pub trait KindData: Sized {
    /// The tag.
    fn acc_kind(self) -> DataTag {
        DataTag
    }
}
impl<V: DataVar + ?Sized> KindData for &&Probe<V> {}

/// See [`Probe`]: device scalars of a generic type.
pub trait KindScalar: Sized {
    /// The tag.
    fn acc_kind(self) -> ScalarTag {
        ScalarTag
    }
}
impl<T: DeviceCopy> KindScalar for &Probe<T> {}

/// See [`Probe`]: anything else.
pub trait KindRefuse: Sized {
    /// The tag.
    fn acc_kind(self) -> RefuseTag {
        RefuseTag
    }
}
impl<V: ?Sized> KindRefuse for Probe<V> {}

/// Arguments of data-clause types.
pub struct DataTag;
/// Arguments of a generic device scalar type.
pub struct ScalarTag;
/// Arguments of types not known to be device data.
pub struct RefuseTag;

impl DataTag {
    /// A variable the region reads.
    pub fn read<'a, V: DataVar + ?Sized>(
        self,
        args: &mut Args<'a>,
        name: &'static str,
        v: &'a V,
    ) -> usize {
        args.read(name, v)
    }
    /// A variable the region writes.
    pub fn write<'a, V: DataVarMut + ?Sized>(
        self,
        args: &mut Args<'a>,
        name: &'static str,
        v: &'a mut V,
    ) -> usize {
        args.write(name, v)
    }
    /// A reduction variable.
    pub fn reduction<'a, V: DataVar>(
        self,
        args: &mut Args<'a>,
        name: &'static str,
        v: &'a V,
        op: ReduceOp,
    ) -> usize {
        args.reduction(name, v, op)
    }
    /// Combines the launch's reduction into the variable.
    pub fn reduce_back<V: DataVar + DataVarMut>(
        self,
        device: &dyn Device,
        v: &mut V,
        out: &KernelOutput,
        i: usize,
        op: ReduceOp,
    ) {
        reduce_back(device, v, out, i, op)
    }
}

impl ScalarTag {
    /// A scalar the region reads.
    pub fn read<'a, T: DeviceCopy>(
        self,
        args: &mut Args<'a>,
        name: &'static str,
        v: &'a T,
    ) -> usize {
        args.read(name, ScalarOf::of(v))
    }
    /// A scalar the region writes: a one-element array.
    pub fn write<'a, T: DeviceCopy>(
        self,
        args: &mut Args<'a>,
        name: &'static str,
        v: &'a mut T,
    ) -> usize {
        args.write(name, std::slice::from_mut(v))
    }
    /// A reduction variable.
    pub fn reduction<'a, T: DeviceCopy>(
        self,
        args: &mut Args<'a>,
        name: &'static str,
        v: &'a T,
        op: ReduceOp,
    ) -> usize {
        args.reduction(name, ScalarOf::of(v), op)
    }
    /// Combines the launch's reduction into the variable.
    pub fn reduce_back<T: DeviceCopy>(
        self,
        device: &dyn Device,
        v: &mut T,
        out: &KernelOutput,
        i: usize,
        op: ReduceOp,
    ) {
        let mut s = ScalarOf(*v);
        reduce_back(device, &mut s, out, i, op);
        *v = s.0;
    }
}

impl RefuseTag {
    fn why<V: ?Sized>(args: &mut Args<'_>, name: &'static str) -> usize {
        args.refuse(
            name,
            format!("its type `{}` is not known to be device data here (in a generic function, bound the type parameter with `acc::DeviceCopy`)", type_name::<V>()),
        )
    }
    /// Refused.
    pub fn read<V: ?Sized>(self, args: &mut Args<'_>, name: &'static str, _: &V) -> usize {
        Self::why::<V>(args, name)
    }
    /// Refused.
    pub fn write<V: ?Sized>(self, args: &mut Args<'_>, name: &'static str, _: &mut V) -> usize {
        Self::why::<V>(args, name)
    }
    /// Refused.
    pub fn reduction<V: ?Sized>(
        self,
        args: &mut Args<'_>,
        name: &'static str,
        _: &V,
        _: ReduceOp,
    ) -> usize {
        Self::why::<V>(args, name)
    }
    /// Never reached: the launch was refused.
    pub fn reduce_back<V: ?Sized>(
        self,
        _: &dyn Device,
        _: &mut V,
        _: &KernelOutput,
        _: usize,
        _: ReduceOp,
    ) {
    }
}

/// A device scalar of a generic type, as a data-clause variable.
#[repr(transparent)]
struct ScalarOf<T>(T);

impl<T> ScalarOf<T> {
    fn of(v: &T) -> &ScalarOf<T> {
        // SAFETY: `ScalarOf<T>` is a transparent wrapper of `T`.
        unsafe { &*(v as *const T as *const ScalarOf<T>) }
    }
}

impl<T: DeviceCopy> DataVar for ScalarOf<T> {
    type Elem = T;
    const IS_SCALAR: bool = true;
    fn elems(&self) -> &[T] {
        std::slice::from_ref(&self.0)
    }
}
impl<T: DeviceCopy> DataVarMut for ScalarOf<T> {
    fn elems_mut(&mut self) -> &mut [T] {
        std::slice::from_mut(&mut self.0)
    }
}
