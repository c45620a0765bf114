//! Runtime call costs: the Kubernetes estimator (`apiserver/pkg/cel/library/cost.go`
//! `CallCost`, keyed by *function name*) first, then the overload's own cost, which for the
//! standard library is cel-go's default (`interpreter/runtimecost.go` `costCall`), else 1.
//!
//! Goldens (spec §8.1): `oldObject != null` = 2, `object.subsets.size() > 2` = 4,
//! `size('abc 123 def 123'.split(' ')) > 0` = 5, `size([...10 strings].join(' ')) > 0` = 7.

use super::CostFn;
use crate::cel::value::Value;

/// cel-go `common.StringTraversalCostFactor`.
pub const STRING_TRAVERSAL: f64 = 0.1;
/// cel-go `common.RegexStringLengthCostFactor`.
pub const REGEX_LENGTH: f64 = 0.25;

#[inline]
fn ceil(x: f64) -> u64 {
    let c = x.ceil();
    if c >= u64::MAX as f64 {
        u64::MAX
    } else if c <= 0.0 {
        0
    } else {
        c as u64
    }
}

fn size(v: Option<&Value<'_>>) -> u64 {
    v.map(|v| v.cost_size()).unwrap_or(1)
}

/// The cost of one call: the Kubernetes estimator's by name (`k8s`: the program prices calls
/// as the apiserver does and the function is one of [`k8s_names`]), else the overload's own
/// (`own`: its [`Overload::cost`](super::Overload::cost), where the standard library's overloads
/// keep cel-go's `costCall` defaults, below), else 1.
pub fn call_cost(
    function: &str,
    overload_id: &str,
    own: Option<CostFn>,
    k8s: bool,
    args: &[Value<'_>],
    result: Option<&Value<'_>>,
) -> u64 {
    if k8s {
        if let Some(c) = k8s_call_cost(function, overload_id, args, result) {
            return c;
        }
    }
    match own {
        Some(f) => f(args, result),
        None => 1,
    }
}

// cel-go's `costCall` defaults (`interpreter/runtimecost.go`), each the cost function of the
// overloads it applies to (in their static tables): looked up once when the overload is
// registered, not matched by id on every call (as a match on the id, inlined into
// `Evaluator::invoke`, they were ~2 KB of code the first evaluation compiled).

fn arg(args: &[Value<'_>], i: usize) -> u64 {
    size(args.get(i))
}

/// `starts_with_string`, `ends_with_string`, `string_to_bytes`, `bytes_to_string`,
/// `strings_quote`, `string_format`: the receiver's traversal.
pub fn first_traversal_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    ceil(arg(args, 0) as f64 * STRING_TRAVERSAL)
}

/// `in_list`: the list's size.
pub fn in_list_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    arg(args, 1)
}

/// String and bytes comparisons, `equals`, `not_equals`: the shorter operand's traversal.
pub fn compare_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    ceil(arg(args, 0).min(arg(args, 1)) as f64 * STRING_TRAVERSAL)
}

/// `add_string`, `add_bytes`: both operands' traversal.
pub fn concat_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    ceil((arg(args, 0).saturating_add(arg(args, 1))) as f64 * STRING_TRAVERSAL)
}

/// `matches`, `matches_string`.
pub fn matches_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    let s = ceil((1.0 + arg(args, 0) as f64) * STRING_TRAVERSAL);
    let r = ceil(arg(args, 1) as f64 * REGEX_LENGTH);
    s.saturating_mul(r)
}

/// `contains_string`.
pub fn contains_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    ceil(arg(args, 0) as f64 * STRING_TRAVERSAL)
        .saturating_mul(ceil(arg(args, 1) as f64 * STRING_TRAVERSAL))
}

/// cel-go ext/sets.go `trackSetsCost`: 1 + |a|·|b| (`sets.contains`, `sets.intersects`).
pub fn sets_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    arg(args, 0).saturating_mul(arg(args, 1)).saturating_add(1)
}

/// `sets.equivalent`: twice the product, plus 1.
pub fn sets_equivalent_cost(args: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    arg(args, 0).saturating_mul(arg(args, 1)).saturating_mul(2).saturating_add(1)
}

