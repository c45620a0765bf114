//! The switch of the wasm module's per-call arena (the root crate's `arena`), here in the crate the
//! others depend on, so that code building data kept beyond a call ([`outside`]: caches, tables
//! built on first use) can keep that data out of it wherever it is.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Whether small blocks come from the arena (set for the length of an evaluate call). Only the
/// wasm module, single-threaded, has the arena; elsewhere nothing reads it.
pub static ON: AtomicBool = AtomicBool::new(false);

/// Runs `f` with the arena off: what it allocates comes from the allocator underneath. For data
/// built inside a call and kept beyond it, which would otherwise keep the arena's chunks it lands
/// in from being reused (memory stays safe either way; the arena just gets fewer free chunks).
#[inline]
pub fn outside<R>(f: impl FnOnce() -> R) -> R {
    let _restore = Restore(ON.swap(false, Relaxed));
    f()
}

/// Puts the switch back as it was.
pub struct Restore(pub bool);

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        ON.store(self.0, Relaxed);
    }
}
