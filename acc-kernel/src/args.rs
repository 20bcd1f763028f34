//! What a kernel launch takes and gives back, the same for every device that runs kernels.

use super::{Kernel, ParamId, ParamKind, ReduceOp, Scalar};

/// A scalar argument's value (variants named after the Rust type they hold; `USize` and
/// `ISize` keep the host's 64 bits, a backend narrows them if its indices are smaller).
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    Bool(bool),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    ISize(i64),
    USize(u64),
    F32(f32),
    F64(f64),
}

impl ScalarValue {
    /// The IR type of the value.
    pub fn ty(self) -> Scalar {
        match self {
            ScalarValue::Bool(_) => Scalar::Bool,
            ScalarValue::I32(_) => Scalar::I32,
            ScalarValue::U32(_) => Scalar::U32,
            ScalarValue::I64(_) => Scalar::I64,
            ScalarValue::U64(_) => Scalar::U64,
            ScalarValue::ISize(_) => Scalar::ISize,
            ScalarValue::USize(_) => Scalar::USize,
            ScalarValue::F32(_) => Scalar::F32,
            ScalarValue::F64(_) => Scalar::F64,
        }
    }

    /// A value of type `t` as a device writes it: 8- and 16-bit integers and `bool` in a
    /// 32-bit word, `usize`/`isize` in `index_bytes` (4 where the device indexes with 32 bits:
    /// then `u32::MAX` stands for `usize::MAX`), the others at their own width.
    pub fn from_device_bytes(t: Scalar, b: &[u8], index_bytes: usize) -> Option<ScalarValue> {
        let w4 = |b: &[u8]| -> Option<[u8; 4]> { b.get(..4)?.try_into().ok() };
        let w8 = |b: &[u8]| -> Option<[u8; 8]> { b.get(..8)?.try_into().ok() };
        Some(match t {
            Scalar::Bool => ScalarValue::Bool(u32::from_le_bytes(w4(b)?) != 0),
            Scalar::I8 | Scalar::I16 | Scalar::I32 => ScalarValue::I32(i32::from_le_bytes(w4(b)?)),
            Scalar::U8 | Scalar::U16 | Scalar::U32 => ScalarValue::U32(u32::from_le_bytes(w4(b)?)),
            Scalar::ISize if index_bytes == 4 => {
                ScalarValue::ISize(i32::from_le_bytes(w4(b)?) as i64)
            }
            Scalar::USize if index_bytes == 4 => {
                ScalarValue::USize(match u32::from_le_bytes(w4(b)?) {
                    u32::MAX => u64::MAX,
                    v => v as u64,
                })
            }
            Scalar::ISize => ScalarValue::ISize(i64::from_le_bytes(w8(b)?)),
            Scalar::USize => ScalarValue::USize(u64::from_le_bytes(w8(b)?)),
            Scalar::I64 => ScalarValue::I64(i64::from_le_bytes(w8(b)?)),
            Scalar::U64 => ScalarValue::U64(u64::from_le_bytes(w8(b)?)),
            Scalar::F32 => ScalarValue::F32(f32::from_le_bytes(w4(b)?)),
            Scalar::F64 => ScalarValue::F64(f64::from_le_bytes(w8(b)?)),
            // A 16-bit float's value in a kernel is held as the f32 it stands for.
            Scalar::F16 | Scalar::BF16 => ScalarValue::F32(f32::from_le_bytes(w4(b)?)),
        })
    }

    /// Partial results combined with `op` in the order given (how every device combines its
    /// per-workgroup or per-block partials, so that results are deterministic for a grid).
    pub fn fold(
        op: ReduceOp,
        partials: impl IntoIterator<Item = ScalarValue>,
    ) -> Option<ScalarValue> {
        partials.into_iter().reduce(|a, b| a.combine(op, b))
    }

    /// The complex product `(a.0 + a.1 i)(b.0 + b.1 i)` of two pairs of parts, computed as
    /// num_complex does (`ReduceOp::ComplexMul`); `None` unless all four are floats of one
    /// type.
    pub fn complex_mul(
        a: (ScalarValue, ScalarValue),
        b: (ScalarValue, ScalarValue),
    ) -> Option<(ScalarValue, ScalarValue)> {
        use ScalarValue::*;
        match (a, b) {
            ((F32(a), F32(b)), (F32(c), F32(d))) => Some((F32(a * c - b * d), F32(a * d + b * c))),
            ((F64(a), F64(b)), (F64(c), F64(d))) => Some((F64(a * c - b * d), F64(a * d + b * c))),
            _ => None,
        }
    }

