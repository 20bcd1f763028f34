//! A kernel's pipelines on the wgpu device: lowered to WGSL for the launch's variant (checked or
//! proven, 64- or 32-bit indices), with the buffers every launch of it reuses.

use super::*;
use acc_core::gpu::Variant;

impl WgpuDevice {
    /// The pipelines of `variant` of `kernel`: without bounds checks where its accesses are
    /// proven in bounds for the launch's arguments, with 32-bit indices where it is narrowed
    /// ([`Target::narrow_usize`]).
    pub(super) fn compile_variant(&self, kernel: &Kernel, variant: Variant) -> Result<Compiled> {
        let target = Target {
            narrow_usize: variant.narrow,
            ..self.target
        };
        let lowered = lower_variant(kernel, target, variant.proven)?;
        acc_core::observe::dump("wgsl", &kernel.name, || lowered.wgsl.clone());
        let module = match &self.spirv {
            Some(spirv) => spirv.module(&self.device, &lowered, &kernel.name)?,
            None => self
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&kernel.name),
                    source: wgpu::ShaderSource::Naga(Cow::Owned(lowered.module.clone())),
                }),
        };
        let entries: Vec<wgpu::BindGroupLayoutEntry> = lowered
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let read_only = match b {
                    Binding::Array(p) => matches!(
                        kernel.params[*p as usize].kind,
                        ParamKind::Array {
                            writable: false,
                            ..
                        }
                    ),
                    Binding::Params | Binding::HostValues => true,
                    Binding::Status
                    | Binding::Partials(_)
                    | Binding::Locals
                    | Binding::Spilled(_) => false,
                };
                wgpu::BindGroupLayoutEntry {
                    binding: i as u32,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only },
                        // A launch's parameters and each dispatch's host values: slots of the
                        // device's upload buffer.
                        has_dynamic_offset: matches!(b, Binding::Params | Binding::HostValues),
                        min_binding_size: None,
                    },
                    count: None,
                }
            })
            .collect();
        let layout = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("acc"),
                entries: &entries,
            });
        let pipeline_layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("acc"),
                bind_group_layouts: &[Some(&layout)],
                ..Default::default()
            });
        let pipelines = lowered
            .entry_points
            .iter()
            .map(|ep| {
                self.device
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(ep),
                        layout: Some(&pipeline_layout),
                        module: &module,
                        entry_point: Some(ep),
                        compilation_options: Default::default(),
                        cache: None,
                    })
            })
            .collect();
        let buffer = |label: &str, size: u64| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(4),
                usage: STORAGE,
                mapped_at_creation: false,
            })
        };
        // Launches with reductions keep to this many workgroups (`GridLimits`).
        let max_groups =
            u64::from(acc_core::gpu::GpuDriver::grid_limits(self).max_reduction_blocks);
        let scratch = Scratch {
            status: buffer("status", acc_core::gpu::status::BYTES as u64),
            locals: (lowered.layout.locals_size > 0)
                .then(|| buffer("locals", lowered.layout.locals_size as u64)),
            partials: lowered
                .layout
                .reductions
                .iter()
                .zip(&lowered.layout.partial_sizes)
                .map(|(r, &size)| buffer("partials", max_groups * r.len as u64 * size as u64))
                .collect(),
            // A copy of each spilled private array for every invocation of the largest grid
            // (`LaunchLayout::max_blocks` keeps the grid to it).
            spilled: {
                let limits = acc_core::gpu::GpuDriver::grid_limits(self);
                let blocks = u64::from(lowered.layout.max_blocks(&limits)?.max(1));
                lowered
                    .spilled
                    .arrays
                    .iter()
                    .map(|a| {
                        buffer(
                            "acc private arrays",
                            blocks * u64::from(limits.threads) * a.bytes(),
                        )
                    })
                    .collect()
            },
            groups: HashMap::new(),
        };
        Ok(Compiled {
            lowered,
            target,
            layout,
            pipelines,
            scratch: Mutex::new(scratch),
        })
    }

    /// A bind group of `compiled`'s layout over `buffers`, one per binding; the parameters'
    /// binding covers the kernel's parameters and the host values' binding one dispatch's
    /// `host_vars` values, each placed in the upload buffer by a dynamic offset.
    pub(super) fn bind_group(
        &self,
        compiled: &Compiled,
        buffers: &[wgpu::Buffer],
        host_vars: usize,
    ) -> wgpu::BindGroup {
        let l = &compiled.lowered;
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: match l.bindings[i] {
                    Binding::HostValues | Binding::Params => {
                        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: b,
                            offset: 0,
                            size: std::num::NonZeroU64::new(slot_size(
                                l,
                                &l.bindings[i],
                                host_vars,
                            )),
                        })
                    }
                    _ => b.as_entire_binding(),
                },
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &compiled.layout,
            entries: &entries,
        })
    }
}

/// Bytes of a launch's parameters (`Binding::Params`) or of a dispatch's host values
/// (`Binding::HostValues`) in the upload buffer.
pub(super) fn slot_size(l: &Lowered, b: &Binding, host_vars: usize) -> u64 {
    match b {
        Binding::Params => u64::from(l.params_size).next_multiple_of(4).max(4),
        _ => 8 * host_vars.max(1) as u64,
    }
}
