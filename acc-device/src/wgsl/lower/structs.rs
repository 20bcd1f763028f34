//! `#[derive(DeviceCopy)]` structs in WGSL: the struct declared with the host's layout (array
//! fields as arrays of their elements), and the narrow fields held as bits of 4-byte words.

use super::*;

/// Whether a struct field of type `t` is a member of the struct as WGSL declares it: types
/// WGSL holds at their host width (the narrow ones, and `usize`/`isize` where they are 32-bit,
/// are not, as structs travel bit for bit).
pub(super) fn struct_member_type(t: Scalar, target: Target) -> Option<&'static str> {
    match t {
        Scalar::F32 | Scalar::I32 | Scalar::U32 | Scalar::F64 | Scalar::I64 | Scalar::U64 => {
            wgsl_type(t, target).ok()
        }
        Scalar::USize | Scalar::ISize if target.wide_usize() => wgsl_type(t, target).ok(),
        _ => None,
    }
}

/// The WGSL struct `name` with the layout of a `#[repr(C)]` struct: a member `fK` at the
/// offset of each field WGSL can hold (field K), the other bytes padding (`@size`), and the
/// same size, so that an `array<name>` has the host's element stride.
pub(super) fn struct_decl(
    name: &str,
    layout: &StructLayout,
    atomic_fields: &[FieldId],
    packed_atomic: bool,
    target: Target,
) -> Result<String> {
    if layout.size % 4 != 0 || layout.size == 0 {
        return Err(unsupported(format!(
            "`{}` structs of {} bytes (wgpu moves whole 4-byte words)",
            layout.name, layout.size
        )));
    }
    let mut members: Vec<(u32, String, String)> = Vec::new();
    // Array fields WGSL can hold (of 4- and 8-byte scalars, of structs it can declare), as
    // arrays; the structs' declarations before this one.
    let mut nested = String::new();
    for (k, f) in layout.fields.iter().enumerate() {
        let Some(a) = f.array else { continue };
        let elem = match (a.scalar, a.layout) {
            (Some(t), _) => struct_member_type(t.storage(), target)
                .filter(|_| a.stride == t.storage().size())
                .map(str::to_string),
            (_, Some(sub)) => {
                let sub_name = format!("{name}_{k}");
                struct_decl(&sub_name, sub, &[], false, target)
                    .ok()
                    .map(|d| {
                        let _ = writeln!(nested, "{d}");
                        sub_name
                    })
            }
            _ => None,
        };
        if let Some(elem) = elem {
            members.push((
                f.offset,
                format!("f{k}"),
                format!("array<{elem}, {}>", a.len),
            ));
        }
    }
    for (k, f) in layout.fields.iter().enumerate() {
        let Some(t) = f.ty.and_then(|t| struct_member_type(t.storage(), target)) else {
            continue;
        };
        // A field an `atomic` statement updates is an atomic word (f32 and f64 as their bits).
        let t = if atomic_fields.contains(&(k as FieldId)) {
            format!(
                "atomic<{}>",
                atomic_word(f.ty.unwrap_or(Scalar::U32), target)?
            )
        } else {
            t.to_string()
        };
        members.push((f.offset, format!("f{k}"), t));
    }
    // Fields of the narrow types share 4-byte words `wN` (N: the word's index), which no
    // member of 4 or 8 bytes overlaps (those are aligned to their size); atomic words where
    // the kernel writes a narrow field of the struct (see [`Packed`]).
    let word = if packed_atomic { "atomic<u32>" } else { "u32" };
    for f in layout.fields.iter() {
        if f.ty.is_some_and(|t| is_packed(t.storage())) {
            let w = f.offset / 4;
            if !members.iter().any(|m| m.1 == format!("w{w}")) {
                members.push((w * 4, format!("w{w}"), word.to_string()));
            }
        }
    }
    members.sort_by_key(|m| m.0);
    if members.first().is_none_or(|m| m.0 != 0) {
        members.insert(0, (0, "acc_pad".to_string(), "u32".to_string()));
    }
    let mut out = format!("{nested}struct {name} {{ // {}\n", layout.name);
    for (i, (offset, member, ty)) in members.iter().enumerate() {
        let end = members.get(i + 1).map_or(layout.size, |m| m.0);
        let _ = writeln!(out, "    @size({}) {member}: {ty},", end - offset);
    }
    out.push('}');
    Ok(out)
}

/// Whether struct fields of type `t` are packed in 4-byte words in WGSL (held at their host
/// width in the host's bytes, read and written as bits of their word).
pub(super) fn is_packed(t: Scalar) -> bool {
    matches!(
        t,
        Scalar::Bool | Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16
    )
}

/// A struct field of a narrow type: `bits` bits at bit `shift` of the struct's word `word`.
/// Writes replace those bits with a compare-exchange on the word, so that invocations writing
/// other fields of the same word do not undo each other.
pub(super) struct Packed {
    pub word: u32,
    pub shift: u32,
    pub bits: u32,
    pub ty: Scalar,
    /// Whether the words are `atomic<u32>` (some statement of the kernel writes such a field).
    pub atomic: bool,
}

impl Packed {
    /// The field's value (as the 32-bit word WGSL holds narrow values in) from its word `w`.
    pub(super) fn extract(&self, w: &str) -> String {
        let (s, b) = (self.shift, self.bits);
        match self.ty {
            Scalar::Bool => format!("(extractBits({w}, {s}u, {b}u) != 0u)"),
            Scalar::I8 | Scalar::I16 => format!("extractBits(bitcast<i32>({w}), {s}u, {b}u)"),
            _ => format!("extractBits({w}, {s}u, {b}u)"),
        }
    }

    /// Word `w` with the field replaced by the value `v` (of the field's type as WGSL holds it).
    pub(super) fn insert(&self, w: &str, v: &str) -> String {
        let bits = match self.ty {
            Scalar::Bool => format!("select(0u, 1u, {v})"),
            Scalar::I8 | Scalar::I16 => format!("bitcast<u32>({v})"),
            _ => v.to_string(),
        };
        format!("insertBits({w}, {bits}, {}u, {}u)", self.shift, self.bits)
    }
}
