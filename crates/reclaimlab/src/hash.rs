//! Fixed, seedless hashing: the same input gives the same table layout in every run, so no
//! hash order can leak into a result (std's `RandomState` would), and keys with structure
//! (object ids shifted left by 20, page numbers in runs) still spread evenly.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The splitmix64 output function (Steele, Lea & Flood 2014): every input bit affects every
/// output bit.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hasher for integer keys: the words written are folded together and finished with
/// [`splitmix64`].
#[derive(Clone, Copy, Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.rotate_left(29) ^ n;
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(n.into());
    }

    fn finish(&self) -> u64 {
        splitmix64(self.0)
    }
}

/// A hash map with [`MixHasher`].
pub type MixMap<K, V> = HashMap<K, V, BuildHasherDefault<MixHasher>>;

/// A hash set with [`MixHasher`].
pub type MixSet<K> = HashSet<K, BuildHasherDefault<MixHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifted_keys_spread_over_the_low_bits() {
        // Object-trace pages are obj_id << 20: the low bits of the keys are all zero, and a
        // table indexes by the low bits of the hash.
        let buckets: MixSet<u64> = (0..4096u64)
            .map(|id| {
                let mut h = MixHasher::default();
                h.write_u64(id << 20);
                h.finish() & 1023
            })
            .collect();
        assert!(
            buckets.len() > 900,
            "{} of 1024 buckets used",
            buckets.len()
        );
    }

    #[test]
    fn the_hash_is_fixed() {
        let mut h = MixHasher::default();
        h.write_u64(42);
        assert_eq!(h.finish(), splitmix64(42));
    }
}
