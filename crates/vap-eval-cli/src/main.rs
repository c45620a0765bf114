//! `vap-eval`: the command line over the library (`vap_eval::api`, `vap_eval::testing`,
//! `vap_eval::audit`): `eval`, `check`, `test`, `audit`, `completions`.

#[cfg(not(target_arch = "wasm32"))]
mod app;
#[cfg(not(target_arch = "wasm32"))]
mod output;

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: MiMalloc = MiMalloc;

/// mimalloc, asked through its plain entry points for what they align (every block is
/// word-aligned) and through the aligned ones only beyond that. The `mimalloc` crate's
/// allocator takes the aligned path for every allocation, a few instructions more each: 3.9 %
/// of the audit's instructions (bench/README.md, audit round 5).
#[cfg(not(target_arch = "wasm32"))]
struct MiMalloc;

/// The alignment of every block `mi_malloc` returns (a machine word).
#[cfg(not(target_arch = "wasm32"))]
const MI_WORD_ALIGN: usize = std::mem::size_of::<usize>();

#[cfg(not(target_arch = "wasm32"))]
unsafe impl std::alloc::GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_malloc, mi_malloc_aligned};
        if layout.align() <= MI_WORD_ALIGN {
            mi_malloc(layout.size()).cast()
        } else {
            mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_zalloc, mi_zalloc_aligned};
        if layout.align() <= MI_WORD_ALIGN {
            mi_zalloc(layout.size()).cast()
        } else {
            mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        libmimalloc_sys::mi_free(ptr.cast());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys::{mi_realloc, mi_realloc_aligned};
        if layout.align() <= MI_WORD_ALIGN {
            mi_realloc(ptr.cast(), new_size).cast()
        } else {
            mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    app::main()
}

// The workspace's wasm32 checks build every crate; the command line is native only.
#[cfg(target_arch = "wasm32")]
fn main() {}
