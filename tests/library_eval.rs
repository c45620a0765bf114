//! Kubernetes libraries end to end: parse → check against `environment::declarations` → plan
//! with the checker's references → evaluate with the cost tracker. Values, apiserver error
//! texts and actual costs: spec §8.1 (cost goldens), §8.6 and a sample of the upstream
//! `pkg/cel/library/*_test.go` cases per library.

#[path = "common/variable.rs"]
mod variable;

use serde_json::json;
use std::rc::Rc;
use vap_eval::cel::runtime::{Bindings, CostTracker};
use vap_eval::cel::value::Value;
use vap_eval::library::authz::{
    authorizer_value, request_resource_value, Rbac, RequestResource, UserInfo, NO_RBAC_REASON,
};

/// Evaluate `expr` as a 1.37 variable expression (any result type) with `authorizer` bound to
/// `rbac` and `user`; returns the value's debug form or `error: <msg>`, and the actual cost.
fn eval_as(expr: &str, rbac: Option<Rc<Rbac>>, user: UserInfo) -> (String, u64) {
    eval_at(expr, rbac, user, 37)
}

/// `eval_as` at 1.`minor`.
fn eval_at(expr: &str, rbac: Option<Rc<Rbac>>, user: UserInfo, minor: u32) -> (String, u64) {
    let compiled = variable::compile_variable(expr, minor, None);
    let Some(program) = compiled.program else {
        return (format!("compile: {}", compiled.error.unwrap_or_default()), 0);
    };
    let request = RequestResource {
        group: "apps".into(),
        resource: "deployments".into(),
        namespace: "default".into(),
        name: "web".into(),
        ..Default::default()
    };
    let object = json!({"metadata": {"name": "web"}});
    let act = Bindings::new()
        .with("object", Value::from_json(&object))
        .with("oldObject", Value::Null)
        .with("authorizer", authorizer_value(rbac.clone(), user.clone()))
        .with("authorizer.requestResource", request_resource_value(rbac, user, &request));
    let mut cost = CostTracker::default();
    let out = match program.eval(&act, &mut cost) {
        Ok(v) => v.debug_string(),
        Err(e) => format!("error: {}", e.message),
    };
    (out, cost.actual_cost())
}

fn alice() -> UserInfo {
    UserInfo { name: "alice".into(), groups: vec!["dev".into()], ..Default::default() }
}

fn eval(expr: &str) -> (String, u64) {
    eval_as(expr, None, alice())
}

