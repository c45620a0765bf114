//! cel-go `ext/lists.go` (v3, Kubernetes ≥ 1.34), `ext/sets.go` (≥ 1.29) and the helper of the
//! two-variable comprehensions (`ext/comprehensions.go`, ≥ 1.32).
//!
//! - `[1, 2, 3].slice(1, 2)` // [2]; `[1].slice(1, 0)` // error: cannot slice(1, 0), start index must be less than or equal to end index
//! - `[1, [2, [3]]].flatten()` // [1, 2, [3]]; `.flatten(-1)` // error: level must be non-negative
//! - `[3, 1].sort()` // [1, 3]; `[1, 'a'].sort()` // error: list elements must have the same type
//! - `lists.range(3)` // [0, 1, 2]; `[1, 2].reverse()` // [2, 1]; `[1, 1.0, 2].distinct()` // [1, 2]
//! - `sets.contains([1, 2], [2])` // true; `sets.equivalent([1], [1.0, 1])` // true
//! - `{'a': 1}.transformMapEntry(k, v, {k: v})` with a repeated key // error: insert failed: key a already exists

use super::util::int_arg;
use super::{Ctx, Fail, Overload, Overload as O, R};
use crate::cel::value::{compare, Key, List, OwnedMap, Value};
use std::cmp::Ordering;

fn list_arg<'v, 'a>(v: &'v Value<'a>) -> Result<&'v List<'a>, Fail> {
    match v {
        Value::List(l) => Ok(l),
        _ => Err(Fail::NoMatch),
    }
}

fn slice<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let l = list_arg(&a[0])?;
    let start = int_arg(&a[1])?;
    let end = int_arg(&a[2])?;
    if start < 0 || end < 0 {
        return Err(Fail::msg(format!(
            "cannot slice({start}, {end}), negative indexes not supported"
        )));
    }
    if start > end {
        return Err(Fail::msg(format!(
            "cannot slice({start}, {end}), start index must be less than or equal to end index"
        )));
    }
    // Compared as int64: `end as usize` wraps past 2^32 on wasm32.
    if end > l.len() as i64 {
        return Err(Fail::msg(format!("cannot slice({start}, {end}), list is length {}", l.len())));
    }
    Ok(Value::list((start as usize..end as usize).filter_map(|i| l.get(i)).collect()))
}

fn flatten_into<'a>(l: &List<'a>, depth: i64, out: &mut Vec<Value<'a>>) {
    for v in l.iter() {
        match &v {
            Value::List(inner) if depth > 0 => flatten_into(inner, depth - 1, out),
            _ => out.push(v),
        }
    }
}

fn flatten<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let l = list_arg(&a[0])?;
    let depth = match a.get(1) {
        Some(v) => int_arg(v)?,
        None => 1,
    };
    if depth < 0 {
        return Err(Fail::msg("level must be non-negative"));
    }
    let mut out = Vec::new();
    // Recursion depth is bounded by the nesting of the data, itself bounded by the parser and
    // JSON depth limits.
    flatten_into(l, depth.min(1000), &mut out);
    Ok(Value::list(out))
}

fn sortable(v: &Value<'_>) -> bool {
    matches!(
        v,
        Value::Int(_)
            | Value::Uint(_)
            | Value::Double(_)
            | Value::Bool(_)
            | Value::String(_)
            | Value::Bytes(_)
            | Value::Duration(_)
            | Value::Timestamp(_)
    )
}

fn check_sortable(v: &[Value<'_>]) -> Result<(), Fail> {
    if let Some(first) = v.first() {
        if !sortable(first) {
            return Err(Fail::msg("list elements must be comparable"));
        }
        let t = first.type_name();
        if v.iter().any(|x| x.type_name() != t) {
            return Err(Fail::msg("list elements must have the same type"));
        }
    }
    Ok(())
}

fn sort<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let mut v = list_arg(&a[0])?.to_vec();
    check_sortable(&v)?;
    crate::sort::sort_by(&mut v, |x, y| compare(x, y).unwrap_or(Ordering::Equal));
    Ok(Value::list(v))
}

