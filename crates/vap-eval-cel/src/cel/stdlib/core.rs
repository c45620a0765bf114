//! The cel-spec standard library: operators, `size`, string predicates, `matches`, `in`,
//! conversions and `type`/`dyn`.
//!
//! Semantics and error texts follow cel-go `common/types/{int,uint,double,string,bytes,list,
//! map}.go` and `common/stdlib/standard.go`:
//! - `9223372036854775807 + 1` // error: integer overflow
//! - `1u - 2u` // error: unsigned integer overflow
//! - `1 / 0` // error: division by zero; `1 % 0` // error: modulus by zero
//! - `int('x')` // error: type conversion error from 'string' to 'int'
//! - `int(1e20)` // error: integer overflow
//! - `string(1e6)` // '1e+06'
//! - `dyn(1) == 1.0` // true (heterogeneous equality); `dyn(1) + 1.0` // error: no such overload

use super::cost;
use super::util::{owned, str_arg};
use super::{Ctx, Fail, Overload, Overload as O, R};
use crate::cel::value::{compare, format_double, format_duration, format_timestamp, List, Value};
use std::cmp::Ordering;
use std::rc::Rc;

pub(crate) const INT_OVERFLOW: &str = "integer overflow";
pub(crate) const UINT_OVERFLOW: &str = "unsigned integer overflow";

fn of<'a>(r: Option<i64>) -> R<'a> {
    r.map(Value::Int).ok_or_else(|| Fail::msg(INT_OVERFLOW))
}
fn ofu<'a>(r: Option<u64>) -> R<'a> {
    r.map(Value::Uint).ok_or_else(|| Fail::msg(UINT_OVERFLOW))
}

fn add<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    use Value::*;
    match (&a[0], &a[1]) {
        (Int(x), Int(y)) => of(x.checked_add(*y)),
        (Uint(x), Uint(y)) => ofu(x.checked_add(*y)),
        (Double(x), Double(y)) => Ok(Double(x + y)),
        (String(x), String(y)) => {
            let mut s = std::string::String::with_capacity(x.as_str().len() + y.as_str().len());
            s.push_str(x.as_str());
            s.push_str(y.as_str());
            Ok(owned(s))
        }
        (Bytes(x), Bytes(y)) => {
            let mut v = x.to_vec();
            v.extend_from_slice(y);
            Ok(Bytes(v.into()))
        }
        (List(x), List(y)) => {
            if y.is_empty() {
                return Ok(List(x.clone()));
            }
            if x.is_empty() {
                return Ok(List(y.clone()));
            }
            let mut v = x.to_vec();
            v.extend(y.iter());
            Ok(Value::list(v))
        }
        (Duration(_), Duration(_)) | (Timestamp(_), Duration(_)) | (Duration(_), Timestamp(_)) => {
            super::time::add(&a[0], &a[1])
        }
        _ => Err(Fail::NoMatch),
    }
}

fn sub<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    use Value::*;
    match (&a[0], &a[1]) {
        (Int(x), Int(y)) => of(x.checked_sub(*y)),
        (Uint(x), Uint(y)) => ofu(x.checked_sub(*y)),
        (Double(x), Double(y)) => Ok(Double(x - y)),
        (Duration(_), Duration(_)) | (Timestamp(_), Duration(_)) | (Timestamp(_), Timestamp(_)) => {
            super::time::sub(&a[0], &a[1])
        }
        _ => Err(Fail::NoMatch),
    }
}

fn mul<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    use Value::*;
    match (&a[0], &a[1]) {
        (Int(x), Int(y)) => of(x.checked_mul(*y)),
        (Uint(x), Uint(y)) => ofu(x.checked_mul(*y)),
        (Double(x), Double(y)) => Ok(Double(x * y)),
        _ => Err(Fail::NoMatch),
    }
}

fn div<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    use Value::*;
    match (&a[0], &a[1]) {
        (Int(_), Int(0)) | (Uint(_), Uint(0)) => Err(Fail::msg("division by zero")),
        (Int(x), Int(y)) => of(x.checked_div(*y)),
        (Uint(x), Uint(y)) => Ok(Uint(x / y)),
        (Double(x), Double(y)) => Ok(Double(x / y)),
        _ => Err(Fail::NoMatch),
    }
}

