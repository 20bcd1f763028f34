//! The typed model of an OpenACC directive: which directive, and its clauses with their spans.
//!
//! `parse` turns attribute arguments into a [`Directive`]; `allowed` knows which clauses each
//! directive takes (OpenACC 3.3 sections 2.5-2.16, tables D1-D18 of the checklist).

pub mod allowed;
pub mod attrs;
pub mod clause;
pub mod parse;
pub mod parsed;

pub use clause::{Clause, ClauseArgs, ClauseName, DeviceTypeSel, RedOp, SizeExpr, VarRef};

use proc_macro2::Span;

/// Device type names a `device_type` clause accepts.
pub const DEVICE_TYPE_NAMES: &[&str] = &["host", "multicore", "nvidia", "wgpu", "default"];

/// Every directive `acc` spells as an attribute or a function-like macro.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectiveKind {
    Parallel,
    Kernels,
    Serial,
    ParallelLoop,
    KernelsLoop,
    SerialLoop,
    Loop,
    Data,
    HostData,
    Atomic,
    Routine,
    Declare,
    Offload,
    Update,
    EnterData,
    ExitData,
    Wait,
    Init,
    Shutdown,
    Set,
    Cache,
}

impl DirectiveKind {
    /// The directive as the user spells it in Rust.
    pub fn spelling(self) -> &'static str {
        use DirectiveKind::*;
        match self {
            Parallel => "parallel",
            Kernels => "kernels",
            Serial => "serial",
            ParallelLoop => "parallel_loop",
            KernelsLoop => "kernels_loop",
            SerialLoop => "serial_loop",
            Loop => "loop",
            Data => "data",
            HostData => "host_data",
            Atomic => "atomic",
            Routine => "routine",
            Declare => "declare",
            Offload => "offload",
            Update => "update",
            EnterData => "enter_data",
            ExitData => "exit_data",
            Wait => "wait",
            Init => "init",
            Shutdown => "shutdown",
            Set => "set",
            Cache => "cache",
        }
    }

    /// Where the directive is defined, as error messages cite it: its section of OpenACC
    /// 3.3 (`3.3 section 2.5.1`), or the guide for acc's own `offload`.
    pub fn cite(self) -> &'static str {
        use DirectiveKind::*;
        match self {
            Parallel => "3.3 section 2.5.1",
            Serial => "3.3 section 2.5.2",
            Kernels => "3.3 section 2.5.3",
            ParallelLoop | KernelsLoop | SerialLoop => "3.3 section 2.11",
            Loop => "3.3 section 2.9",
            Data => "3.3 section 2.6.5",
            EnterData | ExitData => "3.3 section 2.6.6",
            HostData => "3.3 section 2.8",
            Atomic => "3.3 section 2.12",
            Routine => "3.3 section 2.15.1",
            Declare => "3.3 section 2.13",
            Offload => "acc's own directive: docs/guide/directives.md",
            Update => "3.3 section 2.14.4",
            Wait => "3.3 section 2.16.3",
            Init => "3.3 section 2.14.1",
            Shutdown => "3.3 section 2.14.2",
            Set => "3.3 section 2.14.3",
            Cache => "3.3 section 2.10",
        }
    }

    /// The directive named by the last segment of an attribute path (`acc::parallel`).
    pub fn from_attr_name(name: &str) -> Option<DirectiveKind> {
        use DirectiveKind::*;
        Some(match name {
            "parallel" => Parallel,
            "kernels" => Kernels,
            "serial" => Serial,
            "parallel_loop" => ParallelLoop,
            "kernels_loop" => KernelsLoop,
            "serial_loop" => SerialLoop,
            "loop" | "r#loop" => Loop,
            "data" => Data,
            "host_data" => HostData,
            "atomic" => Atomic,
            "routine" => Routine,
            "declare" => Declare,
            "offload" => Offload,
            _ => return None,
        })
    }

    /// The compute construct of a compute or combined directive.
    pub fn compute(self) -> Option<ComputeKind> {
        use DirectiveKind::*;
        match self {
            Parallel | ParallelLoop => Some(ComputeKind::Parallel),
            Kernels | KernelsLoop => Some(ComputeKind::Kernels),
            Serial | SerialLoop => Some(ComputeKind::Serial),
            _ => None,
        }
    }

    /// Whether this is a combined construct (`parallel loop` and the like, spec 2.11).
    pub fn is_combined(self) -> bool {
        matches!(
            self,
            DirectiveKind::ParallelLoop | DirectiveKind::KernelsLoop | DirectiveKind::SerialLoop
        )
    }
}

