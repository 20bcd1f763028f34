//! The status words through which a GPU kernel reports what stops a launch, one layout for
//! every backend, zeroed before each launch and read after it when the kernel can set them
//! ([`LaunchLayout::status_used`](super::LaunchLayout::status_used)).
//!
//! Five 32-bit words: the code (0 while nothing happened; the first thread to report sets it
//! with a compare-and-swap from 0, so the first report stands), then for an out-of-range
//! access what was indexed, the index's low 32 bits, the length, and the index's high 32 bits
//! (0 where the target records only the low word: PTX, which would otherwise keep the whole
//! index in registers across the kernel's loops).

use crate::ir::Kernel;
use crate::{Error, Result};

/// How many status words there are.
pub const WORDS: usize = 5;

/// Bytes of the status words.
pub const BYTES: usize = 4 * WORDS;

/// Code: an access out of range (docs/guide/regions.md); the other words say where.
pub const OUT_OF_BOUNDS: u32 = 1;

/// Code: the adapter ended a loop early (Mesa's llvmpipe stops an invocation's loops after
/// 65,535 iterations in all), so the results are wrong.
pub const LOOP_CUT: u32 = 2;

/// Code: a loop has more iterations than the target counts.
pub const TOO_MANY_ITERATIONS: u32 = 3;

/// Set in the second word when what was indexed is a private array (its local's number in the
/// other bits) rather than a parameter.
pub const PRIVATE_ARRAY_BIT: u32 = 1 << 31;

/// Offset in bytes of word `n`.
pub const fn offset(n: usize) -> usize {
    4 * n
}

/// The error the status words `bytes` (at least [`BYTES`], little-endian) report for a launch
/// of `kernel` on the adapter `device` (its name, for messages), or `Ok` when they report none.
pub fn check(bytes: &[u8], kernel: &Kernel, device: &str) -> Result<()> {
    let w = |k: usize| {
        bytes
            .get(4 * k..4 * k + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    match w(0) {
        0 => Ok(()),
        LOOP_CUT => Err(Error::Unsupported {
            what: format!(
                "the adapter {device} ended a loop of `{}` early: Mesa's llvmpipe stops the loops of one invocation after 65,535 iterations in all, so this kernel cannot run correctly on it (it runs on GPUs and on the multicore device)",
                kernel.name
            ),
        }),
        TOO_MANY_ITERATIONS => Err(Error::Unsupported {
            what: format!(
                "a loop of `{}` has more iterations than kernels on {device} count (2^32 - 1 in one invocation, 2^63 over the grid); it runs on the nvidia and multicore devices",
                kernel.name
            ),
        }),
        _ => {
            let what = w(1);
            let name = if what & PRIVATE_ARRAY_BIT != 0 {
                kernel
                    .function
                    .locals
                    .get((what & !PRIVATE_ARRAY_BIT) as usize)
                    .map_or("?", |l| l.name.as_str())
            } else {
                kernel
                    .params
                    .get(what as usize)
                    .map_or("?", |p| p.name.as_str())
            };
            Err(Error::IndexOutOfBounds {
                array: name.to_string(),
                index: u64::from(w(4)) << 32 | u64::from(w(2)),
                len: u64::from(w(3)),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Scalar;

    fn words(w: [u32; WORDS]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn clear_words_report_nothing_and_an_access_names_its_array_and_whole_index() {
        let k = crate::ir::samples::saxpy(Scalar::F32);
        let x = k.params.iter().position(|p| p.name == "x").expect("x") as u32;
        assert!(check(&words([0; WORDS]), &k, "gpu").is_ok());
        match check(&words([OUT_OF_BOUNDS, x, 7, 5, 1]), &k, "gpu") {
            Err(Error::IndexOutOfBounds { array, index, len }) => {
                assert_eq!((array.as_str(), index, len), ("x", (1 << 32) + 7, 5));
            }
            other => panic!("{other:?}"),
        }
        let cut = check(&words([LOOP_CUT, 0, 0, 0, 0]), &k, "llvmpipe");
        assert!(format!("{cut:?}").contains("llvmpipe"), "{cut:?}");
    }
}
