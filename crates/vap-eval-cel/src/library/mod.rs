//! The part of the Kubernetes CEL libraries the engine itself needs: Go RE2 regular
//! expressions (`matches` and the `Regex` library, [`regex`]) and the helpers every library
//! binding shares ([`bind`]). The other libraries live in the `vap-eval-k8s` crate, whose
//! `library` module re-exports these two.

pub mod regex;

/// Helpers the library bindings share.
pub mod bind {
    use crate::cel::stdlib::{Fail, R};
    use crate::cel::value::{OpaqueValue, Value};
    use std::rc::Rc;

    pub use crate::cel::stdlib::ImplFn;

    /// The library value behind an opaque CEL value, or `NoMatch` (next overload).
    pub fn opaque<'v, T: 'static>(v: &'v Value<'_>) -> Result<&'v T, Fail> {
        match v {
            Value::Opaque(o) => o.as_any().downcast_ref::<T>().ok_or(Fail::NoMatch),
            _ => Err(Fail::NoMatch),
        }
    }

    pub fn wrap<'a, T: OpaqueValue + 'static>(t: T) -> Value<'a> {
        Value::Opaque(Rc::new(t))
    }

    pub fn string<'v>(v: &'v Value<'_>) -> Result<&'v str, Fail> {
        match v {
            Value::String(s) => Ok(s.as_str()),
            _ => Err(Fail::NoMatch),
        }
    }

    pub fn int(v: &Value<'_>) -> Result<i64, Fail> {
        match v {
            Value::Int(i) => Ok(*i),
            _ => Err(Fail::NoMatch),
        }
    }

    pub fn boolean(v: &Value<'_>) -> Result<bool, Fail> {
        match v {
            Value::Bool(b) => Ok(*b),
            _ => Err(Fail::NoMatch),
        }
    }

    /// A library error: its text is the apiserver's.
    pub fn err<'a>(e: String) -> R<'a> {
        Err(Fail::Err(e))
    }

    /// Code points of a string argument (cel-go `actualSize`), 1 for anything else.
    pub fn size(v: &Value<'_>) -> u64 {
        v.cost_size()
    }
}
