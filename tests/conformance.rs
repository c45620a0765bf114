//! The cel-spec conformance suites (npm `@bufbuild/cel-spec`, see `tests/conformance/README.md`)
//! run through our pipeline: parse → check → plan → evaluate.
//!
//! Every test that needs no protobuf message is run. Each yields up to two *checks*:
//! - the result (`file/section/name`): the value or error an `eval` test expects, that a `check`
//!   test compiles (or fails to), that a `parse` test parses (or fails to) into cel-go's AST;
//! - the static type (`file/section/name @type`), when the suite gives one: the checker's output
//!   type must be the expected type.
//!
//! `tests/conformance/skip.txt` lists the checks known to fail, under `# Reason` headings, like
//! cel-go's `_TESTS_TO_SKIP`. The test fails when a check not in the list fails (a regression)
//! **and** when a listed check passes (the list would be lying); `UPDATE_EXPECT=1` rewrites the
//! list (keeping each surviving entry under its heading, adding new failures under an automatic
//! heading) and `tests/conformance/summary.md`, whose staleness also fails the test.

use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use vap_eval::cel::ast::{Ast, Expr, ExprKind, Literal};
use vap_eval::cel::checker::{self, CheckOptions};
use vap_eval::cel::compile::runtime_refs;
use vap_eval::cel::decls::{Declarations, OverloadDecl};
use vap_eval::cel::parser::{parse, ParseOptions};
use vap_eval::cel::runtime::{plan, Bindings, CostTracker, PlanOptions, Reference};
use vap_eval::cel::stdlib::{time as celtime, Registry};
use vap_eval::cel::stdlib_decls::{self, LibraryVersions};
use vap_eval::cel::types::Type;
use vap_eval::cel::value::{Key, OwnedMap, Value};

/// The cel-spec suites expect conversions of constants to fail at evaluation: cel-go's planner
/// without `OptOptimize`.
const UNOPTIMIZED: PlanOptions = PlanOptions { k8s_cost: true, optimize: false };

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

fn load_suites() -> Json {
    let path = dir().join(".cache/suites.json");
    if !path.exists() {
        let have_modules = dir().join("node_modules/@bufbuild/cel-spec").exists();
        if have_modules {
            let status = std::process::Command::new("node").arg(dir().join("extract.mjs")).status();
            if !matches!(status, Ok(s) if s.success()) {
                panic!(
                    "tests/conformance/.cache/suites.json is missing and `node extract.mjs` failed"
                );
            }
        } else {
            panic!(
                "tests/conformance/.cache/suites.json is missing. Produce it with\n  \
                 cd tests/conformance && npm ci && node extract.mjs\n\
                 (scripts/test.sh does this before `cargo test`)"
            );
        }
    }
    let text = std::fs::read_to_string(&path).expect("read suites.json");
    serde_json::from_str(&text).expect("parse suites.json")
}

// ---------------------------------------------------------------------------------------------
// Types and values from the suite's JSON

/// A type in cel-go's string form (`list(int)`, `map(string, dyn)`, `T`, `tuple(T, U)`).
fn parse_type(s: &str, params: &HashSet<String>) -> Type {
    let s = s.trim();
    let (name, args) = match s.find('(') {
        Some(i) if s.ends_with(')') => (&s[..i], split_args(&s[i + 1..s.len() - 1])),
        _ => (s, Vec::new()),
    };
    let arg = |i: usize| args.get(i).map(|a| parse_type(a, params)).unwrap_or(Type::Dyn);
    match (name, args.len()) {
        ("int", 0) => Type::Int,
        ("uint", 0) => Type::Uint,
        ("double", 0) => Type::Double,
        ("bool", 0) => Type::Bool,
        ("string", 0) => Type::String,
        ("bytes", 0) => Type::Bytes,
        ("null" | "null_type", 0) => Type::Null,
        ("dyn" | "any", 0) => Type::Dyn,
        ("timestamp" | "google.protobuf.Timestamp", 0) => Type::Timestamp,
        ("duration" | "google.protobuf.Duration", 0) => Type::Duration,
        ("list", _) => Type::list(arg(0)),
        ("map", _) => Type::map(arg(0), arg(1)),
        ("optional_type", _) => Type::optional(arg(0)),
        ("type", _) => Type::type_of(arg(0)),
        (n, 0)
            if params.contains(n)
                || (n.len() == 1 && n.chars().all(|c| c.is_ascii_uppercase())) =>
        {
            Type::param(n)
        }
        (n, 0) if n.contains('.') => Type::object(n),
        (n, _) => Type::Opaque(Rc::from(n), args.iter().map(|a| parse_type(a, params)).collect()),
    }
}

