//! Float arithmetic that rounds as Rust's on Vulkan (issue 17 item 9). SPIR-V lets a driver
//! contract `a * b + c` into one rounding and reassociate float operations unless they are
//! decorated `NoContraction`, and WGSL has no way to ask for it: NVIDIA's Vulkan compiler
//! does both (a Mandelbrot grid in f32 differed from the host on 1,187 of 6,144 points;
//! adding a zero read from memory between a product and its sum did not stop it). So where
//! the adapter runs Vulkan and takes SPIR-V as it is (`Features::PASSTHROUGH_SHADERS`), the
//! device writes each kernel's validated naga module to SPIR-V itself, with the options wgpu
//! would use, decorates every float arithmetic result `NoContraction`, and hands the words to
//! the driver. Elsewhere (Metal, DX12, or `ACC_FAST_FLOAT=1`) wgpu writes the shader, and the
//! driver's float rules apply. f32 `/` is computed in f64 either way where the adapter has it
//! (the lowering's), since Vulkan allows f32 division 2.5 ULP.

use std::borrow::Cow;

use acc_core::{Error, Result};
use naga::back::spv;

use crate::wgsl::Lowered;

/// SPIR-V opcodes the patch reads.
mod op {
    pub const DECORATE: u32 = 71;
    pub const MEMBER_DECORATE: u32 = 72;
    pub const F_NEGATE: u32 = 127;
    pub const F_ADD: u32 = 129;
    pub const F_SUB: u32 = 131;
    pub const F_MUL: u32 = 133;
    pub const F_DIV: u32 = 136;
    pub const F_REM: u32 = 140;
    pub const F_MOD: u32 = 141;
    pub const VECTOR_TIMES_SCALAR: u32 = 142;
    pub const DOT: u32 = 148;
}

/// The `NoContraction` decoration.
const NO_CONTRACTION: u32 = 42;

/// How the device writes SPIR-V: the options wgpu's Vulkan backend would pass naga for a
/// compute shader (bounds checks restricting indices, and buffer accesses too unless the
/// driver's robustness covers them; loops bounded; workgroup memory zeroed), at the SPIR-V
/// version the device's Vulkan version takes.
pub(super) struct Spirv {
    lang_version: (u8, u8),
    /// Workgroup memory zeroed by the driver (`shaderZeroInitializeWorkgroupMemory`, which
    /// Vulkan 1.3 requires and wgpu enables), else by code naga writes.
    native_zeroing: bool,
    /// Buffer accesses are left to the driver's `robustBufferAccess2` (as wgpu leaves them).
    robust_buffers: bool,
}

impl Spirv {
    /// For a device of Vulkan version `api` (`VK_MAKE_API_VERSION` packing), with
    /// `robustBufferAccess2` where `robust_buffers`.
    pub(super) fn new(api: u32, robust_buffers: bool) -> Spirv {
        let (major, minor) = (api >> 22 & 0x7f, api >> 12 & 0x3ff);
        let lang_version = match (major, minor) {
            (1, 0) => (1, 0),
            (1, 1) => (1, 3),
            (1, 2) => (1, 5),
            _ => (1, 6),
        };
        Spirv {
            lang_version,
            native_zeroing: (major, minor) >= (1, 3),
            robust_buffers,
        }
    }

    /// `lowered`'s module as SPIR-V words, every float operation `NoContraction`.
    pub(super) fn words(&self, lowered: &Lowered) -> Result<Vec<u32>> {
        let options = spv::Options {
            lang_version: self.lang_version,
            flags: spv::WriterFlags::empty(),
            // Group g, binding b is descriptor set g, binding b, as wgpu's Vulkan layouts have it.
            fake_missing_bindings: true,
            bounds_check_policies: naga::proc::BoundsCheckPolicies {
                index: naga::proc::BoundsCheckPolicy::Restrict,
                buffer: if self.robust_buffers {
                    naga::proc::BoundsCheckPolicy::Unchecked
                } else {
                    naga::proc::BoundsCheckPolicy::Restrict
                },
                image_load: naga::proc::BoundsCheckPolicy::Restrict,
                binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
            },
            zero_initialize_workgroup_memory: if self.native_zeroing {
                spv::ZeroInitializeWorkgroupMemoryMode::Native
            } else {
                spv::ZeroInitializeWorkgroupMemoryMode::Polyfill
            },
            ray_query_initialization_tracking: false,
            trace_ray_argument_validation: false,
            use_storage_input_output_16: false,
            mesh_shader_primitive_indices_clamp: false,
            ..Default::default()
        };
        let words =
            spv::write_vec(&lowered.module, &lowered.info, &options, None).map_err(|e| {
                Error::Unsupported {
                    what: format!("internal error: naga did not write SPIR-V: {e}"),
                }
            })?;
        without_contraction(&words).ok_or_else(|| Error::Unsupported {
            what: "internal error: the SPIR-V naga wrote has no annotation section".into(),
        })
    }

