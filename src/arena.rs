//! The wasm module's allocator: a bump arena for the short-lived allocations of a call, over the
//! standard library's (dlmalloc on wasm32).
//!
//! A call of `PolicySet.evaluate` builds the request's object tree, normalises it, evaluates,
//! writes the result's text and drops all of it: thousands of small blocks, each malloc'd and
//! freed by dlmalloc with its bins and coalescing (≈ 10 % of the call, bench/README.md). Inside
//! the evaluate entry points ([`Scope`]) small blocks are instead bumped from a chunk of a fixed
//! region and freed by decrementing the chunk's count of live blocks; a chunk whose count drops to
//! zero is empty and is bumped from its start again.
//!
//! Memory safety does not depend on what outlives a call: a chunk is reused only when every block
//! in it has been freed. Something kept beyond the call (a cache entry, a lazily built table)
//! keeps its chunk's count above zero and the chunk is not reused; the region's size bounds what
//! such chunks can hold, and once no chunk is free, blocks come from the allocator underneath.
//! Outside a [`Scope`] (`new PolicySet`, everything but `evaluate` and `PolicySet.evaluate`)
//! every block comes from the allocator underneath, and so does what code inside a call builds to
//! keep ([`outside`]: caches, tables built on first use), so long-lived data does not pin chunks.
//!
//! [`Chunks`] is the bookkeeping over a region given as an address, testable natively; the
//! global allocator ([`Arena`]) is installed only in the wasm module (`lib.rs`), which is
//! single-threaded.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

pub use vap_eval_cel::arena_switch::outside;

/// log2 of a chunk's size: 64 KiB.
pub const CHUNK_SHIFT: u32 = 16;
/// A chunk's size, which is also the alignment of the region.
pub const CHUNK: usize = 1 << CHUNK_SHIFT;
/// How many chunks the region has (1 MiB): what a call's live blocks and the chunks kept by
/// blocks that outlived their call can take at most before blocks come from the allocator
/// underneath.
pub const CHUNKS: usize = 16;
/// Blocks larger than this (the request's text, large vectors) come from the allocator
/// underneath: they are few, and in a chunk they would waste its end.
pub const MAX_BLOCK: usize = CHUNK / 4;
/// Blocks aligned more than this come from the allocator underneath.
pub const MAX_ALIGN: usize = 16;

/// The bookkeeping of a region of [`CHUNKS`] chunks of [`CHUNK`] bytes at `base` (aligned to
/// [`CHUNK`]): per chunk, the offset of its free space (`top`) and its number of live blocks.
pub struct Chunks {
    base: usize,
    top: [u32; CHUNKS],
    live: [u32; CHUNKS],
    current: usize,
}

impl Chunks {
    /// The bookkeeping of an empty region at `base`, which must be aligned to [`CHUNK`] and be
    /// `CHUNKS * CHUNK` bytes that nothing else uses.
    pub const fn new(base: usize) -> Chunks {
        Chunks { base, top: [0; CHUNKS], live: [0; CHUNKS], current: 0 }
    }

    /// Whether `ptr` is in the region (a block [`alloc`](Self::alloc) returned).
    #[inline(always)]
    pub fn owns(&self, ptr: *mut u8) -> bool {
        (ptr as usize).wrapping_sub(self.base) < CHUNKS * CHUNK
    }

    /// A block for `layout` in the region, or `None` when it is too large or aligned too much
    /// for a chunk, or no chunk has room for it.
    #[inline(always)]
    pub fn alloc(&mut self, layout: Layout) -> Option<*mut u8> {
        let p = self.alloc_or_null(layout);
        (!p.is_null()).then_some(p)
    }

