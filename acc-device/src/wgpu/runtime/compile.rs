//! A kernel's pipelines on the wgpu device: lowered to WGSL for the launch's variant (checked or
//! proven, 64- or 32-bit indices), created once, with the buffers every launch of it reuses.

use super::*;

impl WgpuDevice {
    /// The pipelines of `kernel`, lowered and created once; `proven` when its accesses are
    /// proven in bounds for this launch's arguments, which leaves out the checks; `target` the
    /// device's, or its variant with 32-bit indices ([`Target::narrow_usize`]).
    pub(super) fn compile(
        &self,
        kernel: &Kernel,
        proven: bool,
        target: Target,
    ) -> Result<Arc<Compiled>> {
        let unchecked;
        let kernel = if proven && !kernel.unchecked {
            unchecked = Kernel {
                unchecked: true,
                ..kernel.clone()
            };
            &unchecked
        } else {
            kernel
        };
        let key = format!(
            "{}{}",
            if target.narrow_usize { "narrow " } else { "" },
            acc_core::ir::print::print(kernel)
        );
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.get(&key) {
            return Ok(Arc::clone(c));
        }
        let lowered = lower(kernel, target)?;
        acc_core::observe::dump("wgsl", &kernel.name, || lowered.wgsl.clone());
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&kernel.name),
                source: wgpu::ShaderSource::Naga(Cow::Owned(lowered.module.clone())),
            });
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
                    Binding::Status | Binding::Partials(_) | Binding::Locals => false,
                };
                wgpu::BindGroupLayoutEntry {
                    binding: i as u32,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only },
                        // Each dispatch's host values: one slot per dispatch of a pass.
                        has_dynamic_offset: *b == Binding::HostValues,
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
        let max_groups = self.max_workgroups.min(65_535) as u64;
        let scratch = Scratch {
            params: buffer("params", lowered.params_size as u64),
            status: buffer("status", STATUS_BYTES),
            locals: (lowered.locals_size > 0).then(|| buffer("locals", lowered.locals_size as u64)),
            partials: lowered
                .reductions
                .iter()
                .map(|r| {
                    buffer(
                        "partials",
                        max_groups * r.len as u64 * partial_size(r.ty, target) as u64,
                    )
                })
                .collect(),
            groups: HashMap::new(),
            host_values: (lowered.program.host_vars() > 0).then(|| {
                buffer(
                    "host values",
                    DISPATCHES_PER_PASS as u64
                        * self.host_value_stride(lowered.program.host_vars()),
                )
            }),
        };
        let compiled = Arc::new(Compiled {
            lowered,
            layout,
            pipelines,
            scratch: Mutex::new(scratch),
        });
        cache.insert(key, Arc::clone(&compiled));
        Ok(compiled)
    }
}