fn sort_by_keys<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let v = list_arg(&a[0])?.to_vec();
    let keys = list_arg(&a[1])?.to_vec();
    if v.len() != keys.len() {
        return Err(Fail::msg(format!(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {} and {} elements respectively",
            v.len(),
            keys.len()
        )));
    }
    check_sortable(&keys)?;
    let idx = crate::sort::sorted_indices(v.len(), &mut |i, j| {
        compare(&keys[i], &keys[j]).unwrap_or(Ordering::Equal)
    });
    Ok(Value::list(idx.into_iter().map(|i| v[i].clone()).collect()))
}

fn range<'a>(ctx: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let n = int_arg(&a[0])?;
    if n <= 0 {
        return Ok(Value::list(vec![]));
    }
    // Building the list costs at least one unit per element in any tracker; refuse before
    // allocating when that alone would exceed the budget.
    if (n as u64).saturating_add(11) > ctx.remaining {
        return Err(Fail::Cancelled);
    }
    Ok(Value::list((0..n).map(Value::Int).collect()))
}

fn reverse<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let mut v = list_arg(&a[0])?.to_vec();
    v.reverse();
    Ok(Value::list(v))
}

fn distinct<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let l = list_arg(&a[0])?;
    let mut out: Vec<Value<'a>> = Vec::new();
    for v in l.iter() {
        if !out.iter().any(|x| x.equals(&v)) {
            out.push(v);
        }
    }
    Ok(Value::list(out))
}

fn contains_all(a: &List<'_>, b: &List<'_>) -> bool {
    b.iter().all(|x| a.iter().any(|y| y.equals(&x)))
}

fn sets_contains<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(contains_all(list_arg(&a[0])?, list_arg(&a[1])?)))
}
fn sets_equivalent<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let (x, y) = (list_arg(&a[0])?, list_arg(&a[1])?);
    Ok(Value::Bool(contains_all(x, y) && contains_all(y, x)))
}
fn sets_intersects<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let (x, y) = (list_arg(&a[0])?, list_arg(&a[1])?);
    Ok(Value::Bool(x.iter().any(|v| y.iter().any(|w| w.equals(&v)))))
}

/// `cel.@mapInsert(m, k, v)` / `cel.@mapInsert(m, entries)` into an owned map, in place.
pub fn map_insert<'a>(m: &mut OwnedMap<'a>, args: &[Value<'a>]) -> Result<(), Fail> {
    let mut put = |k: Value<'a>, v: Value<'a>| -> Result<(), Fail> {
        let key = Key::from_value(&k)
            .ok_or_else(|| Fail::msg(format!("unsupported key type: {}", k.type_name())))?;
        if m.contains_key(&key) {
            return Err(Fail::msg(format!(
                "insert failed: key {} already exists",
                k.error_string()
            )));
        }
        m.insert(key, v);
        Ok(())
    };
    match args {
        [k, v] => put(k.clone(), v.clone()),
        [Value::Map(entries)] => {
            for (k, v) in entries.iter() {
                put(k, v)?;
            }
            Ok(())
        }
        _ => Err(Fail::NoMatch),
    }
}

fn map_insert_fn<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let Value::Map(m) = &a[0] else {
        return Err(Fail::NoMatch);
    };
    let mut owned: OwnedMap<'a> =
        m.iter().filter_map(|(k, v)| Some((Key::from_value(&k)?, v))).collect();
    map_insert(&mut owned, &a[1..])?;
    Ok(Value::map(owned))
}

