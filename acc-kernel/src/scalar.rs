//! The scalar types of the kernel IR.

use std::fmt;

/// A scalar type. `usize`/`isize` stay distinct from `u64`/`i64` (as in Rust): they index
/// arrays, and a backend may give them fewer bits than the host (wgpu buffers are indexed by
/// 32-bit integers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    I8,
    I16,
    I32,
    I64,
    ISize,
    U8,
    U16,
    U32,
    U64,
    USize,
    F32,
    F64,
    /// `half::f16`: IEEE binary16. Only the kernel builder sees it (and `acc_core::data::DeviceCopy`
    /// layouts): it stores it as `u16` bits and computes in `f32` rounded to it after each
    /// operation, as `half` does ([`builder::half`](crate::builder::half)); backends never meet it.
    F16,
    /// `half::bf16`, the same way.
    BF16,
}

impl Scalar {
    /// Every scalar type, in declaration order (`t as usize` is its index here).
    pub const ALL: [Scalar; 15] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::ISize,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::USize,
        Scalar::F32,
        Scalar::F64,
        Scalar::F16,
        Scalar::BF16,
    ];
    /// Size in bytes.
    pub fn size(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 | Scalar::ISize | Scalar::USize => 8,
        }
    }
    /// Whether it is a float type.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16)
    }
    /// Whether it is one of the 16-bit float types of the `half` crate.
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16)
    }
    /// The type its elements are stored as in device memory: `u16` bits for the 16-bit
    /// floats, itself for the others.
    pub fn storage(self) -> Scalar {
        if self.is_half() {
            Scalar::U16
        } else {
            self
        }
    }
    /// Whether it is an integer type.
    pub fn is_int(self) -> bool {
        !self.is_float() && self != Scalar::Bool
    }
    /// Whether it is a signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::ISize
        )
    }
    /// The Rust spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::ISize => "isize",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::USize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