/// The three compute constructs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeKind {
    Parallel,
    Kernels,
    Serial,
}

/// A parsed directive.
#[derive(Clone)]
pub struct Directive {
    pub kind: DirectiveKind,
    /// Span of the directive's name (for errors about the directive as a whole).
    pub span: Span,
    pub clauses: Vec<Clause>,
}

impl Directive {
    /// Clauses named `name` that apply to every device type (outside `device_type` sections).
    pub fn general(&self, name: ClauseName) -> impl Iterator<Item = &Clause> {
        self.clauses
            .iter()
            .filter(move |c| c.name == name && c.device_types.is_none())
    }

    /// The first clause named `name`, in any section.
    pub fn find(&self, name: ClauseName) -> Option<&Clause> {
        self.clauses.iter().find(|c| c.name == name)
    }

    /// Whether a clause named `name` appears anywhere.
    pub fn has(&self, name: ClauseName) -> bool {
        self.find(name).is_some()
    }

    /// The clauses that apply on device type `device` (3.3 section 2.4): the clauses of
    /// `device_type` sections naming it (or, when none does, of `device_type(*)` sections)
    /// replace the like-named clauses outside any section. The result has no sections.
    pub fn for_device(&self, device: &str) -> Directive {
        let names = |sel: &[DeviceTypeSel]| -> (bool, bool) {
            let named = sel.iter().any(|t| matches!(t, DeviceTypeSel::Named(id) if id.to_string().eq_ignore_ascii_case(device)));
            let star = sel.iter().any(|t| matches!(t, DeviceTypeSel::Star(_)));
            (named, star)
        };
        let named_exists = self
            .clauses
            .iter()
            .any(|c| c.device_types.as_deref().is_some_and(|s| names(s).0));
        let specific: Vec<&Clause> = self
            .clauses
            .iter()
            .filter(|c| c.name != ClauseName::DeviceType)
            .filter(|c| match c.device_types.as_deref() {
                Some(sel) => {
                    let (named, star) = names(sel);
                    named || (!named_exists && star)
                }
                None => false,
            })
            .collect();
        let mut clauses: Vec<Clause> = self
            .clauses
            .iter()
            .filter(|c| c.device_types.is_none() && c.name != ClauseName::DeviceType)
            .filter(|c| !specific.iter().any(|s| s.name == c.name))
            .cloned()
            .collect();
        clauses.extend(specific.into_iter().cloned().map(|mut c| {
            c.device_types = None;
            c
        }));
        Directive {
            kind: self.kind,
            span: self.span,
            clauses,
        }
    }

    /// The directive as each device type sees it ([`Directive::for_device`]): first as a device
    /// type named in no `device_type` clause sees it (labelled `""`), then, when the directive
    /// has `device_type` sections, as each device type `acc` knows or the directive names.
    pub fn projections(&self) -> Vec<(String, Directive)> {
        let mut out = vec![(String::new(), self.for_device(""))];
        if !self.has(ClauseName::DeviceType) {
            return out;
        }
        let mut devices: Vec<String> = DEVICE_TYPE_NAMES.iter().map(|s| s.to_string()).collect();
        self.add_named_device_types(&mut devices);
        out.extend(devices.into_iter().map(|d| {
            let p = self.for_device(&d);
            (d, p)
        }));
        out
    }

    /// Adds to `names` (lowercase, once each) the device types its `device_type` clauses name.
    pub fn add_named_device_types(&self, names: &mut Vec<String>) {
        for c in self.all(ClauseName::DeviceType) {
            if let ClauseArgs::DeviceTypes(list) = &c.args {
                for t in list {
                    if let DeviceTypeSel::Named(id) = t {
                        let n = id.to_string().to_ascii_lowercase();
                        if !names.contains(&n) {
                            names.push(n);
                        }
                    }
                }
            }
        }
    }

    /// All clauses named `name`, in any section.
    pub fn all(&self, name: ClauseName) -> impl Iterator<Item = &Clause> {
        self.clauses.iter().filter(move |c| c.name == name)
    }
}
