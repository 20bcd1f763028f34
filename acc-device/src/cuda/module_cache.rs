//! Compiled kernels on disk (docs/design-notes/ir-and-backends.md): the driver's JIT turns each PTX
//! module into a cubin once; the cubin is kept under the cache directory, keyed by a hash of
//! the PTX (itself a function of the kernel's IR and the target) and the driver's version, so
//! later processes load it without compiling again.
//!
//! The directory is `ACC_CACHE_DIR` when set (`off` keeps nothing on disk), else
//! `$XDG_CACHE_HOME/acc`, else `$HOME/.cache/acc`. A cache that cannot be read or written is
//! not an error: the module is then compiled from its PTX as without a cache.

use std::path::PathBuf;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext};

use acc_core::Result;

use super::result::{self, cuda_error};

/// FNV-1a, 64 bits: stable across builds and platforms, unlike std's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn directory() -> Option<PathBuf> {
    // (Set but empty is unset, as for every other variable.)
    match acc_core::config::cache_dir() {
        Some(d) if d == "off" => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(|d| PathBuf::from(d).join("acc"))
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("acc"))
            }),
    }
    .map(|d| d.join("cuda"))
}

/// The CUDA driver's version (12080 for 12.8; 0 where the driver cannot say).
pub fn driver_version() -> i32 {
    result::driver_version()
}

/// The cubin file for `ptx` compiled for `sm`.
pub fn cache_path(ptx: &str, sm: u32) -> Option<PathBuf> {
    directory().map(|d| {
        d.join(format!(
            "{:016x}-sm{sm}-drv{}.cubin",
            fnv1a(ptx.as_bytes()),
            driver_version()
        ))
    })
}

/// A loaded module, unloaded when dropped. acc loads its modules itself (not through
/// cudarc's `CudaModule`) to hold its entry points' raw handles, which a launch passes to
/// `cuLaunchKernel` with a parameter block it keeps (cudarc's launch builder allocates one
/// per launch).
pub struct Module {
    raw: sys::CUmodule,
    ctx: Arc<CudaContext>,
}

// SAFETY: a module handle is usable from any thread whose current context is its own (every
// use binds it first).
unsafe impl Send for Module {}
// SAFETY: as above; the handle is only read.
unsafe impl Sync for Module {}

impl Module {
    /// Loads `image`: a cubin, or NUL-terminated PTX the driver compiles.
    fn load(ctx: &Arc<CudaContext>, image: &[u8]) -> Result<Module> {
        ctx.bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        // SAFETY: `image` is a whole cubin the driver made (`link`) or NUL-terminated PTX (the
        // call takes no length).
        let raw = unsafe { cudarc::driver::result::module::load_data(image.as_ptr().cast()) };
        Module::made(ctx, raw)
    }

    /// Loads the cubin file at `path` (the driver reads the file, whatever its length: a
    /// cache file cut short by a crash is an error, not a read past a buffer).
    fn load_file(ctx: &Arc<CudaContext>, path: &std::path::Path) -> Result<Module> {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| cuda_error("loading a cached module", "a NUL in its path"))?;
        ctx.bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        Module::made(ctx, cudarc::driver::result::module::load(name))
    }

    fn made(
        ctx: &Arc<CudaContext>,
        raw: std::result::Result<sys::CUmodule, cudarc::driver::DriverError>,
    ) -> Result<Module> {
        Ok(Module {
            raw: raw.map_err(|e| cuda_error("loading a PTX module", e.0))?,
            ctx: Arc::clone(ctx),
        })
    }

    /// Entry point `name`.
    pub fn function(&self, name: &str) -> Result<Function> {
        let name = std::ffi::CString::new(name)
            .map_err(|_| cuda_error("finding an entry point", "a NUL in its name"))?;
        // SAFETY: a loaded module.
        let f = unsafe { cudarc::driver::result::module::get_function(self.raw, name) }
            .map_err(|e| cuda_error("finding an entry point", e.0))?;
        Ok(Function(f))
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: loaded in `Module::load`; its functions are not launched any more (they
            // live beside it in the same `Loaded`).
            let _ = unsafe { cudarc::driver::result::module::unload(self.raw) };
        }
    }
}

/// An entry point of a [`Module`] (valid while the module is loaded).
#[derive(Clone, Copy)]
pub struct Function(sys::CUfunction);

// SAFETY: a function handle is usable from any thread bound to its context.
unsafe impl Send for Function {}
// SAFETY: as above; the handle is only read.
unsafe impl Sync for Function {}

impl Function {
    /// The raw handle, for `cuLaunchKernel`.
    pub fn raw(&self) -> sys::CUfunction {
        self.0
    }

    /// An attribute of the entry point (registers, shared and local memory); the caller binds
    /// the module's context first.
    pub fn attribute(&self, a: sys::CUfunction_attribute) -> Result<i32> {
        // SAFETY: a function of a loaded module.
        unsafe { cudarc::driver::result::function::get_function_attribute(self.0, a) }
            .map_err(|e| cuda_error("reading a function attribute", e.0))
    }
}