    /// The shader module of `lowered` on `device` (which has `PASSTHROUGH_SHADERS`).
    pub(super) fn module(
        &self,
        device: &wgpu::Device,
        lowered: &Lowered,
        label: &str,
    ) -> Result<wgpu::ShaderModule> {
        let words = self.words(lowered)?;
        let entry_points: Vec<wgpu::PassthroughShaderEntryPoint> = lowered
            .module
            .entry_points
            .iter()
            .map(|ep| wgpu::PassthroughShaderEntryPoint {
                name: Cow::Owned(ep.name.clone()),
                workgroup_size: (
                    ep.workgroup_size[0],
                    ep.workgroup_size[1],
                    ep.workgroup_size[2],
                ),
            })
            .collect();
        let desc = wgpu::ShaderModuleDescriptorPassthrough {
            label: Some(label),
            entry_points: Cow::Owned(entry_points),
            spirv: Some(Cow::Owned(words)),
            ..Default::default()
        };
        // SAFETY: the words are naga's SPIR-V of a module naga validated, written with the
        // options wgpu's Vulkan backend uses, plus decorations that only forbid contracting
        // float operations; the pipelines bind them with the layout the module declares.
        Ok(unsafe { device.create_shader_module_passthrough(desc) })
    }
}

/// `words` with an `OpDecorate %r NoContraction` for the result `%r` of every float
/// arithmetic instruction, placed before the module's first decoration; `None` where it has
/// none (naga decorates every binding, so a kernel's module has some).
pub(super) fn without_contraction(words: &[u32]) -> Option<Vec<u32>> {
    const HEADER: usize = 5;
    let mut results = Vec::new();
    let mut first_decoration = None;
    let mut at = HEADER;
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        if count == 0 || at + count > words.len() {
            return None;
        }
        match opcode {
            op::DECORATE | op::MEMBER_DECORATE => {
                first_decoration.get_or_insert(at);
            }
            op::F_NEGATE
            | op::F_ADD
            | op::F_SUB
            | op::F_MUL
            | op::F_DIV
            | op::F_REM
            | op::F_MOD
            | op::VECTOR_TIMES_SCALAR
            | op::DOT
                if count >= 3 =>
            {
                results.push(words[at + 2]);
            }
            _ => {}
        }
        at += count;
    }
    let insert = first_decoration?;
    let mut out = Vec::with_capacity(words.len() + 3 * results.len());
    out.extend_from_slice(&words[..insert]);
    for r in results {
        out.extend_from_slice(&[(3 << 16) | op::DECORATE, r, NO_CONTRACTION]);
    }
    out.extend_from_slice(&words[insert..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every float product and sum of a kernel's SPIR-V is decorated, once, in the annotation
    /// section, and the module still parses (naga's SPIR-V front end reads it back).
    #[test]
    fn float_results_are_decorated_no_contraction() {
        let src = "@group(0) @binding(0) var<storage, read_write> x: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                x[g.x] = x[g.x] * x[g.x + 1u] + x[g.x + 2u] - x[g.x + 3u];
            }";
        let module = naga::front::wgsl::parse_str(src).expect("parses");
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .expect("valid");
        let words = spv::write_vec(&module, &info, &spv::Options::default(), None).expect("spv");
        let out = without_contraction(&words).expect("decorations");
        let decorated: Vec<u32> = out
            .windows(3)
            .filter(|w| w[0] == (3 << 16) | op::DECORATE && w[2] == NO_CONTRACTION)
            .map(|w| w[1])
            .collect();
        assert_eq!(
            decorated.len(),
            3,
            "the product, the sum and the difference"
        );
        assert_eq!(out.len(), words.len() + 9);
        naga::front::spv::parse_u8_slice(
            &out.iter()
                .flat_map(|w| w.to_le_bytes())
                .collect::<Vec<u8>>(),
            &Default::default(),
        )
        .expect("the decorated module parses");
    }
}