fn rem<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    use Value::*;
    match (&a[0], &a[1]) {
        (Int(_), Int(0)) | (Uint(_), Uint(0)) => Err(Fail::msg("modulus by zero")),
        (Int(x), Int(y)) => of(x.checked_rem(*y)),
        (Uint(x), Uint(y)) => Ok(Uint(x % y)),
        _ => Err(Fail::NoMatch),
    }
}

fn neg<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Int(x) => of(x.checked_neg()),
        Value::Double(x) => Ok(Value::Double(-x)),
        _ => Err(Fail::NoMatch),
    }
}

fn not<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Bool(b) => Ok(Value::Bool(!b)),
        _ => Err(Fail::NoMatch),
    }
}

fn eq<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match (&a[0], &a[1]) {
        // cel-go `types.Equal`: null first, then the left operand's `Equal`, which for library
        // types may be an error.
        (Value::Opaque(o), rhs) if !matches!(rhs, Value::Null) => {
            o.equal_to(rhs).map(Value::Bool).map_err(Fail::Err)
        }
        (l, r) => Ok(Value::Bool(l.equals(r))),
    }
}
fn ne<'a>(ctx: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match eq(ctx, a)? {
        Value::Bool(b) => Ok(Value::Bool(!b)),
        other => Ok(other),
    }
}

/// Ordering for the relational operators: same kind, or numbers across kinds.
fn ord(a: &Value<'_>, b: &Value<'_>) -> Result<Option<Ordering>, Fail> {
    use Value::*;
    let comparable = matches!(
        (a, b),
        (Bool(_), Bool(_))
            | (String(_), String(_))
            | (Bytes(_), Bytes(_))
            | (Duration(_), Duration(_))
            | (Timestamp(_), Timestamp(_))
    ) || (matches!(a, Int(_) | Uint(_) | Double(_))
        && matches!(b, Int(_) | Uint(_) | Double(_)));
    if !comparable {
        return Err(Fail::NoMatch);
    }
    Ok(compare(a, b))
}

fn lt<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(ord(&a[0], &a[1])? == Some(Ordering::Less)))
}
fn le<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(matches!(ord(&a[0], &a[1])?, Some(Ordering::Less | Ordering::Equal))))
}
fn gt<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(ord(&a[0], &a[1])? == Some(Ordering::Greater)))
}
fn ge<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(matches!(ord(&a[0], &a[1])?, Some(Ordering::Greater | Ordering::Equal))))
}

fn size<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(match &a[0] {
        Value::String(s) => crate::cel::value::char_count(s.as_str()) as i64,
        Value::Bytes(b) => b.len() as i64,
        Value::List(l) => l.len() as i64,
        Value::Map(m) => m.len() as i64,
        _ => return Err(Fail::NoMatch),
    }))
}

fn in_list<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[1] {
        Value::List(l) => Ok(Value::Bool(list_contains(l, &a[0]))),
        _ => Err(Fail::NoMatch),
    }
}

/// `x in list`, with a fast path for strings in JSON arrays.
pub(crate) fn list_contains(l: &List<'_>, x: &Value<'_>) -> bool {
    if let (List::Json(arr), Value::String(s)) = (l, x) {
        return arr.iter().any(|j| j.as_str() == Some(s.as_str()));
    }
    l.iter().any(|e| e.equals(x))
}

fn in_map<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[1] {
        Value::Map(m) => Ok(Value::Bool(matches!(m.get(&a[0]), Ok(Some(_))))),
        _ => Err(Fail::NoMatch),
    }
}

fn contains<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(str_arg(&a[0])?.contains(str_arg(&a[1])?)))
}
fn starts_with<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(str_arg(&a[0])?.starts_with(str_arg(&a[1])?)))
}
fn ends_with<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(str_arg(&a[0])?.ends_with(str_arg(&a[1])?)))
}
fn matches<'a>(ctx: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let s = str_arg(&a[0])?;
    let p = str_arg(&a[1])?;
    // The program keeps its regexes beyond the call: one compiled here (a pattern that is not a
    // constant) and what a search adds to its cache are made outside the per-call arena.
    let matched = crate::arena_switch::outside(|| ctx.regexes.compile(p).map(|re| re.is_match(s)));
    Ok(Value::Bool(matched.map_err(Fail::Err)?))
}

// ---- conversions ----

