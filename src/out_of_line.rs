//! Serialisation of result fields most results leave empty (webhooks, Kyverno, a denial's
//! status) through functions of their own (`#[serde(serialize_with = ...)]`). Inlined, their code
//! sat in the result's serializer, which V8 compiles whole on a page's first `evaluate()`
//! (lazily, on the page's thread) even when the fields are empty. The output is the same.

use serde::{Serialize, Serializer};

/// `T`'s serialisation, never inlined into its caller.
pub struct OutOfLine<'a, T>(pub &'a T);

impl<T: Serialize> Serialize for OutOfLine<'_, T> {
    #[inline(never)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// As `Option<T>`'s own `Serialize`.
pub fn option<T: Serialize, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_some(&OutOfLine(v)),
        None => s.serialize_none(),
    }
}

/// As `Vec<T>`'s own `Serialize`, each element out of line.
pub fn seq<T: Serialize, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(OutOfLine))
}
