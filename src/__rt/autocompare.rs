//! `ACC_AUTOCOMPARE` ([`crate::guide::tools`], after NVHPC's PCAST autocompare): a compute region
//! that runs on a device other than `host` runs its host twin too, and every variable it
//! writes is compared, device result against host result.
//!
//! The twin runs on the region's own variables, so it is the same code rustc compiled, at the
//! same types: before the region each variable's input is saved as the device sees it (its
//! device copy when it is present there); after the region the device's results are saved,
//! the host copies are set to the saved inputs, the twin runs, its results are compared with
//! the device's, and every host copy is put back as the region left it (the device's results,
//! or, for data present on the device, the host copy it had). The program's results are the
//! device's, whatever the comparison finds.
//!
//! A region is not compared (and says why, once) when one of its variables is not device data
//! or is read-only in the function while its host copy differs from its device copy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use acc_core::data::{bytes_of, bytes_of_mut, DataVar, DataVarMut, DeviceCopy};
use acc_core::present::{ElemLayout, Named};
use acc_core::region::{Launch, RegionSite};
use acc_core::{Device, DeviceType, Location};

use super::kernel::{DataTag, RefuseTag, ScalarTag};

/// `ACC_AUTOCOMPARE`: off, on (`1`), or `abort` (stop at the first difference).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Off,
    Report,
    Abort,
}

struct Settings {
    mode: Mode,
    tol: f64,
}

/// The default relative tolerance for floats: reductions and contracted multiply-adds reorder
/// rounding, which moves f32 results by a few units in the last place per operation and sums
/// of many terms by more; 1e-5 of the larger magnitude passes those and catches wrong values.
const DEFAULT_TOL: f64 = 1e-5;

fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        let mode = match acc_core::config::autocompare().map(|v| v.trim().to_ascii_lowercase()) {
            None => Mode::Off,
            Some(v) if v == "0" => Mode::Off,
            Some(v) if v == "abort" => Mode::Abort,
            Some(_) => Mode::Report,
        };
        let tol = match acc_core::config::autocompare_tol() {
            None => DEFAULT_TOL,
            Some(v) => v.trim().parse::<f64>().ok().filter(|t| *t >= 0.0).unwrap_or_else(|| {
                eprintln!("acc: ACC_AUTOCOMPARE_TOL={v:?} is not a non-negative number; using {DEFAULT_TOL}");
                DEFAULT_TOL
            }),
        };
        Settings { mode, tol }
    })
}

static COMPARED: AtomicU64 = AtomicU64::new(0);
static DIFFERED: AtomicU64 = AtomicU64::new(0);
static NOTED: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());

/// One variable of a compared region.
struct Var {
    name: &'static str,
    elem: ElemLayout,
    /// The floats in an element (byte offset, type): a float scalar, or the float fields of a
    /// struct (a complex number's parts): compared within the tolerance, the rest bit for bit.
    floats: Vec<(usize, acc_core::ir::Scalar)>,
    /// The input as the device saw it.
    input: Vec<u8>,
    /// The host copy before the region, where it differs from the input (data present on the
    /// device, whose host copy is stale).
    host_before: Option<Vec<u8>>,
    present: bool,
    written: bool,
    /// The device's result.
    device: Vec<u8>,
}

/// A region being compared.
pub struct Session {
    site: &'static RegionSite,
    device: std::sync::Arc<dyn Device>,
    vars: Vec<Var>,
    /// Why the region cannot be compared, if it cannot.
    refused: Option<String>,
    /// The first difference found (`ACC_AUTOCOMPARE=abort` stops with it).
    first_difference: Option<String>,
}

/// Starts comparing a region, when `ACC_AUTOCOMPARE` is on and the region runs on a device
/// other than the host (`None` otherwise, at the cost of a flag).
#[inline]
pub fn begin(launch: &Launch, site: &'static RegionSite) -> Option<Session> {
    if settings().mode == Mode::Off {
        return None;
    }
    report_at_exit();
    let device = launch.device()?;
    if device.device_type() == DeviceType::Host {
        return None;
    }
    Some(Session {
        site,
        device: std::sync::Arc::clone(device),
        vars: Vec::new(),
        refused: None,
        first_difference: None,
    })
}

/// The variable's bytes as the device sees them: its device copy when present, else the host's.
fn device_view(
    device: &dyn Device,
    name: &'static str,
    elem: ElemLayout,
    host: &[u8],
) -> (Vec<u8>, bool) {
    if let Some(mem) = device.own_memory() {
        let named = Named {
            name,
            location: Location::caller(),
        };
        if let Ok(Some(at)) = mem
            .table
            .lookup(host.as_ptr() as usize, host.len(), elem, named)
        {
            let mut out = vec![0u8; host.len()];
            if mem
                .memory
                .download(at.buf, elem, at.first, &mut out)
                .is_ok()
            {
                return (out, true);
            }
        }
    }
    (host.to_vec(), false)
}

