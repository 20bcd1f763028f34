//! A hasher for maps keyed by one integer (an address, a buffer id) on a launch's path: a
//! multiply and a rotation rather than SipHash, whose cost a short launch pays several times.
//! Keys are the runtime's own (addresses of its kernels, ids it hands out), not an
//! adversary's, so collision resistance buys nothing here.

use std::hash::{BuildHasherDefault, Hasher};

/// Mixes one integer key ([`IntKeys`]).
#[derive(Default)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        // The multiply spreads the low bits upwards (aligned addresses end in zeros), the
        // rotation brings mixed bits down to where the table takes its bucket.
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_right(17);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64)
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64)
    }
}

/// The [`std::hash::BuildHasher`] of maps keyed by one integer.
pub type IntKeys = BuildHasherDefault<IntHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn aligned_addresses_spread_over_the_buckets() {
        use std::hash::BuildHasher;
        // 4096 addresses 64 bytes apart: their low 7 bits (a 128-bucket table's index)
        // take every value about equally often.
        let mut buckets = [0u32; 128];
        for i in 0..4096u64 {
            buckets[(IntKeys::default().hash_one(0x7f00_0000_0000 + i * 64) & 127) as usize] += 1;
        }
        assert!(
            buckets.iter().all(|&n| (8..=64).contains(&n)),
            "{buckets:?}"
        );
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut m: HashMap<u64, u64, IntKeys> = HashMap::default();
        for i in 0..1000u64 {
            m.insert(i * 4096, i);
        }
        assert!((0..1000u64).all(|i| m.get(&(i * 4096)) == Some(&i)));
        assert_eq!(m.get(&1), None);
    }
}
