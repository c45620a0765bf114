//! Every Kubernetes CEL library function, by the Kubernetes version that introduced it into the
//! base environment (apiserver `library_compatibility_test.go`, `environment/base.go`; spec §4.1,
//! §4.5). Fails when the declarations and this list disagree: a function added to or removed
//! from a library must be assigned to a release here.
//!
//! Also pins the version gating end to end (parse → check against
//! `environment::declarations`) and the checker-level examples of spec §4.5 and §6.

use std::collections::BTreeSet;
use vap_eval::cel::checker::{check, format_cel_type};
use vap_eval::cel::decls::Declarations;
use vap_eval::cel::errors::render_check_issues;
use vap_eval::cel::parser::{parse, ParseOptions};
use vap_eval::cel::stdlib_decls::{standard, LibraryVersions};
use vap_eval::environment::{
    declarations, EnvironmentMode, ExpressionKind, Features, KubeVersion, VariableScope,
};

/// (Kubernetes minor, function name, overload ids) — the version is the one that brought the
/// overload into the base environment.
const KUBERNETES_FUNCTIONS: &[(u32, &str, &[&str])] = &[
    // 1.0 (CRD validation rules, 1.24; in the base environment from the start): urls, regex,
    // lists v0.
    (0, "url", &["string_to_url"]),
    (0, "isURL", &["is_url_string"]),
    (0, "getScheme", &["url_get_scheme"]),
    (0, "getHost", &["url_get_host"]),
    (0, "getHostname", &["url_get_hostname"]),
    (0, "getPort", &["url_get_port"]),
    (0, "getEscapedPath", &["url_get_escaped_path"]),
    (0, "getQuery", &["url_get_query"]),
    (0, "find", &["string_find_string"]),
    (0, "findAll", &["string_find_all_string", "string_find_all_string_int"]),
    (
        0,
        "isSorted",
        &[
            "list_int_is_sorted_bool",
            "list_uint_is_sorted_bool",
            "list_double_is_sorted_bool",
            "list_bool_is_sorted_bool",
            "list_duration_is_sorted_bool",
            "list_timestamp_is_sorted_bool",
            "list_string_is_sorted_bool",
            "list_bytes_is_sorted_bool",
        ],
    ),
    (
        0,
        "sum",
        &[
            "list_int_sum_int",
            "list_uint_sum_uint",
            "list_double_sum_double",
            "list_duration_sum_duration",
        ],
    ),
    (
        0,
        "max",
        &[
            "list_int_max_int",
            "list_uint_max_uint",
            "list_double_max_double",
            "list_bool_max_bool",
            "list_duration_max_duration",
            "list_timestamp_max_timestamp",
            "list_string_max_string",
            "list_bytes_max_bytes",
        ],
    ),
    (
        0,
        "min",
        &[
            "list_int_min_int",
            "list_uint_min_uint",
            "list_double_min_double",
            "list_bool_min_bool",
            "list_duration_min_duration",
            "list_timestamp_min_timestamp",
            "list_string_min_string",
            "list_bytes_min_bytes",
        ],
    ),
    (0, "indexOf", &["list_a_index_of_int"]),
    (0, "lastIndexOf", &["list_a_last_index_of_int"]),
    // 1.27: authz.
    (27, "path", &["authorizer_path"]),
    (27, "group", &["authorizer_group"]),
    (27, "serviceAccount", &["authorizer_serviceaccount"]),
    (27, "resource", &["groupcheck_resource"]),
    (27, "subresource", &["resourcecheck_subresource"]),
    (27, "namespace", &["resourcecheck_namespace"]),
    (27, "name", &["resourcecheck_name"]),
    (27, "check", &["pathcheck_check", "resourcecheck_check"]),
    (27, "allowed", &["decision_allowed"]),
    (27, "reason", &["decision_reason"]),
    (27, "errored", &["decision_errored"]),
    (27, "error", &["decision_error"]),
    // 1.28: quantity.
    (28, "quantity", &["string_to_quantity"]),
    (28, "isQuantity", &["is_quantity_string"]),
    (28, "sign", &["quantity_sign"]),
    (28, "isGreaterThan", &["quantity_is_greater_than"]),
    (28, "isLessThan", &["quantity_is_less_than"]),
    (28, "compareTo", &["quantity_compare_to"]),
    (28, "asApproximateFloat", &["quantity_get_float"]),
    (28, "asInteger", &["quantity_get_int"]),
    (28, "isInteger", &["quantity_is_integer"]),
    (28, "add", &["quantity_add", "quantity_add_int"]),
    (28, "sub", &["quantity_sub", "quantity_sub_int"]),
    // 1.30: ip, cidr.
    (30, "ip", &["string_to_ip", "cidr_ip"]),
    (30, "family", &["ip_family"]),
    (30, "ip.isCanonical", &["ip_is_canonical"]),
    (30, "isUnspecified", &["ip_is_unspecified"]),
    (30, "isLoopback", &["ip_is_loopback"]),
    (30, "isLinkLocalMulticast", &["ip_is_link_local_multicast"]),
    (30, "isLinkLocalUnicast", &["ip_is_link_local_unicast"]),
    (30, "isGlobalUnicast", &["ip_is_global_unicast"]),
    (30, "isIP", &["is_ip"]),
    (30, "string", &["ip_to_string", "cidr_to_string"]),
    (30, "cidr", &["string_to_cidr"]),
    (30, "containsIP", &["cidr_contains_ip_string", "cidr_contains_ip_ip"]),
    (30, "containsCIDR", &["cidr_contains_cidr_string", "cidr_contains_cidr"]),
    (30, "prefixLength", &["cidr_prefix_length"]),
    (30, "masked", &["cidr_masked"]),
    (30, "isCIDR", &["is_cidr"]),
    // 1.31: format, authz selectors.
    (31, "validate", &["format-validate"]),
    (31, "format.named", &["format-named"]),
    (31, "format.dns1123Label", &["format.dns1123Label"]),
    (31, "format.dns1123Subdomain", &["format.dns1123Subdomain"]),
    (31, "format.dns1035Label", &["format.dns1035Label"]),
    (31, "format.qualifiedName", &["format.qualifiedName"]),
    (31, "format.dns1123LabelPrefix", &["format.dns1123LabelPrefix"]),
    (31, "format.dns1123SubdomainPrefix", &["format.dns1123SubdomainPrefix"]),
    (31, "format.dns1035LabelPrefix", &["format.dns1035LabelPrefix"]),
    (31, "format.labelValue", &["format.labelValue"]),
    (31, "format.uri", &["format.uri"]),
    (31, "format.uuid", &["format.uuid"]),
    (31, "format.byte", &["format.byte"]),
    (31, "format.date", &["format.date"]),
    (31, "format.datetime", &["format.datetime"]),
    (31, "fieldSelector", &["authorizer_fieldselector"]),
    (31, "labelSelector", &["authorizer_labelselector"]),
    // 1.33: semver (library version 1, with the normalize overloads).
    (33, "semver", &["string_to_semver", "string_bool_to_semver"]),
    (33, "isSemver", &["is_semver_string", "is_semver_string_bool"]),
    (33, "isGreaterThan", &["semver_is_greater_than"]),
    (33, "isLessThan", &["semver_is_less_than"]),
    (33, "compareTo", &["semver_compare_to"]),
    (33, "major", &["semver_major"]),
    (33, "minor", &["semver_minor"]),
    (33, "patch", &["semver_patch"]),
    // 1.37: lists v1.
    (37, "includes", &["list_includes_dyn_dyn"]),
];