fn split_args(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

/// A type as the suites write it (cel-go's `FormatCelType`, `*error*` for errors).
fn type_string(t: &Type) -> String {
    match t {
        Type::Error => "*error*".into(),
        t => checker::format_cel_type(t),
    }
}

/// A tagged value (see the README) as a runtime value.
fn tagged_value(j: &Json) -> Result<Value<'static>, String> {
    let obj = j.as_object().ok_or("tagged value is not an object")?;
    let (tag, v) = obj.iter().next().ok_or("empty tagged value")?;
    let str_of = |v: &Json| v.as_str().map(str::to_string).ok_or(format!("bad {tag}"));
    Ok(match tag.as_str() {
        "int" => Value::Int(str_of(v)?.parse().map_err(|e| format!("int: {e}"))?),
        "uint" => Value::Uint(str_of(v)?.parse().map_err(|e| format!("uint: {e}"))?),
        "double" => Value::Double(match v {
            Json::String(s) => match s.as_str() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                "-0" => -0.0,
                s => s.parse().map_err(|e| format!("double: {e}"))?,
            },
            n => n.as_f64().ok_or("double")?,
        }),
        "string" => Value::string(str_of(v)?),
        "bytes" => {
            use base64::Engine;
            let b = base64::engine::general_purpose::STANDARD
                .decode(str_of(v)?)
                .map_err(|e| format!("bytes: {e}"))?;
            Value::Bytes(Rc::from(b))
        }
        "bool" => Value::Bool(v.as_bool().ok_or("bool")?),
        "null" => Value::Null,
        "list" => Value::list(
            v.as_array().ok_or("list")?.iter().map(tagged_value).collect::<Result<_, _>>()?,
        ),
        "map" => {
            let mut m = OwnedMap::new();
            for e in v.as_array().ok_or("map")? {
                let k = tagged_value(&e[0])?;
                let key = Key::from_value(&k).ok_or(format!("bad map key {k:?}"))?;
                m.insert(key, tagged_value(&e[1])?);
            }
            Value::map(m)
        }
        "type" => Value::type_value(&str_of(v)?),
        "duration" => Value::Duration(celtime::parse_duration(&str_of(v)?).ok_or("bad duration")?),
        "timestamp" => {
            Value::timestamp(celtime::parse_rfc3339(&str_of(v)?).ok_or("bad timestamp")?)
        }
        other => return Err(format!("unsupported tagged value '{other}'")),
    })
}

/// Equality that is exact about types (int, uint and double never equal each other), treats
/// NaN as equal to NaN and compares maps without regard to order.
fn same_value(a: &Value<'_>, b: &Value<'_>) -> bool {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => x == y,
        (Uint(x), Uint(y)) => x == y,
        (Double(x), Double(y)) => (x.is_nan() && y.is_nan()) || x == y,
        (List(x), List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same_value(&p, &q))
        }
        (Map(x), Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.iter().any(|(k2, v2)| same_value(&k, &k2) && same_value(&v, &v2))
                })
        }
        (Optional(Some(x)), Optional(Some(y))) => same_value(x, y),
        (Int(_) | Uint(_) | Double(_), _) | (_, Int(_) | Uint(_) | Double(_)) => false,
        (List(_) | Map(_) | Optional(_), _) | (_, List(_) | Map(_) | Optional(_)) => a.equals(b),
        _ => a.type_name() == b.type_name() && a.equals(b),
    }
}

// ---------------------------------------------------------------------------------------------
// Running one test

/// The environment every test starts from: the standard library and every extension we have.
struct Env {
    decls: Declarations,
    registry: Registry,
}

impl Env {
    fn new() -> Env {
        let mut decls = Declarations::default();
        stdlib_decls::standard(&mut decls, &LibraryVersions::all());
        Env { decls, registry: Registry::standard() }
    }
}

fn test_decls(env: &Env, t: &Json) -> Declarations {
    let mut decls = env.decls.clone();
    for d in t["typeEnv"].as_array().into_iter().flatten() {
        let name = d["name"].as_str().unwrap_or_default();
        if let Some(ty) = d["type"].as_str() {
            decls.add_variable(name, parse_type(ty, &HashSet::new()));
        }
        for o in d["function"].as_array().into_iter().flatten() {
            let params: HashSet<String> = o["typeParams"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect();
            let ps = o["params"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| parse_type(p.as_str().unwrap_or("dyn"), &params))
                .collect();
            let result = parse_type(o["result"].as_str().unwrap_or("dyn"), &params);
            let id = o["id"].as_str().unwrap_or_default();
            let decl = if o["receiver"].as_bool() == Some(true) {
                OverloadDecl::member(id, ps, result)
            } else {
                OverloadDecl::global(id, ps, result)
            };
            decls.add_overload(name, decl);
        }
    }
    decls
}

/// The outcome of one check.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Pass,
    Fail(String),
    /// Nothing meaningful to assert (see the reason).
    NotRun(String),
}

const PARSER_OPTION: &str = "Not run: the expectation depends on a parser option of cel-go's test \
                             that we do not have (optional syntax off, recursion limit 32)";
const UNEXPANDED: &str = "Not run: cel-go/comprehensions recorded the AST without the \
                          two-variable macros; with them cel-go rejects the expression as we do";
/// Errors of a macro's argument checks (cel-go `ext/comprehensions.go`).
const MACRO_ARGUMENT_ERRORS: &[&str] =
    &["argument must be a simple name", "duplicate variable name"];

const LACKS_DECLS: &str = "Not run: cel-go/checking does not carry the original test's \
                           declarations (cel-go resolved a name we have no declaration for)";

struct Ran {
    result: Outcome,
    /// `Some` when the test gives an expected type (and checking ran or was attempted).
    type_check: Option<Outcome>,
}

fn fail(msg: impl Into<String>) -> Outcome {
    Outcome::Fail(msg.into())
}

