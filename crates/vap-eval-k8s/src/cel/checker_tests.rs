//! Table tests in the style of cel-go `checker/checker_test.go`: an expression, and either its
//! type (cel-go's checker notation) or the full rendered error text.

use super::*;
use crate::cel::decls::{ObjectTypeDecl, OverloadDecl};
use crate::cel::errors::render_check_issues;
use crate::cel::parser::{parse, ParseOptions};
use crate::cel::stdlib_decls::{standard, LibraryVersions};

fn env() -> Declarations {
    let mut d = Declarations::default();
    standard(&mut d, &LibraryVersions::all());
    d.add_variable("x", Type::Dyn);
    d.add_variable("y", Type::Dyn);
    d.add_variable("i", Type::Int);
    d.add_variable("s", Type::String);
    d.add_variable("object", Type::Dyn);
    d.add_variable("a.b.c", Type::Int);
    d.add_variable("ls", Type::list(Type::String));
    d.add_variable("m", Type::map(Type::String, Type::Int));
    d.add_variable("opt", Type::optional(Type::Int));
    d.add_variable("request", Type::object("kubernetes.AdmissionRequest"));
    d.add_object(ObjectTypeDecl {
        name: "kubernetes.AdmissionRequest".into(),
        fields: vec![
            ("name".into(), Type::String),
            ("namespace".into(), Type::String),
            ("dryRun".into(), Type::Bool),
            ("options".into(), Type::Dyn),
        ],
    });
    d.add_variable("variables", Type::object("kubernetes.variables"));
    d.add_object(ObjectTypeDecl {
        name: "kubernetes.variables".into(),
        fields: vec![("name".into(), Type::String)],
    });
    d.add_variable("typed", Type::object("Obj"));
    d.add_object(ObjectTypeDecl {
        name: "Obj".into(),
        fields: vec![("foo".into(), Type::Int), ("ts".into(), Type::Timestamp)],
    });
    let authz = Type::object("kubernetes.authorization.Authorizer");
    let decision = Type::object("kubernetes.authorization.Decision");
    d.add_variable("authorizer", authz.clone());
    d.add_object(ObjectTypeDecl {
        name: "kubernetes.authorization.Authorizer".into(),
        fields: vec![],
    });
    d.add_overload("allowed", OverloadDecl::member("decision_allowed", vec![decision], Type::Bool));
    d
}

/// `Ok(type)` or `Err(rendered issues)`.
fn run_with(src: &str, options: &CheckOptions) -> Result<String, String> {
    let ast = parse(src, ParseOptions::default()).map_err(|e| format!("parse: {e:?}"))?;
    let checked = check(&ast, &env(), options);
    if checked.errors.is_empty() {
        Ok(format_cel_type(checked.output_type(&ast)))
    } else {
        Err(render_check_issues(src, &checked.errors))
    }
}

fn run(src: &str) -> Result<String, String> {
    run_with(src, &CheckOptions::default())
}

#[test]
fn occurs_check_looks_inside_type_of() {
    // cel-go checker_test: binding T := type(T) would be an infinite type.
    let options = CheckOptions { homogeneous_literals: false, ..CheckOptions::default() };
    assert_eq!(run_with("{}.map(c, [c, type(c)])", &options).as_deref(), Ok("list(list(dyn))"));
}

