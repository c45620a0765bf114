//! One stable sort for the whole crate graph, instead of the standard library's per call site.
//!
//! `slice::sort_by` is instantiated anew for every element type *and* comparison closure, and
//! each instantiation (driftsort, its quicksort, partitions and small-sorts) is about 5 KB of
//! wasm: 17 call sites were 85 KB raw, ~25 KB gzip of the package. Here the merge sort itself
//! works on indices and exists once; each call site only adds a few hundred bytes to move its
//! elements into place. The sorts we run are small (bindings, params, error lists, and CEL
//! `sort()`/`sortBy` over user lists), so the indirection costs nothing measurable.
//!
//! Stable, like `slice::sort_by`: equal elements keep their order.

use std::cmp::Ordering;

/// Sorts `v` stably by `cmp`.
pub fn sort_by<T>(v: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = {
        let items: &[T] = v;
        sorted_indices(items.len(), &mut |i, j| cmp(&items[i], &items[j]))
    };
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    // `order` is a permutation of 0..len, so every slot is taken exactly once.
    v.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

/// Sorts `v` stably by the key `key` returns.
pub fn sort_by_key<T, K: Ord>(v: &mut Vec<T>, mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// The permutation that sorts `0..n` stably under `cmp` (bottom-up merge sort, insertion sort
/// for short runs). Not generic: compiled once.
pub fn sorted_indices(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    const RUN: usize = 8;
    let mut a: Vec<usize> = (0..n).collect();
    for chunk in a.chunks_mut(RUN) {
        for i in 1..chunk.len() {
            let mut j = i;
            while j > 0 && cmp(chunk[j - 1], chunk[j]) == Ordering::Greater {
                chunk.swap(j - 1, j);
                j -= 1;
            }
        }
    }
    let mut b = vec![0; n];
    let mut width = RUN;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j) = (start, mid);
            for slot in &mut b[start..end] {
                // Take from the left run unless the right one's head is strictly smaller.
                if i < mid && (j >= end || cmp(a[j], a[i]) != Ordering::Less) {
                    *slot = a[i];
                    i += 1;
                } else {
                    *slot = a[j];
                    j += 1;
                }
            }
            start = end;
        }
        std::mem::swap(&mut a, &mut b);
        width *= 2;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Agrees with the standard library's stable sort, ties included, over many shapes.
    #[test]
    fn matches_std_stable_sort() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for n in [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 64, 100, 257, 1000] {
            for modulo in [1, 2, 5, 1000] {
                let v: Vec<(u64, usize)> = (0..n)
                    .map(|i| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        (seed % modulo, i)
                    })
                    .collect();
                let mut ours = v.clone();
                sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
                let mut std = v.clone();
                std.sort_by_key(|a| a.0);
                assert_eq!(ours, std, "n={n} modulo={modulo}");
            }
        }
    }

    #[test]
    fn by_key_and_non_copy_elements() {
        let mut v = vec!["pear".to_string(), "fig".into(), "apple".into(), "kiwi".into()];
        sort_by_key(&mut v, |s| s.len());
        assert_eq!(v, ["fig", "pear", "kiwi", "apple"]);
    }
}