fn run_test(env: &Env, t: &Json) -> Ran {
    let expr = t["expr"].as_str().unwrap_or_default();
    let mode = t["mode"].as_str().unwrap_or("eval");
    let expected = &t["expected"];
    let expected_type = t["expectedType"].as_str();
    let mut ran = Ran { result: Outcome::Pass, type_check: None };
    let type_fail = |ran: &mut Ran, why: &str| {
        if expected_type.is_some() {
            ran.type_check = Some(fail(why));
        }
    };

    let expected_error = expected["error"].as_str().unwrap_or_default();
    if expected_error.contains("unsupported syntax: '`'") {
        // cel-go ran this test without backtick identifiers: so can we.
        let options = ParseOptions { backtick_identifiers: false };
        ran.result = match parse(expr, options) {
            Err(_) => Outcome::Pass,
            Ok(_) => fail("parsed without backtick identifiers, but cel-go reports an error"),
        };
        return ran;
    }
    if expected_error.contains("unsupported syntax '")
        || expected_error.contains("recursion limit exceeded: 32")
        || (mode == "parse" && expected_error.contains("max recursion depth exceeded"))
    {
        ran.result = Outcome::NotRun(PARSER_OPTION.into());
        return ran;
    }
    if mode == "parse" {
        ran.result = match (parse(expr, ParseOptions::default()), expected.get("ast")) {
            (Ok(_), None) => fail("parsed, but cel-go reports a parse error"),
            (Err(e), Some(_))
                if t["file"] == "cel-go/comprehensions"
                    && MACRO_ARGUMENT_ERRORS.iter().any(|m| first_message(&e).contains(m)) =>
            {
                Outcome::NotRun(UNEXPANDED.into())
            }
            (Err(e), Some(_)) => fail(format!("parse error: {}", first_message(&e))),
            (Err(_), None) => Outcome::Pass,
            (Ok(ast), Some(want)) => {
                // cel-go's own harness for the two-variable comprehension suite had no such
                // macros, so its AST is the unexpanded call: only parsing is asserted there.
                let got = debug_string(&ast);
                if t["file"] == "cel-go/comprehensions" || want.as_str() == Some(got.as_str()) {
                    Outcome::Pass
                } else {
                    fail("AST differs from cel-go's")
                }
            }
        };
        return ran;
    }
    if t["disableMacros"].as_bool() == Some(true) {
        ran.result = fail("disableMacros is not supported");
        return ran;
    }
    if t.get("container").is_some_and(|c| c.is_string()) {
        ran.result = fail("containers are not supported");
        type_fail(&mut ran, "containers are not supported");
        return ran;
    }

    let ast = match parse(expr, ParseOptions::default()) {
        Ok(ast) => ast,
        Err(e) => {
            let why = format!("parse error: {}", first_message(&e));
            type_fail(&mut ran, &why);
            ran.result = if mode == "check" && expected.get("error").is_some() {
                Outcome::Pass
            } else {
                fail(why)
            };
            return ran;
        }
    };

    let check_disabled = t["disableCheck"].as_bool() == Some(true);
    let mut refs: Option<Vec<Option<Reference>>> = None;
    if !check_disabled || mode == "check" || expected_type.is_some() {
        let decls = test_decls(env, t);
        // cel-go's defaults, not Kubernetes' extra validators: the suites expect mixed literals
        // (`[1, 'a']`) to compile and invalid duration strings to fail at run time.
        let options = CheckOptions {
            homogeneous_literals: false,
            literal_validators: false,
            regex_validator: Some(regex_compiles),
            ..Default::default()
        };
        let checked = checker::check(&ast, &decls, &options);
        let errors: Vec<&str> = checked.errors.iter().map(|e| e.message.as_str()).collect();
        if t["file"] == "cel-go/checking" && errors.iter().any(|e| undeclared_but_resolved(e, t)) {
            ran.result = Outcome::NotRun(LACKS_DECLS.into());
            ran.type_check = None;
            return ran;
        }
        if let Some(want) = expected_type {
            ran.type_check = Some(if !errors.is_empty() {
                fail(format!("check error: {}", errors[0]))
            } else {
                let got = type_string(checked.output_type(&ast));
                if got == want {
                    Outcome::Pass
                } else {
                    fail(format!("type {got}, want {want}"))
                }
            });
        }
        if mode == "check" {
            ran.result = match (errors.first(), expected.get("error")) {
                (None, None) => Outcome::Pass,
                (Some(_), Some(_)) => Outcome::Pass,
                (None, Some(_)) => fail("checked, but an error was expected"),
                (Some(e), None) => fail(format!("check error: {e}")),
            };
            return ran;
        }
        if !check_disabled {
            if let Some(e) = errors.first() {
                ran.result = fail(format!("check error: {e}"));
                return ran;
            }
            refs = Some(runtime_refs(&checked));
        }
    }

    let program = match plan(&ast, refs.as_deref(), &env.registry, UNOPTIMIZED) {
        Ok(p) => p,
        Err(e) => {
            ran.result = fail(format!("plan error: {}", e.message));
            return ran;
        }
    };
    let mut bindings = Bindings::new();
    for (name, v) in t["bindings"].as_object().into_iter().flatten() {
        match tagged_value(v) {
            Ok(v) => bindings = bindings.with(name, v),
            Err(e) => {
                ran.result = fail(format!("binding {name}: {e}"));
                return ran;
            }
        }
    }
    let got = program.eval(&bindings, &mut CostTracker::unlimited());
    ran.result = if let Some(want) = expected.get("value") {
        match (got, tagged_value(want)) {
            (_, Err(e)) => fail(format!("expected value: {e}")),
            (Ok(v), Ok(w)) if same_value(&v, &w) => Outcome::Pass,
            (Ok(v), Ok(w)) => fail(format!("got {v:?}, want {w:?}")),
            (Err(e), Ok(w)) => fail(format!("error '{}', want {w:?}", e.message)),
        }
    } else if expected.get("evalError").is_some() {
        match got {
            Err(_) => Outcome::Pass,
            Ok(v) => fail(format!("got {v:?}, want an error")),
        }
    } else {
        fail(format!("unsupported expectation {expected}"))
    };
    ran
}

/// An "undeclared reference" error for a name cel-go's checked AST shows resolved.
fn undeclared_but_resolved(error: &str, t: &Json) -> bool {
    let Some(name) =
        error.strip_prefix("undeclared reference to '").and_then(|r| r.split('\'').next())
    else {
        return false;
    };
    let checked = t["celGo"]["checkedAst"].as_str().unwrap_or_default();
    checked.contains(&format!("{name}~")) || checked.contains(&format!("{name}("))
}

