//! Array elements in WGSL: the member of the buffer that holds an array (or a field of its
//! elements), packed sub-word elements, private arrays (a gang's in workgroup memory)
//! indexed, and the bounds check of an index.

use super::*;

impl Writer<'_> {
    /// The name of private array `l` in the entry being written: the workgroup's copy for a
    /// gang's array its invocations share, else the invocation's own `l<id>`.
    pub(super) fn array_name(&self, l: LocalId) -> String {
        if self.spilled.get(l).is_some() {
            return format!("acc_sp{l}");
        }
        match &self.gang_arrays {
            Some((entry, arrays)) if arrays.contains(&l) => format!("acc_wa_{entry}_{l}"),
            _ => format!("l{l}"),
        }
    }

    /// Whether `l` is a `bool` array in workgroup memory, held as `u32` 0 or 1 there (NVIDIA's
    /// Vulkan driver read `false` back from `bool` elements of workgroup arrays).
    pub(super) fn shared_bool(&self, l: LocalId) -> bool {
        self.k.function.locals[l as usize].ty == Scalar::Bool
            && self.array_name(l) != format!("l{l}")
    }

    /// Element `i` (a WGSL `u32`) of private array `l`: of a spilled one, the element of this
    /// invocation's copy (interleaved over the grid's invocations, `acc_spn` of them), the
    /// index kept within the copy as WGSL keeps it within a fixed-size array.
    pub(super) fn private_element(&self, l: LocalId, i: &str) -> String {
        match self.spilled.get(l) {
            Some(a) => format!(
                "acc_sp{l}[acc_spme + min({i}, {}u) * acc_spn]",
                a.len.saturating_sub(1)
            ),
            None => format!("{}[{i}]", self.array_name(l)),
        }
    }

    /// An index into a private array as WGSL takes it (`u32`): a 64-bit index saturates, so
    /// that an index beyond 32 bits stays out of range.
    pub(super) fn local_index(&mut self, index: Handle<Expr>) -> Result<String> {
        let i = self.expr(index)?;
        Ok(if !self.target.wide_usize() {
            i
        } else if self.is_constant(index) {
            self.u32_helper();
            format!("select(acc_u32({i}), 4294967295u, u32({i} >> 32u) != 0u)")
        } else {
            format!("select(u32({i}), 4294967295u, u32({i} >> 32u) != 0u)")
        })
    }

    /// Whether `array[index]` needs no check in the body being written (see `fast`).
    pub(super) fn fast_index(&self, array: ParamId, index: Handle<Expr>) -> bool {
        match &self.fast {
            Some((var, arrays)) => {
                arrays.contains(&array) && self.k.function.exprs[index] == Expr::Local(*var)
            }
            None => false,
        }
    }

    /// The member access after an element of `array` for `field` (`.fK`; nothing for an
    /// array of scalars), where WGSL can hold the field.
    /// Where a narrow field of an array of structs sits (None for other fields and arrays).
    pub(super) fn packed(&self, array: ParamId, field: Option<FieldId>) -> Option<Packed> {
        field?;
        // (Narrow fields of nested arrays' elements are refused by `member_at`.)
        let a = self.k.access(array, field).filter(|a| a.nested.is_none())?;
        is_packed(a.ty).then(|| Packed {
            word: a.offset / 4,
            shift: (a.offset % 4) * 8,
            bits: a.ty.size() * 8,
            ty: a.ty,
            atomic: self.packed_atomic.contains(&array),
        })
    }

    /// The member access after an element of `array` for `field` at `index`: [`Self::member`],
    /// or for a field of a nested array's element (`boxes[l].nei[k].number`), the array field,
    /// its element (the index checked against its length: out of range, the access is
    /// recorded and takes element 0) and the element's field.
    pub(super) fn member_at(
        &mut self,
        array: ParamId,
        field: Option<FieldId>,
        index: Handle<Expr>,
    ) -> Result<String> {
        let Some((outer, Some(inner))) = field.map(split_field) else {
            return self.member(array, field);
        };
        let p = &self.k.params[array as usize];
        let (Some(access), &Expr::NestedIndex { sub, .. }) =
            (self.k.access(array, field), &self.k.function.exprs[index])
        else {
            return Err(unsupported(format!(
                "internal error: a nested field {field:?} of parameter {array}"
            )));
        };
        if is_packed(access.ty) || struct_member_type(access.ty, self.target).is_none() {
            return Err(unsupported(format!(
                "an element of an array field of `{}` of type {}; kernels there index arrays inside struct elements of f32, i32, u32, f64, i64 and u64 (and of structs of those)",
                p.name, access.ty
            )));
        }
        let len = access.nested.map_or(0, |n| n.0);
        let s = self.expr(sub)?;
        let s32 = self.index32(&s, self.is_constant(sub));
        let at = if self.k.unchecked {
            format!("min({s32}, {}u)", len.saturating_sub(1))
        } else {
            self.bounds_helper();
            format!("select(0u, {s32}, acc_in_bounds({array}u, {s}, {len}u))")
        };
        let inner = inner.map_or(String::new(), |g| format!(".f{g}"));
        Ok(format!(".f{outer}[{at}]{inner}"))
    }

    /// For a store into a field of a nested array's element in a checked kernel, the test that
    /// the nested index is within the array field (recording it when not).
    pub(super) fn nested_in_bounds(
        &mut self,
        array: ParamId,
        field: Option<FieldId>,
        index: Handle<Expr>,
    ) -> Result<Option<String>> {
        let (Some((_, Some(_))), &Expr::NestedIndex { sub, .. }) =
            (field.map(split_field), &self.k.function.exprs[index])
        else {
            return Ok(None);
        };
        if self.k.unchecked {
            return Ok(None);
        }
        let len = self
            .k
            .access(array, field)
            .and_then(|a| a.nested)
            .map_or(0, |n| n.0);
        let s = self.expr(sub)?;
        self.bounds_helper();
        Ok(Some(format!("acc_in_bounds({array}u, {s}, {len}u)")))
    }

    pub(super) fn member(&self, array: ParamId, field: Option<FieldId>) -> Result<String> {
        if let Some(p) = self.packed(array, field) {
            return Ok(format!(".w{}", p.word));
        }
        let Some(f) = field else {
            return Ok(String::new());
        };
        let p = &self.k.params[array as usize];
        if split_field(f).1.is_some() {
            return Err(unsupported(format!(
                "an atomic update of an element of an array field of `{}` (kernels there update fields of the array's own elements atomically)",
                p.name
            )));
        }
        let (
            ParamKind::Array {
                elem: Elem::Struct(layout),
                ..
            },
            Some(sf),
        ) = (&p.kind, self.k.access(array, field))
        else {
            return Err(unsupported(format!(
                "internal error: field {f} of parameter {array}"
            )));
        };
        if struct_member_type(sf.ty, self.target).is_none() {
            let name = layout.fields[f as usize].name;
            let types = if self.target.wide_usize() {
                "f32, i32, u32, f64, i64, u64, isize and usize"
            } else {
                "f32, i32, u32, f64, i64 and u64"
            };
            return Err(unsupported(format!("the field `{name}` of `{}` (in `{}`) is {}; kernels there access struct fields of the types {types}", layout.name, p.name, sf.ty)));
        }
        Ok(format!(".f{f}"))
    }

    /// The test that index `i` (a WGSL name) of array parameter `array` is in bounds, which
    /// records the first access that is not: `true` in a kernel without checks (its accesses
    /// proven in bounds, or none asked), so that it reports nothing through the status words.
    pub(super) fn bounds_check(&mut self, array: ParamId, i: &str) -> String {
        if self.k.unchecked {
            return "true".into();
        }
        self.bounds_helper();
        format!("acc_in_bounds({array}u, {i}, params.n{array})")
    }

    pub(super) fn bounds_helper(&mut self) {
        if self.helpers.contains("fn acc_in_bounds") {
            return;
        }
        // The first out-of-range access of a launch is recorded; the host turns it into the
        // same panic as on the other devices (docs/guide/regions.md).
        // A 64-bit index is compared on its halves (see `Target::int64_compare_by_halves`).
        let (uty, high, within) = if self.target.wide_usize() {
            (
                "u64",
                "u32(i >> 32u)",
                "u32(i >> 32u) == 0u && u32(i) < len",
            )
        } else {
            ("u32", "0u", "i < len")
        };
        let _ = writeln!(
            self.helpers,
            "fn acc_in_bounds(param: u32, i: {uty}, len: u32) -> bool {{\n\
             \x20   if ({within}) {{ return true; }}\n\
             \x20   if (atomicCompareExchangeWeak(&acc_status[0], 0u, 1u).exchanged) {{\n\
             \x20       atomicStore(&acc_status[1], param);\n\
             \x20       atomicStore(&acc_status[2], u32(i));\n\
             \x20       atomicStore(&acc_status[3], len);\n\
             \x20       atomicStore(&acc_status[4], {high});\n\
             \x20   }}\n\
             \x20   return false;\n\
             }}",
        );
    }
}