    /// `self op other`, for combining reduction partials in order. (A complex product combines
    /// pairs: [`ScalarValue::complex_mul`]; here it leaves `self`.)
    pub fn combine(self, op: ReduceOp, other: ScalarValue) -> ScalarValue {
        use ScalarValue::*;
        macro_rules! num {
            ($a:expr, $b:expr, $ctor:ident) => {
                match op {
                    ReduceOp::Add => $ctor($a + $b),
                    ReduceOp::Mul => $ctor($a * $b),
                    ReduceOp::Max => $ctor(if $b > $a { $b } else { $a }),
                    ReduceOp::Min => $ctor(if $b < $a { $b } else { $a }),
                    _ => $ctor($a),
                }
            };
        }
        macro_rules! int {
            ($a:expr, $b:expr, $ctor:ident) => {
                match op {
                    ReduceOp::Add => $ctor($a.wrapping_add($b)),
                    ReduceOp::Mul => $ctor($a.wrapping_mul($b)),
                    ReduceOp::BitAnd => $ctor($a & $b),
                    ReduceOp::BitOr => $ctor($a | $b),
                    ReduceOp::BitXor => $ctor($a ^ $b),
                    _ => num!($a, $b, $ctor),
                }
            };
        }
        match (self, other) {
            (F32(a), F32(b)) => match op {
                ReduceOp::Max => F32(a.max(b)),
                ReduceOp::Min => F32(a.min(b)),
                _ => num!(a, b, F32),
            },
            (F64(a), F64(b)) => match op {
                ReduceOp::Max => F64(a.max(b)),
                ReduceOp::Min => F64(a.min(b)),
                _ => num!(a, b, F64),
            },
            (I32(a), I32(b)) => int!(a, b, I32),
            (U32(a), U32(b)) => int!(a, b, U32),
            (I64(a), I64(b)) => int!(a, b, I64),
            (U64(a), U64(b)) => int!(a, b, U64),
            (ISize(a), ISize(b)) => int!(a, b, ISize),
            (USize(a), USize(b)) => int!(a, b, USize),
            (Bool(a), Bool(b)) => Bool(match op {
                ReduceOp::BitAnd | ReduceOp::And | ReduceOp::Min => a & b,
                ReduceOp::BitXor => a ^ b,
                _ => a | b,
            }),
            (a, _) => a,
        }
    }
}

/// Where a backend's lowering of a kernel reduction leaves its result (the same for every
/// backend that reduces in blocks or workgroups).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReductionSlot {
    /// The operator.
    pub op: ReduceOp,
    /// The reduced type.
    pub ty: Scalar,
    /// The parameter its result is combined into (a scalar, or an array reduced element-wise),
    /// or `None` for a reduction into a region local, which an entry point of one thread
    /// (invocation) folds into the local on the device.
    pub into: Option<ParamId>,
    /// The entry point that writes its per-block partials, or `None` when sequential code
    /// computed it: its value is then the local's, at `local_offset` in the locals buffer.
    pub entry: Option<usize>,
    /// Where the local lives in the locals buffer (when `entry` is `None`).
    pub local_offset: u32,
    /// Where a complex product's imaginary part (the next local) lives in the locals buffer
    /// (when `entry` is `None` and `op` is [`ReduceOp::ComplexMul`]; 0 otherwise).
    pub imag_offset: u32,
    /// Elements reduced: 1 for a scalar, the length of an array reduced element-wise (its
    /// partials are laid out block by block, `len` each).
    pub len: u32,
}

/// The slots of the compute-level reductions whose value sequential code leaves in a region
/// local, after a backend has given slots to the parallel loops' partials: a reduction no loop
/// reduces, and one that gang-redundant code also updates
/// ([`Kernel::reductions_updated_outside_loops`]), whose local then holds that contribution.
/// `local_slot` gives a scalar local's type and offset in the locals buffer; `Err` names a
/// reduction whose value has nowhere to live (an array local).
pub fn sequential_reduction_slots(
    k: &Kernel,
    reduced_in_loops: &std::collections::BTreeSet<super::LocalId>,
    local_slot: impl Fn(super::LocalId) -> Option<(Scalar, u32)>,
) -> Result<Vec<ReductionSlot>, String> {
    let outside = k.reductions_updated_outside_loops();
    let mut slots = Vec::new();
    for (red, into) in &k.reductions {
        if reduced_in_loops.contains(&red.local) && !outside.contains(&red.local) {
            continue;
        }
        let imag_offset = match red.op {
            ReduceOp::ComplexMul => match local_slot(red.local + 1) {
                Some((_, off)) => off,
                None => {
                    let name = &k.function.locals[red.local as usize].name;
                    return Err(format!(
                        "internal error: the imaginary part of the complex reduction `{}` has no place in the locals buffer",
                        name.trim_end_matches(".re")
                    ));
                }
            },
            _ => 0,
        };
        let Some((ty, off)) = local_slot(red.local) else {
            let name = &k.function.locals[red.local as usize].name;
            return Err(format!(
                "the array reduction into `{name}` is updated outside the region's loops (gang-redundant code), which kernel devices do not support yet"
            ));
        };
        slots.push(ReductionSlot {
            op: red.op,
            ty,
            into: Some(*into),
            entry: None,
            local_offset: off,
            imag_offset,
            len: 1,
        });
    }
    Ok(slots)
}