fn regex_compiles(re: &str) -> bool {
    vap_eval::library::regex::compile(re).is_ok()
}

fn first_message(e: &[vap_eval::cel::parser::ParseError]) -> String {
    e.first().map(|e| e.message.clone()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// cel-go's debug AST (`common/debug`, with the parser tests' kind adorner)

/// Go's `strconv.Quote`, as cel-go's debug printer quotes literals.
use vap_eval::library::gostr::quote_bytes as go_quote;

/// Go's `fmt.Sprintf("%v", float64)`.
fn go_float(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let e = format!("{d:e}"); // shortest digits: "1.5e3"
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..21).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        format!("{d}")
    }
}

struct DebugWriter {
    out: String,
    indent: usize,
    line_start: bool,
}

impl DebugWriter {
    fn new() -> Self {
        DebugWriter { out: String::new(), indent: 0, line_start: true }
    }
    fn append(&mut self, s: &str) {
        if self.line_start {
            self.line_start = false;
            for _ in 0..self.indent {
                self.out.push_str("  ");
            }
        }
        self.out.push_str(s);
    }
    fn line(&mut self) {
        self.out.push('\n');
        self.line_start = true;
    }
}

/// The node shapes cel-go's debug writer distinguishes.
enum Node<'x> {
    Lit(String, &'static str),
    Ident(&'x str),
    Select(Box<Node<'x>>, &'x str, bool),
    Call(Option<Box<Node<'x>>>, &'x str, Vec<Node<'x>>),
    List(Vec<Node<'x>>),
    /// Map (`type_name` None) or struct: entries (optional, key or field, value).
    Entries(Option<&'x str>, Vec<(bool, Result<Node<'x>, &'x str>, Node<'x>)>),
    Fold(Box<[Node<'x>; 5]>, [&'x str; 2], Option<&'x str>),
}

fn write_node(w: &mut DebugWriter, n: &Node<'_>) {
    let kind = match n {
        Node::Lit(s, kind) => {
            w.append(s);
            kind
        }
        Node::Ident(s) => {
            w.append(s);
            "*expr.Expr_IdentExpr"
        }
        Node::Select(op, field, test) => {
            write_node(w, op);
            w.append(".");
            w.append(field);
            if *test {
                w.append("~test-only~");
            }
            "*expr.Expr_SelectExpr"
        }
        Node::Call(target, f, args) => {
            if let Some(t) = target {
                write_node(w, t);
                w.append(".");
            }
            w.append(f);
            w.append("(");
            if !args.is_empty() {
                w.indent += 1;
                w.line();
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        w.append(",");
                        w.line();
                    }
                    write_node(w, a);
                }
                w.indent -= 1;
                w.line();
            }
            w.append(")");
            "*expr.Expr_CallExpr"
        }
        Node::List(elems) => {
            w.append("[");
            if !elems.is_empty() {
                w.line();
                w.indent += 1;
                for (i, a) in elems.iter().enumerate() {
                    if i > 0 {
                        w.append(",");
                        w.line();
                    }
                    write_node(w, a);
                }
                w.indent -= 1;
                w.line();
            }
            w.append("]");
            "*expr.Expr_ListExpr"
        }
        Node::Entries(type_name, entries) => {
            if let Some(t) = type_name {
                w.append(t);
            }
            w.append("{");
            if !entries.is_empty() {
                w.line();
                w.indent += 1;
                for (i, (opt, key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        w.append(",");
                        w.line();
                    }
                    if *opt {
                        w.append("?");
                    }
                    match key {
                        Ok(k) => write_node(w, k),
                        Err(field) => w.append(field),
                    }
                    w.append(":");
                    write_node(w, value);
                    w.append("^#*expr.Expr_CreateStruct_Entry#");
                }
                w.indent -= 1;
                w.line();
            }
            w.append("}");
            "*expr.Expr_StructExpr"
        }
        Node::Fold(parts, [iter, accu], iter2) => {
            let [range, init, cond, step, result] = &**parts;
            w.append("__comprehension__(");
            w.indent += 1;
            w.line();
            w.append("// Variable");
            w.line();
            w.append(iter);
            w.append(",");
            w.line();
            if let Some(v2) = iter2 {
                w.append(v2);
                w.append(",");
                w.line();
            }
            for (label, part, last) in [
                ("// Target", range, false),
                ("// Accumulator", range, false),
                ("// Init", init, false),
                ("// LoopCondition", cond, false),
                ("// LoopStep", step, false),
                ("// Result", result, true),
            ] {
                w.append(label);
                w.line();
                if label == "// Accumulator" {
                    w.append(accu);
                } else {
                    write_node(w, part);
                }
                if last {
                    w.append(")");
                } else {
                    w.append(",");
                    w.line();
                }
            }
            w.indent -= 1;
            "*expr.Expr_ComprehensionExpr"
        }
    };
    w.append("^#");
    w.append(kind);
    w.append("#");
}

fn node_string(n: &Node<'_>) -> String {
    let mut w = DebugWriter::new();
    write_node(&mut w, n);
    w.out
}

fn lit_node(l: &Literal) -> Node<'static> {
    match l {
        Literal::Null => Node::Lit("null".into(), "*expr.Constant_NullValue"),
        Literal::Bool(b) => Node::Lit(b.to_string(), "*expr.Constant_BoolValue"),
        Literal::Int(i) => Node::Lit(i.to_string(), "*expr.Constant_Int64Value"),
        Literal::Uint(u) => Node::Lit(format!("{u}u"), "*expr.Constant_Uint64Value"),
        Literal::Double(d) => Node::Lit(go_float(*d), "*expr.Constant_DoubleValue"),
        Literal::String(s) => Node::Lit(go_quote(s.as_bytes()), "*expr.Constant_StringValue"),
        Literal::Bytes(b) => Node::Lit(format!("b{}", go_quote(b)), "*expr.Constant_BytesValue"),
    }
}