fn conv_err<'a>(from: &str, to: &str) -> R<'a> {
    Err(Fail::msg(format!("type conversion error from '{from}' to '{to}'")))
}

fn to_int<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Int(i) => Ok(Value::Int(*i)),
        Value::Uint(u) => i64::try_from(*u).map(Value::Int).map_err(|_| Fail::msg(INT_OVERFLOW)),
        Value::Double(d) => {
            // cel-go doubleToInt64Checked: NaN, ±Inf and out-of-range values overflow.
            if d.is_nan() || *d <= crate::cel::value::TWO_63_NEG || *d >= crate::cel::value::TWO_63
            {
                Err(Fail::msg(INT_OVERFLOW))
            } else {
                Ok(Value::Int(d.trunc() as i64))
            }
        }
        Value::String(s) => parse_go_int(s.as_str())
            .map(Value::Int)
            .ok_or(())
            .or_else(|_| conv_err("string", "int")),
        Value::Timestamp(t) => Ok(Value::Int(t.secs)),
        // cel-go `duration_to_int64`: nanoseconds (`int(duration('1s')) // 1000000000`).
        Value::Duration(ns) => Ok(Value::Int(*ns)),
        _ => Err(Fail::NoMatch),
    }
}

/// Go `strconv.ParseInt(s, 10, 64)`: optional sign, decimal digits, no underscores.
fn parse_go_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}

fn to_uint<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Uint(u) => Ok(Value::Uint(*u)),
        Value::Int(i) => u64::try_from(*i).map(Value::Uint).map_err(|_| Fail::msg(UINT_OVERFLOW)),
        Value::Double(d) => {
            if d.is_nan() || *d < 0.0 || *d >= crate::cel::value::TWO_64 {
                Err(Fail::msg(UINT_OVERFLOW))
            } else {
                Ok(Value::Uint(d.trunc() as u64))
            }
        }
        Value::String(s) => {
            let st = s.as_str();
            let digits = st.strip_prefix('+').unwrap_or(st);
            match (
                digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()),
                digits.parse::<u64>(),
            ) {
                (false, Ok(u)) => Ok(Value::Uint(u)),
                _ => conv_err("string", "uint"),
            }
        }
        _ => Err(Fail::NoMatch),
    }
}

fn to_double<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Double(d) => Ok(Value::Double(*d)),
        Value::Int(i) => Ok(Value::Double(*i as f64)),
        Value::Uint(u) => Ok(Value::Double(*u as f64)),
        Value::String(s) => parse_go_float(s.as_str())
            .map(Value::Double)
            .ok_or(())
            .or_else(|_| conv_err("string", "double")),
        _ => Err(Fail::NoMatch),
    }
}

/// Go `strconv.ParseFloat(s, 64)` for the forms CEL users write (decimal, exponent, inf, nan).
fn parse_go_float(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    match body {
        "inf" | "infinity" => {
            return Some(if lower.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY })
        }
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    if body.is_empty()
        || !body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
    {
        return None;
    }
    s.parse::<f64>().ok()
}

fn to_string<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(match &a[0] {
        Value::String(s) => Value::String(s.clone()),
        Value::Bool(b) => owned(b.to_string()),
        Value::Int(i) => owned(i.to_string()),
        Value::Uint(u) => owned(u.to_string()),
        Value::Double(d) => owned(format_double(*d)),
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => owned(s.to_string()),
            Err(_) => return conv_err("bytes", "string"),
        },
        Value::Duration(d) => owned(format_duration(*d)),
        Value::Timestamp(t) => owned(format_timestamp(t)),
        _ => return Err(Fail::NoMatch),
    })
}

fn to_bytes<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Bytes(b) => Ok(Value::Bytes(b.clone())),
        Value::String(s) => Ok(Value::Bytes(Rc::from(s.as_str().as_bytes()))),
        _ => Err(Fail::NoMatch),
    }
}

fn to_bool<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Bool(b) => Ok(Value::Bool(*b)),
        Value::String(s) => match s.as_str() {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(Value::Bool(true)),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(Value::Bool(false)),
            _ => conv_err("string", "bool"),
        },
        _ => Err(Fail::NoMatch),
    }
}

fn dyn_<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(a[0].clone())
}

fn type_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::type_value(a[0].type_name()))
}

