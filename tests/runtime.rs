//! Runtime tests: values and exact error texts per function group (cel-go sources cited), cost
//! goldens (spec §8.1), the 14 benchmark expressions, and a perf sanity check (`--ignored`).

use serde_json::Value as Json;
use std::time::Instant;
use vap_eval::cel::parser::{parse, ParseOptions};
use vap_eval::cel::runtime::{plan, Bindings, CostTracker, PlanOptions, Program};
use vap_eval::cel::stdlib::Registry;
use vap_eval::cel::value::Value;

fn program(expr: &str) -> Program {
    let ast = parse(expr, ParseOptions::default()).unwrap_or_else(|e| panic!("{expr}: {e:?}"));
    // Unoptimized, so that conversions of constants fail at evaluation (their texts are tested
    // here); tests/library_eval.rs tests the apiserver's optimized programs.
    plan(&ast, None, &Registry::standard(), PlanOptions { optimize: false, ..Default::default() })
        .unwrap_or_else(|e| panic!("{expr}: {e:?}"))
}

/// Evaluate with `object` bound; returns the JSON of the result or `error: <msg>`, and the cost.
fn run_with(expr: &str, object: &Json) -> (String, u64) {
    let p = program(expr);
    let act =
        Bindings::new().with("object", Value::from_json(object)).with("oldObject", Value::Null);
    let mut cost = CostTracker::default();
    let out = match p.eval(&act, &mut cost) {
        Ok(v) => v.debug_string(),
        Err(e) => format!("error: {}", e.message),
    };
    (out, cost.actual_cost())
}

fn run(expr: &str) -> String {
    run_with(expr, &Json::Null).0
}

fn check(cases: &[(&str, &str)]) {
    let mut bad = Vec::new();
    for (expr, want) in cases {
        let got = run(expr);
        if got != *want {
            bad.push(format!("{expr}\n   want {want}\n    got {got}"));
        }
    }
    assert!(bad.is_empty(), "{} failures:\n{}", bad.len(), bad.join("\n"));
}

/// cel-go common/types/{int,uint,double}.go: checked arithmetic and its texts.
#[test]
fn arithmetic() {
    check(&[
        ("1 + 2 * 3", "7"),
        ("9223372036854775807 + 1", "error: integer overflow"),
        ("-9223372036854775808 - 1", "error: integer overflow"),
        ("-(-9223372036854775808)", "error: integer overflow"),
        ("-9223372036854775808 / -1", "error: integer overflow"),
        ("-9223372036854775808 % -1", "error: integer overflow"),
        ("1u - 2u", "error: unsigned integer overflow"),
        ("18446744073709551615u + 1u", "error: unsigned integer overflow"),
        ("1 / 0", "error: division by zero"),
        ("1 % 0", "error: modulus by zero"),
        ("1u / 0u", "error: division by zero"),
        ("7 / 2", "3"),
        ("-7 % 3", "-1"),
        ("1.0 / 0.0", "+Inf"),
        ("dyn(1) + 1.5", "error: no such overload"),
        ("'a' + 'b'", "\"ab\""),
        ("[1] + [2, 3]", "[1, 2, 3]"),
        ("b'a' + b'b'", "b\"ab\""),
    ]);
}

/// Heterogeneous equality and ordering (cel-go with CrossTypeNumericComparisons).
#[test]
fn equality_and_ordering() {
    check(&[
        ("dyn(1) == 1.0", "true"),
        ("dyn(1u) == 1", "true"),
        ("dyn('a') == 1", "false"),
        ("[1, 2] == [1, 2]", "true"),
        ("[1, 2] == [2, 1]", "false"),
        ("{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", "true"),
        ("null == null", "true"),
        ("dyn(null) == 0", "false"),
        ("1 < 1.5", "true"),
        ("2u > -1", "true"),
        ("'a' < 'b'", "true"),
        ("dyn('a') < 1", "error: no such overload"),
        ("0.0/0.0 == 0.0/0.0", "false"),
        ("1 in [1, 2]", "true"),
        ("'a' in {'a': 1}", "true"),
        ("2.0 in [1, 2]", "true"),
        ("{1: 'a'}[1.0]", "\"a\""),
        ("{1u: 'a'}[1]", "\"a\""),
    ]);
}