/// (function, overload id) pairs the Kubernetes libraries declare for a feature set: everything
/// declared minus the cel-go standard library and extensions of the same feature set.
fn kubernetes_overloads(features: &Features) -> BTreeSet<(String, String)> {
    let base = vap_eval::environment::base_declarations(features);
    let mut std = Declarations::default();
    standard(&mut std, &features.library_versions());
    let mut out = BTreeSet::new();
    for name in base.function_names() {
        let f = base.function(name).unwrap();
        for o in &f.overloads {
            let is_std =
                std.function(name).is_some_and(|sf| sf.overloads.iter().any(|so| so.id == o.id));
            if !is_std {
                out.insert((name.to_string(), o.id.to_string()));
            }
        }
    }
    out
}

fn expected_overloads(minor: u32) -> BTreeSet<(String, String)> {
    KUBERNETES_FUNCTIONS
        .iter()
        .filter(|(since, _, _)| *since <= minor)
        .flat_map(|(_, f, ids)| ids.iter().map(move |id| (f.to_string(), id.to_string())))
        .collect()
}

#[test]
fn every_kubernetes_function_is_assigned_to_a_release() {
    for v in KubeVersion::supported() {
        for mode in [EnvironmentMode::StoredExpressions, EnvironmentMode::NewExpressions] {
            let features = Features::for_version(v, mode);
            let effective = match mode {
                EnvironmentMode::StoredExpressions => v.minor,
                EnvironmentMode::NewExpressions => v.compatibility().minor,
            };
            let declared = kubernetes_overloads(&features);
            let expected = expected_overloads(effective);
            let unexpected: Vec<_> = declared.difference(&expected).collect();
            let missing: Vec<_> = expected.difference(&declared).collect();
            assert!(
                unexpected.is_empty() && missing.is_empty(),
                "{v} {mode:?}: declared but not assigned to a release: {unexpected:?}; \
                 assigned but not declared: {missing:?}"
            );
        }
    }
}

