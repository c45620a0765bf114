//! A minimal cdylib that keeps the whole runtime alive, for measuring wasm size:
//! `cargo build --profile wasm --example wasm_size --target wasm32-unknown-unknown [--no-default-features]`.
use vap_eval::cel::parser::{parse, ParseOptions};
use vap_eval::cel::runtime::{plan, Bindings, CostTracker, PlanOptions};
use vap_eval::cel::stdlib::Registry;
use vap_eval::cel::value::Value;

/// Evaluate the expression in `buf[..expr_len]` over the JSON in `buf[expr_len..len]`; returns
/// the result's JSON length (or 0 on error).
///
/// # Safety
/// `buf` must point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn eval(buf: *const u8, expr_len: usize, len: usize) -> usize {
    let bytes = std::slice::from_raw_parts(buf, len);
    let (e, j) = bytes.split_at(expr_len.min(len));
    let (Ok(expr), Ok(json)) =
        (std::str::from_utf8(e), serde_json::from_slice::<serde_json::Value>(j))
    else {
        return 0;
    };
    let Ok(ast) = parse(expr, ParseOptions::default()) else {
        return 0;
    };
    let Ok(p) = plan(&ast, None, &Registry::standard(), PlanOptions::default()) else {
        return 0;
    };
    let act = Bindings::new().with("object", Value::from_json(&json));
    match p.eval(&act, &mut CostTracker::default()) {
        Ok(v) => v.to_json().to_string().len(),
        Err(_) => 0,
    }
}