/// Kubernetes `CostEstimator.CallCost`, for the functions whose cost does not depend on a
/// Kubernetes library type. (Library types register their costs with their overloads; `check`
/// and friends are listed here because the estimator matches them by name.) Out of line: only
/// calls of the names [`k8s_names`] lists reach it, and V8 compiles a wasm function whole on
/// its first call (bench/README.md, "The first evaluate(), seventh round").
#[inline(never)]
pub fn k8s_call_cost(
    function: &str,
    overload_id: &str,
    args: &[Value<'_>],
    result: Option<&Value<'_>>,
) -> Option<u64> {
    let a = |i: usize| size(args.get(i));
    Some(match function {
        "check" => 350_000,
        "serviceAccount" | "path" | "group" | "resource" | "subresource" | "namespace" | "name"
        | "allowed" | "reason" | "error" | "errored" => 1,
        "fieldSelector" | "labelSelector" if args.len() >= 2 => {
            // list create (10) + parse (0.1/char) + requirements (len*0.5*(10+40)).
            let l = a(1) as f64;
            10u64
                .saturating_add(ceil(l * STRING_TRAVERSAL))
                .saturating_add(ceil(ceil(l * 0.5) as f64 * 50.0))
        }
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            args.first().map(traversal_cost).unwrap_or(0)
        }
        "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" | "jsonpatch.escapeKey"
            if !args.is_empty() =>
        {
            ceil(a(0) as f64 * STRING_TRAVERSAL)
        }
        "replace" | "split" if !args.is_empty() => ceil(a(0) as f64 * 2.0 * STRING_TRAVERSAL),
        "join" if !args.is_empty() => ceil(size(result) as f64 * 2.0 * STRING_TRAVERSAL),
        "find" | "findAll" if args.len() >= 2 => {
            let s = ceil((1.0 + a(0) as f64) * STRING_TRAVERSAL);
            s.saturating_mul(ceil(a(1) as f64 * REGEX_LENGTH))
        }
        "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" if !args.is_empty() => {
            ceil(a(0) as f64 * STRING_TRAVERSAL)
        }
        "ip" if !args.is_empty() => {
            if overload_id == "cidr_ip" {
                1
            } else {
                ceil(a(0) as f64 * STRING_TRAVERSAL)
            }
        }
        "ip.isCanonical" if !args.is_empty() => ceil(a(0) as f64 * 2.0 * STRING_TRAVERSAL),
        "masked"
        | "prefixLength"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast" => 1,
        "containsIP" if args.len() >= 2 => {
            let c = a(0);
            let mut cost = ceil((c + c) as f64 * STRING_TRAVERSAL);
            if overload_id == "cidr_contains_ip_string" {
                cost = cost.saturating_add(ceil(a(1) as f64 * STRING_TRAVERSAL));
            }
            cost
        }
        "containsCIDR" if args.len() >= 2 => {
            let c = a(0);
            let mut cost = ceil((c + c) as f64 * STRING_TRAVERSAL);
            cost = cost.saturating_add(ceil(c as f64 * STRING_TRAVERSAL) + 1);
            if overload_id == "cidr_contains_cidr_string" {
                cost = cost.saturating_add(ceil(a(1) as f64 * STRING_TRAVERSAL));
            }
            cost
        }
        "format.named" => 1,
        "sign" | "asInteger" | "isInteger" | "asApproximateFloat" | "isGreaterThan"
        | "isLessThan" | "compareTo" | "add" | "sub" => 1,
        "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => 1,
        "_==_" if args.len() == 2 && matches!(args[0], Value::Opaque(_)) => 1,
        _ => return None,
    })
}

/// The function names the Kubernetes estimator prices ([`k8s_call_cost`]): data, looked up by
/// the planner once per call it plans (as a `matches!` it was ~1.5 KB of code the first
/// evaluation compiled).
const K8S_NAMES: &[&str] = &[
    "check",
    "serviceAccount",
    "path",
    "group",
    "resource",
    "subresource",
    "namespace",
    "name",
    "allowed",
    "reason",
    "error",
    "errored",
    "fieldSelector",
    "labelSelector",
    "isSorted",
    "sum",
    "max",
    "min",
    "indexOf",
    "lastIndexOf",
    "url",
    "lowerAscii",
    "upperAscii",
    "substring",
    "trim",
    "jsonpatch.escapeKey",
    "replace",
    "split",
    "join",
    "find",
    "findAll",
    "cidr",
    "isIP",
    "isCIDR",
    "quantity",
    "isQuantity",
    "ip",
    "ip.isCanonical",
    "masked",
    "prefixLength",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "containsIP",
    "containsCIDR",
    "format.named",
    "sign",
    "asInteger",
    "isInteger",
    "asApproximateFloat",
    "isGreaterThan",
    "isLessThan",
    "compareTo",
    "add",
    "sub",
    "getScheme",
    "getHostname",
    "getHost",
    "getPort",
    "getEscapedPath",
    "getQuery",
    "_==_",
];

