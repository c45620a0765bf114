//! Kubernetes `Lists` library: version 0 in every Kubernetes release (until 1.37), version 1
//! (adds `includes`) since Kubernetes 1.37 (apiserver `pkg/cel/library/lists.go`).
//!
//! ```text
//! <list<T>>.isSorted() <bool>        T ∈ int, uint, double, bool, duration, timestamp, string, bytes
//! <list<T>>.sum() <T>                T ∈ int, uint, double, duration; empty list → typed zero
//! <list<T>>.min() <T>, .max() <T>    T comparable; empty list → error; ties keep the first
//! <list<A>>.indexOf(<A>) <int>       first index by CEL equality, -1 if absent
//! <list<A>>.lastIndexOf(<A>) <int>   last index, -1 if absent
//! <dyn>.includes(<dyn>) <bool>       (v1, 1.37) list: some element equals the argument;
//!                                    any other receiver: receiver == argument
//! ```
//!
//! Examples (apiserver `lists.go` docs, `lists_test.go`):
//!
//! ```text
//! [1, 2, 3].isSorted()                    // true
//! ['a', 'b', 'b', 'c'].isSorted()         // true
//! [2.0, 1.0].isSorted()                   // false
//! [1, 3].sum()                            // 4
//! [duration('1m'), duration('1s')].sum()  // duration('61s')
//! [1, 3].min()                            // 1
//! [].min()                                // error: min called on empty list
//! [1, 2, 2, 3].indexOf(2)                 // 1
//! ['a', 'b', 'b', 'c'].lastIndexOf('b')   // 2
//! [1, 2, 3].includes(2)                   // true
//! 'model-a'.includes('model-a')           // true
//! ```
//!
//! Cost (apiserver `cost.go`): every function costs the traversal of its receiver (1 per
//! scalar element, `floor(0.1 × bytes)` per string element).

