//! wasm-bindgen tests. No `wasm_bindgen_test_configure!`: the same tests run in Node (default)
//! and in a headless browser when `WASM_BINDGEN_USE_BROWSER=1` is set for the test runner.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn version_is_crate_version() {
    assert_eq!(vap_eval::wasm::version(), env!("CARGO_PKG_VERSION"));
}
