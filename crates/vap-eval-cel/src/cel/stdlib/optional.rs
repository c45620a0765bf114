//! cel-go's optional library (`cel/library.go`, latest version; Kubernetes ≥ 1.28).
//! `x.?f`, `l[?i]`, `m[?k]` and optional literal entries are planned as attributes and literals.
//!
//! - `optional.of(1).value()` // 1; `optional.none().value()` // error: optional.none() dereference
//! - `optional.ofNonZeroValue('')` // optional.none()
//! - `optional.none().or(optional.of(2))` // optional.of(2); `optional.none().orValue(3)` // 3
//! - `[1, 2].first()` // optional.of(1); `[].last()` // optional.none()
//! - `optional.unwrap([optional.of(1), optional.none()])` // [1]; `[...].unwrapOpt()` same

use super::{Ctx, Fail, Overload, Overload as O, R};
use crate::cel::value::Value;
use std::rc::Rc;

fn some<'a>(v: Value<'a>) -> Value<'a> {
    Value::Optional(Some(Rc::new(v)))
}

fn of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(some(a[0].clone()))
}

/// cel-go `traits.Zeroer`: the types that implement `IsZeroValue`. A timestamp is zero when Go's
/// `time.Time.IsZero` says so — 0001-01-01T00:00:00Z, not the Unix epoch (cel-go
/// `common/types/timestamp.go`); optionals, types and library values have no zero (cel-go
/// `common/types/optional.go` does not implement it), so `ofNonZeroValue` wraps them.
fn is_zero(v: &Value<'_>) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.as_str().is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::Duration(d) => *d == 0,
        Value::Timestamp(t) => t.secs == crate::cel::value::MIN_UNIX && t.nanos == 0,
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Optional(_) | Value::Type(_) | Value::Opaque(_) => false,
    }
}

fn of_non_zero<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(if is_zero(&a[0]) { Value::Optional(None) } else { some(a[0].clone()) })
}

fn none<'a>(_: &mut Ctx, _: &[Value<'a>]) -> R<'a> {
    Ok(Value::Optional(None))
}

fn value<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Optional(Some(v)) => Ok((**v).clone()),
        Value::Optional(None) => Err(Fail::msg("optional.none() dereference")),
        _ => Err(Fail::NoMatch),
    }
}

fn has_value<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Optional(o) => Ok(Value::Bool(o.is_some())),
        _ => Err(Fail::NoMatch),
    }
}

fn or<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match (&a[0], &a[1]) {
        (Value::Optional(Some(_)), Value::Optional(_)) => Ok(a[0].clone()),
        (Value::Optional(None), Value::Optional(_)) => Ok(a[1].clone()),
        _ => Err(Fail::NoMatch),
    }
}

fn or_value<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Optional(Some(v)) => Ok((**v).clone()),
        Value::Optional(None) => Ok(a[1].clone()),
        _ => Err(Fail::NoMatch),
    }
}

fn first<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::List(l) => Ok(l.get(0).map(some).unwrap_or(Value::Optional(None))),
        _ => Err(Fail::NoMatch),
    }
}

fn last<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::List(l) => Ok(match l.len() {
            0 => Value::Optional(None),
            n => l.get(n - 1).map(some).unwrap_or(Value::Optional(None)),
        }),
        _ => Err(Fail::NoMatch),
    }
}

fn unwrap<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let Value::List(l) = &a[0] else {
        return Err(Fail::NoMatch);
    };
    let mut out = Vec::new();
    for v in l.iter() {
        match v {
            Value::Optional(Some(x)) => out.push((*x).clone()),
            Value::Optional(None) => {}
            other => {
                return Err(Fail::msg(format!(
                    "optional.unwrap: list values must be optional, got {}",
                    other.type_name()
                )))
            }
        }
    }
    Ok(Value::list(out))
}

/// cel-go's optional library, in registration order.
pub(crate) static OVERLOADS: &[Overload] = &[
    O::global("optional.of", "optional_of", 1, of),
    O::global("optional.ofNonZeroValue", "optional_ofNonZeroValue", 1, of_non_zero),
    O::global("optional.none", "optional_none", 0, none),
    O::member("value", "optional_value", 1, value),
    O::member("hasValue", "optional_hasValue", 1, has_value),
    O::member("or", "optional_or_optional", 2, or),
    O::member("orValue", "optional_orValue_value", 2, or_value),
    O::member("first", "list_first", 1, first),
    O::member("last", "list_last", 1, last),
    O::global("optional.unwrap", "optional_unwrap", 1, unwrap),
    O::member("unwrapOpt", "optional_unwrapOpt", 1, unwrap),
];
