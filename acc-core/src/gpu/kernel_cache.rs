//! The kernels a GPU device has loaded, found by the address of their IR and confirmed by
//! comparing it: each with the variants lowered for it so far and the bounds proofs of its last
//! few launches, so that a region launched again with the same sizes (a time step, or one
//! alternating between two buffers' offsets) is neither lowered nor proven again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::ir::args::{KernelArg, ScalarValue};
use crate::ir::bounds::{self, Prepared, Proof};
use crate::ir::Kernel;
use crate::Result;

pub use crate::ir::plan::Variant;

/// Whether launches may be narrowed at all: `ACC_NARROW=0` keeps 64-bit index arithmetic
/// everywhere (to measure what narrowing gives, or to rule it out).
pub fn narrowing_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(crate::config::narrow)
}

/// What [`KernelCache::find`] gives a launch.
pub struct Found<C> {
    /// The variant the launch runs, loaded.
    pub compiled: Arc<C>,
    /// Which variant that is.
    pub variant: Variant,
    /// Every access is in bounds for these arguments (so the kernel cannot report one).
    pub in_bounds: bool,
    /// For each parameter, whether the kernel touches it ([`Kernel::accessed_params`]): an
    /// array it does not (a `private` copy's original) is not transferred.
    pub accessed: Arc<[bool]>,
    /// What the kernel's last launches worked out ([`super::memo`]).
    pub memo: Arc<Mutex<super::memo::LaunchMemo>>,
}

struct Family<C> {
    /// The kernel: the launch's own where it came shared, else a copy.
    kernel: Arc<Kernel>,
    accessed: Arc<[bool]>,
    /// What every proof of the kernel reuses (`None`: its expressions do not type, so no
    /// proof succeeds), and whether it may be narrowed.
    prepared: Option<Prepared>,
    narrowable: bool,
    /// For each scalar parameter, whether the proof reads its value ([`bounds::proof_reads`]);
    /// every array's length counts.
    read: Vec<bool>,
    /// The argument signatures of the last launches and their proofs, the latest first (a
    /// time loop alternating between two buffers' offsets finds each).
    proofs: Vec<(Vec<u64>, Proof)>,
    memo: Arc<Mutex<super::memo::LaunchMemo>>,
    variants: Vec<(Variant, Arc<C>)>,
}

/// How many launches' proofs a kernel keeps.
const PROOFS_KEPT: usize = 4;

/// Loaded kernels of type `C` (a backend's compiled variant), by IR.
pub struct KernelCache<C> {
    families: Mutex<HashMap<usize, Vec<Family<C>>, crate::int_hash::IntKeys>>,
}

impl<C> Default for KernelCache<C> {
    fn default() -> Self {
        KernelCache {
            families: Mutex::new(HashMap::default()),
        }
    }
}

