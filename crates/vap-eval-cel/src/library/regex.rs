//! Kubernetes `Regex` library (since Kubernetes 1.0 of the CEL base environment): `find` and
//! `findAll` on Go regexps (the `vap-eval-regex` crate: RE2 syntax, matches and error texts;
//! see its docs).

pub use vap_eval_regex::{compile, compile_go, find, find_all, find_cost, Regex};

use crate::hash::FastMap;

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare `find` and `findAll` (apiserver `regexLibraryDecls`).
pub fn declare(d: &mut crate::cel::decls::Declarations) {
    use crate::cel::decls::OverloadDecl as O;
    use crate::cel::types::Type::{Int, String};
    let strings = || crate::cel::types::Type::list(String);
    d.add_overload("find", O::member("string_find_string", vec![String, String], String));
    d.add_overload("findAll", O::member("string_find_all_string", vec![String, String], strings()));
    d.add_overload(
        "findAll",
        O::member("string_find_all_string_int", vec![String, String, Int], strings()),
    );
}

// ---------------------------------------------------------------------------------------------
// CEL implementations

use super::bind;
use crate::cel::stdlib::{Ctx, Overload, R};
use crate::cel::value::Value;
use std::cell::RefCell;
use std::rc::Rc;

/// Compiled patterns by source, per thread (constant patterns recur on every evaluation).
fn cached(pattern: &str) -> Result<Rc<Regex>, String> {
    thread_local! {
        static CACHE: RefCell<FastMap<String, Result<Rc<Regex>, String>>> =
            RefCell::new(FastMap::default());
    }
    CACHE.with(|c| {
        if let Some(r) = c.borrow().get(pattern) {
            return r.clone();
        }
        // Kept beyond the call: not in the per-call arena.
        crate::arena_switch::outside(|| {
            let r = compile(pattern).map(Rc::new);
            let mut c = c.borrow_mut();
            if c.len() > 256 {
                c.clear();
            }
            c.insert(pattern.to_string(), r.clone());
            r
        })
    })
}

/// The apiserver wraps a compile failure as `Illegal regex: <go error>`.
fn illegal(e: String) -> String {
    if e.starts_with("Illegal regex: ") {
        e
    } else {
        format!("Illegal regex: {e}")
    }
}

fn find_impl<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let (s, p) = (bind::string(&a[0])?, bind::string(&a[1])?);
    let re = cached(p).map_err(|e| crate::cel::stdlib::Fail::Err(illegal(e)))?;
    // A search may grow the regex's cache, kept with it beyond the call: outside the per-call
    // arena.
    let found = crate::arena_switch::outside(|| re.find(s));
    Ok(Value::string(found.unwrap_or_default()))
}

fn find_all_impl<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let (s, p) = (bind::string(&a[0])?, bind::string(&a[1])?);
    let n = match a.get(2) {
        Some(v) => bind::int(v)?,
        None => -1,
    };
    let re = cached(p).map_err(|e| crate::cel::stdlib::Fail::Err(illegal(e)))?;
    // As in `find_impl` (the list of matches is then made outside the arena too).
    let found = crate::arena_switch::outside(|| re.find_all(s, n));
    Ok(Value::list(found.into_iter().map(Value::string).collect()))
}

/// `find` and `findAll` (costs: apiserver estimator, by name).
pub static OVERLOADS: &[Overload] = &[
    Overload::member("find", "string_find_string", 2, find_impl),
    Overload::member("findAll", "string_find_all_string", 2, find_all_impl),
    Overload::member("findAll", "string_find_all_string_int", 3, find_all_impl),
];
