//! The locals buffer of a segmented kernel in WGSL: the region-level scalar locals and the
//! private arrays the gang-redundant code writes, kept between entry points (their layout is
//! acc-core's, `Kernel::scalar_locals_layout` and `Kernel::array_locals_layout`), declared as a
//! `Locals` struct, loaded at the start of each entry point and stored at the end of the ones
//! that run on one invocation.

use super::*;

/// What [`Writer::locals_buffer`] gives: the scalar slots (local, type, offset), the buffer's
/// size, and the WGSL that loads and stores it.
#[derive(Default)]
pub(super) struct LocalsBuffer {
    pub slots: Vec<(usize, Scalar, u32)>,
    pub size: u32,
    pub load: String,
    pub store: String,
}

impl Writer<'_> {
    /// Declares the locals buffer (its struct and binding) and writes its loads and stores.
    pub(super) fn locals_buffer(
        &mut self,
        decls: &mut String,
        bindings: &mut Vec<Binding>,
    ) -> Result<LocalsBuffer> {
        let k = self.k;
        // `bool` travels as a `u32` word.
        let word = |w: &Self, t: Scalar| -> Result<&'static str> {
            if t == Scalar::Bool {
                Ok("u32")
            } else {
                w.ty(t)
            }
        };
        let mut fields = String::new();
        let (scalars, size) = k.scalar_locals_layout(|t| self.param_size(t));
        for &(i, t, _) in &scalars {
            let _ = writeln!(fields, "    l{i}: {},", word(self, t)?);
        }
        // Private arrays the gang-redundant code wrote, after the scalars.
        let (arrays, size) = k.array_locals_layout(|t| self.param_size(t), size);
        for &(i, t, _, len) in &arrays {
            let _ = writeln!(fields, "    l{i}: array<{}, {len}>,", word(self, t)?);
        }
        if fields.is_empty() {
            fields.push_str("    unused: u32,\n");
        }
        let _ = writeln!(decls, "struct Locals {{\n{fields}}}");
        let _ = writeln!(
            decls,
            "@group(0) @binding({}) var<storage, read_write> acc_locals: Locals;",
            bindings.len()
        );
        bindings.push(Binding::Locals);

        let (mut load, mut store) = (String::new(), String::new());
        for &(i, t, _) in &scalars {
            if t == Scalar::Bool {
                let _ = writeln!(load, "    l{i} = (acc_locals.l{i} != 0u);");
                let _ = writeln!(store, "    acc_locals.l{i} = select(0u, 1u, l{i});");
            } else {
                let _ = writeln!(load, "    l{i} = acc_locals.l{i};");
                let _ = writeln!(store, "    acc_locals.l{i} = l{i};");
            }
        }
        for &(i, t, _, len) in &arrays {
            if self.spilled.get(i).is_some() {
                // Element by element into (out of) the invocation's interleaved copy (`bool`
                // is a `u32` word in both).
                let own = self.private_element(i, "k");
                let _ = writeln!(
                    load,
                    "    for (var k = 0u; k < {len}u; k++) {{ {own} = acc_locals.l{i}[k]; }}"
                );
                let _ = writeln!(
                    store,
                    "    for (var k = 0u; k < {len}u; k++) {{ acc_locals.l{i}[k] = {own}; }}"
                );
            } else if t == Scalar::Bool {
                let _ = writeln!(load, "    for (var k = 0u; k < {len}u; k++) {{ l{i}[k] = (acc_locals.l{i}[k] != 0u); }}");
                let _ = writeln!(store, "    for (var k = 0u; k < {len}u; k++) {{ acc_locals.l{i}[k] = select(0u, 1u, l{i}[k]); }}");
            } else {
                let _ = writeln!(load, "    l{i} = acc_locals.l{i};");
                let _ = writeln!(store, "    acc_locals.l{i} = l{i};");
            }
        }
        Ok(LocalsBuffer {
            slots: scalars
                .into_iter()
                .map(|(i, t, off)| (i as usize, t, off))
                .collect(),
            size,
            load,
            store,
        })
    }
}