/// The standard library's overloads (cel-go `common/overloads` ids), in registration order.
pub(crate) static OVERLOADS: &[Overload] = &[
    O::global("_+_", "add_int64", 2, add),
    O::global("_+_", "add_uint64", 2, add),
    O::global("_+_", "add_double", 2, add),
    O::global("_+_", "add_string", 2, add).with_cost(cost::concat_cost),
    O::global("_+_", "add_bytes", 2, add).with_cost(cost::concat_cost),
    O::global("_+_", "add_list", 2, add),
    O::global("_+_", "add_timestamp_duration", 2, add),
    O::global("_+_", "add_duration_timestamp", 2, add),
    O::global("_+_", "add_duration_duration", 2, add),
    O::global("_-_", "subtract_int64", 2, sub),
    O::global("_-_", "subtract_uint64", 2, sub),
    O::global("_-_", "subtract_double", 2, sub),
    O::global("_-_", "subtract_timestamp_timestamp", 2, sub),
    O::global("_-_", "subtract_timestamp_duration", 2, sub),
    O::global("_-_", "subtract_duration_duration", 2, sub),
    O::global("_*_", "multiply_int64", 2, mul),
    O::global("_*_", "multiply_uint64", 2, mul),
    O::global("_*_", "multiply_double", 2, mul),
    O::global("_/_", "divide_int64", 2, div),
    O::global("_/_", "divide_uint64", 2, div),
    O::global("_/_", "divide_double", 2, div),
    O::global("_%_", "modulo_int64", 2, rem),
    O::global("_%_", "modulo_uint64", 2, rem),
    O::global("-_", "negate_int64", 1, neg),
    O::global("-_", "negate_double", 1, neg),
    O::global("!_", "logical_not", 1, not),
    O::global("_==_", "equals", 2, eq).with_cost(cost::compare_cost),
    O::global("_!=_", "not_equals", 2, ne).with_cost(cost::compare_cost),
    O::global("_<_", "less_bool", 2, lt),
    O::global("_<_", "less_int64", 2, lt),
    O::global("_<_", "less_uint64", 2, lt),
    O::global("_<_", "less_double", 2, lt),
    O::global("_<_", "less_string", 2, lt).with_cost(cost::compare_cost),
    O::global("_<_", "less_bytes", 2, lt).with_cost(cost::compare_cost),
    O::global("_<_", "less_timestamp", 2, lt),
    O::global("_<_", "less_duration", 2, lt),
    O::global("_<_", "less_int64_double", 2, lt),
    O::global("_<_", "less_int64_uint64", 2, lt),
    O::global("_<_", "less_uint64_double", 2, lt),
    O::global("_<_", "less_uint64_int64", 2, lt),
    O::global("_<_", "less_double_int64", 2, lt),
    O::global("_<_", "less_double_uint64", 2, lt),
    O::global("_<=_", "less_equals_bool", 2, le),
    O::global("_<=_", "less_equals_int64", 2, le),
    O::global("_<=_", "less_equals_uint64", 2, le),
    O::global("_<=_", "less_equals_double", 2, le),
    O::global("_<=_", "less_equals_string", 2, le).with_cost(cost::compare_cost),
    O::global("_<=_", "less_equals_bytes", 2, le).with_cost(cost::compare_cost),
    O::global("_<=_", "less_equals_timestamp", 2, le),
    O::global("_<=_", "less_equals_duration", 2, le),
    O::global("_<=_", "less_equals_int64_double", 2, le),
    O::global("_<=_", "less_equals_int64_uint64", 2, le),
    O::global("_<=_", "less_equals_uint64_double", 2, le),
    O::global("_<=_", "less_equals_uint64_int64", 2, le),
    O::global("_<=_", "less_equals_double_int64", 2, le),
    O::global("_<=_", "less_equals_double_uint64", 2, le),
    O::global("_>_", "greater_bool", 2, gt),
    O::global("_>_", "greater_int64", 2, gt),
    O::global("_>_", "greater_uint64", 2, gt),
    O::global("_>_", "greater_double", 2, gt),
    O::global("_>_", "greater_string", 2, gt).with_cost(cost::compare_cost),
    O::global("_>_", "greater_bytes", 2, gt).with_cost(cost::compare_cost),
    O::global("_>_", "greater_timestamp", 2, gt),
    O::global("_>_", "greater_duration", 2, gt),
    O::global("_>_", "greater_int64_double", 2, gt),
    O::global("_>_", "greater_int64_uint64", 2, gt),
    O::global("_>_", "greater_uint64_double", 2, gt),
    O::global("_>_", "greater_uint64_int64", 2, gt),
    O::global("_>_", "greater_double_int64", 2, gt),
    O::global("_>_", "greater_double_uint64", 2, gt),
    O::global("_>=_", "greater_equals_bool", 2, ge),
    O::global("_>=_", "greater_equals_int64", 2, ge),
    O::global("_>=_", "greater_equals_uint64", 2, ge),
    O::global("_>=_", "greater_equals_double", 2, ge),
    O::global("_>=_", "greater_equals_string", 2, ge).with_cost(cost::compare_cost),
    O::global("_>=_", "greater_equals_bytes", 2, ge).with_cost(cost::compare_cost),
    O::global("_>=_", "greater_equals_timestamp", 2, ge),
    O::global("_>=_", "greater_equals_duration", 2, ge),
    O::global("_>=_", "greater_equals_int64_double", 2, ge),
    O::global("_>=_", "greater_equals_int64_uint64", 2, ge),
    O::global("_>=_", "greater_equals_uint64_double", 2, ge),
    O::global("_>=_", "greater_equals_uint64_int64", 2, ge),
    O::global("_>=_", "greater_equals_double_int64", 2, ge),
    O::global("_>=_", "greater_equals_double_uint64", 2, ge),
    O::global("size", "size_string", 1, size),
    O::global("size", "size_bytes", 1, size),
    O::global("size", "size_list", 1, size),
    O::global("size", "size_map", 1, size),
    O::member("size", "string_size", 1, size),
    O::member("size", "bytes_size", 1, size),
    O::member("size", "list_size", 1, size),
    O::member("size", "map_size", 1, size),
    O::global("@in", "in_list", 2, in_list).with_cost(cost::in_list_cost),
    O::global("@in", "in_map", 2, in_map),
    O::member("contains", "contains_string", 2, contains).with_cost(cost::contains_cost),
    O::member("startsWith", "starts_with_string", 2, starts_with)
        .with_cost(cost::first_traversal_cost),
    O::member("endsWith", "ends_with_string", 2, ends_with).with_cost(cost::first_traversal_cost),
    O::global("matches", "matches", 2, matches).with_cost(cost::matches_cost),
    O::member("matches", "matches_string", 2, matches).with_cost(cost::matches_cost),
    O::global("int", "int64_to_int64", 1, to_int),
    O::global("int", "uint64_to_int64", 1, to_int),
    O::global("int", "double_to_int64", 1, to_int),
    O::global("int", "string_to_int64", 1, to_int),
    O::global("int", "timestamp_to_int64", 1, to_int),
    O::global("int", "duration_to_int64", 1, to_int),
    O::global("uint", "uint64_to_uint64", 1, to_uint),
    O::global("uint", "int64_to_uint64", 1, to_uint),
    O::global("uint", "double_to_uint64", 1, to_uint),
    O::global("uint", "string_to_uint64", 1, to_uint),
    O::global("double", "double_to_double", 1, to_double),
    O::global("double", "int64_to_double", 1, to_double),
    O::global("double", "uint64_to_double", 1, to_double),
    O::global("double", "string_to_double", 1, to_double),
    O::global("string", "string_to_string", 1, to_string),
    O::global("string", "bool_to_string", 1, to_string),
    O::global("string", "int64_to_string", 1, to_string),
    O::global("string", "uint64_to_string", 1, to_string),
    O::global("string", "double_to_string", 1, to_string),
    O::global("string", "bytes_to_string", 1, to_string).with_cost(cost::first_traversal_cost),
    O::global("string", "timestamp_to_string", 1, to_string),
    O::global("string", "duration_to_string", 1, to_string),
    O::global("bytes", "bytes_to_bytes", 1, to_bytes),
    O::global("bytes", "string_to_bytes", 1, to_bytes).with_cost(cost::first_traversal_cost),
    O::global("bool", "bool_to_bool", 1, to_bool),
    O::global("bool", "string_to_bool", 1, to_bool),
    O::global("dyn", "to_dyn", 1, dyn_),
    O::global("type", "type", 1, type_of),
];