impl<C> KernelCache<C> {
    /// The variant of `kernel` that a launch with `args` runs, compiled by `compile` the first
    /// time. `wide`: the target holds `usize` in 64 bits, so a narrowed variant can pay.
    /// `ACC_NARROW=0` keeps 64-bit arithmetic, to compare.
    ///
    /// `shared`: the kernel is `shared`'s. Its family then keeps that `Arc`, so that the
    /// kernel's address names it for good (the memory cannot be freed and reused, nor the
    /// kernel changed, while the family holds it) and later launches skip comparing the IR.
    pub fn find(
        &self,
        kernel: &Kernel,
        shared: Option<&Arc<Kernel>>,
        args: &[KernelArg<'_>],
        wide: bool,
        compile: impl FnOnce(Variant) -> Result<C>,
    ) -> Result<Found<C>> {
        let mut families = self.families.lock().unwrap_or_else(|e| e.into_inner());
        let list = families
            .entry(kernel as *const Kernel as usize)
            .or_default();
        let same =
            |f: &Family<C>| std::ptr::eq(Arc::as_ptr(&f.kernel), kernel) || *f.kernel == *kernel;
        let at = match list.iter().position(same) {
            Some(i) => i,
            None => {
                let own = match shared {
                    Some(a) if std::ptr::eq(Arc::as_ptr(a), kernel) => Arc::clone(a),
                    _ => Arc::new(kernel.clone()),
                };
                list.push(Family {
                    kernel: own,
                    accessed: kernel.accessed_params().into(),
                    prepared: Prepared::new(kernel),
                    narrowable: crate::ir::narrow::narrowable(kernel),
                    read: (0..kernel.params.len())
                        .map(|p| bounds::proof_reads(kernel, p as crate::ir::ParamId))
                        .collect(),
                    proofs: Vec::new(),
                    memo: Default::default(),
                    variants: Vec::new(),
                });
                list.len() - 1
            }
        };
        let family = &mut list[at];
        let known = family
            .proofs
            .iter()
            .position(|(s, _)| same_signature(s, args, &family.read));
        let proof = match known {
            Some(0) => family.proofs[0].1,
            Some(i) => {
                let entry = family.proofs.remove(i);
                let p = entry.1;
                family.proofs.insert(0, entry);
                p
            }
            None => {
                let p = match &family.prepared {
                    Some(prepared) => crate::ir::narrow::prove_prepared(
                        kernel,
                        prepared,
                        (family.narrowable, narrowing_enabled()),
                        args,
                        wide,
                    ),
                    None => bounds::prove(kernel, args, false),
                };
                family.proofs.truncate(PROOFS_KEPT - 1);
                family.proofs.insert(0, (signature(args, &family.read), p));
                p
            }
        };
        let proven = proof.in_bounds || kernel.unchecked;
        let variant = Variant {
            proven,
            // An unchecked kernel's proof may stand on its promise, not on the arguments.
            narrow: proof.in_bounds && proof.fits_32 && !kernel.unchecked,
        };
        let compiled = match family.variants.iter().find(|(v, _)| *v == variant) {
            Some((_, c)) => Arc::clone(c),
            None => {
                let c = Arc::new(compile(variant)?);
                family.variants.push((variant, Arc::clone(&c)));
                c
            }
        };
        Ok(Found {
            compiled,
            variant,
            in_bounds: proof.in_bounds,
            accessed: Arc::clone(&family.accessed),
            memo: Arc::clone(&family.memo),
        })
    }

    /// The variants of `kernel` loaded so far (`ACC_INFO`'s resources).
    pub fn variants(&self, kernel: &Kernel) -> Vec<(Variant, Arc<C>)> {
        let families = self.families.lock().unwrap_or_else(|e| e.into_inner());
        families
            .get(&(kernel as *const Kernel as usize))
            .into_iter()
            .flatten()
            .filter(|f| std::ptr::eq(Arc::as_ptr(&f.kernel), kernel) || *f.kernel == *kernel)
            .flat_map(|f| f.variants.iter().map(|(v, c)| (*v, Arc::clone(c))))
            .collect()
    }
}

/// What the bounds proof of a launch depends on: each array argument's length in bytes and
/// the value of each scalar the proof reads (`read`; 0 for the others).
fn signature(args: &[KernelArg<'_>], read: &[bool]) -> Vec<u64> {
    args.iter()
        .enumerate()
        .map(|(p, a)| word(a, read.get(p).copied().unwrap_or(true)))
        .collect()
}

/// Whether `args` have signature `s`, without making theirs (a launch pays for it).
fn same_signature(s: &[u64], args: &[KernelArg<'_>], read: &[bool]) -> bool {
    s.len() == args.len()
        && args
            .iter()
            .enumerate()
            .all(|(p, a)| s[p] == word(a, read.get(p).copied().unwrap_or(true)))
}

/// An argument's word in a signature: an array's length in bytes, a scalar's value (its bits)
/// where `read`, else 0.
pub(super) fn word(a: &KernelArg<'_>, read: bool) -> u64 {
    match a {
        KernelArg::Read(d) => d.len() as u64,
        KernelArg::Write(d) => d.len() as u64,
        KernelArg::Scalar(_) if !read => 0,
        KernelArg::Scalar(v) => match *v {
            ScalarValue::Bool(b) => b as u64,
            ScalarValue::I32(x) => x as u32 as u64,
            ScalarValue::U32(x) => x as u64,
            ScalarValue::I64(x) | ScalarValue::ISize(x) => x as u64,
            ScalarValue::U64(x) | ScalarValue::USize(x) => x,
            ScalarValue::F32(x) => x.to_bits() as u64,
            ScalarValue::F64(x) => x.to_bits(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Scalar;

    #[test]
    fn a_kernel_is_compiled_once_per_variant_and_proven_once_per_signature() {
        let k = crate::ir::samples::saxpy(Scalar::F32);
        let cache = KernelCache::<Variant>::default();
        let (x, mut y) = (vec![0u8; 64], vec![0u8; 64]);
        let mut compiled = 0;
        for _ in 0..3 {
            let args = [
                KernelArg::Scalar(ScalarValue::F32(2.0)),
                KernelArg::Read(&x),
                KernelArg::Write(&mut y),
            ];
            let found = cache
                .find(&k, None, &args, true, |v| {
                    compiled += 1;
                    Ok(v)
                })
                .expect("found");
            assert!(found.in_bounds && found.variant.proven);
            assert_eq!(*found.compiled, found.variant);
        }
        assert_eq!(compiled, 1);
        // Another kernel at another address with the same IR is its own family.
        let k2 = k.clone();
        let args = [
            KernelArg::Scalar(ScalarValue::F32(2.0)),
            KernelArg::Read(&x),
            KernelArg::Write(&mut y),
        ];
        cache.find(&k2, None, &args, true, Ok).expect("found");
    }

    #[test]
    fn a_launch_whose_float_scalar_changed_keeps_its_proof() {
        let k = crate::ir::samples::saxpy(Scalar::F32);
        let read: Vec<bool> = (0..k.params.len())
            .map(|p| bounds::proof_reads(&k, p as crate::ir::ParamId))
            .collect();
        assert!(!read[0], "the float scalar bounds nothing");
        let (x, mut y) = (vec![0u8; 64], vec![0u8; 64]);
        let mut y2 = vec![0u8; 60];
        let s = signature(
            &[
                KernelArg::Scalar(ScalarValue::F32(2.0)),
                KernelArg::Read(&x),
                KernelArg::Write(&mut y),
            ],
            &read,
        );
        let again = [
            KernelArg::Scalar(ScalarValue::F32(3.0)),
            KernelArg::Read(&x),
            KernelArg::Write(&mut y),
        ];
        assert!(same_signature(&s, &again, &read));
        let shorter = [
            KernelArg::Scalar(ScalarValue::F32(2.0)),
            KernelArg::Read(&x),
            KernelArg::Write(&mut y2),
        ];
        assert!(!same_signature(&s, &shorter, &read));
    }

    #[test]
    fn a_shared_kernel_is_kept_and_known_by_its_address() {
        let k = Arc::new(crate::ir::samples::saxpy(Scalar::F32));
        let cache = KernelCache::<Variant>::default();
        let (x, mut y) = (vec![0u8; 64], vec![0u8; 64]);
        let mut compiled = 0;
        for _ in 0..2 {
            let args = [
                KernelArg::Scalar(ScalarValue::F32(2.0)),
                KernelArg::Read(&x),
                KernelArg::Write(&mut y),
            ];
            cache
                .find(&k, Some(&k), &args, true, |v| {
                    compiled += 1;
                    Ok(v)
                })
                .expect("found");
        }
        assert_eq!(compiled, 1);
        // The family holds the kernel: its address cannot name another while it lives.
        assert_eq!(Arc::strong_count(&k), 2);
        assert_eq!(cache.variants(&k).len(), 1);
    }

    #[test]
    fn launches_alternating_between_two_sizes_keep_both_proofs() {
        // `eliminate` over an n x n matrix, n a scalar: a time loop switching n finds the
        // proof of each n it launched lately.
        let k = crate::ir::samples::eliminate();
        let cache = KernelCache::<Variant>::default();
        let mut m = vec![0u8; 8 * 16 * 16];
        for n in [16u64, 8, 16, 8, 16] {
            let args = [
                KernelArg::Write(&mut m),
                KernelArg::Scalar(ScalarValue::USize(n)),
            ];
            let found = cache.find(&k, None, &args, true, Ok).expect("found");
            assert!(found.in_bounds);
        }
        let families = cache.families.lock().unwrap();
        let proofs = &families.values().next().expect("one family")[0].proofs;
        assert_eq!(proofs.len(), 2, "one proof per size");
        assert_eq!(proofs[0].0[1], 16, "the latest first");
    }
}