/// Whether the Kubernetes estimator may return a cost for `function` (planner shortcut).
pub fn k8s_names(function: &str) -> bool {
    K8S_NAMES.contains(&function)
}

/// Kubernetes `traversalCost`: 1 per scalar, floor(0.1 × byte length) per string or bytes,
/// recursively through lists and maps.
pub fn traversal_cost(v: &Value<'_>) -> u64 {
    match v {
        Value::String(s) => (s.as_str().len() as f64 * STRING_TRAVERSAL) as u64,
        Value::Bytes(b) => (b.len() as f64 * STRING_TRAVERSAL) as u64,
        Value::List(l) => l.iter().map(|x| traversal_cost(&x)).fold(0u64, u64::saturating_add),
        Value::Map(m) => m
            .iter()
            .map(|(k, x)| traversal_cost(&k).saturating_add(traversal_cost(&x)))
            .fold(0u64, u64::saturating_add),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::stdlib::Registry;

    /// cel-go's `costCall` defaults as a match on the overload id (how this module applied them
    /// before they became the overloads' own cost functions).
    fn by_id(overload_id: &str, args: &[Value<'_>]) -> u64 {
        let a = |i: usize| size(args.get(i));
        match overload_id {
            "starts_with_string" | "ends_with_string" | "string_to_bytes" | "bytes_to_string"
            | "strings_quote" | "string_format" => ceil(a(0) as f64 * STRING_TRAVERSAL),
            "in_list" => a(1),
            "less_string"
            | "greater_string"
            | "less_equals_string"
            | "greater_equals_string"
            | "less_bytes"
            | "greater_bytes"
            | "less_equals_bytes"
            | "greater_equals_bytes"
            | "equals"
            | "not_equals" => ceil(a(0).min(a(1)) as f64 * STRING_TRAVERSAL),
            "add_string" | "add_bytes" => {
                ceil((a(0).saturating_add(a(1))) as f64 * STRING_TRAVERSAL)
            }
            "matches" | "matches_string" => {
                let s = ceil((1.0 + a(0) as f64) * STRING_TRAVERSAL);
                let r = ceil(a(1) as f64 * REGEX_LENGTH);
                s.saturating_mul(r)
            }
            "contains_string" => ceil(a(0) as f64 * STRING_TRAVERSAL)
                .saturating_mul(ceil(a(1) as f64 * STRING_TRAVERSAL)),
            "list_sets_contains_list" | "list_sets_intersects_list" => {
                a(0).saturating_mul(a(1)).saturating_add(1)
            }
            "list_sets_equivalent_list" => {
                a(0).saturating_mul(a(1)).saturating_mul(2).saturating_add(1)
            }
            _ => 1,
        }
    }

    /// Every standard overload's cost (when the Kubernetes estimator does not price it) is
    /// cel-go's default for its id, or its own where it always had one.
    #[test]
    fn defaults_are_the_overloads_costs() {
        let own = [
            "list_slice",
            "list_flatten",
            "list_flatten_int",
            "lists_range",
            "list_reverse",
            "list_distinct",
        ];
        let s = |n: usize| Value::string("x".repeat(n));
        let l = |n: usize| Value::list((0..n as i64).map(Value::Int).collect());
        let b = |n: usize| Value::Bytes(vec![0u8; n].into());
        let inputs: Vec<Vec<Value>> = vec![
            vec![],
            vec![s(37)],
            vec![s(37), s(123)],
            vec![s(400), s(9)],
            vec![b(55), b(250)],
            vec![l(7), l(12)],
            vec![Value::Int(3), l(40)],
        ];
        let r = Registry::standard();
        for id in r.ids() {
            if own.contains(&id) {
                continue;
            }
            let o = r.by_id(id).unwrap();
            for args in &inputs {
                let got = call_cost(o.function, id, o.cost, false, args, None);
                assert_eq!(got, by_id(id, args), "{id} {args:?}");
            }
        }
    }
}