    /// [`alloc`](Self::alloc) with null for `None`.
    #[inline(always)]
    fn alloc_or_null(&mut self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(ptr) => ptr,
            None if Chunks::fits(layout) => self.alloc_in_empty_chunk(layout.size().max(1)),
            None => std::ptr::null_mut(),
        }
    }

    /// Whether a block for `layout` may come from a chunk.
    #[inline(always)]
    fn fits(layout: Layout) -> bool {
        layout.size() <= MAX_BLOCK && layout.align() <= MAX_ALIGN
    }

    /// [`alloc`](Self::alloc) in the current chunk only: `None` when the block may not come
    /// from a chunk or the current one has no room. No calls: the global allocator's hot path.
    #[inline(always)]
    fn bump(&mut self, layout: Layout) -> Option<*mut u8> {
        if !Chunks::fits(layout) {
            return None;
        }
        // A zero-sized block takes a byte, so that every block's address is inside its chunk
        // (its end would be the next chunk's start).
        let size = layout.size().max(1);
        let mask = layout.align() - 1;
        // `current` is always below CHUNKS; the mask only spares the bounds checks.
        let c = self.current & (CHUNKS - 1);
        let start = (self.top[c] as usize + mask) & !mask;
        if start + size > CHUNK {
            return None;
        }
        self.top[c] = (start + size) as u32;
        self.live[c] += 1;
        Some((self.base + (c << CHUNK_SHIFT) + start) as *mut u8)
    }

    /// [`alloc`](Self::alloc) when the current chunk has no room: the block at the start of an
    /// empty chunk, which becomes the current one; null when no chunk is empty.
    #[inline(never)]
    fn alloc_in_empty_chunk(&mut self, size: usize) -> *mut u8 {
        let Some(c) = self.live.iter().position(|&n| n == 0) else {
            return std::ptr::null_mut();
        };
        // An empty chunk's top is 0 ([`dealloc`] resets it), and the chunk's start is aligned
        // to [`CHUNK`] ≥ [`MAX_ALIGN`].
        self.current = c;
        self.top[c] = size as u32;
        self.live[c] = 1;
        (self.base + (c << CHUNK_SHIFT)) as *mut u8
    }

    /// Frees the block at `ptr` of `size` bytes, one [`owns`](Self::owns) says is in the region.
    #[inline(always)]
    pub fn dealloc(&mut self, ptr: *mut u8, size: usize) {
        let offset = ptr as usize - self.base;
        // Below CHUNKS for a block of the region; the mask only spares the bounds checks.
        let c = (offset >> CHUNK_SHIFT) & (CHUNKS - 1);
        let live = self.live[c] - 1;
        self.live[c] = live;
        if live == 0 {
            // No block is left in the chunk: all of it is free again.
            self.top[c] = 0;
        } else if (offset & (CHUNK - 1)) + size.max(1) == self.top[c] as usize {
            // The chunk's last block: its bytes are free again.
            self.top[c] = (offset & (CHUNK - 1)) as u32;
        }
    }

    /// Resizes the block at `ptr` (in the region) from `old` to `new` bytes where it is, when
    /// it is the chunk's last block and the chunk has room, or when it shrinks. `false` when the
    /// block must move.
    #[inline(always)]
    pub fn realloc_in_place(&mut self, ptr: *mut u8, old: usize, new: usize) -> bool {
        let offset = ptr as usize - self.base;
        let c = (offset >> CHUNK_SHIFT) & (CHUNKS - 1);
        let start = offset & (CHUNK - 1);
        if start + old.max(1) == self.top[c] as usize {
            if new <= MAX_BLOCK && start + new.max(1) <= CHUNK {
                self.top[c] = (start + new.max(1)) as u32;
                return true;
            }
            return false;
        }
        new <= old
    }

    /// How many chunks have live blocks.
    pub fn used(&self) -> usize {
        self.live.iter().filter(|&&n| n != 0).count()
    }

    /// The number of live blocks in the region.
    pub fn live(&self) -> usize {
        self.live.iter().map(|&n| n as usize).sum()
    }
}

/// Where an [`Arena`] reads whether it is on: a static, read directly (not through a pointer
/// kept in the arena) on every allocation.
pub trait Switch {
    fn get() -> &'static AtomicBool;
}

/// The module's switch, [`vap_eval_cel::arena_switch::ON`] ([`outside`] turns it off).
pub struct ModuleSwitch;

impl Switch for ModuleSwitch {
    #[inline(always)]
    fn get() -> &'static AtomicBool {
        &vap_eval_cel::arena_switch::ON
    }
}