impl Session {
    fn refuse(&mut self, why: String) {
        self.refused.get_or_insert(why);
    }

    /// The region cannot be compared, for this reason.
    pub fn not_compared(&mut self, why: &str) {
        self.refuse(why.to_string());
    }

    fn var(&mut self, name: &'static str) -> Option<&mut Var> {
        self.vars.iter_mut().find(|v| v.name == name)
    }

    fn before_bytes(
        &mut self,
        name: &'static str,
        elem: ElemLayout,
        floats: Vec<(usize, acc_core::ir::Scalar)>,
        host: &[u8],
        written: bool,
        writable: bool,
    ) {
        let (input, present) = device_view(self.device.as_ref(), name, elem, host);
        let host_before = (input != host).then(|| host.to_vec());
        if host_before.is_some() && !writable {
            self.refuse(format!(
                "`{name}` is present on the device with other values than its host copy, and the function holds it read-only, so the host twin cannot be given the device's input"
            ));
        }
        self.vars.push(Var {
            name,
            elem,
            floats,
            input,
            host_before,
            present,
            written,
            device: Vec::new(),
        });
    }

    /// Whether the twin can run: every variable was saved.
    pub fn ready(&self) -> bool {
        self.refused.is_none()
    }

    /// Compares the twin's result of `name` (in `host`) with the device's, and puts the host
    /// copy back as the region left it.
    fn after_host(&mut self, name: &'static str, host: &mut [u8]) {
        let tol = settings().tol;
        let site = self.site;
        let device_type = self.device.device_type();
        let Some(at) = self.vars.iter().position(|v| v.name == name) else {
            return;
        };
        let v = &self.vars[at];
        if v.written {
            if let Some(d) = compare(v, host, tol) {
                DIFFERED.fetch_add(1, Ordering::Relaxed);
                let msg = format!(
                    "ACC_AUTOCOMPARE: `{}` region in `{}` at {} on {device_type}: `{name}` differs from the host's result: {d}",
                    site.kind.name(),
                    site.function,
                    site.location
                );
                if settings().mode == Mode::Abort {
                    self.first_difference.get_or_insert(msg);
                } else {
                    eprintln!("acc: {msg}");
                }
            }
        }
        // The host copy as the region left it: the device's result, or for present data
        // the stale host copy it had.
        let back = if v.present {
            v.host_before.as_deref().unwrap_or(&v.input)
        } else {
            &v.device
        };
        if back.len() == host.len() {
            host.copy_from_slice(back);
        }
    }

    /// Ends the comparison: counts it, or says once why the region could not be compared.
    pub fn finish(self) {
        if let Some(what) = self.first_difference {
            // After every host copy was put back: the program's data are the device's.
            panic!("acc: {}", acc_core::Error::AutocompareMismatch { what });
        }
        match &self.refused {
            None => {
                COMPARED.fetch_add(1, Ordering::Relaxed);
            }
            Some(why) => {
                let key = self.site as *const RegionSite as usize;
                let mut noted = NOTED.lock().unwrap_or_else(|e| e.into_inner());
                if !noted.iter().any(|(k, _)| *k == key) {
                    let line = format!(
                        "ACC_AUTOCOMPARE: `{}` region in `{}` at {} not compared: {why}",
                        self.site.kind.name(),
                        self.site.function,
                        self.site.location
                    );
                    eprintln!("acc: {line}");
                    noted.push((key, line));
                }
            }
        }
    }
}