use crate::cel::decls::Declarations;
use crate::cel::signature::{self, Row};

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare the lists library at `version` (0: isSorted, sum, max, min, indexOf, lastIndexOf;
/// 1: adds includes).
pub fn declare(d: &mut Declarations, version: u32) {
    signature::declare(d, DECLS_V0);
    if version >= 1 {
        signature::declare(d, DECLS_V1);
    }
}

/// v0. `isSorted`, `min` and `max` take the comparable element types (int, uint, double, bool,
/// duration, timestamp, string, bytes), `sum` the summable ones (int, uint, double, duration).
const DECLS_V0: &[Row] = &[
    ("isSorted", "list_int_is_sorted_bool", "list(int).() -> bool"),
    ("isSorted", "list_uint_is_sorted_bool", "list(uint).() -> bool"),
    ("isSorted", "list_double_is_sorted_bool", "list(double).() -> bool"),
    ("isSorted", "list_bool_is_sorted_bool", "list(bool).() -> bool"),
    ("isSorted", "list_duration_is_sorted_bool", "list(duration).() -> bool"),
    ("isSorted", "list_timestamp_is_sorted_bool", "list(timestamp).() -> bool"),
    ("isSorted", "list_string_is_sorted_bool", "list(string).() -> bool"),
    ("isSorted", "list_bytes_is_sorted_bool", "list(bytes).() -> bool"),
    ("sum", "list_int_sum_int", "list(int).() -> int"),
    ("sum", "list_uint_sum_uint", "list(uint).() -> uint"),
    ("sum", "list_double_sum_double", "list(double).() -> double"),
    ("sum", "list_duration_sum_duration", "list(duration).() -> duration"),
    ("max", "list_int_max_int", "list(int).() -> int"),
    ("max", "list_uint_max_uint", "list(uint).() -> uint"),
    ("max", "list_double_max_double", "list(double).() -> double"),
    ("max", "list_bool_max_bool", "list(bool).() -> bool"),
    ("max", "list_duration_max_duration", "list(duration).() -> duration"),
    ("max", "list_timestamp_max_timestamp", "list(timestamp).() -> timestamp"),
    ("max", "list_string_max_string", "list(string).() -> string"),
    ("max", "list_bytes_max_bytes", "list(bytes).() -> bytes"),
    ("min", "list_int_min_int", "list(int).() -> int"),
    ("min", "list_uint_min_uint", "list(uint).() -> uint"),
    ("min", "list_double_min_double", "list(double).() -> double"),
    ("min", "list_bool_min_bool", "list(bool).() -> bool"),
    ("min", "list_duration_min_duration", "list(duration).() -> duration"),
    ("min", "list_timestamp_min_timestamp", "list(timestamp).() -> timestamp"),
    ("min", "list_string_min_string", "list(string).() -> string"),
    ("min", "list_bytes_min_bytes", "list(bytes).() -> bytes"),
    ("indexOf", "list_a_index_of_int", "list(A).(A) -> int"),
    ("lastIndexOf", "list_a_last_index_of_int", "list(A).(A) -> int"),
];

/// v1 (1.37).
const DECLS_V1: &[Row] = &[("includes", "list_includes_dyn_dyn", "dyn.(dyn) -> bool")];

// ---------------------------------------------------------------------------------------------
// CEL implementations

use crate::cel::stdlib::cost::traversal_cost;
use crate::cel::stdlib::{Ctx, Fail, Overload, R};
use crate::cel::value::{compare, List, Value};
use std::cmp::Ordering;

fn list<'v, 'a>(v: &'v Value<'a>) -> Result<&'v List<'a>, Fail> {
    match v {
        Value::List(l) => Ok(l),
        _ => Err(Fail::NoMatch),
    }
}

/// cel-go `traits.Comparer` values (the element kinds these functions accept).
fn is_comparer(v: &Value<'_>) -> bool {
    use Value::*;
    matches!(
        v,
        Bool(_) | Int(_) | Uint(_) | Double(_) | String(_) | Bytes(_) | Duration(_) | Timestamp(_)
    )
}

/// `prev.Compare(next) == 1`; a failed comparison (mixed kinds) counts as "not greater", as in
/// the apiserver.
fn greater(prev: &Value<'_>, next: &Value<'_>) -> bool {
    compare(prev, next) == Some(Ordering::Greater)
}

fn is_sorted<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let mut prev: Option<Value<'a>> = None;
    for next in list(&a[0])?.iter() {
        if !is_comparer(&next) {
            return Err(Fail::msg("no such overload"));
        }
        if let Some(p) = &prev {
            if greater(p, &next) {
                return Ok(Value::Bool(false));
            }
        }
        prev = Some(next);
    }
    Ok(Value::Bool(true))
}

/// `min`/`max`: the first element that no later element beats (`result.Compare(next) ==
/// prefer` replaces it).
fn extreme<'a>(a: &[Value<'a>], name: &str, prefer: Ordering) -> R<'a> {
    let mut result: Option<Value<'a>> = None;
    for next in list(&a[0])?.iter() {
        if !is_comparer(&next) {
            return Err(Fail::msg("no such overload"));
        }
        match &result {
            None => result = Some(next),
            Some(r) if compare(r, &next) == Some(prefer) => result = Some(next),
            _ => {}
        }
    }
    result.ok_or_else(|| Fail::msg(format!("{name} called on empty list")))
}
fn min<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    extreme(a, "min", Ordering::Greater)
}
fn max<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    extreme(a, "max", Ordering::Less)
}

/// `sum` from the overload's typed zero, adding with CEL's checked arithmetic; an element of
/// another type is `no such overload` (the zero's `Add` rejects it).
///
/// A list the checker could not type (`dyn`, e.g. read from JSON) is dispatched at run time as
/// cel-go's function-level dispatcher does: the overloads in declaration order, the first whose
/// `list(T)` is assignable from the value, which cel-go's `Type.IsAssignableRuntimeType` decides
/// by the list's first element (an empty list matches the first, `int`, overload). So
/// `[1.5, 2.5]` from JSON sums as doubles.
fn sum_from<'a>(a: &[Value<'a>], zero: Value<'a>) -> R<'a> {
    let overflow = || Fail::msg("integer overflow");
    if let Some(first) = list(&a[0])?.get(0) {
        if std::mem::discriminant(&first) != std::mem::discriminant(&zero) {
            return Err(Fail::NoMatch);
        }
    }
    let mut acc = zero;
    for next in list(&a[0])?.iter() {
        acc = match (&acc, &next) {
            (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_add(*y).ok_or_else(overflow)?),
            (Value::Uint(x), Value::Uint(y)) => Value::Uint(
                x.checked_add(*y).ok_or_else(|| Fail::msg("unsigned integer overflow"))?,
            ),
            (Value::Double(x), Value::Double(y)) => Value::Double(x + y),
            (Value::Duration(x), Value::Duration(y)) => {
                Value::Duration(x.checked_add(*y).ok_or_else(overflow)?)
            }
            _ => return Err(Fail::msg("no such overload")),
        };
    }
    Ok(acc)
}
fn sum_int<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    sum_from(a, Value::Int(0))
}
fn sum_uint<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    sum_from(a, Value::Uint(0))
}
fn sum_double<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    sum_from(a, Value::Double(0.0))
}
fn sum_duration<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    sum_from(a, Value::Duration(0))
}