/// The global allocator of the wasm module: [`Chunks`] inside a [`Scope`], `System` otherwise
/// and for what [`Chunks`] declines.
pub struct Arena<S: Switch = ModuleSwitch> {
    chunks: UnsafeCell<Option<Chunks>>,
    switch: PhantomData<S>,
}

impl<S: Switch> Default for Arena<S> {
    fn default() -> Self {
        Arena::new()
    }
}

// SAFETY: the wasm module is single-threaded (wasm32 without the `atomics` feature: no threads
// share its memory), so the cell is never accessed concurrently. Only there is an `Arena` shared
// (the global allocator, `lib.rs`); elsewhere it is not `Sync`.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
unsafe impl<S: Switch> Sync for Arena<S> {}

impl<S: Switch> Arena<S> {
    /// An arena switched by `S` ([`Scope`], [`outside`]).
    pub const fn new() -> Arena<S> {
        Arena { chunks: UnsafeCell::new(None), switch: PhantomData }
    }

    /// Allocates the region from `System` unless it is there; whether it is. Out of line: once
    /// per [`Scope`], not per block.
    #[inline(never)]
    fn ready(&self) -> bool {
        // SAFETY: no allocator call is under way (a `Scope` is entered between them), and the
        // reference ends here.
        let slot = unsafe { self.slot() };
        if slot.is_none() {
            let Ok(layout) = Layout::from_size_align(CHUNKS * CHUNK, CHUNK) else { return false };
            // SAFETY: the layout has a non-zero size.
            let base = unsafe { System.alloc(layout) };
            if base.is_null() {
                return false;
            }
            *slot = Some(Chunks::new(base as usize));
        }
        true
    }

    /// The bookkeeping.
    ///
    /// # Safety
    /// The reference must not outlive the allocator call that takes it, and no other may be
    /// taken meanwhile (the module is single-threaded, see the `Sync` impl).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    unsafe fn slot(&self) -> &mut Option<Chunks> {
        &mut *self.chunks.get()
    }

    /// [`GlobalAlloc::alloc`] when the current chunk cannot give the block: an empty chunk, or
    /// `System` (apart, so that the hot path makes no call and saves no registers).
    ///
    /// # Safety
    /// As [`GlobalAlloc::alloc`].
    #[cold]
    #[inline(never)]
    unsafe fn alloc_slow(&self, layout: Layout) -> *mut u8 {
        // The current chunk had no room (what else [`Chunks::bump`] declines is `System`'s).
        if S::get().load(Relaxed) && Chunks::fits(layout) {
            if let Some(c) = self.slot() {
                let ptr = c.alloc_in_empty_chunk(layout.size().max(1));
                if !ptr.is_null() {
                    return ptr;
                }
            }
        }
        System.alloc(layout)
    }

    /// Whether `ptr` is a block of the region.
    pub fn owns(&self, ptr: *mut u8) -> bool {
        // SAFETY: a shared reference for this call only; no allocator call is under way.
        unsafe { (*self.chunks.get()).as_ref().is_some_and(|c| c.owns(ptr)) }
    }

    /// The number of live blocks in the region.
    pub fn live(&self) -> usize {
        // SAFETY: as in [`owns`](Self::owns).
        unsafe { (*self.chunks.get()).as_ref().map_or(0, Chunks::live) }
    }
}

// Not inlined: with LTO every allocation site would get a copy (+18 KB of the package).
unsafe impl<S: Switch> GlobalAlloc for Arena<S> {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // On only inside a `Scope`, which has made the region ([`Arena::ready`]).
        if S::get().load(Relaxed) {
            if let Some(ptr) = self.slot().as_mut().and_then(|c| c.bump(layout)) {
                return ptr;
            }
        }
        self.alloc_slow(layout)
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.slot() {
            Some(c) if c.owns(ptr) => c.dealloc(ptr, layout.size()),
            _ => System.dealloc(ptr, layout),
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match self.slot() {
            Some(c) if c.owns(ptr) => {
                if c.realloc_in_place(ptr, layout.size(), new_size) {
                    return ptr;
                }
            }
            _ => return System.realloc(ptr, layout, new_size),
        }
        // The block moves (the reference to the bookkeeping above is no longer used).
        // SAFETY (the caller's): `new_size` rounded up to `layout.align()` does not overflow.
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let new = self.alloc(new_layout);
        if !new.is_null() {
            // SAFETY: both blocks are live, distinct, and at least this long.
            std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        new
    }
}

/// Blocks allocated while a `Scope` lives come from the arena (when it is the global
/// allocator): the evaluate entry points hold one for the call. Entering makes the region on
/// first use; when it cannot be had, the arena stays off.
pub struct Scope<'a, S: Switch = ModuleSwitch> {
    arena: PhantomData<&'a Arena<S>>,
    was: bool,
}