/// The first difference beyond tolerance between the device's result and the host's, and how
/// many elements differ.
fn compare(v: &Var, host: &[u8], tol: f64) -> Option<String> {
    let size = v.elem.size.max(1);
    if v.device.len() != host.len() {
        return Some(format!(
            "{} bytes on the device, {} on the host",
            v.device.len(),
            host.len()
        ));
    }
    let n = host.len() / size;
    // The element's float parts, decoded.
    let parts = |b: &[u8]| -> Vec<f64> {
        v.floats
            .iter()
            .filter_map(|&(off, t)| float_at(b.get(off..)?, t))
            .collect()
    };
    // The bytes of an element that are not floats (compared exactly).
    let rest_equal = |d: &[u8], h: &[u8]| {
        (0..size).all(|k| {
            v.floats
                .iter()
                .any(|&(off, t)| (off..off + t.size() as usize).contains(&k))
                || d[k] == h[k]
        })
    };
    // A floor for the relative test: values near zero after cancellation are compared
    // against the array's largest magnitude.
    let scale = (0..n)
        .flat_map(|i| parts(&host[i * size..(i + 1) * size]))
        .filter(|x| x.is_finite())
        .fold(0.0f64, |m, x| m.max(x.abs()))
        * 1e-3;
    let mut first = None;
    let mut count = 0usize;
    for i in 0..n {
        let (d, h) = (
            &v.device[i * size..(i + 1) * size],
            &host[i * size..(i + 1) * size],
        );
        if d == h {
            continue;
        }
        let differs = v.floats.is_empty()
            || !rest_equal(d, h)
            || parts(d).iter().zip(parts(h)).any(|(&a, b)| {
                !(a.is_nan() && b.is_nan())
                    && !((a - b).abs() <= tol * a.abs().max(b.abs()).max(scale))
            });
        if differs {
            count += 1;
            first.get_or_insert(i);
        }
    }
    let i = first?;
    let show = |b: &[u8]| match v.elem.scalar {
        Some(t) => super::kernel::show_scalar(t, b),
        None => format!("{b:02x?}"),
    };
    let at = if n == 1 && v.elem.scalar.is_some() {
        String::new()
    } else {
        format!(" at index {i}")
    };
    Some(format!(
        "first{at}: device {}, host {}; {count} of {n} element{} differ{} (ACC_AUTOCOMPARE_TOL {tol:e}, relative)",
        show(&v.device[i * size..(i + 1) * size]),
        show(&host[i * size..(i + 1) * size]),
        if n == 1 { "" } else { "s" },
        if count == 1 { "s" } else { "" },
    ))
}

/// The float at the start of `b`, of type `t` (`None` for other types).
fn float_at(b: &[u8], t: acc_core::ir::Scalar) -> Option<f64> {
    use acc_core::ir::Scalar as S;
    let w2 = |b: &[u8]| -> Option<[u8; 2]> { b.get(..2)?.try_into().ok() };
    let w4 = |b: &[u8]| -> Option<[u8; 4]> { b.get(..4)?.try_into().ok() };
    let w8 = |b: &[u8]| -> Option<[u8; 8]> { b.get(..8)?.try_into().ok() };
    use acc_core::ir::builder::half::{bf16_bits_to_f32, f16_bits_to_f32};
    Some(match t {
        S::F32 => f32::from_le_bytes(w4(b)?) as f64,
        S::F64 => f64::from_le_bytes(w8(b)?),
        S::F16 => f16_bits_to_f32(u16::from_le_bytes(w2(b)?)) as f64,
        S::BF16 => bf16_bits_to_f32(u16::from_le_bytes(w2(b)?)) as f64,
        _ => return None,
    })
}

