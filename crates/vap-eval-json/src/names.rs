//! A table of a struct type's field names, looked up by name on the request path (the
//! normaliser's decoding check and its defaulting and encoding walk look up every key of every
//! struct of the request's object): here, in the crate built for speed, rather than in the
//! package's root crate, built for size (bench/README.md, "The user path, eleventh round: two
//! small moves after the merges").

/// Slots of a [`FieldTable`] table: a table holds fewer names than this (the largest Kubernetes
/// struct, PodSpec, has 43 fields).
pub const SLOTS: usize = 128;

/// A struct type's field names by index (distinct from `ser::js::Names`, the result builder's
/// table), found through an open-addressing table of `index + 1` by a hash of the name's length
/// and ends (`slot`).
pub struct FieldTable {
    table: [u8; SLOTS],
    names: Box<[&'static str]>,
}

impl FieldTable {
    /// The table of `names` (their indices are their positions); `None` when there are
    /// [`SLOTS`] or more.
    pub fn new(names: Vec<&'static str>) -> Option<FieldTable> {
        if names.len() >= SLOTS {
            return None;
        }
        let mut table = [0u8; SLOTS];
        for (i, name) in names.iter().enumerate() {
            let mut s = slot(name);
            while table.get(s).is_some_and(|t| *t != 0) {
                s = (s + 1) % SLOTS;
            }
            if let Some(t) = table.get_mut(s) {
                *t = u8::try_from(i + 1).ok()?;
            }
        }
        Some(FieldTable { table, names: names.into_boxed_slice() })
    }

    /// The index of `name`. Out of line: compiled once, at this crate's optimisation level.
    #[inline(never)]
    pub fn find(&self, name: &str) -> Option<usize> {
        // The table has a free slot: the search ends.
        let mut s = slot(name);
        loop {
            let i = usize::from(*self.table.get(s)?).checked_sub(1)?;
            if self.names.get(i).is_some_and(|n| same_name(n.as_bytes(), name.as_bytes())) {
                return Some(i);
            }
            s = (s + 1) % SLOTS;
        }
    }
}

/// Where a name starts its search in a table.
#[inline(always)]
fn slot(name: &str) -> usize {
    let b = name.as_bytes();
    let (first, last) = (b.first().copied().unwrap_or(0), b.last().copied().unwrap_or(0));
    (b.len().wrapping_mul(37) ^ usize::from(first).wrapping_mul(11) ^ usize::from(last)) % SLOTS
}

/// Two field names are the same, compared without a call for names of 4 to 16 bytes (most of
/// them): two words that may overlap, the first and the last of each name. At the size
/// opt-level `==` on bytes is a call to a byte-wise `memcmp` in the wasm.
#[inline(always)]
pub fn same_name(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        4..8 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        _ => a == b,
    }
}

/// The 8 bytes of `s` at `at` (none past its end).
#[inline(always)]
fn word8(s: &[u8], at: usize) -> Option<u64> {
    let w: [u8; 8] = s.get(at..at.wrapping_add(8))?.try_into().ok()?;
    Some(u64::from_le_bytes(w))
}

/// The 4 bytes of `s` at `at` (none past its end).
#[inline(always)]
fn word4(s: &[u8], at: usize) -> Option<u32> {
    let w: [u8; 4] = s.get(at..at.wrapping_add(4))?.try_into().ok()?;
    Some(u32::from_le_bytes(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name is found at its index, names that are not there are not, whatever their
    /// length (the word compares' cases) and however they collide in the table.
    #[test]
    fn finds_every_name_and_no_other() {
        let names: Vec<&'static str> = vec![
            "a",
            "ab",
            "abc",
            "abcd",
            "abce",
            "apiVersion",
            "kind",
            "metadata",
            "spec",
            "status",
            "containers",
            "initContainers",
            "terminationMessagePath",
            "terminationMessagePolicy",
            "x",
            "y",
            "imagePullPolicy",
            "hostNetwork",
            "aaaaaaaaaaaaaaaa",
            "aaaaaaaaaaaaaaab",
            "baaaaaaaaaaaaaaa",
        ];
        let t = FieldTable::new(names.clone()).unwrap();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(t.find(n), Some(i), "{n}");
        }
        for n in ["", "b", "abcf", "Kind", "container", "containerss", "aaaaaaaaaaaaaaac", "z"] {
            assert_eq!(t.find(n), None, "{n}");
        }
        let many: Vec<&'static str> =
            (0..127).map(|i| &*Box::leak(format!("field{i}").into_boxed_str())).collect();
        let t = FieldTable::new(many.clone()).unwrap();
        assert!(many.iter().enumerate().all(|(i, n)| t.find(n) == Some(i)));
        assert_eq!(t.find("field127"), None);
        assert!(FieldTable::new((0..128).map(|_| "f").collect()).is_none());
    }
}
