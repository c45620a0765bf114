//! A fast hasher for the engine's own tables.
//!
//! The standard library's SipHash resists collision attacks on keys an adversary chooses; our
//! tables are keyed by names we declare (functions, overload ids, variables, types) and by
//! regex patterns, and they are hashed on every lookup while checking and planning. A
//! multiply-rotate hash (the Fx hash of rustc and Firefox) is several times cheaper, which
//! matters most for the first evaluation in a browser, when the declaration tables are built
//! and wasm still runs baseline-compiled code.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// `HashMap` with [`FxHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The Fx hash: per word, rotate, xor, multiply.
#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        let mut rest = 0u64;
        for (i, b) in chunks.remainder().iter().enumerate() {
            rest |= u64::from(*b) << (8 * i);
        }
        // The length tells "ab" from "ab\0" in the last word.
        self.add(rest ^ ((chunks.remainder().len() as u64) << 56));
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_works_and_hashes_differ() {
        let mut m: FastMap<String, usize> = FastMap::default();
        for i in 0..2000 {
            m.insert(format!("name{i}"), i);
        }
        assert!((0..2000).all(|i| m[&format!("name{i}")] == i));
        let h = |s: &str| {
            let mut x = FxHasher::default();
            x.write(s.as_bytes());
            x.finish()
        };
        assert_ne!(h("ab"), h("ab\0"));
        assert_ne!(h("size"), h("sizf"));
    }
}