#[test]
fn types_of_well_typed_expressions() {
    let cases: &[(&str, &str)] = &[
        ("1 + 2", "int"),
        ("1u * 2u", "uint"),
        ("1.0 / 2.0", "double"),
        ("'a' + 'b'", "string"),
        ("b'a' + b'b'", "bytes"),
        ("[1] + [2]", "list(int)"),
        ("[]", "list(dyn)"),
        ("{}", "map(dyn, dyn)"),
        ("[[], [1]]", "list(list(int))"),
        ("{'a': 1}", "map(string, int)"),
        ("x + y", "dyn"),
        ("x + 1", "int"),
        ("-i", "int"),
        ("!true", "bool"),
        ("i < 1.0", "bool"),
        ("1u >= i", "bool"),
        ("1 == 1", "bool"),
        ("x == 1.0", "bool"),
        ("true ? 1 : 2", "int"),
        ("true ? 1 : x", "dyn"),
        ("size('a') + 'a'.size() + size([1]) + size({}) + size(b'')", "int"),
        ("size(x)", "int"),
        ("'a' in ls", "bool"),
        ("'a' in m", "bool"),
        ("ls[0]", "string"),
        ("m['k']", "int"),
        ("x[0]", "dyn"),
        ("m.k", "int"),
        ("{1: 'a'}.k", "string"),
        ("x.y.z", "dyn"),
        ("has(x.y)", "bool"),
        ("has(m.k)", "bool"),
        ("has(request.name)", "bool"),
        ("request.name", "string"),
        ("request.options.anything", "dyn"),
        ("variables.name", "string"),
        ("a.b.c + 1", "int"),
        ("type(1) == int", "bool"),
        ("type(1)", "type(int)"),
        ("int", "type(int)"),
        ("google.protobuf.Timestamp", "type(timestamp)"),
        ("dyn(1)", "dyn"),
        ("string(1) + string(1u) + string(1.0) + string(true) + string(b'a')", "string"),
        ("int('1') + int(1.0) + int(1u) + int(duration('1s')) + int(timestamp(0))", "int"),
        ("duration('1h') + timestamp('2023-01-01T00:00:00Z')", "timestamp"),
        ("timestamp('2023-01-01T00:00:00Z') - timestamp(1)", "duration"),
        ("timestamp(1).getHours('UTC') + timestamp(1).getDayOfWeek() + duration('1s').getSeconds()", "int"),
        ("'abc'.matches('a+') && matches('abc', 'b') && s.contains('a') && s.startsWith('a') && s.endsWith('c')", "bool"),
        ("[1, 2].map(v, v * 2)", "list(int)"),
        ("[1, 2].filter(v, v > 1)", "list(int)"),
        ("[1, 2].all(v, v > 0) || [1].exists(v, v == 1) || [1].exists_one(v, v == 1)", "bool"),
        ("m.map(k, m[k])", "list(int)"),
        ("m.all(k, v, v > 0 && k != '')", "bool"),
        ("ls.exists(i, v, i > 0 && v == '')", "bool"),
        ("ls.existsOne(i, v, i == 0)", "bool"),
        ("ls.transformList(i, v, i)", "list(int)"),
        ("ls.transformMap(i, v, v + '!')", "map(int, string)"),
        ("m.transformMap(k, v, k.size() > 1, v + 1)", "map(string, int)"),
        ("m.transformMapEntry(k, v, {v: k})", "map(int, string)"),
        ("x.map(v, v)", "list(dyn)"),
        ("[x].map(v, v.f)", "list(dyn)"),
        // Optional types.
        ("optional.of(1)", "optional_type(int)"),
        ("optional.of(1).value()", "int"),
        ("optional.none()", "optional_type(dyn)"),
        ("optional.none().orValue('x')", "string"),
        ("opt.or(optional.of(2)).hasValue()", "bool"),
        ("m.?k", "optional_type(int)"),
        ("x.?k", "optional_type(dyn)"),
        ("optional.of(m).k", "optional_type(int)"),
        ("optional.of(m).?k", "optional_type(int)"),
        ("request.?name", "optional_type(string)"),
        ("ls[?0]", "optional_type(string)"),
        ("m[?'k']", "optional_type(int)"),
        ("optional.of(ls)[0]", "optional_type(string)"),
        ("[?opt, 2]", "list(int)"),
        ("{?'a': opt}", "map(string, int)"),
        ("[?x]", "list(dyn)"),
        ("opt.optMap(v, v + 1)", "optional_type(int)"),
        ("opt.optFlatMap(v, optional.of(string(v)))", "optional_type(string)"),
        ("ls.first()", "optional_type(string)"),
        ("optional.unwrap([opt])", "list(int)"),
        ("[opt].unwrapOpt()", "list(int)"),
        ("opt == null", "bool"),
        ("request == null", "bool"),
        ("timestamp(1) == null", "bool"),
        // Extension libraries.
        ("s.charAt(0) + s.lowerAscii() + s.upperAscii() + s.trim() + s.replace('a', 'b') + s.substring(1)", "string"),
        ("s.indexOf('a') + s.lastIndexOf('a', 1)", "int"),
        ("s.split(',')", "list(string)"),
        ("ls.join(',') + ls.join()", "string"),
        ("strings.quote(s)", "string"),
        ("'%s and %d'.format([s, i])", "string"),
        ("'%s'.format([[1, 'a']])", "string"),
        ("sets.contains([1], [1]) && sets.equivalent(ls, ['a']) && sets.intersects([1], [2])", "bool"),
        ("[3, 1].sort()", "list(int)"),
        ("[3, 1].sortBy(v, -v)", "list(int)"),
        ("ls.sortBy(v, v.size())", "list(string)"),
        ("lists.range(3)", "list(int)"),
        ("[[1], [2]].flatten()", "list(int)"),
        ("[[1], [2]].flatten(2)", "list(dyn)"),
        ("ls.slice(0, 1).reverse().distinct()", "list(string)"),
        ("typed.ts.getFullYear()", "int"),
    ];
    let mut failures = Vec::new();
    for (src, want) in cases {
        match run(src) {
            Ok(t) if t == *want => {}
            other => failures.push(format!("{src}\n  want {want}\n  got  {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn error_messages_and_positions() {
    let cases: &[(&str, &str)] = &[
        (
            "114 + '514'",
            "ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(int, string)'\n | 114 + '514'\n | ....^",
        ),
        (
            "object.metadata.name in ['a', object.spec.other]",
            "ERROR: <input>:1:42: expected type 'string' but found 'dyn'\n | object.metadata.name in ['a', object.spec.other]\n | .........................................^",
        ),
        (
            "variables.replicas > 1",
            "ERROR: <input>:1:10: undefined field 'replicas'\n | variables.replicas > 1\n | .........^",
        ),
        (
            "request.uid",
            "ERROR: <input>:1:8: undefined field 'uid'\n | request.uid\n | .......^",
        ),
        (
            "nope + 1",
            "ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope + 1\n | ^",
        ),
        (
            "s.frobnicate()",
            "ERROR: <input>:1:13: undeclared reference to 'frobnicate' (in container '')\n | s.frobnicate()\n | ............^",
        ),
        (
            "1 == 1.0",
            "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'\n | 1 == 1.0\n | ..^",
        ),
        (
            "1 == null",
            "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, null)'\n | 1 == null\n | ..^",
        ),
        (
            "true ? 1 : 'a'",
            "ERROR: <input>:1:6: found no matching overload for '_?_:_' applied to '(bool, int, string)'\n | true ? 1 : 'a'\n | .....^",
        ),
        (
            "authorizer.allowed()",
            "ERROR: <input>:1:19: found no matching overload for 'allowed' applied to 'kubernetes.authorization.Authorizer.()'\n | authorizer.allowed()\n | ..................^",
        ),
        (
            "variables.name == typed.foo",
            "ERROR: <input>:1:16: found no matching overload for '_==_' applied to '(string, int)'\n | variables.name == typed.foo\n | ...............^",
        ),
        (
            "1 && true",
            "ERROR: <input>:1:1: expected type 'bool' but found 'int'\n | 1 && true\n | ^",
        ),
        (
            "!1",
            "ERROR: <input>:1:1: found no matching overload for '!_' applied to '(int)'\n | !1\n | ^",
        ),
        (
            "has(i.f)",
            // The presence test sits at the `(` of `has(`, as cel-go's macro expansion places it.
            "ERROR: <input>:1:4: type 'int' does not support field selection\n | has(i.f)\n | ...^",
        ),
        (
            "i.all(v, v)",
            "ERROR: <input>:1:1: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)\n | i.all(v, v)\n | ^",
        ),
        (
            "[1].map(v, w)",
            "ERROR: <input>:1:12: undeclared reference to 'w' (in container '')\n | [1].map(v, w)\n | ...........^",
        ),
        (
            "timestamp(1) + timestamp(2)",
            "ERROR: <input>:1:14: found no matching overload for '_+_' applied to '(timestamp, timestamp)'\n | timestamp(1) + timestamp(2)\n | .............^",
        ),
        (
            "[[1]].sortBy(v, v)",
            "ERROR: <input>:1:13: found no matching overload for '@sortByAssociatedKeys' applied to 'list(list(int)).(list(list(int)))'\n | [[1]].sortBy(v, v)\n | ............^",
        ),
        (
            "opt.value().foo",
            "ERROR: <input>:1:12: type 'int' does not support field selection\n | opt.value().foo\n | ...........^",
        ),
        (
            "[1, 'a']",
            "ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a']\n | ....^",
        ),
        (
            "{'a': 1, 'b': 'x', 2: 3}",
            "ERROR: <input>:1:15: expected type 'int' but found 'string'\n | {'a': 1, 'b': 'x', 2: 3}\n | ..............^\nERROR: <input>:1:20: expected type 'string' but found 'int'\n | {'a': 1, 'b': 'x', 2: 3}\n | ...................^",
        ),
        (
            "[?1]",
            "ERROR: <input>:1:3: expected type 'optional_type(int)' but found 'int'\n | [?1]\n | ..^",
        ),
        // Error absorption: one error, not a cascade.
        (
            "nope.a.b + 1 == 'x'.size()",
            "ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope.a.b + 1 == 'x'.size()\n | ^",
        ),
        // Several errors, sorted by position.
        (
            "f(1) + g",
            "ERROR: <input>:1:2: undeclared reference to 'f' (in container '')\n | f(1) + g\n | .^\nERROR: <input>:1:8: undeclared reference to 'g' (in container '')\n | f(1) + g\n | .......^",
        ),
        // Columns count code points; multi-byte characters get wide dots.
        (
            "'😀' + 1",
            "ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(string, int)'\n | '😀' + 1\n | .．..^",
        ),
        (
            "'é' == 1 && true",
            "ERROR: <input>:1:5: found no matching overload for '_==_' applied to '(string, int)'\n | 'é' == 1 && true\n | .．..^",
        ),
        (
            "s == 'ü' &&\n  i == 'x'",
            "ERROR: <input>:2:5: found no matching overload for '_==_' applied to '(int, string)'\n |   i == 'x'\n | ....^",
        ),
        // Ported from cel-go's checker and parser tests.
        (
            "has(nope.b).filter(c, c)",
            "ERROR: <input>:1:4: expression of type 'bool' cannot be range of a comprehension (must be list, map, or dynamic)\n | has(nope.b).filter(c, c)\n | ...^\nERROR: <input>:1:5: undeclared reference to 'nope' (in container '')\n | has(nope.b).filter(c, c)\n | ....^",
        ),
        (
            "ls.all(v, v)",
            "ERROR: <input>:1:11: expected type 'bool' but found 'string'\n | ls.all(v, v)\n | ..........^",
        ),
        (
            "true || 'a'",
            "ERROR: <input>:1:9: expected type 'bool' but found 'string'\n | true || 'a'\n | ........^",
        ),
        (
            "[1, 2][i > 0]",
            "ERROR: <input>:1:7: found no matching overload for '_[_]' applied to '(list(int), bool)'\n | [1, 2][i > 0]\n | ......^",
        ),
        (
            "'a' in [1]",
            "ERROR: <input>:1:5: found no matching overload for '@in' applied to '(string, list(int))'\n | 'a' in [1]\n | ....^",
        ),
        (
            "i.getFullYear()",
            "ERROR: <input>:1:14: found no matching overload for 'getFullYear' applied to 'int.()'\n | i.getFullYear()\n | .............^",
        ),
        (
            "[1, 2].join()",
            "ERROR: <input>:1:12: found no matching overload for 'join' applied to 'list(int).()'\n | [1, 2].join()\n | ...........^",
        ),
        (
            "int{}",
            "ERROR: <input>:1:4: 'int' is not a message type\n | int{}\n | ...^",
        ),
        (
            "Obj{foo: 'a', bar: 1}",
            "ERROR: <input>:1:8: expected type of field 'foo' is 'int' but provided type is 'string'\n | Obj{foo: 'a', bar: 1}\n | .......^\nERROR: <input>:1:18: undefined field 'bar'\n | Obj{foo: 'a', bar: 1}\n | .................^",
        ),
        // Literal validators.
        (
            "duration('1x') > duration('1s')",
            "ERROR: <input>:1:10: invalid duration argument\n | duration('1x') > duration('1s')\n | .........^",
        ),
        (
            "timestamp('2023-01-01') < timestamp(253402300800)",
            "ERROR: <input>:1:11: invalid timestamp argument\n | timestamp('2023-01-01') < timestamp(253402300800)\n | ..........^\nERROR: <input>:1:37: invalid timestamp argument\n | timestamp('2023-01-01') < timestamp(253402300800)\n | ....................................^",
        ),
        // string.format validation.
        (
            "'%d'.format(['a'])",
            "ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given string\n | '%d'.format(['a'])\n | .............^",
        ),
        (
            "'%s'.format(['a', 'b'])",
            "ERROR: <input>:1:12: too many arguments supplied to string.format (expected 1, got 2)\n | '%s'.format(['a', 'b'])\n | ...........^",
        ),
        (
            "'%s %s'.format(['a'])",
            "ERROR: <input>:1:15: index 1 out of range\n | '%s %s'.format(['a'])\n | ..............^",
        ),
        (
            "'%j'.format([1])",
            "ERROR: <input>:1:12: could not parse formatting clause: unrecognized formatting clause \"j\"\n | '%j'.format([1])\n | ...........^",
        ),
        (
            "'%s'.format([opt])",
            "ERROR: <input>:1:14: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type\n | '%s'.format([opt])\n | .............^",
        ),
        (
            "'50%'.format([])",
            "ERROR: <input>:1:13: unexpected end of string\n | '50%'.format([])\n | ............^",
        ),
    ];
    let mut failures = Vec::new();
    for (src, want) in cases {
        match run(src) {
            Err(got) if got == *want => {}
            other => failures.push(format!("{src}\n  want {want:?}\n  got  {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn options_gate_behaviour() {
    let off = CheckOptions {
        cross_type_numeric_comparisons: false,
        homogeneous_literals: false,
        literal_validators: false,
        regex_validator: None,
    };
    assert_eq!(
        run_with("1 < 1.0", &off),
        Err("ERROR: <input>:1:3: found no matching overload for '_<_' applied to '(int, double)'\n | 1 < 1.0\n | ..^".into())
    );
    assert_eq!(run_with("[1, 'a']", &off), Ok("list(dyn)".into()));
    assert_eq!(run_with("duration('1x')", &off), Ok("duration".into()));
    // Validators run only after a clean check.
    assert_eq!(
        run("duration('1x') == nope"),
        Err("ERROR: <input>:1:19: undeclared reference to 'nope' (in container '')\n | duration('1x') == nope\n | ..................^".into())
    );
    let regex =
        CheckOptions { regex_validator: Some(|re| !re.contains('[')), ..CheckOptions::default() };
    assert_eq!(
        run_with("s.matches('[') || matches('[', 'a')", &regex),
        Err("ERROR: <input>:1:11: invalid matches argument\n | s.matches('[') || matches('[', 'a')\n | ..........^\nERROR: <input>:1:27: invalid matches argument\n | s.matches('[') || matches('[', 'a')\n | ..........................^".into())
    );
}

#[test]
fn references() {
    let d = env();
    let refs_of = |src: &str| {
        let ast = parse(src, ParseOptions::default()).unwrap();
        let c = check(&ast, &d, &CheckOptions::default());
        assert!(c.errors.is_empty(), "{src}: {:?}", c.errors);
        (ast, c)
    };
    let ids = |r: &Option<Reference>| match r {
        Some(Reference::Function { overloads }) => {
            overloads.iter().map(|o| o.to_string()).collect::<Vec<_>>()
        }
        other => panic!("{other:?}"),
    };
    let (ast, c) = refs_of("1 + 2");
    assert_eq!(ids(&c.refs[ast.root.id as usize]), ["add_int64"]);
    let (ast, c) = refs_of("x + y");
    assert_eq!(
        ids(&c.refs[ast.root.id as usize]),
        [
            "add_bytes",
            "add_double",
            "add_duration_duration",
            "add_duration_timestamp",
            "add_timestamp_duration",
            "add_int64",
            "add_list",
            "add_string",
            "add_uint64"
        ]
    );
    let (ast, c) = refs_of("x < 1");
    assert_eq!(
        ids(&c.refs[ast.root.id as usize]),
        ["less_int64", "less_uint64_int64", "less_double_int64"]
    );
    let (ast, c) = refs_of("a.b.c");
    assert_eq!(c.refs[ast.root.id as usize], Some(Reference::Variable("a.b.c".into())));
    let (ast, c) = refs_of("int");
    assert_eq!(c.refs[ast.root.id as usize], Some(Reference::Type(Type::Int)));
    let (ast, c) = refs_of("optional.none()");
    assert_eq!(ids(&c.refs[ast.root.id as usize]), ["optional_none"]);
    let (ast, c) = refs_of("m.?k");
    assert_eq!(ids(&c.refs[ast.root.id as usize]), ["select_optional_field"]);
    let (ast, c) = refs_of("[1].exists(v, v > 0)");
    // The comprehension's iteration variable resolves as a variable.
    let ExprKind::Comprehension(comp) = &ast.root.kind else { panic!() };
    let ExprKind::Call { args, .. } = &comp.loop_step.kind else { panic!() };
    let ExprKind::Call { args: inner, .. } = &args[1].kind else { panic!() };
    assert_eq!(c.refs[inner[0].id as usize], Some(Reference::Variable("v".into())));
    assert_eq!(c.types[inner[0].id as usize], Type::Int);
}

#[test]
fn result_type_check() {
    assert_eq!(check_result_type(&Type::Bool, ExpectedResult::Bool), Ok(()));
    assert_eq!(
        check_result_type(&Type::Dyn, ExpectedResult::Bool),
        Err("must evaluate to bool but got dyn".into())
    );
    assert_eq!(
        check_result_type(&Type::Int, ExpectedResult::StringOrNull),
        Err("must evaluate to one of [string null_type] but got int".into())
    );
    assert_eq!(check_result_type(&Type::Null, ExpectedResult::StringOrNull), Ok(()));
    assert_eq!(
        check_result_type(&Type::list(Type::String), ExpectedResult::String),
        Err("must evaluate to string but got list(string)".into())
    );
    assert_eq!(check_result_type(&Type::Dyn, ExpectedResult::Any), Ok(()));
}

#[test]
fn never_panics_on_odd_input() {
    let d = env();
    for src in [
        "[[[[[[[[[[[]]]]]]]]]]]",
        "{}.a.b.c.d",
        "x.all(x, x.all(x, x))",
        "optional.none().value().value()",
        "type(type(type(1)))",
        "[].map(v, []).map(v, v)",
        "Obj{foo: 1}",
        "Nope{foo: 1}",
        "int{}",
        "'%.'.format([1])",
        "'%.f'.format([1.0])",
        "'%é'.format([1])",
        "m.transformMapEntry(k, v, v)",
        "[1].sortBy(v, nope)",
    ] {
        let Ok(ast) = parse(src, ParseOptions::default()) else {
            continue;
        };
        let _ = check(&ast, &d, &CheckOptions::default());
    }
}

#[test]
fn long_chains_stay_fast() {
    let d = env();
    let src = vec!["i"; 2000].join(" && i > 0 && ");
    let ast = parse(&src, ParseOptions::default()).unwrap();
    let start = std::time::Instant::now();
    let c = check(&ast, &d, &CheckOptions::default());
    assert!(c.errors.is_empty() || !c.errors.is_empty());
    assert!(start.elapsed().as_secs() < 5);
}