/// Our AST as a debug node.
fn our_node(e: &Expr) -> Node<'_> {
    match &e.kind {
        ExprKind::Literal(l) => lit_node(l),
        ExprKind::Ident(n) => Node::Ident(n),
        ExprKind::Select { operand, field, test } => {
            Node::Select(Box::new(our_node(operand)), field, *test)
        }
        ExprKind::Call { function, target, args } => Node::Call(
            target.as_ref().map(|t| Box::new(our_node(t))),
            function,
            args.iter().map(our_node).collect(),
        ),
        ExprKind::List { elements, .. } => Node::List(elements.iter().map(our_node).collect()),
        ExprKind::Map { entries } => Node::Entries(
            None,
            entries
                .iter()
                .map(|en| (en.optional, Ok(our_node(&en.key)), our_node(&en.value)))
                .collect(),
        ),
        ExprKind::Struct { type_name, fields } => Node::Entries(
            Some(type_name),
            fields
                .iter()
                .map(|f| (f.optional, Err(f.field.as_str()), our_node(&f.value)))
                .collect(),
        ),
        ExprKind::Comprehension(c) => Node::Fold(
            Box::new([
                our_node(&c.iter_range),
                our_node(&c.accu_init),
                our_node(&c.loop_cond),
                our_node(&c.loop_step),
                our_node(&c.result),
            ]),
            [&c.iter_var, &c.accu_var],
            c.iter_var2.as_deref(),
        ),
    }
}

fn debug_string(ast: &Ast) -> String {
    node_string(&our_node(&ast.root))
}

// ---------------------------------------------------------------------------------------------
// Skip list

#[derive(Default)]
struct SkipList {
    /// Headings in file order, each with its entries.
    groups: Vec<(String, Vec<String>)>,
}

impl SkipList {
    fn read(path: &Path) -> SkipList {
        let mut list = SkipList::default();
        let Ok(text) = std::fs::read_to_string(path) else {
            return list;
        };
        for line in text.lines() {
            let line = line.trim_end();
            if let Some(h) = line.strip_prefix("# ") {
                list.groups.push((h.to_string(), Vec::new()));
            } else if !line.is_empty() && !line.starts_with('#') {
                if list.groups.is_empty() {
                    list.groups.push(("Unclassified".into(), Vec::new()));
                }
                if let Some(g) = list.groups.last_mut() {
                    g.1.push(line.to_string());
                }
            }
        }
        list
    }

    /// The heading an entry (or a wildcard covering it) is listed under.
    fn reason_of(&self, id: &str, file: &str, section: &str) -> Option<&str> {
        let wild_file = format!("{file}/*");
        let wild_section = format!("{file}/{section}/*");
        for (h, entries) in &self.groups {
            for e in entries {
                let hit = e == id
                    || (!id.ends_with(TYPE_SUFFIX) && (*e == wild_file || *e == wild_section))
                    || (id.ends_with(TYPE_SUFFIX)
                        && (e == &format!("{wild_file}{TYPE_SUFFIX}")
                            || e == &format!("{wild_section}{TYPE_SUFFIX}")));
                if hit {
                    return Some(h);
                }
            }
        }
        None
    }
}

const TYPE_SUFFIX: &str = " @type";

/// One check's identity and outcome.
struct Check<'t> {
    test: &'t Json,
    id: String,
    file: String,
    section: String,
    is_type: bool,
    /// `None`: not run (needs protobuf, or nothing to assert).
    outcome: Option<Outcome>,
    /// Why it was not run.
    not_run: Option<String>,
}

/// Headings for failures that have no heading yet, from the test and what failed. Headings
/// that `skip.txt` already has win (they may be edited by hand); these are the defaults.
fn auto_reason(t: &Json, why: &str) -> String {
    let file = t["file"].as_str().unwrap_or_default();
    let expr = t["expr"].as_str().unwrap_or_default();
    let expected_error = t["expected"]["error"].as_str().unwrap_or_default();
    let lib = |name: &str| format!("Not in Kubernetes' CEL environment: {name}");
    if file == "math_ext" || why.contains("'math") {
        return lib("ext.Math");
    }
    if file == "encoders_ext" || why.contains("'base64") {
        return lib("ext.Encoders");
    }
    if file == "bindings_ext" || expr.contains("cel.bind(") {
        return lib("ext.Bindings (cel.bind)");
    }
    if file == "block_ext" || expr.contains("cel.block(") || expr.contains("cel.iterVar(") {
        return lib("cel.@block (cel-go's common-subexpression optimiser)");
    }
    if expected_error.contains("unsupported syntax") {
        return "Parser options: cel-go ran this test without optional syntax or backtick \
                identifiers; we enable both, as Kubernetes does"
            .into();
    }
    if expected_error.contains("recursion") {
        return "Parser options: cel-go ran this test with a lower recursion limit (32) than the \
                default 250 we use"
            .into();
    }
    if file == "cel-go/comprehensions" && why.starts_with("parse error") {
        return "cel-go/comprehensions: the AST was recorded without the two-variable macros; \
                with them cel-go rejects this expression too"
            .into();
    }
    if why.contains("containers are not supported") {
        return "Containers: Kubernetes compiles without a container, so we have none".into();
    }
    format!("Unclassified: {}", cause_of(why))
}

// ---------------------------------------------------------------------------------------------
// The test