#[test]
fn cel_go_extension_versions_follow_the_feature_table() {
    // Features (spec §4.1) and stdlib_decls' own Kubernetes table must agree.
    for minor in 27..=37 {
        let f = Features::for_version(KubeVersion::new(minor), EnvironmentMode::StoredExpressions);
        assert_eq!(f.library_versions(), LibraryVersions::kubernetes(minor), "1.{minor}");
    }
}

/// Check `src` as a validation of a policy with params, against `version`/`mode`.
fn check_at(src: &str, minor: u32, mode: EnvironmentMode) -> Result<String, String> {
    let scope = VariableScope { has_params: true, ..Default::default() };
    let decls = declarations(KubeVersion::new(minor), mode, ExpressionKind::Validation, &scope);
    let features = Features::for_version(KubeVersion::new(minor), mode);
    let ast = parse(src, ParseOptions::default()).map_err(|e| format!("parse: {e:?}"))?;
    let checked = check(&ast, &decls, &features.check_options());
    if checked.errors.is_empty() {
        Ok(format_cel_type(checked.output_type(&ast)))
    } else {
        Err(render_check_issues(src, &checked.errors))
    }
}

fn stored(src: &str, minor: u32) -> Result<String, String> {
    check_at(src, minor, EnvironmentMode::StoredExpressions)
}

fn new_expr(src: &str, minor: u32) -> Result<String, String> {
    check_at(src, minor, EnvironmentMode::NewExpressions)
}