/// The module of `ptx` from the disk cache, when it holds it.
pub fn cached(ctx: &Arc<CudaContext>, ptx: &str, sm: u32) -> Option<Module> {
    let p = cache_path(ptx, sm)?;
    if !p.is_file() {
        return None;
    }
    Module::load_file(ctx, &p).ok()
}

/// How [`compile`] made a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compiler {
    /// The driver's JIT (one module at a time per process).
    Driver,
    /// A `ptxas` process (several run at once).
    Ptxas,
}

/// Whether a thread is compiling with the driver's JIT (which compiles one module at a time
/// per process: a second compilation meanwhile goes to `ptxas` when there is one).
static DRIVER_JIT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Compiles `ptx` into a module, kept in the disk cache for next time: with the driver's JIT
/// when it is idle, else with a `ptxas` process where one is installed (so kernels compiled
/// at once compile in parallel), else with the driver after the compilation under way.
pub fn compile(ctx: &Arc<CudaContext>, ptx: &str, sm: u32) -> Result<(Module, Compiler)> {
    use std::sync::atomic::Ordering;
    let path = cache_path(ptx, sm);
    let keep = |cubin: &[u8]| {
        if let Some(p) = &path {
            // Kept for next time; loaded from memory whether or not the disk took it.
            let _ = store(p, cubin);
        }
    };
    let driver_idle = DRIVER_JIT
        .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if !driver_idle {
        if let Some(cubin) = ptxas_path().and_then(|exe| run_ptxas(exe, ptx, sm)) {
            // A cubin of a newer `ptxas` than the driver knows does not load: the driver then
            // compiles the PTX itself.
            if let Ok(m) = Module::load(ctx, &cubin) {
                keep(&cubin);
                return Ok((m, Compiler::Ptxas));
            }
        }
    }
    struct Idle(bool);
    impl Drop for Idle {
        fn drop(&mut self) {
            if self.0 {
                DRIVER_JIT.store(false, Ordering::Release);
            }
        }
    }
    let _idle = Idle(driver_idle);
    if let Some(cubin) = link(ctx, ptx) {
        keep(&cubin);
        if let Ok(m) = Module::load(ctx, &cubin) {
            return Ok((m, Compiler::Driver));
        }
    }
    let mut src = ptx.as_bytes().to_vec();
    src.push(0);
    Ok((Module::load(ctx, &src)?, Compiler::Driver))
}

/// The `ptxas` to compile with: `ACC_PTXAS` (`off`: none), else the first on `PATH`, in
/// `$CUDA_HOME/bin`, `$CUDA_PATH/bin` or `/usr/local/cuda/bin`.
fn ptxas_path() -> Option<&'static std::path::Path> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            if let Some(named) = acc_core::config::ptxas() {
                return (named != "off").then(|| PathBuf::from(named));
            }
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .chain(
                    ["CUDA_HOME", "CUDA_PATH"]
                        .iter()
                        .filter_map(std::env::var_os)
                        .map(|d| PathBuf::from(d).join("bin")),
                )
                .chain(std::iter::once(PathBuf::from("/usr/local/cuda/bin")))
                .map(|d| d.join("ptxas"))
                .find(|p| p.is_file())
        })
        .as_deref()
}

/// `ptx` assembled for `sm` by the `ptxas` at `exe` (None when it fails: the driver then
/// compiles it and reports what is wrong).
fn run_ptxas(exe: &std::path::Path, ptx: &str, sm: u32) -> Option<Vec<u8>> {
    let dir = private_temp_dir()?;
    let (src, out) = (dir.join("kernel.ptx"), dir.join("kernel.cubin"));
    let made = std::fs::write(&src, ptx).ok().and_then(|()| {
        std::process::Command::new(exe)
            .arg(format!("-arch=sm_{sm}"))
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()
            .filter(|s| s.success())
            .and_then(|_| std::fs::read(&out).ok())
    });
    let _ = std::fs::remove_dir_all(&dir);
    made.filter(|c| !c.is_empty())
}

/// A new directory in the temporary directory that only this user can enter (created, not
/// found: a name someone else made first is skipped), so that no other user can put or swap
/// files where `ptxas` reads and writes.
fn private_temp_dir() -> Option<PathBuf> {
    use std::hash::{BuildHasher, Hasher};
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for _ in 0..16 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let dir = std::env::temp_dir().join(format!(
            "acc-ptxas-{}-{:016x}",
            std::process::id(),
            h.finish()
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&dir) {
            Ok(()) => return Some(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}

/// Writes `bytes` to `path` through a temporary file, so a reader never sees half a cubin.
fn store(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no directory"))?;
    std::fs::create_dir_all(dir)?;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        path.file_name().and_then(|n| n.to_str()).unwrap_or("cubin")
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// The cubin the driver's JIT makes of `ptx` (None when it fails: loading the PTX directly
/// then reports why).
fn link(ctx: &Arc<CudaContext>, ptx: &str) -> Option<Vec<u8>> {
    ctx.bind_to_thread().ok()?;
    result::link_ptx(ptx)
}

#[cfg(test)]
mod tests {
    use super::fnv1a;

    #[test]
    fn the_hash_is_fnv1a() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