/// The floats in an element of type `T`: itself, or the float fields of a struct.
fn floats_of<T: DeviceCopy>() -> Vec<(usize, acc_core::ir::Scalar)> {
    match (T::SCALAR, T::LAYOUT) {
        (Some(t), _) if t.is_float() => vec![(0, t)],
        (None, Some(l)) => l
            .fields
            .iter()
            .filter_map(|f| Some((f.offset as usize, f.ty.filter(|t| t.is_float())?)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The summary printed at exit, also from `acc::autocompare_report()`.
pub fn summary() -> String {
    let noted = NOTED.lock().unwrap_or_else(|e| e.into_inner()).len();
    let compared = COMPARED.load(Ordering::Relaxed);
    format!(
        "acc: ACC_AUTOCOMPARE: {compared} region run{} compared with the host twin, {} variable result{} differed; {noted} region{} could not be compared\n",
        if compared == 1 { "" } else { "s" },
        DIFFERED.load(Ordering::Relaxed),
        if DIFFERED.load(Ordering::Relaxed) == 1 { "" } else { "s" },
        if noted == 1 { "" } else { "s" },
    )
}

/// How many variable results differed so far.
pub fn differences() -> u64 {
    DIFFERED.load(Ordering::Relaxed)
}

fn report_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| acc_core::observe::at_exit(|| eprint!("{}", summary())));
}

// The per-variable steps, on the tags the expansion's probe gives (see `kernel::Probe`).

impl DataTag {
    /// Saves the input of a variable the function holds read-only.
    pub fn ac_before<V: DataVar + ?Sized>(
        self,
        s: &mut Session,
        name: &'static str,
        v: &V,
        written: bool,
    ) {
        s.before_bytes(
            name,
            super::layout::<V::Elem>(),
            floats_of::<V::Elem>(),
            bytes_of(v.elems()),
            written,
            false,
        );
    }
    /// Saves the input of a variable the function may write.
    pub fn ac_before_mut<V: DataVar + ?Sized>(
        self,
        s: &mut Session,
        name: &'static str,
        v: &V,
        written: bool,
    ) {
        s.before_bytes(
            name,
            super::layout::<V::Elem>(),
            floats_of::<V::Elem>(),
            bytes_of(v.elems()),
            written,
            true,
        );
    }
    /// Saves the device's result and sets the host copy to the saved input.
    pub fn ac_device<V: DataVarMut + ?Sized>(self, s: &mut Session, name: &'static str, v: &mut V) {
        let dev = std::sync::Arc::clone(&s.device);
        let Some(var) = s.var(name) else { return };
        let host = bytes_of_mut(v.elems_mut());
        var.device = device_view(dev.as_ref(), name, var.elem, host).0;
        if var.input.len() == host.len() {
            host.copy_from_slice(&var.input);
        }
    }
    /// Compares the twin's result and restores the host copy.
    pub fn ac_host<V: DataVarMut + ?Sized>(self, s: &mut Session, name: &'static str, v: &mut V) {
        s.after_host(name, bytes_of_mut(v.elems_mut()));
    }
}

impl ScalarTag {
    /// See [`DataTag::ac_before`].
    pub fn ac_before<T: DeviceCopy>(
        self,
        s: &mut Session,
        name: &'static str,
        v: &T,
        written: bool,
    ) {
        DataTag.ac_before(s, name, std::slice::from_ref(v), written)
    }
    /// See [`DataTag::ac_before_mut`].
    pub fn ac_before_mut<T: DeviceCopy>(
        self,
        s: &mut Session,
        name: &'static str,
        v: &T,
        written: bool,
    ) {
        DataTag.ac_before_mut(s, name, std::slice::from_ref(v), written)
    }
    /// See [`DataTag::ac_device`].
    pub fn ac_device<T: DeviceCopy>(self, s: &mut Session, name: &'static str, v: &mut T) {
        DataTag.ac_device(s, name, std::slice::from_mut(v))
    }
    /// See [`DataTag::ac_host`].
    pub fn ac_host<T: DeviceCopy>(self, s: &mut Session, name: &'static str, v: &mut T) {
        DataTag.ac_host(s, name, std::slice::from_mut(v))
    }
}

impl RefuseTag {
    /// A variable that is not device data: the region is not compared.
    pub fn ac_before<V: ?Sized>(self, s: &mut Session, name: &'static str, _: &V, _: bool) {
        s.refuse(format!("`{name}` is not device data"));
    }
    /// See [`RefuseTag::ac_before`].
    pub fn ac_before_mut<V: ?Sized>(self, s: &mut Session, name: &'static str, v: &V, w: bool) {
        self.ac_before(s, name, v, w)
    }
    /// Nothing to save.
    pub fn ac_device<V: ?Sized>(self, _: &mut Session, _: &'static str, _: &mut V) {}
    /// Nothing to compare.
    pub fn ac_host<V: ?Sized>(self, _: &mut Session, _: &'static str, _: &mut V) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var_of<T: DeviceCopy>(device: &[T]) -> Var {
        Var {
            name: "v",
            elem: super::super::layout::<T>(),
            floats: floats_of::<T>(),
            input: Vec::new(),
            host_before: None,
            present: false,
            written: true,
            device: bytes_of(device).to_vec(),
        }
    }

    /// A complex number's parts, like a float's, differ within the tolerance (a reordered
    /// complex reduction); beyond it, or in an integer field, they are reported.
    #[cfg(feature = "num-complex")]
    #[test]
    fn complex_parts_are_compared_within_the_tolerance() {
        use num_complex::Complex64;
        let host = [Complex64::new(1.0, 2.0), Complex64::new(-3.0, 0.5)];
        let close = [
            Complex64::new(1.0 + 1e-12, 2.0),
            Complex64::new(-3.0, 0.5 - 1e-12),
        ];
        assert_eq!(compare(&var_of(&close), bytes_of(&host), 1e-9), None);
        let far = [Complex64::new(1.0, 2.0), Complex64::new(-3.0, 0.6)];
        let msg = compare(&var_of(&far), bytes_of(&host), 1e-9).expect("a difference");
        assert!(
            msg.contains("index 1") && msg.contains("1 of 2 elements differs"),
            "{msg}"
        );
    }

    #[test]
    fn integers_are_compared_bit_for_bit() {
        let host = [1i32, 2, 3];
        assert!(compare(&var_of(&[1i32, 2, 4]), bytes_of(&host), 1.0).is_some());
        assert_eq!(
            compare(
                &var_of(&[1.0f32, 2.0]),
                bytes_of(&[1.0f32, 2.0 + 1e-7]),
                1e-5
            ),
            None
        );
    }
}