fn index_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let l = list(&a[0])?;
    let i = l.iter().position(|x| x.equals(&a[1]));
    Ok(Value::Int(i.map_or(-1, |i| i as i64)))
}
fn last_index_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let l = list(&a[0])?;
    let i = (0..l.len()).rev().find(|&i| l.get(i).is_some_and(|x| x.equals(&a[1])));
    Ok(Value::Int(i.map_or(-1, |i| i as i64)))
}
fn includes<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(match &a[0] {
        Value::List(l) => l.iter().any(|x| x.equals(&a[1])),
        target => target.equals(&a[1]),
    }))
}
/// `includes` costs the traversal of its receiver, like the other list functions (spec §5.2).
fn includes_cost(a: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    a.first().map_or(0, traversal_cost)
}

/// The lists implementations: v0 ([`DECLS_V0`]'s ids, in its order; costs: apiserver
/// estimator, by name), v1's `includes` priced by its own cost function.
pub static OVERLOADS: &[Overload] = &[
    Overload::member("isSorted", "list_int_is_sorted_bool", 1, is_sorted),
    Overload::member("isSorted", "list_uint_is_sorted_bool", 1, is_sorted),
    Overload::member("isSorted", "list_double_is_sorted_bool", 1, is_sorted),
    Overload::member("isSorted", "list_bool_is_sorted_bool", 1, is_sorted),
    Overload::member("isSorted", "list_duration_is_sorted_bool", 1, is_sorted),
    Overload::member("isSorted", "list_timestamp_is_sorted_bool", 1, is_sorted),
    Overload::member("isSorted", "list_string_is_sorted_bool", 1, is_sorted),
    Overload::member("isSorted", "list_bytes_is_sorted_bool", 1, is_sorted),
    Overload::member("sum", "list_int_sum_int", 1, sum_int),
    Overload::member("sum", "list_uint_sum_uint", 1, sum_uint),
    Overload::member("sum", "list_double_sum_double", 1, sum_double),
    Overload::member("sum", "list_duration_sum_duration", 1, sum_duration),
    Overload::member("max", "list_int_max_int", 1, max),
    Overload::member("max", "list_uint_max_uint", 1, max),
    Overload::member("max", "list_double_max_double", 1, max),
    Overload::member("max", "list_bool_max_bool", 1, max),
    Overload::member("max", "list_duration_max_duration", 1, max),
    Overload::member("max", "list_timestamp_max_timestamp", 1, max),
    Overload::member("max", "list_string_max_string", 1, max),
    Overload::member("max", "list_bytes_max_bytes", 1, max),
    Overload::member("min", "list_int_min_int", 1, min),
    Overload::member("min", "list_uint_min_uint", 1, min),
    Overload::member("min", "list_double_min_double", 1, min),
    Overload::member("min", "list_bool_min_bool", 1, min),
    Overload::member("min", "list_duration_min_duration", 1, min),
    Overload::member("min", "list_timestamp_min_timestamp", 1, min),
    Overload::member("min", "list_string_min_string", 1, min),
    Overload::member("min", "list_bytes_min_bytes", 1, min),
    Overload::member("indexOf", "list_a_index_of_int", 2, index_of),
    Overload::member("lastIndexOf", "list_a_last_index_of_int", 2, last_index_of),
    Overload::member("includes", "list_includes_dyn_dyn", 2, includes).with_cost(includes_cost),
];