/// A kernel argument, one per parameter.
pub enum KernelArg<'a> {
    /// An array the kernel only reads.
    Read(&'a [u8]),
    /// An array the kernel writes: copied in, then back out after the launch.
    Write(&'a mut [u8]),
    /// A scalar by value.
    Scalar(ScalarValue),
}

/// What a launch gives back besides the arrays it wrote.
#[derive(Debug, Default, PartialEq)]
pub struct KernelOutput {
    /// Each kernel reduction's combined partials (without the original value), by parameter.
    pub reductions: Vec<(ParamId, ScalarValue)>,
    /// Each element-wise array reduction's combined partials, by parameter.
    pub array_reductions: Vec<(ParamId, Vec<ScalarValue>)>,
    /// The region's value, when the kernel has one ([`super::Kernel::result`]).
    pub value: Option<ScalarValue>,
}

impl KernelOutput {
    /// Records a reduction's result from its partials as a device wrote them: `blocks` blocks
    /// (workgroups) of `len` elements, each a word of `word` bytes
    /// ([`ScalarValue::from_device_bytes`] with `index_bytes`), folded in block order, into
    /// parameter `into` of `kernel` (element-wise when that parameter is an array).
    #[allow(clippy::too_many_arguments)]
    pub fn push_partials(
        &mut self,
        kernel: &Kernel,
        into: ParamId,
        op: ReduceOp,
        ty: Scalar,
        len: usize,
        blocks: usize,
        data: &[u8],
        word: usize,
        index_bytes: usize,
    ) {
        if op == ReduceOp::ComplexMul {
            // Pairs of parts, block by block: their product in block order, the real part
            // into `into` and the imaginary part into `into + 1`.
            let part = |g: usize, e: usize| {
                ScalarValue::from_device_bytes(ty, data.get((g * 2 + e) * word..)?, index_bytes)
            };
            let product = (0..blocks)
                .filter_map(|g| Some((part(g, 0)?, part(g, 1)?)))
                .try_fold(None, |acc, p| match acc {
                    None => Some(Some(p)),
                    Some(a) => ScalarValue::complex_mul(a, p).map(Some),
                })
                .flatten();
            if let Some((re, im)) = product {
                self.reductions.push((into, re));
                self.reductions.push((into + 1, im));
            }
            return;
        }
        let elements: Vec<ScalarValue> = (0..len)
            .filter_map(|e| {
                let partials = (0..blocks).filter_map(|g| {
                    ScalarValue::from_device_bytes(
                        ty,
                        data.get((g * len + e) * word..)?,
                        index_bytes,
                    )
                });
                ScalarValue::fold(op, partials)
            })
            .collect();
        if kernel
            .params
            .get(into as usize)
            .is_some_and(|p| matches!(p.kind, ParamKind::Array { .. }))
        {
            self.array_reductions.push((into, elements));
        } else {
            self.reductions.extend(elements.first().map(|&v| (into, v)));
        }
    }

    /// Records what a segmented kernel leaves in its locals buffer (`data`): the results of
    /// the reductions sequential code computed (`slots` whose `entry` is `None`) and the
    /// region's value at `result` (type and offset).
    pub fn read_locals(
        &mut self,
        slots: &[ReductionSlot],
        result: Option<(Scalar, u32)>,
        data: &[u8],
        index_bytes: usize,
    ) {
        let at = |t: Scalar, off: u32| {
            data.get(off as usize..)
                .and_then(|b| ScalarValue::from_device_bytes(t, b, index_bytes))
        };
        for r in slots.iter().filter(|r| r.entry.is_none()) {
            if let (Some(into), Some(v)) = (r.into, at(r.ty, r.local_offset)) {
                self.reductions.push((into, v));
                if r.op == ReduceOp::ComplexMul {
                    // The imaginary part, into the next parameter (as `push_partials`).
                    if let Some(im) = at(r.ty, r.imag_offset) {
                        self.reductions.push((into + 1, im));
                    }
                }
            }
        }
        if let Some((t, off)) = result {
            self.value = at(t, off);
        }
    }
}