/// Logical operators absorb errors commutatively (cel-go interpreter/interpretable.go).
#[test]
fn error_absorption() {
    check(&[
        ("1/0 == 1 && false", "false"),
        ("false && 1/0 == 1", "false"),
        ("1/0 == 1 || true", "true"),
        ("true && 1/0 == 1", "error: division by zero"),
        ("1/0 == 1 && true", "error: division by zero"),
        ("1/0 == 1 ? 1 : 2", "error: division by zero"),
        ("true ? 1 : 1/0", "1"),
        ("[1, 2].all(x, x / 0 == 1 || x > 0)", "true"),
        ("[0, 1].exists(x, 1 / x == 1)", "true"),
        ("[1, 0].all(x, 1 / x == 1)", "error: division by zero"),
        ("[0, 2].all(x, 1 / x == 1)", "false"),
    ]);
}

/// Select/index errors (cel-go interpreter/attributes.go, common/types/err.go).
#[test]
fn attributes() {
    let obj: Json = serde_json::json!({"a": {"b": [1, 2]}, "n": null});
    let cases = [
        ("object.a.b[1]", "2"),
        ("object.a.c", "error: no such key: c"),
        ("object.a.b[5]", "error: index out of bounds: 5"),
        ("object.a.b[-1]", "error: index out of bounds: -1"),
        ("object.a['b'][0]", "1"),
        ("object.a['x']", "error: no such key: x"),
        ("object.n.x", "error: no such key: x"),
        ("has(object.a)", "true"),
        ("has(object.x)", "false"),
        ("has(object.n.x)", "false"),
        ("has(object.a.b)", "true"),
        ("object.?a.b", "optional.of([1, 2])"),
        ("object.?x.b", "optional.none()"),
        ("object.?x.b.orValue(0)", "0"),
        ("object.a.b[?5]", "optional.none()"),
        ("object.a.b[?0]", "optional.of(1)"),
        ("missing", "error: no such attribute(s): missing"),
        ("type(object) == map", "true"),
        ("type(1) == int", "true"),
        ("type(object.a.b)", "list"),
    ];
    let mut bad = Vec::new();
    for (e, want) in cases {
        let got = run_with(e, &obj).0;
        if got != want {
            bad.push(format!("{e}: want {want}, got {got}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Conversions (cel-go common/types/*.go ConvertToType).
#[test]
fn conversions() {
    check(&[
        ("string(1e6)", "\"1e+06\""),
        ("string(1.0)", "\"1\""),
        ("string(1e-5)", "\"1e-05\""),
        ("string(1.5)", "\"1.5\""),
        ("string(duration('1m'))", "\"60s\""),
        ("string(duration('1.5s'))", "\"1.5s\""),
        ("string(timestamp('2009-02-13T23:31:30.120Z'))", "\"2009-02-13T23:31:30.12Z\""),
        ("string(timestamp('2009-02-13T23:31:30+01:00'))", "\"2009-02-13T23:31:30+01:00\""),
        ("int('42')", "42"),
        ("int('x')", "error: type conversion error from 'string' to 'int'"),
        ("int(1e20)", "error: integer overflow"),
        ("int(-1.9)", "-1"),
        ("uint(-1)", "error: unsigned integer overflow"),
        ("double('1.5')", "1.5"),
        ("bool('true')", "true"),
        ("bool('yes')", "error: type conversion error from 'string' to 'bool'"),
        ("string(b'abc')", "\"abc\""),
        ("bytes('abc')", "b\"abc\""),
        ("int(timestamp('1970-01-01T00:01:00Z'))", "60"),
        (
            "duration('1d')",
            "error: type conversion error from 'string' to 'google.protobuf.Duration'",
        ),
        ("dyn([1])", "[1]"),
        ("type(dyn(1u))", "uint"),
    ]);
}

/// Timestamps and durations (cel-go common/types/timestamp.go, duration.go).
#[test]
fn time() {
    check(&[
        ("timestamp('2009-02-13T23:31:30Z').getFullYear()", "2009"),
        ("timestamp('2009-02-13T23:31:30Z').getMonth()", "1"),
        ("timestamp('2009-02-13T23:31:30Z').getDate()", "13"),
        ("timestamp('2009-02-13T23:31:30Z').getDayOfMonth()", "12"),
        ("timestamp('2009-02-13T23:31:30Z').getDayOfWeek()", "5"),
        ("timestamp('2009-02-13T23:31:30Z').getDayOfYear()", "43"),
        ("timestamp('2009-02-13T23:31:30Z').getHours()", "23"),
        ("timestamp('2009-02-13T23:31:30Z').getHours('+05:30')", "5"),
        ("timestamp('2009-02-13T23:31:30Z').getMinutes('+05:30')", "1"),
        ("timestamp('2009-02-13T23:31:30Z').getHours('-08:00')", "15"),
        ("timestamp('2009-02-13T23:31:30Z').getHours('America/New_York')", "18"),
        ("timestamp('2009-07-13T23:31:30Z').getHours('America/New_York')", "19"),
        ("timestamp('2009-02-13T23:31:30.123Z').getMilliseconds()", "123"),
        ("duration('1h30m').getMinutes()", "90"),
        ("duration('1h30m').getHours()", "1"),
        ("duration('1.5s').getMilliseconds()", "1500"),
        (
            "timestamp('2009-02-13T23:31:30Z') + duration('1h')",
            "timestamp(\"2009-02-14T00:31:30Z\")",
        ),
        (
            "timestamp('2009-02-13T23:31:30Z') - timestamp('2009-02-13T23:30:30Z')",
            "duration(\"60s\")",
        ),
        ("timestamp('9999-12-31T23:59:59Z') + duration('1s')", "error: timestamp overflow"),
        ("duration('1s') < duration('2s')", "true"),
    ]);
}

/// cel-go ext/strings.go (v2) and the pre-spec formatter (ext/formatting.go).
/// Indexes, offsets and counts past 2^32 are int64s to the end: on wasm32 `as usize` wrapped them
/// (`[1, 2][4294967296]` was 1 in the package). Also run under wasm by `cargo test --target
/// wasm32-unknown-unknown` and tests/node/api.test.mjs.
#[test]
fn int64_indexes_and_counts_past_u32() {
    check(&[
        ("[1, 2][4294967296]", "error: index out of bounds: 4294967296"),
        ("[1, 2][4294967297u]", "error: index out of bounds: 4294967297"),
        ("[1, 2][?4294967296].orValue(7)", "7"),
        ("[1, 2, 3].slice(0, 4294967297)", "error: cannot slice(0, 4294967297), list is length 3"),
        ("'abc'.indexOf('b', 4294967296)", "error: index out of range: 4294967296"),
        ("'abc'.lastIndexOf('b', 4294967297)", "error: index out of range: 4294967297"),
        ("'a,b,c'.split(',', 4294967296)", "[\"a\", \"b\", \"c\"]"),
        ("'abc'.split('', 4294967297)", "[\"a\", \"b\", \"c\"]"),
        ("'xxx'.replace('x', 'y', 4294967297)", "\"yyy\""),
        ("'xxx'.replace('', '-', 4294967296)", "\"-x-x-x-\""),
    ]);
}

#[test]
fn strings() {
    check(&[
        ("'hello'.charAt(1)", "\"e\""),
        ("'hello'.charAt(5)", "\"\""),
        ("'hello'.charAt(6)", "error: index out of range: 6"),
        ("'hello mellow'.indexOf('ello', 2)", "7"),
        ("'hello'.indexOf('')", "0"),
        ("'abc'.indexOf('b', 4)", "error: index out of range: 4"),
        ("'hello mellow'.lastIndexOf('ello')", "7"),
        ("'hello mellow'.lastIndexOf('ello', 6)", "1"),
        ("'TacoCat'.lowerAscii()", "\"tacocat\""),
        ("'TacoCat'.upperAscii()", "\"TACOCAT\""),
        ("'  a b \\t'.trim()", "\"a b\""),
        ("'hello hello'.replace('he', 'we')", "\"wello wello\""),
        ("'hello hello'.replace('he', 'we', 1)", "\"wello hello\""),
        ("'a,b,c'.split(',')", "[\"a\", \"b\", \"c\"]"),
        ("'a,b,c'.split(',', 2)", "[\"a\", \"b,c\"]"),
        ("'a,b,c'.split(',', 0)", "[]"),
        ("'tacocat'.substring(4)", "\"cat\""),
        ("'tacocat'.substring(1, 3)", "\"ac\""),
        ("'tacocat'.substring(3, 1)", "error: invalid substring range. start: 3, end: 1"),
        ("'tacocat'.substring(8)", "error: index out of range: 8"),
        ("['a', 'b'].join('-')", "\"a-b\""),
        ("['a', 'b'].join()", "\"ab\""),
        ("strings.quote('a\"b\\n')", "\"\\\"a\\\\\\\"b\\\\n\\\"\""),
        ("'%s is %d'.format(['x', 3])", "\"x is 3\""),
        ("'%.3f'.format([1.0])", "\"1.000\""),
        ("'%s'.format([[1, 'a', null]])", "\"[1, \\\"a\\\", null]\""),
        ("'abc'.contains('b')", "true"),
        ("'abc'.startsWith('ab')", "true"),
        ("'abc'.endsWith('bc')", "true"),
        ("'abc'.matches('^a.c$')", "true"),
        ("'xabcx'.matches('abc')", "true"),
        ("size('héllo')", "5"),
    ]);
}

/// cel-go ext/lists.go (v3), ext/sets.go, optional library, two-variable comprehensions.
#[test]
fn lists_sets_optionals() {
    check(&[
        ("[1, 2, 3].slice(1, 2)", "[2]"),
        (
            "[1, 2].slice(1, 0)",
            "error: cannot slice(1, 0), start index must be less than or equal to end index",
        ),
        ("[1, [2, [3]]].flatten()", "[1, 2, [3]]"),
        ("[1, [2, [3]]].flatten(2)", "[1, 2, 3]"),
        ("[1].flatten(-1)", "error: level must be non-negative"),
        ("[3, 1, 2].sort()", "[1, 2, 3]"),
        ("['b', 'a'].sort()", "[\"a\", \"b\"]"),
        ("[1, 'a'].sort()", "error: list elements must have the same type"),
        ("[{'n': 2}, {'n': 1}].sortBy(e, e.n)", "[{\"n\": 1}, {\"n\": 2}]"),
        ("lists.range(3)", "[0, 1, 2]"),
        ("[1, 2].reverse()", "[2, 1]"),
        ("[1, 1.0, 2, 2].distinct()", "[1, 2]"),
        ("lists.range(1000000000)", "error: operation cancelled: actual cost limit exceeded"),
        ("sets.contains([1, 2], [2])", "true"),
        ("sets.equivalent([1], [1.0, 1])", "true"),
        ("sets.intersects([1], [2])", "false"),
        ("optional.of(1).value()", "1"),
        ("optional.none().value()", "error: optional.none() dereference"),
        ("optional.ofNonZeroValue('')", "optional.none()"),
        // cel-go Timestamp.IsZeroValue is Go's time.Time.IsZero (year 1), not the epoch; an
        // optional has no zero value (cel-go common/types/timestamp.go, optional.go).
        ("optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00Z')).hasValue()", "false"),
        ("optional.ofNonZeroValue(timestamp('0001-01-01T01:00:00+01:00')).hasValue()", "false"),
        ("optional.ofNonZeroValue(timestamp(0)).hasValue()", "true"),
        ("optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00.000000001Z')).hasValue()", "true"),
        ("optional.ofNonZeroValue(optional.none()).hasValue()", "true"),
        ("optional.ofNonZeroValue(duration('0s')).hasValue()", "false"),
        ("optional.ofNonZeroValue(null).hasValue()", "false"),
        ("optional.none().or(optional.of(2))", "optional.of(2)"),
        ("optional.none().orValue(3)", "3"),
        ("optional.of(1).hasValue()", "true"),
        ("[1, 2].first()", "optional.of(1)"),
        ("[].last()", "optional.none()"),
        ("optional.unwrap([optional.of(1), optional.none()])", "[1]"),
        ("[optional.of(1), optional.none()].unwrapOpt()", "[1]"),
        ("optional.of(2).optMap(x, x * 2)", "optional.of(4)"),
        ("optional.none().optMap(x, x * 2)", "optional.none()"),
        ("optional.of(2).optFlatMap(x, optional.of(x + 1))", "optional.of(3)"),
        ("[?optional.of(1), ?optional.none(), 2]", "[1, 2]"),
        ("{?'a': optional.of(1), ?'b': optional.none()}", "{\"a\": 1}"),
        ("{'a': 1}.?a", "optional.of(1)"),
        ("{'a': 1}[?'b']", "optional.none()"),
        ("[1, 2].map(x, x * 2)", "[2, 4]"),
        ("[1, 2, 3].filter(x, x > 1)", "[2, 3]"),
        ("[1, 2, 3].map(x, x > 1, x * 10)", "[20, 30]"),
        ("[1, 2, 3].exists_one(x, x > 2)", "true"),
        ("{'a': 1, 'b': 2}.all(k, v, v > 0)", "true"),
        ("[10, 20].exists(i, v, i == 1 && v == 20)", "true"),
        ("[1, 2].transformList(i, v, v + i)", "[1, 3]"),
        ("{'a': 1}.transformMap(k, v, v + 1)", "{\"a\": 2}"),
        (
            "{'a': 1, 'b': 2}.transformMapEntry(k, v, {'x': v})",
            "error: insert failed: key x already exists",
        ),
        ("[1, 2].transformMapEntry(i, v, {string(v): i})", "{\"1\": 0, \"2\": 1}"),
        ("{'a': 1}.map(k, k)", "[\"a\"]"),
    ]);
}

#[test]
fn spans_on_errors() {
    let src = "1 + (2 / 0)";
    let p = program(src);
    let e = p.eval(&Bindings::new(), &mut CostTracker::default()).unwrap_err();
    assert_eq!(e.message, "division by zero");
    assert_eq!(&src[e.span.start as usize..e.span.end as usize], "2 / 0");
}

/// Spec §8.1 cost goldens (Kubernetes condition_test.go), plus cel-go runtimecost.go points.
#[test]
fn cost_goldens() {
    let subsets: Json = serde_json::json!({"subsets": [1, 2, 3]});
    for (expr, obj, want) in [
        ("oldObject != null", &Json::Null, 2),
        ("object.subsets.size() > 2", &subsets, 4),
        ("true", &Json::Null, 0),
        ("size('abc 123 def 123'.split(' ')) > 0", &Json::Null, 5),
        ("size(['aa','bb','cc','d','e','f','g','h','i','j'].join(' ')) > 0", &Json::Null, 7),
        ("object.subsets", &subsets, 2),
        ("has(object.subsets)", &subsets, 1),
        ("[1, 2, 3][0]", &Json::Null, 2),
    ] {
        let (out, cost) = run_with(expr, obj);
        assert!(!out.starts_with("error"), "{expr}: {out}");
        assert_eq!(cost, want, "{expr}");
    }
}

/// `!x` costs what the call of `logical_not` costs: 1 after its operand, also when the operand
/// fails (an error `||` may absorb) or is not a bool (`no such overload`).
#[test]
fn logical_not_costs() {
    let obj: Json = serde_json::json!({"a": {"b": true}, "s": "x"});
    for (expr, want_out, want_cost) in [
        ("!true", "false", 1),
        ("!has(object.a)", "false", 2),
        ("!has(object.c)", "true", 2),
        ("!object.a.b", "false", 4),
        ("!(1 / 0 == 1) || true", "true", 3),
        ("!(1 / 0 == 1)", "error: division by zero", 3),
        ("!object.nope", "error: no such key: nope", 3),
        ("!dyn(object.s)", "error: no such overload", 4),
        ("[1, 2].exists(x, x > 1)", "true", 13),
        ("[object.a, object.s].exists(x, !x.b)", "error: no such key: b", 29),
    ] {
        let (out, cost) = run_with(expr, &obj);
        assert_eq!((out.as_str(), cost), (want_out, want_cost), "{expr}");
    }
}

/// `all`'s and `exists`'s loop condition: results, costs, and where a cost limit cancels
/// (the error's node), at every limit up to the whole evaluation's cost.
#[test]
fn fold_condition_costs() {
    let mut got = Vec::new();
    for expr in [
        "[1, 2, 3].all(x, x > 0)",
        "[1, 2, 3].all(x, x > 1)",
        "[1, 2, 3].exists(x, x > 1)",
        "[1, 2, 3].exists(x, x > 5)",
        "[0, 1].all(x, 1 / x > 0)",
        "[0, 1].exists(x, 1 / x > 0)",
        "[0, 1, 2].all(x, 1 / x < 0)",
        "['a', 1].all(x, x)",
        "['a', 1].exists(x, x)",
        "[[1, 2], [3]].all(x, x.all(y, y > 0))",
        "[[1, 2], [3]].exists(x, x.exists(y, y > 2))",
    ] {
        let p = program(expr);
        let mut full = CostTracker::unlimited();
        let _ = p.eval(&Bindings::new(), &mut full);
        for limit in 0..=full.actual_cost() + 1 {
            let mut cost = CostTracker::new(Some(limit));
            let out = match p.eval(&Bindings::new(), &mut cost) {
                Ok(v) => v.debug_string(),
                Err(e) => format!("error at {}: {}", e.node, e.message),
            };
            got.push(format!("{expr} limit {limit}: {out}, cost {}", cost.actual_cost()));
        }
    }
    // Recorded before `Fold::cond_accu` read the condition from the slot (the call path).
    let want = include_str!("fold_condition_costs.txt");
    assert_eq!(got.join("\n"), want.trim_end());
}

#[test]
fn cost_limit_cancels() {
    let p = program("lists.range(2000).map(x, lists.range(2000).map(y, x + y)).size()");
    let mut cost = CostTracker::default();
    let e = p.eval(&Bindings::new(), &mut cost).unwrap_err();
    assert_eq!(e.message, "operation cancelled: actual cost limit exceeded");
    assert!(cost.actual_cost() > 1_000_000);
    // Not absorbed by `||`.
    let p = program("true || lists.range(2000).map(x, lists.range(2000).map(y, x)).size() > 0");
    assert!(p.eval(&Bindings::new(), &mut CostTracker::default()).is_ok());
    let p = program("lists.range(2000).map(x, lists.range(2000).map(y, x)).size() > 0 || true");
    assert!(p.eval(&Bindings::new(), &mut CostTracker::default()).is_err());
}

/// (id, expression, expected result).
type BenchCase = (String, String, Json);

fn bench_inputs() -> Option<(Json, Vec<BenchCase>)> {
    // `shared/` sits beside the repository (`../shared`); from a worktree under `wt/` it is
    // one level further up.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = ["../shared/bench", "../../shared/bench"]
        .iter()
        .map(|d| root.join(d))
        .find(|d| d.is_dir())?;
    let dep = std::fs::read_to_string(dir.join("deployment.json")).ok()?;
    let exprs = std::fs::read_to_string(dir.join("expressions.json")).ok()?;
    let dep: Json = serde_json::from_str(&dep).ok()?;
    let exprs: Json = serde_json::from_str(&exprs).ok()?;
    let list = exprs
        .as_array()?
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap_or("").to_string(),
                e["expr"].as_str().unwrap_or("").to_string(),
                e["expect"].clone(),
            )
        })
        .collect();
    Some((dep, list))
}

#[test]
fn bench_expressions() {
    let Some((dep, exprs)) = bench_inputs() else {
        eprintln!("skipped: ../shared/bench not found next to the crate");
        return;
    };
    for (id, expr, expect) in &exprs {
        let p = program(expr);
        let act = Bindings::new().with("object", Value::from_json(&dep));
        let mut cost = CostTracker::default();
        let v = p.eval(&act, &mut cost).unwrap_or_else(|e| panic!("{id}: {}", e.message));
        assert_eq!(v.to_json(), *expect, "{id}");
    }
}

/// `cargo test --release --test runtime -- --ignored --nocapture perf`
#[test]
#[ignore]
fn perf() {
    let Some((dep, exprs)) = bench_inputs() else {
        return;
    };
    let mut total = 0.0;
    for (id, expr, _) in &exprs {
        let p = program(expr);
        let act = Bindings::new().with("object", Value::from_json(&dep));
        let n = 20_000;
        let start = Instant::now();
        let mut last_cost = 0;
        for _ in 0..n {
            let mut cost = CostTracker::default();
            let v = p.eval(&act, &mut cost);
            std::hint::black_box(&v);
            last_cost = cost.actual_cost();
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / n as f64;
        total += us;
        println!("{id:32} {us:8.3} µs  cost {last_cost}");
    }
    println!("{:32} {total:8.3} µs", "Σ14");
}

/// `tests/overload_ids.txt` lists every overload id the runtime implements, for the
/// cross-check against the declarations. Registry ids must match it exactly; ids the planner
/// implements itself (operators that are not plain calls) are listed after `# planner`.
#[test]
fn overload_id_list() {
    let text = include_str!("overload_ids.txt");
    let mut listed: Vec<&str> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line == "# planner" {
            break;
        }
        if !line.is_empty() && !line.starts_with('#') {
            listed.push(line);
        }
    }
    let ids = Registry::standard().ids();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let planner = text.split_once("# planner").map(|(_, p)| p).unwrap_or("\n");
        let mut out = String::from("# Overload ids implemented by the runtime (cel-go ids), one per line.\n# Regenerate: UPDATE_EXPECT=1 cargo test --test runtime overload_id_list\n");
        for id in &ids {
            out.push_str(id);
            out.push('\n');
        }
        out.push_str("# planner");
        out.push_str(planner);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/overload_ids.txt");
        std::fs::write(path, out).ok();
        return;
    }
    assert_eq!(listed, ids);
}

/// Hostile inputs produce errors, never panics.
#[test]
fn no_panics_on_hostile_input() {
    for e in [
        "timestamp('2009-02-13T23:31:30Z').getHours('+99999999999999:99')",
        "timestamp('2009-02-13T23:31:30Z').getHours('x:y')",
        "timestamp('2009-02-13T23:31:30Z').getHours('Not/AZone')",
        "'é'.substring(0, 1) + 'é'.charAt(1)",
        "'%.999999999f'.format([1.0])",
        "duration('9999999999999999999h')",
        "timestamp('0000-01-01T00:00:00Z')",
        "timestamp('2009-02-13T23:31:30Z') - timestamp('0001-01-01T00:00:00Z')",
        "-9223372036854775808 * -1",
        "[[[[1]]]].flatten(9223372036854775807)",
        "lists.range(-5).size()",
        "{'a': 1}[[]]",
        "[1][1u]",
        "'a'.matches('(')",
        "double('1e400')",
        "uint(1e20)",
    ] {
        let _ = run(e);
    }
    assert!(run("'a'.matches('(')").starts_with("error: error parsing regexp"));
}