#[test]
fn libraries_are_gated_by_version() {
    // quantity 1.28: a 1.29 server's NewExpressions is the 1.28 feature set; 1.28's would be 1.27
    // (below our oldest target, so exercised through the compatibility version of 1.28 only in
    // the table test). Spec §8.2: `isQuantity` always compiles in StoredExpressions.
    assert_eq!(stored("quantity('1') == quantity('1000m')", 30), Ok("bool".into()));
    assert_eq!(new_expr("isQuantity('20M')", 30), Ok("bool".into()));
    // IP/CIDR 1.30: NewExpressions of a 1.30 server is 1.29.
    assert_eq!(stored("ip('1.2.3.4').family() == 4", 30), Ok("bool".into()));
    let err = new_expr("ip('1.2.3.4').family() == 4", 30).unwrap_err();
    assert!(err.contains("undeclared reference to 'ip'"), "{err}");
    assert!(new_expr("isCIDR('10.0.0.0/8')", 31).is_ok());
    // format and selectors 1.31.
    assert!(stored("format.dns1123Label().validate('a').hasValue()", 30).is_err());
    assert!(stored("format.dns1123Label().validate('a').hasValue()", 31).is_ok());
    let sel = "authorizer.group('').resource('pods').fieldSelector('a=b').check('list').allowed()";
    let err = stored(sel, 30).unwrap_err();
    assert!(err.contains("undeclared reference to 'fieldSelector'"), "{err}");
    assert!(stored(sel, 31).is_ok());
    // semver 1.33.
    assert!(stored("semver('1.2.3').major() == 1", 32).is_err());
    assert!(new_expr("semver('1.2.3').major() == 1", 33).is_err());
    assert_eq!(stored("semver('1.2.3').major() == 1", 33), Ok("bool".into()));
    assert_eq!(new_expr("semver('v1.2', true).isLessThan(semver('1.3.0'))", 34), Ok("bool".into()));
    // lists v1 `includes`: 1.37 StoredExpressions, not 1.37 NewExpressions (compat 1.36).
    assert_eq!(stored("[1].includes(1)", 37), Ok("bool".into()));
    let err = new_expr("[1].includes(1)", 37).unwrap_err();
    assert!(err.contains("undeclared reference to 'includes'"), "{err}");
    assert!(stored("[1].includes(1)", 36).is_err());
    // Always there: urls, regex, lists v0.
    for minor in 30..=37 {
        assert!(new_expr("url('https://a/').getHost() == 'a' && 'a1'.find('[0-9]') == '1'", minor)
            .is_ok());
        assert!(
            new_expr("[1, 2].isSorted() && [1].sum() == 1 && [1].indexOf(1) == 0", minor).is_ok()
        );
    }
}

#[test]
fn authorizer_type_errors_name_the_apiserver_types() {
    // spec §6 (typechecking_test.go).
    let err = stored("authorizer.allowed()", 37).unwrap_err();
    assert!(
        err.contains(
            "found no matching overload for 'allowed' applied to 'kubernetes.authorization.Authorizer.()'"
        ),
        "{err}"
    );
    assert_eq!(
        stored("!authorizer.group('').resource('endpoints').check('create').allowed()", 37),
        Ok("bool".into())
    );
    assert_eq!(
        stored(
            "authorizer.serviceAccount('default', 'sa').path('/healthz').check('get').reason()",
            37
        ),
        Ok("string".into())
    );
    assert_eq!(stored("authorizer.requestResource.check('get').errored()", 37), Ok("bool".into()));
    let err = stored("authorizer.group('').check('get').allowed()", 37).unwrap_err();
    assert!(
        err.contains(
            "found no matching overload for 'check' applied to 'kubernetes.authorization.GroupCheck.(string)'"
        ),
        "{err}"
    );
    // Not declared in messageExpressions (spec §4.2).
    let d = declarations(
        KubeVersion::NEWEST,
        EnvironmentMode::StoredExpressions,
        ExpressionKind::MessageExpression,
        &VariableScope::default(),
    );
    assert!(d.variable("authorizer").is_none());
}