impl<S: Switch> Scope<'_, S> {
    #[inline]
    pub fn enter(arena: &Arena<S>) -> Scope<'_, S> {
        let on = arena.ready();
        Scope { arena: PhantomData, was: S::get().swap(on, Relaxed) }
    }
}

impl<S: Switch> Drop for Scope<'_, S> {
    #[inline]
    fn drop(&mut self) {
        S::get().store(self.was, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A region from the system allocator, freed at the end.
    struct Region(*mut u8);
    impl Region {
        fn new() -> Region {
            let layout = Layout::from_size_align(CHUNKS * CHUNK, CHUNK).unwrap();
            Region(unsafe { System.alloc(layout) })
        }
        fn chunks(&self) -> Chunks {
            Chunks::new(self.0 as usize)
        }
    }
    impl Drop for Region {
        fn drop(&mut self) {
            let layout = Layout::from_size_align(CHUNKS * CHUNK, CHUNK).unwrap();
            unsafe { System.dealloc(self.0, layout) }
        }
    }

    fn l(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn counts_and_reuse_only_when_empty() {
        let r = Region::new();
        let mut c = r.chunks();
        let a = c.alloc(l(24, 8)).unwrap();
        let b = c.alloc(l(40, 8)).unwrap();
        assert_eq!(a, r.0);
        assert_eq!(b as usize, r.0 as usize + 24);
        assert_eq!((c.live(), c.used()), (2, 1));
        // Freeing the first block frees nothing for reuse: the second is still live.
        c.dealloc(a, 24);
        assert_eq!(c.live(), 1);
        let d = c.alloc(l(8, 8)).unwrap();
        assert!(d as usize >= b as usize + 40, "a live block's bytes are never handed out again");
        c.dealloc(d, 8);
        c.dealloc(b, 40);
        assert_eq!((c.live(), c.used()), (0, 0));
        // Empty: bumped from the start again.
        assert_eq!(c.alloc(l(8, 8)).unwrap(), r.0);
    }

    #[test]
    fn last_block_freed_gives_its_bytes_back() {
        let r = Region::new();
        let mut c = r.chunks();
        let a = c.alloc(l(16, 8)).unwrap();
        let b = c.alloc(l(32, 8)).unwrap();
        c.dealloc(b, 32);
        assert_eq!(c.alloc(l(8, 8)).unwrap(), b);
        let _ = a;
    }

    #[test]
    fn realloc_in_place_only_for_the_last_block_or_shrinking() {
        let r = Region::new();
        let mut c = r.chunks();
        let a = c.alloc(l(16, 8)).unwrap();
        assert!(c.realloc_in_place(a, 16, 64));
        let b = c.alloc(l(8, 8)).unwrap();
        assert_eq!(b as usize, a as usize + 64, "the grown block's bytes are taken");
        assert!(!c.realloc_in_place(a, 64, 128), "not the last block: it must move");
        assert!(c.realloc_in_place(a, 64, 32), "shrinking stays");
        assert!(c.realloc_in_place(b, 8, MAX_BLOCK - 64 - 8 + 1) || MAX_BLOCK + 72 > CHUNK);
        assert!(!c.realloc_in_place(b, 8, MAX_BLOCK + 1), "too large for a chunk's block");
    }

    #[test]
    fn every_size_and_alignment() {
        let r = Region::new();
        let mut c = r.chunks();
        let mut blocks = Vec::new();
        for align in [1, 2, 4, 8, 16] {
            for size in (0..300).chain([MAX_BLOCK - 1, MAX_BLOCK]) {
                let p = c.alloc(l(size, align)).unwrap();
                assert_eq!(p as usize % align, 0);
                assert!(c.owns(p));
                // Inside one chunk.
                let start = p as usize - r.0 as usize;
                assert_eq!(start >> CHUNK_SHIFT, (start + size.max(1) - 1) >> CHUNK_SHIFT);
                unsafe { std::ptr::write_bytes(p, 0xA5, size) };
                blocks.push((p, size));
            }
        }
        // No two live blocks overlap.
        let mut sorted = blocks.clone();
        sorted.sort();
        for w in sorted.windows(2) {
            assert!(w[0].0 as usize + w[0].1.max(1) <= w[1].0 as usize);
        }
        for (p, size) in blocks {
            c.dealloc(p, size);
        }
        assert_eq!((c.live(), c.used()), (0, 0));
        assert!(c.alloc(l(MAX_BLOCK + 1, 8)).is_none());
        assert!(c.alloc(l(8, 32)).is_none());
    }

    #[test]
    fn full_region_declines_and_pinned_chunks_stay() {
        let r = Region::new();
        let mut c = r.chunks();
        // One block kept in every chunk: the chunks are pinned.
        let mut kept = Vec::new();
        let mut all = Vec::new();
        while let Some(p) = c.alloc(l(MAX_BLOCK, 8)) {
            all.push(p);
        }
        assert_eq!(all.len(), CHUNKS * (CHUNK / MAX_BLOCK));
        assert_eq!(c.used(), CHUNKS);
        for (i, p) in all.into_iter().enumerate() {
            if i % (CHUNK / MAX_BLOCK) == 1 {
                kept.push(p);
            } else {
                c.dealloc(p, MAX_BLOCK);
            }
        }
        assert_eq!(c.used(), CHUNKS);
        // A pinned chunk is never bumped from its start again: nothing fits behind the kept blocks
        // but what the last-block rule gave back.
        let mut got = Vec::new();
        while let Some(p) = c.alloc(l(MAX_BLOCK, 8)) {
            got.push(p);
        }
        for p in &got {
            for k in &kept {
                assert!(
                    (*p as usize + MAX_BLOCK <= *k as usize)
                        || (*k as usize + MAX_BLOCK <= *p as usize)
                );
            }
        }
        for p in got {
            c.dealloc(p, MAX_BLOCK);
        }
        for k in kept {
            c.dealloc(k, MAX_BLOCK);
        }
        assert_eq!((c.live(), c.used()), (0, 0));
        assert!(c.alloc(l(8, 8)).is_some());
    }

    #[test]
    fn the_global_allocator_outside_and_inside_a_scope() {
        static ON: AtomicBool = AtomicBool::new(false);
        struct TestSwitch;
        impl Switch for TestSwitch {
            fn get() -> &'static AtomicBool {
                &ON
            }
        }
        let a = Arena::<TestSwitch>::new();
        unsafe {
            let outside = a.alloc(l(32, 8));
            assert!(!a.owns(outside));
            let s = Scope::enter(&a);
            let inside = a.alloc(l(32, 8));
            assert!(a.owns(inside));
            let big = a.alloc(l(MAX_BLOCK + 1, 8));
            assert!(!a.owns(big));
            // Grown in place, then moved out of the region when too large.
            let grown = a.realloc(inside, l(32, 8), 100);
            assert_eq!(grown, inside);
            std::ptr::write_bytes(grown, 7, 100);
            let moved = a.realloc(grown, l(100, 8), MAX_BLOCK * 2);
            assert!(!a.owns(moved));
            assert_eq!(*moved.add(99), 7);
            drop(s);
            let outside2 = a.realloc(outside, l(32, 8), 64);
            assert!(!a.owns(outside2));
            a.dealloc(outside2, l(64, 8));
            a.dealloc(moved, l(MAX_BLOCK * 2, 8));
            a.dealloc(big, l(MAX_BLOCK + 1, 8));
            assert_eq!(a.live(), 0);
        }
    }
}
