//! Procedural macros of `acc`: OpenACC directives as Rust attributes and macros.
//!
//! Each macro parses its directive into a typed model (`directive`), checks every restriction
//! it can see and collects the errors with their spans (`check`), and expands (`expand`): the
//! region's original code is kept as the host twin, and the calls into `::acc::__rt` that
//! launch it are added around it. The macros never panic on bad input; they report it.
//!
//! Use them through the `acc` crate (`#[acc::parallel_loop(..)]`), which documents them.

mod analysis;
mod check;
mod check_region;
mod derive;
mod directive;
mod expand;
#[cfg(test)]
mod fuzz_tests;

use directive::DirectiveKind;
use proc_macro::TokenStream;

/// Runs an expansion; a panic inside it (a bug in acc-macros) becomes a compile error at the
/// directive instead of rustc's bare "custom attribute panicked".
fn guard(name: &str, f: impl FnOnce() -> proc_macro2::TokenStream) -> TokenStream {
    directive::parsed::reset();
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    directive::parsed::reset();
    match out {
        Ok(ts) => ts.into(),
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let msg = format!(
                "internal error in `acc::{name}` ({what}); please report it with this directive"
            );
            syn::Error::new(proc_macro2::Span::call_site(), msg)
                .to_compile_error()
                .into()
        }
    }
}

macro_rules! function_attributes {
    ($($(#[$doc:meta])* $name:ident => $kind:ident;)*) => {$(
        $(#[$doc])*
        #[proc_macro_attribute]
        pub fn $name(args: TokenStream, item: TokenStream) -> TokenStream {
            guard(stringify!($name), || expand::expand_fn(DirectiveKind::$kind, args.into(), item.into()))
        }
    )*};
}

function_attributes! {
    /// `parallel` (OpenACC 3.3 section 2.5.1) on a function or a block.
    parallel => Parallel;
    /// `kernels` (3.3 section 2.5.3) on a function or a block.
    kernels => Kernels;
    /// `serial` (3.3 section 2.5.2) on a function or a block.
    serial => Serial;
    /// `parallel loop` (3.3 section 2.11) on a function whose body is one `for` loop, or on a
    /// `for` statement.
    parallel_loop => ParallelLoop;
    /// `kernels loop` (3.3 section 2.11).
    kernels_loop => KernelsLoop;
    /// `serial loop` (3.3 section 2.11).
    serial_loop => SerialLoop;
    /// `data` (3.3 section 2.6.5) on a function or a block.
    data => Data;
    /// `routine` (3.3 section 2.15.1): a function callable from compute regions.
    routine => Routine;
    /// `declare` (3.3 section 2.13) on a function: data clauses for the function's body.
    declare => Declare;
    /// No region: lets the statement directives inside the function take effect.
    offload => Offload;
    /// `loop` (3.3 section 2.9): only valid on a `for` statement inside a function that carries
    /// an acc attribute, which processes it.
    r#loop => Loop;
    /// `atomic` (3.3 section 2.12): only valid on a statement inside a function that carries an
    /// acc attribute, which processes it.
    atomic => Atomic;
    /// `host_data` (3.3 section 2.8): only valid on a block inside a function that carries an
    /// acc attribute, which processes it. Clauses: `use_device(a, ..)` (whole variables),
    /// `if(cond)`, `if_present`. Inside the block each `use_device` variable is an
    /// `acc::DeviceSlice` of its data on the current device, for other libraries: a CUDA
    /// device address on nvidia (`cu_deviceptr()`), a `wgpu::Buffer` on wgpu
    /// (`wgpu_buffer()`), the host's data on host and multicore (see `acc::DeviceSlice` for an
    /// example). The device's work is ordered before the block and after it.
    host_data => HostData;
}

macro_rules! executable_directives {
    ($($(#[$doc:meta])* $name:ident => $kind:ident;)*) => {$(
        $(#[$doc])*
        #[proc_macro]
        pub fn $name(input: TokenStream) -> TokenStream {
            guard(stringify!($name), || expand::executable::expand(DirectiveKind::$kind, input.into()))
        }
    )*};
}

executable_directives! {
    /// `update` (3.3 section 2.14.4).
    update => Update;
    /// `enter data` (3.3 section 2.14.6).
    enter_data => EnterData;
    /// `exit data` (3.3 section 2.14.7).
    exit_data => ExitData;
    /// `wait` (3.3 section 2.16.3).
    wait => Wait;
    /// `init` (3.3 section 2.14.1).
    init => Init;
    /// `shutdown` (3.3 section 2.14.2).
    shutdown => Shutdown;
    /// `set` (3.3 section 2.14.3).
    set => Set;
    /// `cache` (3.3 section 2.10).
    cache => Cache;
}

/// Derives `acc::DeviceCopy` for a `#[repr(C)]` struct whose fields are all device data.
#[proc_macro_derive(DeviceCopy)]
pub fn derive_device_copy(input: TokenStream) -> TokenStream {
    guard("DeviceCopy", || derive::device_copy(input.into()))
}