#[test]
fn spec_type_check_examples() {
    // spec §4.5: `sign` is global.
    assert_eq!(stored("sign(quantity('-1')) == -1", 37), Ok("bool".into()));
    let err = stored("quantity('1').sign() == 1", 37).unwrap_err();
    assert!(
        err.contains("found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'"),
        "{err}"
    );
    assert_eq!(
        stored(
            "quantity(\"200M\") == quantity(\"0.2G\") && quantity(\"0.2G\") == quantity(\"200M\")",
            37
        ),
        Ok("bool".into())
    );
    assert_eq!(stored("quantity('1').add(1).sub(quantity('1')).asInteger()", 37), Ok("int".into()));
    let err = stored("quantity('1') == 1", 37).unwrap_err();
    assert!(
        err.contains(
            "found no matching overload for '_==_' applied to '(kubernetes.Quantity, int)'"
        ),
        "{err}"
    );
    // format.named returns an optional.
    assert_eq!(
        stored("format.named('dns1123Label')", 37),
        Ok("optional_type(kubernetes.NamedFormat)".into())
    );
    assert_eq!(
        stored("format.named('uuid').value().validate('x')", 37),
        Ok("optional_type(list(string))".into())
    );
    // net.IP / net.CIDR are type identifiers.
    assert_eq!(stored("type(cidr('10.0.0.0/8')) == net.CIDR", 37), Ok("bool".into()));
    assert_eq!(stored("type(ip('10.0.0.1')) == net.IP", 37), Ok("bool".into()));
    assert_eq!(stored("cidr('10.0.0.0/8').ip()", 37), Ok("net.IP".into()));
    assert_eq!(stored("string(cidr('10.0.0.0/8').masked())", 37), Ok("string".into()));
    assert_eq!(stored("cidr('10.0.0.0/8').containsIP(ip('10.0.0.1'))", 37), Ok("bool".into()));
    assert_eq!(stored("ip.isCanonical('::1')", 37), Ok("bool".into()));
    // lists: typed element overloads, type parameters.
    assert_eq!(stored("[1.0, 2.0].max()", 37), Ok("double".into()));
    assert_eq!(stored("[duration('1s')].sum()", 37), Ok("duration".into()));
    assert_eq!(stored("['a'].lastIndexOf('a')", 37), Ok("int".into()));
    let err = stored("[[1]].min()", 37).unwrap_err();
    assert!(
        err.contains("found no matching overload for 'min' applied to 'list(list(int)).()'"),
        "{err}"
    );
    assert_eq!(stored("'model-a'.includes('model-a')", 37), Ok("bool".into()));
    // regex and url.
    assert_eq!(stored("'abc'.findAll('[a-z]', 2)", 37), Ok("list(string)".into()));
    assert_eq!(
        stored("url('https://a/?k=v').getQuery()", 37),
        Ok("map(string, list(string))".into())
    );
    // Library types are objects without fields.
    let err = stored("url('https://a/').host == 'a'", 37).unwrap_err();
    assert!(err.contains("undefined field 'host'"), "{err}");
    // Standard and extension functions sharing a name with library functions keep working.
    assert_eq!(stored("'abc'.indexOf('b') == 1 && string(1) == '1'", 37), Ok("bool".into()));
}

#[test]
fn every_declared_overload_has_an_implementation() {
    // Declarations (checker) and implementations (runtime) are written separately; they must
    // agree on ids, shape (member or global) and arity.
    let registry = vap_eval::library::registry();
    let features = Features::for_version(KubeVersion::NEWEST, EnvironmentMode::StoredExpressions);
    let base = vap_eval::environment::base_declarations(&features);
    let mut missing = Vec::new();
    for (function, id) in kubernetes_overloads(&features) {
        let decl = base.function(&function).unwrap();
        let o = decl.overloads.iter().find(|o| *o.id == *id).unwrap();
        match registry.by_id(&id) {
            Some(imp)
                if imp.function == function
                    && imp.member == o.member
                    && imp.arity == o.params.len() => {}
            other => missing.push(format!("{function} {id}: {other:?}")),
        }
    }
    assert!(missing.is_empty(), "declared without a matching implementation: {missing:?}");
    // And the other way: every Kubernetes implementation is declared at the newest version.
    let std = vap_eval::cel::stdlib::Registry::standard();
    let std_ids: BTreeSet<&str> = std.ids().into_iter().collect();
    let declared: BTreeSet<String> =
        kubernetes_overloads(&features).into_iter().map(|(_, id)| id).collect();
    let undeclared: Vec<&str> = registry
        .ids()
        .into_iter()
        .filter(|id| !std_ids.contains(id) && !declared.contains(*id))
        .collect();
    assert!(undeclared.is_empty(), "implemented but not declared: {undeclared:?}");
}