fn id_of(t: &Json) -> (String, String, String) {
    let file = t["file"].as_str().unwrap_or_default().to_string();
    let section = t["section"].as_str().unwrap_or_default().to_string();
    let name = t["name"].as_str().unwrap_or_default().replace('\n', "\\n");
    (format!("{file}/{section}/{name}"), file, section)
}

#[derive(Default, Clone, Copy)]
struct Count {
    passed: usize,
    failed: usize,
    not_run: usize,
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.1} %", 100.0 * a as f64 / b as f64)
    }
}

#[test]
fn conformance() {
    // Deep expressions and the raw parsers need a big stack in debug builds.
    let h = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(run_all)
        .expect("spawn the conformance thread");
    if let Err(e) = h.join() {
        std::panic::resume_unwind(e);
    }
}

fn run_all() {
    let started = std::time::Instant::now();
    let suites = load_suites();
    let tests = suites["tests"].as_array().expect("tests");
    let env = Env::new();

    // Silence panics inside tests: they are failures, reported with their message.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        LAST_PANIC.with(|p| *p.borrow_mut() = info.to_string());
    }));

    let mut checks: Vec<Check> = Vec::new();
    for t in tests {
        let (id, file, section) = id_of(t);
        let informational = t["expected"]["informational"].as_bool() == Some(true);
        let not_run = if t["needsProto"].as_bool() == Some(true) {
            Some("Not run: needs protobuf messages (Kubernetes CEL has none)".to_string())
        } else if informational {
            Some(
                "Not run: nothing to assert (the expected error came from cel-go's harness, \
                 which lacked the test's declarations)"
                    .to_string(),
            )
        } else {
            None
        };
        let mut push = |is_type: bool, outcome: Option<Outcome>, not_run: Option<String>| {
            let id = if is_type { format!("{id}{TYPE_SUFFIX}") } else { id.clone() };
            checks.push(Check {
                test: t,
                id,
                file: file.clone(),
                section: section.clone(),
                is_type,
                outcome,
                not_run,
            })
        };
        if let Some(reason) = not_run {
            push(false, None, Some(reason));
            continue;
        }
        let ran = catch_unwind(AssertUnwindSafe(|| run_test(&env, t))).unwrap_or_else(|_| {
            let msg = LAST_PANIC.with(|p| p.borrow().clone());
            Ran { result: fail(format!("panic: {msg}")), type_check: None }
        });
        if let Outcome::NotRun(reason) = ran.result {
            push(false, None, Some(reason));
            continue;
        }
        push(false, Some(ran.result), None);
        if let Some(tc) = ran.type_check {
            push(true, Some(tc), None);
        } else if t["expectedType"].is_string() {
            push(true, Some(fail("not type-checked")), None);
        }
    }

    std::panic::set_hook(default_hook);

    // Compare with the skip list.
    let skip_path = dir().join("skip.txt");
    let skip = SkipList::read(&skip_path);
    if std::env::var("CONFORMANCE_VERBOSE").is_ok_and(|v| v == "1") {
        for (c, t) in checks.iter().filter_map(|c| match &c.outcome {
            Some(Outcome::Fail(why)) => Some((c, why)),
            _ => None,
        }) {
            let expr = tests
                .iter()
                .find(|t| id_of(t).0 == c.id.trim_end_matches(TYPE_SUFFIX))
                .and_then(|t| t["expr"].as_str())
                .unwrap_or_default();
            eprintln!("FAIL {}\n    expr: {expr}\n    {t}", c.id);
        }
    }
    let mut regressions = Vec::new();
    let mut now_passing = Vec::new();
    for c in &checks {
        let listed = skip.reason_of(&c.id, &c.file, &c.section);
        match (&c.outcome, listed) {
            (Some(Outcome::Fail(why)), None) => regressions.push(format!("{}\n    {why}", c.id)),
            (Some(Outcome::Pass), Some(_)) => now_passing.push(c.id.clone()),
            _ => {}
        }
    }

    let summary = render_summary(&checks, &skip_for(&checks, &skip));
    let new_skip = skip_for(&checks, &skip).render();
    let summary_path = dir().join("summary.md");
    let update = std::env::var("UPDATE_EXPECT").is_ok_and(|v| v == "1");
    eprintln!("conformance: ran {} checks in {:.1?}", checks.len(), started.elapsed());
    if update {
        std::fs::write(&skip_path, &new_skip).expect("write skip.txt");
        std::fs::write(&summary_path, &summary).expect("write summary.md");
        eprintln!("conformance: rewrote tests/conformance/skip.txt and summary.md");
        return;
    }
    let mut problems = String::new();
    if !regressions.is_empty() {
        let _ = writeln!(
            problems,
            "{} check(s) not in tests/conformance/skip.txt failed (regressions):",
            regressions.len()
        );
        for r in regressions.iter().take(60) {
            let _ = writeln!(problems, "  {r}");
        }
    }
    if !now_passing.is_empty() {
        let _ = writeln!(
            problems,
            "{} check(s) listed in tests/conformance/skip.txt now pass; remove them:",
            now_passing.len()
        );
        for r in now_passing.iter().take(60) {
            let _ = writeln!(problems, "  {r}");
        }
    }
    let old_summary = std::fs::read_to_string(&summary_path).unwrap_or_default();
    if problems.is_empty() && old_summary != summary {
        let _ = writeln!(problems, "tests/conformance/summary.md is stale");
    }
    if !problems.is_empty() {
        panic!("{problems}\nIf intended, rewrite the skip list and summary with UPDATE_EXPECT=1.");
    }
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The skip list these results call for: surviving entries keep their heading, passing ones
/// go, new failures are added under [`auto_reason`]; whole files or sections that fail for one
/// reason collapse to `file/*` / `file/section/*`.
fn skip_for(checks: &[Check<'_>], old: &SkipList) -> SkipList {
    let mut by_reason: BTreeMap<String, Vec<&Check>> = BTreeMap::new();
    let mut order: Vec<String> = old.groups.iter().map(|g| g.0.clone()).collect();
    for c in checks {
        let reason = match (&c.outcome, &c.not_run) {
            (None, Some(r)) => r.clone(),
            (Some(Outcome::Fail(why)), _) => match old.reason_of(&c.id, &c.file, &c.section) {
                Some(h) => h.to_string(),
                None => auto_reason(c.test, why),
            },
            _ => continue,
        };
        if !order.contains(&reason) {
            order.push(reason.clone());
        }
        by_reason.entry(reason).or_default().push(c);
    }
    // Totals per file and section (for collapsing), per check kind.
    let mut per_file: HashMap<(&str, bool), usize> = HashMap::new();
    let mut per_section: HashMap<(&str, &str, bool), usize> = HashMap::new();
    for c in checks {
        *per_file.entry((&c.file, c.is_type)).or_default() += 1;
        *per_section.entry((&c.file, &c.section, c.is_type)).or_default() += 1;
    }
    let rank = |h: &str| {
        if h.starts_with("Not run") {
            0
        } else if h.starts_with("Not in Kubernetes") {
            1
        } else if h.starts_with("Unclassified") {
            3
        } else {
            2
        }
    };
    order.sort_by_key(|h| rank(h)); // stable: keeps the file's order within a rank
    let mut groups = Vec::new();
    for reason in order {
        let Some(cs) = by_reason.get(&reason) else { continue };
        let mut in_file: HashMap<(&str, bool), usize> = HashMap::new();
        let mut in_section: HashMap<(&str, &str, bool), usize> = HashMap::new();
        for c in cs {
            *in_file.entry((&c.file, c.is_type)).or_default() += 1;
            *in_section.entry((&c.file, &c.section, c.is_type)).or_default() += 1;
        }
        let mut entries: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for c in cs {
            let suffix = if c.is_type { TYPE_SUFFIX } else { "" };
            let entry = if in_file[&(c.file.as_str(), c.is_type)]
                == per_file[&(c.file.as_str(), c.is_type)]
            {
                format!("{}/*{suffix}", c.file)
            } else if !c.section.is_empty()
                && in_section[&(c.file.as_str(), c.section.as_str(), c.is_type)]
                    == per_section[&(c.file.as_str(), c.section.as_str(), c.is_type)]
            {
                format!("{}/{}/*{suffix}", c.file, c.section)
            } else {
                c.id.clone()
            };
            if seen.insert(entry.clone()) {
                entries.push(entry);
            }
        }
        groups.push((reason, entries));
    }
    SkipList { groups }
}

impl SkipList {
    fn render(&self) -> String {
        let mut s = String::from(
            "## Conformance checks known to fail or not run, by reason (see tests/conformance.rs).\n\
             ## Lines: `file/section/name`, `file/section/*`, `file/*`; ` @type` marks the\n\
             ## static-type check of a test. Rewritten by UPDATE_EXPECT=1, which keeps headings.\n",
        );
        for (h, entries) in &self.groups {
            let _ = writeln!(s, "\n# {h}");
            for e in entries {
                let _ = writeln!(s, "{e}");
            }
        }
        s
    }
}

fn render_summary(checks: &[Check<'_>], skip: &SkipList) -> String {
    let mut per_file: BTreeMap<&str, (Count, Count)> = BTreeMap::new();
    let mut per_section: BTreeMap<(&str, &str), Count> = BTreeMap::new();
    let (mut total, mut types) = (Count::default(), Count::default());
    let mut causes: BTreeMap<String, usize> = BTreeMap::new();
    for c in checks {
        let (res, ty) = per_file.entry(&c.file).or_default();
        let slot = if c.is_type { ty } else { res };
        let sum = if c.is_type { &mut types } else { &mut total };
        let sec = (!c.is_type).then(|| per_section.entry((&c.file, &c.section)).or_default());
        let bump = |k: &mut Count| match &c.outcome {
            Some(Outcome::Pass) => k.passed += 1,
            Some(Outcome::Fail(_)) => k.failed += 1,
            Some(Outcome::NotRun(_)) | None => k.not_run += 1,
        };
        bump(slot);
        bump(sum);
        if let Some(s) = sec {
            bump(s);
        }
        if let Some(Outcome::Fail(why)) = &c.outcome {
            if !c.is_type {
                *causes.entry(cause_of(why)).or_default() += 1;
            }
        }
    }
    let mut s = String::new();
    let ran = total.passed + total.failed;
    let _ = writeln!(s, "# cel-spec conformance: summary\n");
    let _ = writeln!(
        s,
        "Written by `tests/conformance.rs` (`UPDATE_EXPECT=1 cargo test --test conformance`) from \
         `@bufbuild/cel-spec` 0.6.1 (cel-spec v0.25.1). Tests that need protobuf messages are not \
         run; known failures are listed in `skip.txt` under their reasons.\n"
    );
    let _ = writeln!(s, "## Totals\n");
    let _ = writeln!(s, "| | passed | failed | pass rate | not run |");
    let _ = writeln!(s, "|---|---:|---:|---:|---:|");
    let _ = writeln!(
        s,
        "| results (eval, check, parse) | {} | {} | **{}** | {} |",
        total.passed,
        total.failed,
        pct(total.passed, ran),
        total.not_run
    );
    let _ = writeln!(
        s,
        "| static type = expected type | {} | {} | **{}** | |",
        types.passed,
        types.failed,
        pct(types.passed, types.passed + types.failed)
    );
    // The same, without the checks of libraries Kubernetes does not have (they fail by design).
    let not_k8s = |c: &Check<'_>| {
        skip.reason_of(&c.id, &c.file, &c.section)
            .is_some_and(|h| h.starts_with("Not in Kubernetes"))
    };
    let scoped = |types: bool| {
        let run = checks.iter().filter(|c| c.is_type == types && c.outcome.is_some());
        let run: Vec<_> = run.filter(|c| !not_k8s(c)).collect();
        let passed = run.iter().filter(|c| c.outcome == Some(Outcome::Pass)).count();
        (passed, run.len())
    };
    let ((rp, rn), (tp, tn)) = (scoped(false), scoped(true));
    let _ = writeln!(
        s,
        "| results, Kubernetes' libraries only | {rp} | {} | **{}** | |",
        rn - rp,
        pct(rp, rn)
    );
    let _ = writeln!(
        s,
        "| static type, Kubernetes' libraries only | {tp} | {} | **{}** | |",
        tn - tp,
        pct(tp, tn)
    );
    let _ = writeln!(
        s,
        "\n*Kubernetes' libraries only*: without the checks listed under \"Not in Kubernetes' CEL \
         environment\" (ext.Math, ext.Encoders, cel.bind, cel.@block), which the apiserver does not \
         enable, so an expression using them must fail to compile. *Not run*: see the reasons in \
         the skip list table below."
    );
    let _ = writeln!(s, "\n## Per file\n");
    let _ = writeln!(s, "| file | results passed | type agreement | not run |");
    let _ = writeln!(s, "|---|---:|---:|---:|");
    for (f, (r, t)) in &per_file {
        let ty = if t.passed + t.failed > 0 {
            format!("{}/{}", t.passed, t.passed + t.failed)
        } else {
            "–".into()
        };
        let _ =
            writeln!(s, "| {f} | {}/{} | {ty} | {} |", r.passed, r.passed + r.failed, r.not_run);
    }
    let _ = writeln!(s, "\n## Per section (results; sections with failures or not run)\n");
    let _ = writeln!(s, "| file/section | passed | not run |");
    let _ = writeln!(s, "|---|---:|---:|");
    for ((f, sec), k) in &per_section {
        if k.failed > 0 || k.not_run > 0 {
            let sec = if sec.is_empty() { "(none)" } else { sec };
            let _ =
                writeln!(s, "| {f}/{sec} | {}/{} | {} |", k.passed, k.passed + k.failed, k.not_run);
        }
    }
    let _ = writeln!(s, "\n## Skip list by reason\n");
    let _ = writeln!(s, "| reason | checks |");
    let _ = writeln!(s, "|---|---:|");
    for (h, _) in &skip.groups {
        let n = checks
            .iter()
            .filter(|c| {
                c.not_run.as_deref() == Some(h.as_str())
                    || (matches!(c.outcome, Some(Outcome::Fail(_)))
                        && skip.reason_of(&c.id, &c.file, &c.section) == Some(h.as_str()))
            })
            .count();
        let _ = writeln!(s, "| {h} | {n} |");
    }
    let _ = writeln!(s, "\n## Top failure causes (results)\n");
    let mut causes: Vec<(String, usize)> = causes.into_iter().collect();
    causes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (c, n) in causes.iter().take(25) {
        let _ = writeln!(s, "- {n} × {c}");
    }
    s
}

/// A failure message shortened for grouping.
fn cause_of(why: &str) -> String {
    if why.starts_with("got ") {
        return "wrong value".into();
    }
    let why = match why.split_once(", want") {
        Some((head, _)) if why.starts_with("error '") => head,
        _ => why,
    };
    if why.chars().count() > 110 {
        format!("{}…", why.chars().take(107).collect::<String>())
    } else {
        why.to_string()
    }
}

/// Every overload the checker can resolve to has an implementation (ids are cel-go's), so a
/// checked expression never fails to plan.
#[test]
fn declared_overloads_are_implemented() {
    let env = Env::new();
    let mut missing: Vec<String> = env
        .decls
        .functions
        .values()
        .flat_map(|f| f.overloads.iter().map(move |o| (f.name.clone(), o.id.clone())))
        // Operators the planner evaluates itself (short-circuit, indexing, optional selects).
        .filter(|(f, _)| {
            !matches!(
                f.as_str(),
                "@not_strictly_false" | "_&&_" | "_||_" | "_?_:_" | "_[_]" | "_[?_]" | "_?._"
            )
        })
        .filter(|(_, id)| env.registry.by_id(id).is_none())
        .map(|(f, id)| format!("{f}: {id}"))
        .collect();
    missing.sort();
    assert!(missing.is_empty(), "declared but not implemented:\n  {}", missing.join("\n  "));

    // And checked expressions resolving to them run.
    for (expr, want) in [
        ("[3, 1, 2].sort()", "[1, 2, 3]"),
        ("[{'n': 2}, {'n': 1}].sortBy(e, e.n)[0].n", "1"),
        ("int(duration('1s'))", "1000000000"),
        ("duration(5) == duration('5ns')", "true"),
    ] {
        let t = serde_json::json!({"expr": expr, "mode": "eval", "expected": {}});
        let ast = parse(expr, ParseOptions::default()).expect(expr);
        let checked = checker::check(&ast, &test_decls(&env, &t), &CheckOptions::default());
        assert!(checked.errors.is_empty(), "{expr}: {:?}", checked.errors);
        let refs = runtime_refs(&checked);
        let p = plan(&ast, Some(&refs), &env.registry, UNOPTIMIZED).expect(expr);
        let v = p.eval(&Bindings::new(), &mut CostTracker::unlimited()).expect(expr);
        assert_eq!(v.debug_string(), want, "{expr}");
    }
}