/// cel-go `ext/lists.go` runtime cost trackers: list creation (10) + call (1) + the work.
fn copy_cost(_: &[Value<'_>], result: Option<&Value<'_>>) -> u64 {
    11 + result.map(|r| r.cost_size()).unwrap_or(1)
}
fn flatten_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    fn count(l: &List<'_>, depth: i64) -> u64 {
        if depth <= 1 {
            return l.len() as u64;
        }
        l.iter()
            .map(|v| match &v {
                Value::List(inner) => count(inner, depth - 1),
                _ => 1,
            })
            .fold(0u64, u64::saturating_add)
    }
    let depth = match args.get(1) {
        Some(Value::Int(d)) => *d,
        _ => 1,
    };
    match args.first() {
        Some(Value::List(l)) => count(l, depth.min(1000)).saturating_add(11),
        _ => 1,
    }
}
fn distinct_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    let (mut factor, mut n) = (0.0f64, 0.0f64);
    if let Some(Value::List(l)) = args.first() {
        for v in l.iter() {
            factor += v.cost_size() as f64 * 0.1;
            n += 1.0;
        }
    }
    11u64.saturating_add((factor * n).ceil() as u64)
}

/// cel-go ext lists (v3), sets and the two-variable comprehensions' helper, in registration
/// order.
pub(crate) static OVERLOADS: &[Overload] = &[
    O::member("slice", "list_slice", 3, slice).with_cost(copy_cost),
    O::member("flatten", "list_flatten", 1, flatten).with_cost(flatten_cost),
    O::member("flatten", "list_flatten_int", 2, flatten).with_cost(flatten_cost),
    // `sort` and `@sortByAssociatedKeys` for each element type cel-go sorts (`comparableTypes`,
    // named by `TypeName()`).
    O::member("sort", "list_int_sort", 1, sort),
    O::member("@sortByAssociatedKeys", "list_int_sortByAssociatedKeys", 2, sort_by_keys),
    O::member("sort", "list_uint_sort", 1, sort),
    O::member("@sortByAssociatedKeys", "list_uint_sortByAssociatedKeys", 2, sort_by_keys),
    O::member("sort", "list_double_sort", 1, sort),
    O::member("@sortByAssociatedKeys", "list_double_sortByAssociatedKeys", 2, sort_by_keys),
    O::member("sort", "list_bool_sort", 1, sort),
    O::member("@sortByAssociatedKeys", "list_bool_sortByAssociatedKeys", 2, sort_by_keys),
    O::member("sort", "list_string_sort", 1, sort),
    O::member("@sortByAssociatedKeys", "list_string_sortByAssociatedKeys", 2, sort_by_keys),
    O::member("sort", "list_bytes_sort", 1, sort),
    O::member("@sortByAssociatedKeys", "list_bytes_sortByAssociatedKeys", 2, sort_by_keys),
    O::member("sort", "list_google.protobuf.Duration_sort", 1, sort),
    O::member(
        "@sortByAssociatedKeys",
        "list_google.protobuf.Duration_sortByAssociatedKeys",
        2,
        sort_by_keys,
    ),
    O::member("sort", "list_google.protobuf.Timestamp_sort", 1, sort),
    O::member(
        "@sortByAssociatedKeys",
        "list_google.protobuf.Timestamp_sortByAssociatedKeys",
        2,
        sort_by_keys,
    ),
    O::global("lists.range", "lists_range", 1, range).with_cost(copy_cost),
    O::member("reverse", "list_reverse", 1, reverse).with_cost(copy_cost),
    O::member("distinct", "list_distinct", 1, distinct).with_cost(distinct_cost),
    O::global("sets.contains", "list_sets_contains_list", 2, sets_contains)
        .with_cost(super::cost::sets_cost),
    O::global("sets.equivalent", "list_sets_equivalent_list", 2, sets_equivalent)
        .with_cost(super::cost::sets_equivalent_cost),
    O::global("sets.intersects", "list_sets_intersects_list", 2, sets_intersects)
        .with_cost(super::cost::sets_cost),
    O::global("cel.@mapInsert", "@mapInsert_map_key_value", 3, map_insert_fn),
    O::global("cel.@mapInsert", "@mapInsert_map_map", 2, map_insert_fn),
];
