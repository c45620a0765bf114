//! The JavaScript API (wasm-bindgen). The only file that talks to JS; everything else is plain Rust.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::*;

/// The version of this package (the crate version).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