fn check(cases: &[(&str, &str)]) {
    let bad: Vec<String> = cases
        .iter()
        .filter_map(|(expr, want)| {
            let got = eval(expr).0;
            (got != *want).then(|| format!("{expr}\n   want {want}\n    got {got}"))
        })
        .collect();
    assert!(bad.is_empty(), "{} failures:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn cost_goldens() {
    // spec §8.1 (apiserver condition_test.go).
    let cases: &[(&str, &str, u64)] = &[
        ("[1,2,3,4].isSorted()", "true", 4),
        ("url('https:://kubernetes.io/').getHostname() == 'kubernetes.io'", "false", 4),
        ("size('abc 123 def 123'.split(' ')) > 0", "true", 5),
        ("size(['aa','bb','cc','d','e','f','g','h','i','j'].join(' ')) > 0", "true", 7),
        ("size('abc 123 def 123'.find('123')) > 0", "true", 4),
        (
            "quantity(\"200M\") == quantity(\"0.2G\") && quantity(\"0.2G\") == quantity(\"200M\")",
            "true",
            6,
        ),
        ("!authorizer.group('').resource('endpoints').check('create').allowed()", "true", 350_005),
    ];
    for (expr, want, want_cost) in cases {
        assert_eq!(eval(expr), (want.to_string(), *want_cost), "{expr}");
    }
    let three = "authorizer.group('').resource('endpoints').check('create').allowed() || \
                 authorizer.group('').resource('pods').check('create').allowed() || \
                 authorizer.group('').resource('services').check('create').allowed()";
    assert_eq!(eval(three).0, "error: operation cancelled: actual cost limit exceeded");
}

#[test]
fn library_costs() {
    // apiserver cost.go CallCost, by function.
    let cases: &[(&str, u64)] = &[
        ("ip('192.168.0.1')", 2),                         // ceil(0.1 × 11)
        ("ip('192.168.0.1').family()", 3),                // + 1
        ("ip.isCanonical('192.168.0.1')", 3),             // ceil(0.2 × 11)
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", 3), // 1 + ceil(0.2 × 1) + ceil(0.1 × 8)
        // 2 + ceil(0.1 × (3 + 3)) + ceil(0.1 × 3) + 1 + ceil(0.1 × 11); a /24 has size 3.
        ("cidr('10.0.0.0/24').containsCIDR('10.0.0.0/25')", 7),
        ("semver('1.2.3').major()", 2), // ceil(0.1 × 5) + 1
        ("isSemver('1.2.3', true)", 1),
        ("format.dns1123Label().validate('abc')", 9), // 1 + ceil(0.4) × ceil(7.5)
        ("format.named('uuid').hasValue()", 2),
        ("[1, 2, 3].includes(2)", 3),
        ("['abcdefghijkl', 'b'].includes('b')", 1), // floor(0.1 × 12) + floor(0.1 × 1)
        ("quantity('1').add(2).sub(3).isInteger()", 4),
        ("url('https://a/').getQuery()", 2),
        // cel-go ext/sets.go trackSetsCost (apiserver cost_test.go TestSetsCost); the literals
        // are folded constants.
        ("sets.contains([1, 2, 3, 4], [2, 3])", 9), // 1 + 4 × 2
        ("sets.intersects([1, 2], [5, 2, 7])", 7),  // 1 + 2 × 3
        ("sets.equivalent([1, 2, 3], [3, 2, 1])", 19), // 1 + 2 × 3 × 3
    ];
    let bad: Vec<String> = cases
        .iter()
        .filter_map(|(expr, want)| {
            let (out, got) = eval(expr);
            (got != *want).then(|| format!("{expr}: want cost {want}, got {got} ({out})"))
        })
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn quantity() {
    // apiserver quantity_test.go, spec §4.5 / §8.6.
    check(&[
        ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger()", "20"),
        ("quantity('50.703k').asApproximateFloat()", "50703"),
        ("quantity('50M').compareTo(quantity('50Mi'))", "-1"),
        ("quantity('50Mi').compareTo(quantity('50M'))", "1"),
        ("quantity('150Mi').isGreaterThan(quantity('100Mi'))", "true"),
        ("quantity('50M').isLessThan(quantity('100M'))", "true"),
        ("quantity('200M') == quantity('0.2G')", "true"),
        ("quantity('50000000G').isInteger()", "true"),
        ("quantity('9999999999999999999999999999999999999G').isInteger()", "false"),
        (
            "quantity('9999999999999999999999999999999999999G').asInteger()",
            "error: cannot convert value to integer",
        ),
        ("sign(quantity('-1'))", "-1"),
        ("isQuantity('1,3G')", "false"),
        ("isQuantity('1.3Gi')", "true"),
        ("isQuantity('200K')", "false"),
        (
            "quantity('10Mo')",
            "error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ("quantity('10Mm')", "error: unable to parse quantity's suffix"),
        ("quantity('Mi') == quantity('0')", "true"),
        ("string(quantity('0.5').asApproximateFloat())", "\"0.5\""),
        // The add/sub representation quirk: results only equal on the left.
        ("quantity('50k').add(20) == quantity('50020')", "true"),
        ("quantity('50020') == quantity('50k').add(20)", "error: no such overload"),
        ("quantity('1') != quantity('1').sub(0)", "error: no such overload"),
        ("dyn(quantity('1')) == 1", "error: no such overload"),
        ("quantity('1') == dyn(null)", "false"),
        ("type(quantity('1'))", "kubernetes.Quantity"),
    ]);
}

#[test]
fn ip_and_cidr() {
    // apiserver ip_test.go, cidr_test.go, spec §8.6.
    check(&[
        (
            "ip('192.168.0.1.0')",
            "error: IP Address \"192.168.0.1.0\" parse error during conversion from string: ParseAddr(\"192.168.0.1.0\"): IPv4 address too long",
        ),
        ("ip('fe80::1%eth0')", "error: IP address \"fe80::1%eth0\" with zone value is not allowed"),
        ("ip('::ffff:1.2.3.4')", "error: IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed"),
        ("ip('192.168.0.1').family()", "4"),
        ("ip('::1').family()", "6"),
        ("ip('::1').isLoopback()", "true"),
        ("ip('224.0.0.1').isLinkLocalMulticast()", "true"),
        ("ip('169.254.169.254').isLinkLocalUnicast()", "true"),
        ("ip('192.168.0.1').isGlobalUnicast()", "true"),
        ("ip('255.255.255.255').isGlobalUnicast()", "false"),
        ("ip('0.0.0.0').isUnspecified()", "true"),
        ("ip.isCanonical('2001:db8::68')", "true"),
        ("ip.isCanonical('2001:DB8::68')", "false"),
        ("isIP('1.2.3')", "false"),
        ("string(ip('2001:DB8::68'))", "\"2001:db8::68\""),
        ("ip('127.0.0.1') == ip('127.0.0.1')", "true"),
        ("ip('127.0.0.1') == ip('::1')", "false"),
        ("type(ip('10.0.0.1')) == net.IP", "true"),
        (
            "cidr('192.168.0.0/')",
            "error: network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"192.168.0.0/\"): bad bits after slash: \"\"",
        ),
        ("cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.1/32'))", "true"),
        ("cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')", "false"),
        ("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", "true"),
        ("cidr('192.168.0.0/24').containsIP('192.168.1.1')", "false"),
        ("cidr('192.168.0.0/24').containsIP('::1')", "false"),
        ("cidr('192.168.0.0/24').containsIP('bad')", "error: no such overload"),
        ("string(cidr('192.168.0.1/24').masked())", "\"192.168.0.0/24\""),
        ("cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()", "false"),
        ("cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()", "true"),
        ("string(cidr('192.168.0.1/24').ip())", "\"192.168.0.1\""),
        ("cidr('::1/128').prefixLength()", "128"),
        ("isCIDR('192.168.0.0/33')", "false"),
        ("type(cidr('192.168.0.0/24')) == net.CIDR", "true"),
    ]);
}

#[test]
fn semver() {
    // apiserver semver_test.go, spec §8.6.
    check(&[
        ("semver('v1.0')", "error: No Major.Minor.Patch elements found"),
        ("isSemver('01.01.01')", "false"),
        ("isSemver('01.01.01', true)", "true"),
        ("semver('v01.01', true) == semver('1.1.0')", "true"),
        (
            "semver('1.0-alpha', true)",
            "error: short version cannot contain PreRelease/Build meta data",
        ),
        ("semver('1.2.3').compareTo(semver('2.0.0'))", "-1"),
        ("semver('1.2.3').isGreaterThan(semver('0.1.2'))", "true"),
        ("semver('1.2.3-alpha').isLessThan(semver('1.2.3'))", "true"),
        ("semver('1.2.3+build1') == semver('1.2.3+build2')", "true"),
        (
            "[semver('1.2.3').major(), semver('1.2.3').minor(), semver('1.2.3').patch()]",
            "[1, 2, 3]",
        ),
    ]);
}

#[test]
fn format() {
    // apiserver format_test.go, spec §8.6.
    check(&[
        (
            "format.dns1123Label().validate('contains a space')",
            "optional.of([\"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\"])",
        ),
        ("format.dns1123Label().validate('my-name')", "optional.none()"),
        ("format.byte().validate('aGVsbG8')", "optional.of([\"invalid base64\"])"),
        ("format.byte().validate('aGVsbG8=')", "optional.none()"),
        ("format.uuid().validate('x')", "optional.of([\"does not match the UUID format\"])"),
        ("format.named('unknown').hasValue()", "false"),
        ("format.named('labelValue').value().validate('a_b').hasValue()", "false"),
        ("format.date().validate('2021-13-01')", "optional.of([\"invalid date\"])"),
        ("format.dns1123Label() == format.dns1123Label()", "true"),
        ("format.dns1123Label() == dyn('dns1123Label')", "error: no such overload"),
        ("type(format.uri())", "kubernetes.NamedFormat"),
    ]);
}

/// apiserver `format_test.go` TestFormat, every case: the table of validations, then the
/// generated cases over `library.ConstantFormats` — each name is found by `format.named`, its
/// lookup equals its constructor, and every constructor differs from every other one.
#[test]
fn format_upstream_cases() {
    const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    const QUALIFIED: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    let of = |m: &str| format!("optional.of([{}])", serde_json::to_string(m).unwrap());
    let none = "optional.none()".to_string();
    let mut cases: Vec<(String, String)> = vec![
        ("format.dns1123Label().validate(\"my-label-name\")".into(), none.clone()),
        ("format.dns1123Subdomain().validate(\"apiextensions.k8s.io\")".into(), none.clone()),
        ("format.qualifiedName().validate(\"apiextensions.k8s.io/v1beta1\")".into(), none.clone()),
        ("format.dns1123LabelPrefix().validate(\"my-label-prefix-\")".into(), none.clone()),
        ("format.dns1123SubdomainPrefix().validate(\"mysubdomain.prefix.-\")".into(), none.clone()),
        ("format.dns1035LabelPrefix().validate(\"my-label-prefix-\")".into(), none.clone()),
        ("format.uri().validate(\"http://example.com\")".into(), none.clone()),
        ("format.uuid().validate(\"123e4567-e89b-12d3-a456-426614174000\")".into(), none.clone()),
        ("format.byte().validate(\"aGVsbG8=\")".into(), none.clone()),
        ("format.date().validate(\"2021-01-01\")".into(), none.clone()),
        ("format.datetime().validate(\"2021-01-01T00:00:00Z\")".into(), none.clone()),
        ("format.dns1123Label().validate(\"contains a space\")".into(), of(LABEL)),
        ("format.dns1123Subdomain().validate(\"contains a space\")".into(), of(SUBDOMAIN)),
        ("format.dns1035Label().validate(\"contains a space\")".into(), of(DNS1035)),
        ("format.qualifiedName().validate(\"contains a space\")".into(), of(QUALIFIED)),
        ("format.dns1123LabelPrefix().validate(\"contains a space-\")".into(), of(LABEL)),
        ("format.dns1123SubdomainPrefix().validate(\"contains a space-\")".into(), of(SUBDOMAIN)),
        ("format.dns1035LabelPrefix().validate(\"contains a space-\")".into(), of(DNS1035)),
        ("format.dns1123Label().validate(\"my-label-name\")".into(), none.clone()),
        ("format.dns1123Subdomain().validate(\"example.com\")".into(), none.clone()),
        ("format.dns1035Label().validate(\"my-label-name\")".into(), none.clone()),
        ("format.qualifiedName().validate(\"my.name\")".into(), none.clone()),
        ("format.byte().validate(\"aGVsbG8=\")".into(), none.clone()),
        ("format.byte().validate(\"aGVsbG8\")".into(), of("invalid base64")),
        ("format.date().validate(\"2020-01-01\")".into(), none.clone()),
        ("format.date().validate(\"2020-01-32\")".into(), of("invalid date")),
        ("format.datetime().validate(\"2020-01-01T00:00:00Z\")".into(), none.clone()),
        ("format.datetime().validate(\"2020-01-32T00:00:00Z\")".into(), of("invalid datetime")),
        ("format.named(\"unknown\").hasValue()".into(), "false".into()),
        ("format.labelValue().validate(\"my-cool-label-Value\")".into(), none.clone()),
        (
            "format.labelValue().validate(\"my-cool-label-Value!!\\n\\n!!!\")".into(),
            of(LABEL_VALUE),
        ),
    ];
    let names: Vec<&str> = vap_eval::library::format::NamedFormat::names().collect();
    // library.ConstantFormats has 13 entries.
    assert_eq!(names.len(), 13);
    for lhs in &names {
        cases.push((format!("format.named(\"{lhs}\").hasValue()"), "true".into()));
        cases.push((format!("format.named(\"{lhs}\").value() == format.{lhs}()"), "true".into()));
        for rhs in names.iter().filter(|r| *r != lhs) {
            cases.push((format!("format.{lhs}() == format.{rhs}()"), "false".into()));
        }
    }
    let borrowed: Vec<(&str, &str)> = cases.iter().map(|(e, w)| (e.as_str(), w.as_str())).collect();
    check(&borrowed);
    // And at 1.31, which brought the library into the base environment.
    let bad: Vec<String> = borrowed
        .iter()
        .filter_map(|(expr, want)| {
            let got = eval_at(expr, None, alice(), 31).0;
            (got != *want).then(|| format!("1.31: {expr}\n   want {want}\n    got {got}"))
        })
        .collect();
    assert!(bad.is_empty(), "{} failures:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn url_and_regex() {
    // apiserver urls.go / regex.go docs and tests.
    check(&[
        ("url('https://example.com:80/').getHost()", "\"example.com:80\""),
        ("url('https://[::1]:80/').getHostname()", "\"::1\""),
        ("url('https://[::1]:80/').getPort()", "\"80\""),
        ("url('https://example.com/path with spaces/').getEscapedPath()", "\"/path%20with%20spaces/\""),
        ("url('/path?k=v&k=w').getQuery()", "{\"k\": [\"v\", \"w\"]}"),
        ("url('https://example.com/path?').getQuery()", "{}"),
        ("url('https://example.com').getScheme()", "\"https\""),
        (
            "url('../relative')",
            "error: URL parse error during conversion from string: parse \"../relative\": invalid URI for request",
        ),
        ("isURL('https://example.com/%zz')", "false"),
        ("url('https://a/b') == url('https://a/b')", "true"),
        ("'abc 123'.find('[0-9]+')", "\"123\""),
        ("'abc 123'.find('xyz')", "\"\""),
        ("'123 abc 456'.findAll('[0-9]+')", "[\"123\", \"456\"]"),
        ("'123 abc 456'.findAll('[0-9]+', 1)", "[\"123\"]"),
        ("'baaab'.findAll('a*')", "[\"\", \"aaa\", \"\"]"),
        ("'abc'.find('(abc')", "error: Illegal regex: error parsing regexp: missing closing ): `(abc`"),
    ]);
}

/// `sum()` of lists the checker cannot type (read from JSON, or `dyn`): cel-go's function-level
/// dispatcher tries the overloads in declaration order and takes the first whose `list(T)`
/// `Type.IsAssignableRuntimeType` accepts — decided by the list's first element (cel-go
/// `common/types/types.go`, `common/decls/decls.go` `FunctionDecl.Bindings`). apiserver
/// `lists.go` declares `sum` for int, uint, double, duration, in that order.
#[test]
fn sum_of_untyped_lists() {
    check(&[
        ("dyn([1.5, 2.5]).sum()", "4"),
        ("type(dyn([1.5, 2.5]).sum())", "double"),
        ("dyn([duration('1s'), duration('2s')]).sum()", "duration(\"3s\")"),
        ("dyn([1u]).sum()", "1u"),
        ("type(dyn([]).sum())", "int"),
        ("dyn(['a']).sum()", "error: no such overload"),
    ]);
    let variables = json!({"object": {"spec": {"weights": [0.25, 0.5, 1e2], "ints": [1, 2], "mixed": [1.5, 2]}}});
    let run = |expr: &str| {
        let vars = variables.as_object().cloned().unwrap_or_default();
        let r = vap_eval::api::evaluate_expression(expr, &vars, &Default::default());
        (r.value, r.type_name, r.diagnostics.len())
    };
    assert_eq!(run("object.spec.weights.sum()"), (Some(json!(100.75)), Some("double".into()), 0));
    assert_eq!(run("object.spec.ints.sum()"), (Some(json!(3)), Some("int".into()), 0));
    // The double overload is chosen by the first element; `Double.Add(Int)` has no overload.
    let (value, _, diagnostics) = run("object.spec.mixed.sum()");
    assert_eq!((value, diagnostics), (None, 1));
}

#[test]
fn lists() {
    // apiserver lists.go docs, lists_test.go.
    check(&[
        ("[1, 2, 3].isSorted()", "true"),
        ("['a', 'b', 'b', 'c'].isSorted()", "true"),
        ("[2.0, 1.0].isSorted()", "false"),
        ("[].isSorted()", "true"),
        ("[1, 3].sum()", "4"),
        ("[1.0, 3.0].sum()", "4"),
        ("[duration('1m'), duration('1s')].sum()", "duration(\"61s\")"),
        ("[1u, 2u].sum()", "3u"),
        ("[9223372036854775807, 1].sum()", "error: integer overflow"),
        ("[1, 3].min()", "1"),
        ("[1, 3].max()", "3"),
        ("['b', 'a'].min()", "\"a\""),
        ("[].min()", "error: min called on empty list"),
        ("[].max()", "error: max called on empty list"),
        ("[1, 2, 2, 3].indexOf(2)", "1"),
        ("['a', 'b', 'b', 'c'].lastIndexOf('b')", "2"),
        ("[1.0].indexOf(1.1)", "-1"),
        ("[1, 2, 3].includes(2)", "true"),
        ("[1, 2, 3].includes(4)", "false"),
        ("'model-a'.includes('model-a')", "true"),
        ("'model-a'.includes('model-b')", "false"),
        ("'abcb'.indexOf('b')", "1"),
    ]);
}

fn rbac() -> Rc<Rbac> {
    let objects = vec![
        json!({"kind": "ClusterRole", "metadata": {"name": "endpoint-creator"},
               "rules": [{"verbs": ["create"], "apiGroups": [""], "resources": ["endpoints"]}]}),
        json!({"kind": "ClusterRoleBinding", "metadata": {"name": "alice-endpoints"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "endpoint-creator"},
               "subjects": [{"kind": "User", "name": "alice"}]}),
        json!({"kind": "Role", "metadata": {"name": "deployer", "namespace": "default"},
               "rules": [{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["deployments"]}]}),
        json!({"kind": "RoleBinding", "metadata": {"name": "sa-deployer", "namespace": "default"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
               "subjects": [{"kind": "ServiceAccount", "name": "ci", "namespace": "default"}]}),
        json!({"kind": "ClusterRole", "metadata": {"name": "health"},
               "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}),
        json!({"kind": "ClusterRoleBinding", "metadata": {"name": "dev-health"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "health"},
               "subjects": [{"kind": "Group", "name": "dev"}]}),
    ];
    Rc::new(Rbac::from_objects(&objects).expect("rbac"))
}

#[test]
fn authorizer() {
    let with = |expr: &str| eval_as(expr, Some(rbac()), alice()).0;
    assert_eq!(
        with("authorizer.group('').resource('endpoints').check('create').allowed()"),
        "true"
    );
    assert_eq!(
        with("authorizer.group('').resource('endpoints').check('create').reason()"),
        "\"RBAC: allowed by ClusterRoleBinding \\\"alice-endpoints\\\" of ClusterRole \\\"endpoint-creator\\\" to User \\\"alice\\\"\""
    );
    assert_eq!(
        with("authorizer.group('').resource('endpoints').check('delete').allowed()"),
        "false"
    );
    assert_eq!(with("authorizer.group('').resource('endpoints').check('delete').reason()"), "\"\"");
    assert_eq!(with("authorizer.path('/healthz').check('get').allowed()"), "true");
    assert_eq!(with("authorizer.path('/metrics').check('get').allowed()"), "false");
    // The pre-filled request resource: apps/deployments "web" in "default".
    assert_eq!(with("authorizer.requestResource.check('update').allowed()"), "false");
    assert_eq!(
        with("authorizer.serviceAccount('default', 'ci').group('apps').resource('deployments').namespace('default').check('update').allowed()"),
        "true"
    );
    assert_eq!(
        with("authorizer.serviceAccount('default', 'ci').group('apps').resource('deployments').namespace('other').check('update').allowed()"),
        "false"
    );
    // Selectors are passed on and ignored by RBAC; unparsable ones are not errors.
    assert_eq!(
        with("authorizer.group('').resource('endpoints').fieldSelector('a=').labelSelector('!!').check('create').allowed()"),
        "true"
    );
    assert_eq!(
        with("authorizer.group('').resource('endpoints').check('create').errored()"),
        "false"
    );
    assert_eq!(with("authorizer.group('').resource('endpoints').check('create').error()"), "\"\"");
    // Argument errors (apiserver authz.go).
    assert_eq!(with("authorizer.path(' ').check('get')"), "error: path must not be empty");
    assert_eq!(
        with("authorizer.group('').resource('').check('get')"),
        "error: resource must not be empty"
    );
    assert_eq!(
        with("authorizer.serviceAccount('default', 'Bad_Name')"),
        "error: Invalid service account name"
    );
    assert_eq!(
        with("authorizer.serviceAccount('Bad_NS', 'ok')"),
        "error: Invalid service account namespace"
    );
    assert_eq!(with("authorizer == authorizer"), "error: no such overload");
    // Without RBAC objects every check has no opinion, and says why.
    let none = |expr: &str| eval(expr).0;
    assert_eq!(none("authorizer.requestResource.check('get').allowed()"), "false");
    assert_eq!(
        none("authorizer.path('/healthz').check('get').reason()"),
        format!("{:?}", NO_RBAC_REASON)
    );
    // system:masters is allowed by the privileged-group authorizer.
    let admin = UserInfo {
        name: "root".into(),
        groups: vec!["system:masters".into()],
        ..Default::default()
    };
    assert_eq!(
        eval_as("authorizer.path('/x').check('get').allowed()", Some(rbac()), admin).0,
        "true"
    );
}

/// The apiserver's programs are planned with cel-go's `OptOptimize` (`environment/base.go`):
/// besides literal lists and maps, a type conversion of a constant is evaluated once when the
/// program is created (`interpreter/decorators.go` `maybeOptimizeConstUnary`) — it costs nothing,
/// and its error is the program's (apiserver `program instantiation failed: …`). apiserver
/// cost_test.go plans without it; `tests/library_upstream.rs` accounts for the difference.
#[test]
fn constant_conversions_fold() {
    // sum's traversal only (cost_test.go TestListsCost: 20 unoptimized, 5 conversions + list 10).
    assert_eq!(eval("[uint(1), uint(2), uint(3), uint(4), uint(5)].sum()"), ("15u".into(), 5));
    assert_eq!(eval("[duration('1s'), duration('2s')].sum()"), ("duration(\"3s\")".into(), 2));
    assert_eq!(eval("int(uint(5)) == 5"), ("true".into(), 1));
    assert_eq!(
        eval("int('x')").0,
        "compile: program instantiation failed: type conversion error from 'string' to 'int'"
    );
    // A conversion of anything else is a call at evaluation.
    let (_, attribute) = eval("object.metadata.name");
    assert_eq!(eval("string(object.metadata.name)"), ("\"web\"".into(), attribute + 1));
    assert_eq!(eval("[1, 2].map(x, string(x))").0, "[\"1\", \"2\"]");
}

/// `OptOptimize` also makes `x in [constant list]` a set lookup (cel-go
/// `interpreter/decorators.go` `maybeOptimizeSetMembership` and `interpreter/interpretable.go`
/// `evalSetMembership`, the same from v0.17.8 to v0.27.0): the lookup is no call, so it costs
/// nothing; an empty constant list is `false` without evaluating the left side; the set holds each
/// number also under its other numeric types (a double only where lossless), and a value is found
/// by type and value, so an int is not found against a double it only rounds to.
#[test]
fn constant_set_membership() {
    let (_, attribute) = eval("object.metadata.name");
    assert_eq!(eval("object.metadata.name in ['a', 'web']"), ("true".into(), attribute));
    assert_eq!(eval("object.metadata.name in ['a', 'b']"), ("false".into(), attribute));
    assert_eq!(eval("'b' in ['a', 'b', 'c']"), ("true".into(), 0));
    assert_eq!(eval("true in [false]"), ("false".into(), 0));
    // The left side is not evaluated: no error, no cost.
    assert_eq!(eval("object.metadata.missing in []"), ("false".into(), 0));
    // A list empty only at evaluation is a call: its left side's error.
    assert_eq!(
        eval("object.metadata.missing in [[1]].filter(x, false)").0,
        "error: no such key: missing"
    );
    // An error on the left is the lookup's, at the left side's cost.
    let (missing, missing_cost) = eval("object.metadata.missing");
    assert_eq!(eval("object.metadata.missing in ['a']"), (missing, missing_cost));
    // Numbers: each element under every numeric type it converts to.
    assert_eq!(eval("dyn(1u) in [1, 2]"), ("true".into(), 0));
    assert_eq!(eval("dyn(1) in [1u, 2u]").0, "true");
    assert_eq!(eval("dyn(-1) in [18446744073709551615u]").0, "false");
    assert_eq!(eval("dyn(2.0) in [1, 2]").0, "true");
    assert_eq!(eval("dyn(1.5) in [1, 2]").0, "false");
    assert_eq!(eval("dyn(2) in [1.0, 2.0]").0, "true");
    assert_eq!(eval("dyn(2u) in [1.5, 2.0]").0, "true");
    assert_eq!(eval("dyn(-0.0) in [0]").0, "true");
    assert_eq!(eval("dyn(0) in [-0.0]").0, "true");
    assert_eq!(eval("double('NaN') in [double('NaN')]").0, "false");
    assert_eq!(eval("dyn(9007199254740992.0) in [9007199254740993]").0, "true");
    // CEL's `==` compares an int with a double as doubles; the set does not.
    assert_eq!(eval("dyn(9007199254740993) == 9007199254740992.0").0, "true");
    assert_eq!(eval("dyn(9007199254740993) in [9007199254740992.0]").0, "false");
    assert_eq!(eval("dyn(9223372036854775807) in [9223372036854775807.0]").0, "false");
    assert_eq!(eval("dyn('a') in [1, 2]").0, "false");
    // Not constant, or not primitives (bytes are not): a call, costing the list's size.
    assert_eq!(eval("[1] in [[1], [2]]"), ("true".into(), 2));
    assert_eq!(eval("b'a' in [b'b', b'a']"), ("true".into(), 2));
    assert_eq!(eval("'web' in [object.metadata.name]"), ("true".into(), attribute + 10 + 1));
}

/// Calls with one checked overload (`size`, the comparisons, `startsWith`, …): results, costs,
/// and where a cost limit cancels (the error's node), at every limit up to the whole cost, as
/// the apiserver's checked programs evaluate them. Recorded before such calls were planned
/// without the overload loop (`tests/direct_call_costs.txt`).
#[test]
fn direct_call_costs() {
    let object = json!({
        "spec": {"replicas": 3, "n": 1.5, "env": [
            {"name": "AWS_KEY", "value": "x"},
            {"name": "PATH", "value": "/usr/bin:/bin"},
            {"name": "HOME"},
            {"name": 7, "value": ["a"]}
        ]},
        "metadata": {"name": "web", "labels": {"app": "a", "env": "prod"}}
    });
    let act =
        Bindings::new().with("object", Value::from_json(&object)).with("oldObject", Value::Null);
    let mut got = Vec::new();
    for expr in [
        "size(object.metadata.name) < 10",
        "object.metadata.name.size() >= 3",
        "size(object.metadata.labels) == 2",
        "size(object.spec.env) > 3",
        "object.spec.replicas <= 5",
        "object.spec.replicas > 1 && object.spec.replicas < 4",
        "object.spec.replicas == 3",
        "object.spec.n >= 1.0",
        "object.metadata.name.startsWith('we')",
        "object.metadata.name.startsWith(object.metadata.labels.app)",
        "object.spec.env.all(e, !e.name.startsWith('AWS_') && (!has(e.value) || size(e.value) < 256))",
        "object.spec.env.all(e, !e.name.startsWith('X_') && (!has(e.value) || size(e.value) < 256))",
        "object.spec.env.all(e, !has(e.value) || size(e.value) < 256)",
        "object.spec.env.exists(e, has(e.value) && size(e.value) > 5)",
        "object.spec.env.map(e, size(e.name)).size() == 4",
        "size(object.nope) < 1",
        "object.nope.startsWith('a') || true",
        "object.spec.replicas < object.nope",
        "size(object.spec.replicas) == 1",
        "[1, 2, 3].filter(x, x > 1).size() == 2",
        "'abc'.startsWith('') && size('') == 0",
        "object.metadata.name == 'web' && object.metadata.labels.env != 'dev'",
        "object.metadata.labels == {'app': 'a', 'env': 'prod'}",
        "object.spec.env.exists_one(d, d.name == 'PATH')",
        "object.spec.env[0] == object.spec.env[1]",
        "quantity('1') == quantity('1000m') && ip('10.0.0.1') == ip('10.0.0.1')",
        "url('https://a/') == url('https://a/')",
        "object.nope == 1 || object.spec.replicas == 3",
    ] {
        let compiled = variable::compile_variable(expr, 37, None);
        let Some(p) = compiled.program else {
            got.push(format!("{expr}: compile: {}", compiled.error.unwrap_or_default()));
            continue;
        };
        let mut full = CostTracker::unlimited();
        let _ = p.eval(&act, &mut full);
        for limit in 0..=full.actual_cost() + 1 {
            let mut cost = CostTracker::new(Some(limit));
            let out = match p.eval(&act, &mut cost) {
                Ok(v) => v.debug_string(),
                Err(e) => format!("error at {}: {}", e.node, e.message),
            };
            got.push(format!("{expr} limit {limit}: {out}, cost {}", cost.actual_cost()));
        }
    }
    if std::env::var_os("RECORD_DIRECT_CALL_COSTS").is_some() {
        std::fs::write("tests/direct_call_costs.txt", got.join("\n") + "\n").unwrap();
    }
    let want = include_str!("direct_call_costs.txt");
    assert_eq!(got.join("\n"), want.trim_end());
}
