//! A WGSL module's declarations before its entry points: a binding per array (structs
//! declared with their atomic fields), the parameter buffer's layout, the status words and the
//! spilled private arrays, the host loops' values, the reductions' partials; and the module's
//! validation by naga.

use super::*;

/// The parameter buffer: the `Params` struct's fields and where each value sits.
pub(super) struct ParamBuffer {
    /// The struct's fields, one per line.
    pub fields: String,
    /// The scalar parameters (laid out by size, largest first).
    pub params: Vec<ParamSlot>,
    /// Each array's first element in its buffer and its length.
    pub arrays: Vec<ArraySlot>,
    /// The grid's workgroup count, for entry points that fold per-workgroup partials.
    pub groups_offset: u32,
    /// Bytes of the buffer.
    pub size: u32,
}

impl Writer<'_> {
    /// A storage binding per array the kernel touches (the original of a `private` copy
    /// stays on the host), structs declared with their atomic fields.
    pub(super) fn array_bindings(
        &mut self,
        decls: &mut String,
        bindings: &mut Vec<Binding>,
    ) -> Result<()> {
        let k = self.k;
        let accessed = k.accessed_params();
        for (id, p) in k.params.iter().enumerate() {
            let ParamKind::Array { elem, writable } = &p.kind else {
                continue;
            };
            if !accessed[id] {
                continue;
            }
            let access = if *writable { "read_write" } else { "read" };
            let ty = match elem {
                Elem::Struct(layout) => {
                    let atomic_fields: Vec<FieldId> = self
                        .atomic
                        .iter()
                        .filter(|(a, _)| *a == id as ParamId)
                        .filter_map(|(_, f)| *f)
                        .collect();
                    let decl = struct_decl(
                        &format!("S{id}"),
                        layout,
                        &atomic_fields,
                        self.packed_atomic.contains(&(id as ParamId)),
                        self.target,
                    )
                    .map_err(|e| annotate(e, &p.name))?;
                    let _ = writeln!(decls, "{decl}");
                    format!("S{id}")
                }
                Elem::Scalar(elem) if self.atomic.contains(&(id as ParamId, None)) => {
                    let w = atomic_word(*elem, self.target).map_err(|e| annotate(e, &p.name))?;
                    match w {
                        "i32" => "atomic<i32>",
                        "i64" => "atomic<i64>",
                        "u64" => "atomic<u64>",
                        _ => "atomic<u32>",
                    }
                    .to_string()
                }
                Elem::Scalar(elem) => storage_type(*elem, self.target)
                    .map_err(|e| annotate(e, &p.name))?
                    .to_string(),
            };
            let _ = writeln!(
                decls,
                "@group(0) @binding({}) var<storage, {access}> p{id}: array<{ty}>; // {}",
                bindings.len(),
                p.name
            );
            bindings.push(Binding::Array(id as ParamId));
        }
        Ok(())
    }

    /// The parameter buffer's layout: the scalars by size, then each array's first element
    /// and length (an array may be a part of a present buffer, a subarray of 3.3 section
    /// 2.7.1, and an empty one is bound to a placeholder buffer), then the workgroup count.
    pub(super) fn param_buffer(&self) -> Result<ParamBuffer> {
        let k = self.k;
        let mut params = Vec::new();
        let mut offset = 0u32;
        let mut fields = String::new();
        let mut scalars: Vec<(usize, Scalar)> = k
            .params
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p.kind {
                ParamKind::Scalar(s) => Some((i, s)),
                _ => None,
            })
            .collect();
        scalars.sort_by_key(|&(_, s)| std::cmp::Reverse(self.param_size(s)));
        for (id, s) in scalars {
            let size = self.param_size(s);
            offset = offset.next_multiple_of(size);
            let ty = if s == Scalar::Bool {
                "u32"
            } else {
                self.ty(s).map_err(|e| annotate(e, &k.params[id].name))?
            };
            let _ = writeln!(fields, "    p{id}: {ty},");
            params.push(ParamSlot {
                param: id as ParamId,
                ty: s,
                offset,
            });
            offset += size;
        }
        let mut arrays = Vec::new();
        for (id, p) in k.params.iter().enumerate() {
            if matches!(p.kind, ParamKind::Array { .. }) {
                offset = offset.next_multiple_of(4);
                let _ = writeln!(fields, "    b{id}: u32,\n    n{id}: u32,");
                arrays.push(ArraySlot {
                    param: id as ParamId,
                    offset,
                });
                offset += 8;
            }
        }
        offset = offset.next_multiple_of(4);
        let _ = writeln!(fields, "    acc_groups: u32,");
        let groups_offset = offset;
        offset += 4;
        Ok(ParamBuffer {
            fields,
            params,
            arrays,
            groups_offset,
            size: offset.next_multiple_of(8).max(4),
        })
    }

    /// The bindings every module has after its arrays: the parameter buffer, the status
    /// words, and a buffer per spilled private array.
    pub(super) fn fixed_bindings(
        &mut self,
        decls: &mut String,
        bindings: &mut Vec<Binding>,
    ) -> Result<()> {
        let _ = writeln!(
            decls,
            "@group(0) @binding({}) var<storage, read> params: Params;",
            bindings.len()
        );
        bindings.push(Binding::Params);
        let _ = writeln!(
            decls,
            "@group(0) @binding({}) var<storage, read_write> acc_status: array<atomic<u32>, 5>;",
            bindings.len()
        );
        bindings.push(Binding::Status);
        for (n, a) in self.spilled.arrays.iter().enumerate() {
            let ty = if a.ty == Scalar::Bool {
                "u32"
            } else {
                self.ty(a.ty)?
            };
            let _ = writeln!(
                decls,
                "@group(0) @binding({}) var<storage, read_write> acc_sp{}: array<{ty}>; // {}",
                bindings.len(),
                a.local,
                self.k.function.locals[a.local as usize].name
            );
            bindings.push(Binding::Spilled(n));
        }
        Ok(())
    }

    /// The host loops' variables, which every entry point sets from its dispatch's values
    /// after loading the locals (`load`).
    pub(super) fn host_values(
        &self,
        plan: &Plan<'_>,
        (decls, bindings): (&mut String, &mut Vec<Binding>),
        load: &mut String,
    ) -> Result<()> {
        let vars = &plan.segments.host_vars;
        if vars.is_empty() {
            return Ok(());
        }
        let _ = writeln!(
            decls,
            "@group(0) @binding({}) var<storage, read> acc_hv: array<u32, {}>;",
            bindings.len(),
            2 * vars.len()
        );
        bindings.push(Binding::HostValues);
        for (n, &v) in vars.iter().enumerate() {
            let t = self.k.function.locals[v as usize].ty;
            let (lo, hi) = (
                format!("acc_hv[{}]", 2 * n),
                format!("acc_hv[{}]", 2 * n + 1),
            );
            let value = match self.ty(t)? {
                "u32" => lo,
                "u64" => format!("((u64({hi}) << 32u) | u64({lo}))"),
                "i64" => format!("bitcast<i64>((u64({hi}) << 32u) | u64({lo}))"),
                other => format!("bitcast<{other}>({lo})"),
            };
            let _ = writeln!(load, "    l{v} = {value};");
        }
        Ok(())
    }

    /// Each reduction slot's partials buffer and workgroup scratch.
    pub(super) fn partial_bindings(
        &self,
        plan: &Plan<'_>,
        decls: &mut String,
        bindings: &mut Vec<Binding>,
    ) -> Result<()> {
        let reductions = &plan.segments.reductions;
        for (e, entry) in plan.segments.entries.iter().enumerate() {
            let Entry::Grid { slots, .. } = entry else {
                continue;
            };
            for (r, &slot) in slots.iter().enumerate() {
                let ty = reductions[slot].ty;
                // bool is not host-shareable: its partials are u32 0/1.
                let wty = if ty == Scalar::Bool {
                    "u32"
                } else {
                    storage_type(ty, self.target)?
                };
                let b = bindings.len();
                let _ = writeln!(decls, "@group(0) @binding({b}) var<storage, read_write> acc_partials_{slot}: array<{wty}>;");
                let _ = writeln!(
                    decls,
                    "var<workgroup> acc_shared_{e}_{r}: array<{wty}, {WORKGROUP_SIZE}>;"
                );
                if reductions[slot].op == ReduceOp::ComplexMul {
                    // The imaginary parts of a complex product.
                    let _ = writeln!(
                        decls,
                        "var<workgroup> acc_shared_{e}_{r}_im: array<{wty}, {WORKGROUP_SIZE}>;"
                    );
                }
                bindings.push(Binding::Partials(slot));
            }
        }
        Ok(())
    }

    /// `wgsl` parsed and validated by naga against the adapter's capabilities (a failure is an
    /// internal error, with the source).
    pub(super) fn validated(&self, wgsl: &str) -> Result<(naga::Module, naga::valid::ModuleInfo)> {
        let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| Error::Unsupported {
            what: format!(
                "internal error: generated WGSL does not parse:\n{}\n{wgsl}",
                e.emit_to_string(wgsl)
            ),
        })?;
        let mut caps = naga::valid::Capabilities::empty();
        if self.target.f64 {
            caps |= naga::valid::Capabilities::FLOAT64;
        }
        if self.target.int64 {
            caps |= naga::valid::Capabilities::SHADER_INT64;
        }
        if self.target.int64_atomics {
            caps |= naga::valid::Capabilities::SHADER_INT64_ATOMIC_ALL_OPS;
        }
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
            .validate(&module)
            .map_err(|e| Error::Unsupported {
                what: format!(
                    "internal error: generated WGSL does not validate:\n{}\n{wgsl}",
                    e.emit_to_string(wgsl)
                ),
            })?;
        Ok((module, info))
    }
}
