//! Policy tests from files (the CLI's `test`), in the formats people already have, each with
//! its own tool's semantics (`docs/testing.md`):
//!
//! - [`kyverno`]: Kyverno CLI's `kyverno-test.yaml` (`apiVersion: cli.kyverno.io/v1alpha1`,
//!   `kind: Test`), for ValidatingAdmissionPolicy and Kyverno ClusterPolicy/Policy results;
//! - [`kaptest`]: pfnet/kaptest's test manifests (`vapTestSuites`, or v0.1's `testSuites`);
//! - [`native`]: vap-eval's own `kind: AdmissionTest`, for what neither expresses (the exact
//!   response message, warnings, audit annotations, oldObject and request fields), evaluated
//!   exactly as kube-apiserver does.
//!
//! Kyverno and kaptest take shortcuts the apiserver does not (a policy without a binding is
//! evaluated as if bound with `Deny`; kaptest ignores `matchConstraints`). Each result carries a
//! warning when the test passes only thanks to one: the policy has no binding, its
//! `matchConstraints` would not select the object in a cluster, or the apiserver would reject
//! the policy or binding.
//!
//! Files are read through a caller-supplied function, so the module has no filesystem access
//! of its own (it builds for wasm too).

pub mod kaptest;
pub mod kyverno;
pub mod native;

use crate::admission::policy_set::PolicySet;
use crate::admission::trace::PolicyTrace;
use crate::admission::types::{LabelSelector, MatchResources, NamedRuleWithOperations};
use crate::admission::yaml::parse_stream;
use crate::api::{
    compile, evaluate_with, parse_input_text, Document, EvaluateResult, Manifests,
    PolicySetOptions, RequestDocuments,
};
use crate::diagnostic::Severity;
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::path::Path;

/// Reads a file by path (as given, or joined to the test file's directory).
pub type ReadFile<'a> = &'a dyn Fn(&str) -> Result<String, String>;

/// The test-file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Format {
    Kyverno,
    Kaptest,
    VapEval,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Kyverno => "kyverno",
            Format::Kaptest => "kaptest",
            Format::VapEval => "vap-eval",
        }
    }
}

/// The format of a parsed test file, or `None` when it is not one.
pub fn detect(doc: &Json) -> Option<Format> {
    let s = |k: &str| doc.get(k).and_then(Json::as_str).unwrap_or_default();
    if s("kind") == "AdmissionTest" {
        return Some(Format::VapEval);
    }
    if s("apiVersion").starts_with("cli.kyverno.io/") && s("kind") == "Test" {
        return Some(Format::Kyverno);
    }
    if ["vapTestSuites", "testSuites", "mapTestSuites"].iter().any(|k| doc.get(k).is_some()) {
        return Some(Format::Kaptest);
    }
    // Kyverno's older files have no apiVersion: `name`, `policies`, `resources`, `results`.
    if doc.get("results").is_some() && doc.get("policies").is_some() {
        return Some(Format::Kyverno);
    }
    None
}

/// A test's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    Pass,
    Fail,
    /// Not evaluated (e.g. a Kyverno ClusterPolicy result); says why in `details`.
    Skipped,
}

/// One test's result.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub name: String,
    pub status: Status,
    /// The expectation and the outcome, in the format's words (`fail`, `deny`, `allowed: false`).
    pub expected: String,
    pub actual: String,
    /// For a failure: expected (`-`) against actual (`+`), one line each.
    pub diff: Vec<String>,
    /// What the evaluation said (messages, the reason a policy was skipped).
    pub details: Vec<String>,
    /// The test passes only thanks to a shortcut kube-apiserver does not take.
    pub warnings: Vec<String>,
}

impl CaseResult {
    fn new(name: String, expected: String, actual: String) -> Self {
        let status = if expected == actual { Status::Pass } else { Status::Fail };
        let diff = if status == Status::Fail {
            vec![format!("- {expected}"), format!("+ {actual}")]
        } else {
            Vec::new()
        };
        CaseResult {
            name,
            status,
            expected,
            actual,
            diff,
            details: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// A test that could not be set up (a missing file, object or policy): a failure.
    fn setup_error(name: String, expected: String, message: String) -> Self {
        let mut r = CaseResult::new(name, expected, "setup error".into());
        r.status = Status::Fail;
        r.diff.push(format!("  {message}"));
        r.details.push(message);
        r
    }

    fn fail_with(&mut self, expected: String, actual: String) {
        self.status = Status::Fail;
        self.diff.push(format!("- {expected}"));
        self.diff.push(format!("+ {actual}"));
    }
}

/// One file's results.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileReport {
    pub path: String,
    /// `None` when the file is not a test file of a known format.
    pub format: Option<Format>,
    pub cases: Vec<CaseResult>,
}

/// Run every test in the file at `path` (`text` its contents). A file that cannot be read as
/// a test file is one failed case saying why.
pub fn run_file(path: &str, text: &str, read: ReadFile<'_>, version: Option<&str>) -> FileReport {
    let doc = match parse_input_text(path, text) {
        Ok(d) => d,
        Err(e) => return file_error(path, None, e),
    };
    let Some(format) = detect(&doc) else {
        return file_error(
            path,
            None,
            format!("{path}: not a kyverno-test.yaml, kaptest or vap-eval AdmissionTest file"),
        );
    };
    let base =
        Path::new(path).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let files = Files { base, read };
    let cases = match format {
        Format::Kyverno => kyverno::run(&doc, &files, version),
        Format::Kaptest => kaptest::run(&doc, &files, version),
        Format::VapEval => native::run(&doc, &files, version),
    };
    match cases {
        // A file that defines no test must not pass silently.
        Ok(cases) if cases.is_empty() => {
            file_error(path, Some(format), format!("{path}: the file defines no tests"))
        }
        Ok(cases) => FileReport { path: path.to_string(), format: Some(format), cases },
        Err(e) => file_error(path, Some(format), e),
    }
}

fn file_error(path: &str, format: Option<Format>, message: String) -> FileReport {
    FileReport {
        path: path.to_string(),
        format,
        cases: vec![CaseResult::setup_error(path.to_string(), "a test file".into(), message)],
    }
}

/// Files referenced by a test file, relative to its directory.
pub(crate) struct Files<'a> {
    base: String,
    read: ReadFile<'a>,
}

impl Files<'_> {
    fn path(&self, rel: &str) -> String {
        if self.base.is_empty() || Path::new(rel).is_absolute() {
            rel.to_string()
        } else {
            Path::new(&self.base).join(rel).to_string_lossy().into_owned()
        }
    }

    fn text(&self, rel: &str) -> Result<String, String> {
        let p = self.path(rel);
        (self.read)(&p).map_err(|e| format!("{p}: {e}"))
    }

    /// Every object in the file (multi-document; `List` items flattened).
    fn objects(&self, rel: &str) -> Result<Vec<Json>, String> {
        let text = self.text(rel)?;
        objects_of(&text).map_err(|e| format!("{}: {e}", self.path(rel)))
    }

    /// The one document of the file.
    fn document(&self, rel: &str) -> Result<Json, String> {
        let text = self.text(rel)?;
        parse_input_text(&self.path(rel), &text)
    }
}

/// The objects of a YAML/JSON stream, `List` items flattened.
pub(crate) fn objects_of(text: &str) -> Result<Vec<Json>, String> {
    let (docs, errors) = parse_stream(text);
    if let Some(e) = errors.first() {
        return Err(format!("line {}, column {}: {}", e.line, e.column, e.message));
    }
    let mut out = Vec::new();
    for d in docs {
        let kind = d.value.get("kind").and_then(Json::as_str).unwrap_or_default();
        match d.value.get("items").and_then(Json::as_array) {
            Some(items) if kind.ends_with("List") => out.extend(items.iter().cloned()),
            _ if d.value.is_object() => out.push(d.value),
            _ => {}
        }
    }
    Ok(out)
}

pub(crate) fn str_of<'a>(v: &'a Json, path: &[&str]) -> &'a str {
    let mut cur = v;
    for k in path {
        match cur.get(k) {
            Some(next) => cur = next,
            None => return "",
        }
    }
    cur.as_str().unwrap_or_default()
}

pub(crate) fn strings(v: Option<&Json>) -> Vec<String> {
    match v {
        Some(Json::Array(a)) => a.iter().filter_map(Json::as_str).map(String::from).collect(),
        Some(Json::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

pub(crate) fn is_kind(o: &Json, kind: &str) -> bool {
    str_of(o, &["kind"]) == kind
        && str_of(o, &["apiVersion"]).starts_with("admissionregistration.k8s.io/")
}

pub(crate) fn name_of(o: &Json) -> &str {
    str_of(o, &["metadata", "name"])
}

pub(crate) fn namespace_of(o: &Json) -> &str {
    str_of(o, &["metadata", "namespace"])
}

/// A binding with no matchResources and `validationActions: [Deny]`: how Kyverno's CLI and
/// kaptest evaluate a policy without one.
pub(crate) fn synthesized_binding(policy: &str, param_ref: Option<Json>) -> Json {
    let mut spec = json!({"policyName": policy, "validationActions": ["Deny"]});
    if let Some(p) = param_ref {
        spec["paramRef"] = p;
    }
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": format!("{policy}-vap-eval-test")},
        "spec": spec,
    })
}

/// A Namespace object with exactly these labels.
pub(crate) fn namespace_object(name: &str, labels: Option<&Json>) -> Json {
    let mut ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    if let Some(l) = labels {
        ns["metadata"]["labels"] = l.clone();
    }
    ns
}

/// `as_given`: evaluate objects exactly as written, as Kyverno's CLI and kaptest do; false: as
/// the apiserver stores them (the apiserver's view, and our own test format).
pub(crate) fn compile_objects(
    objects: &[Json],
    version: Option<&str>,
    as_given: bool,
) -> PolicySet {
    let docs = objects.iter().cloned().map(Document::Object).collect();
    compile(
        &Manifests::List(docs),
        &PolicySetOptions {
            kubernetes_version: version.map(String::from),
            objects_as_given: as_given,
            ..Default::default()
        },
    )
}

/// Make `policy` select every request: what a tool does when it ignores `matchConstraints`.
pub(crate) fn match_everything(set: &mut PolicySet, policy: &str) {
    let all = || vec!["*".to_string()];
    for p in set.manifests.policies.iter_mut().filter(|p| p.object.metadata.name == policy) {
        p.object.spec.match_constraints = Some(MatchResources {
            namespace_selector: Some(LabelSelector::default()),
            object_selector: Some(LabelSelector::default()),
            resource_rules: vec![NamedRuleWithOperations {
                operations: all(),
                api_groups: all(),
                api_versions: all(),
                resources: all(),
                scope: Some("*".into()),
                ..Default::default()
            }],
            exclude_resource_rules: Vec::new(),
            match_policy: Some("Exact".into()),
        });
    }
}

pub(crate) fn evaluate(
    set: &PolicySet,
    object: Option<&Json>,
    old: Option<&Json>,
    request: Option<Json>,
) -> EvaluateResult {
    evaluate_with(
        set,
        &RequestDocuments {
            object: object.cloned().map(Document::Object),
            old_object: old.cloned().map(Document::Object),
            request: request.map(Document::Object),
        },
    )
}

pub(crate) fn policy_trace<'a>(r: &'a EvaluateResult, policy: &str) -> Option<&'a PolicyTrace> {
    r.policies.iter().find(|p| p.name == policy)
}

/// Warnings for a test whose tool took a shortcut: `apiserver` is the evaluation with the
/// policy's real `matchConstraints` (and its real bindings, or the synthesized one).
pub(crate) fn shortcut_warnings(
    set: &PolicySet,
    apiserver: &EvaluateResult,
    policy: &str,
    has_binding: bool,
    tool: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    if !has_binding {
        out.push(format!(
            "no ValidatingAdmissionPolicyBinding references policy {policy:?}: kube-apiserver never evaluates it; {tool} evaluated it as if bound with validationActions [Deny]"
        ));
    }
    if let Some(t) = policy_trace(apiserver, policy) {
        if !t.matched && !t.reason.starts_with("no binding") {
            out.push(format!(
                "kube-apiserver would not evaluate policy {policy:?} for this object: {}",
                t.reason
            ));
        }
    }
    let own = format!("ValidatingAdmissionPolicy/{policy}:");
    for d in &set.diagnostics {
        let relevant = d.field.starts_with(&own)
            || d.field.starts_with("ValidatingAdmissionPolicyBinding/")
                && binding_of(set, &d.field, policy);
        if d.severity == Severity::Error && d.code.starts_with("api-") && relevant {
            out.push(format!("kube-apiserver would reject {}: {}", d.field, d.message));
        }
    }
    out
}

fn binding_of(set: &PolicySet, field: &str, policy: &str) -> bool {
    let name = field
        .trim_start_matches("ValidatingAdmissionPolicyBinding/")
        .split(':')
        .next()
        .unwrap_or_default();
    set.manifests
        .bindings
        .iter()
        .any(|b| b.object.metadata.name == name && b.object.spec.policy_name == policy)
}

/// A JUnit XML report (the schema CI servers read: `testsuites` › `testsuite` per file ›
/// `testcase`, with `failure` or `skipped`).
pub fn junit(reports: &[FileReport]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let count = |s: Status| reports.iter().flat_map(|r| &r.cases).filter(|c| c.status == s).count();
    let total: usize = reports.iter().map(|r| r.cases.len()).sum();
    out.push_str(&format!(
        "<testsuites name=\"vap-eval test\" tests=\"{total}\" failures=\"{}\" skipped=\"{}\">\n",
        count(Status::Fail),
        count(Status::Skipped)
    ));
    for r in reports {
        let n = |s: Status| r.cases.iter().filter(|c| c.status == s).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
            xml(&r.path),
            r.cases.len(),
            n(Status::Fail),
            n(Status::Skipped)
        ));
        for c in &r.cases {
            out.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\">\n",
                xml(&r.path),
                xml(&c.name)
            ));
            match c.status {
                Status::Fail => out.push_str(&format!(
                    "      <failure message=\"expected {}, got {}\">{}</failure>\n",
                    xml(&c.expected),
                    xml(&c.actual),
                    xml(&[c.diff.clone(), c.details.clone()].concat().join("\n"))
                )),
                Status::Skipped => out.push_str(&format!(
                    "      <skipped message=\"{}\"/>\n",
                    xml(&c.details.join("; "))
                )),
                Status::Pass => {}
            }
            if !c.warnings.is_empty() {
                out.push_str(&format!(
                    "      <system-err>{}</system-err>\n",
                    xml(&c
                        .warnings
                        .iter()
                        .map(|w| format!("WARNING: {w}"))
                        .collect::<Vec<_>>()
                        .join("\n"))
                ));
            }
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Escape text for XML content and attributes; characters XML 1.0 cannot hold become U+FFFD.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(files: &[(&str, &str)], test: &str) -> FileReport {
        let map: std::collections::BTreeMap<String, String> =
            files.iter().map(|(k, v)| (format!("t/{k}"), v.to_string())).collect();
        let read = |p: &str| map.get(p).cloned().ok_or_else(|| "no such file".to_string());
        run_file(&format!("t/{test}"), &map[&format!("t/{test}")], &read, None)
    }

    const POLICY: &str = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  failurePolicy: Fail\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}\n  validations:\n  - expression: object.spec.replicas < 3\n";
    const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: team}\nspec: {replicas: 5}\n";

    fn kyverno_test(result: &str) -> String {
        format!("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {{name: t}}\npolicies: [policy.yaml]\nresources: [resources.yaml]\nresults:\n- {{policy: p, kind: Deployment, resources: [d], result: {result}}}\n")
    }

    // Kyverno (pkg/admissionpolicy/validate.go): the namespace object carries only the values
    // file's labels, not the apiserver's kubernetes.io/metadata.name, so a binding selecting on
    // it does not match there: `skip`, where kube-apiserver would deny.
    #[test]
    fn kyverno_namespaces_have_only_the_values_labels() {
        let binding = "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec:\n  policyName: p\n  validationActions: [Deny]\n  matchResources:\n    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team}}\n";
        let policy = format!("{POLICY}{binding}");
        let r = run(
            &[
                ("policy.yaml", &policy),
                ("resources.yaml", DEPLOY),
                ("kyverno-test.yaml", &kyverno_test("skip")),
            ],
            "kyverno-test.yaml",
        );
        assert_eq!(r.cases[0].status, Status::Pass, "{:?}", r.cases);
        let values =
            "namespaceSelector:\n- {name: team, labels: {kubernetes.io/metadata.name: team}}\n";
        let test = kyverno_test("fail") + "variables: values.yaml\n";
        let r = run(
            &[
                ("policy.yaml", &policy),
                ("resources.yaml", DEPLOY),
                ("values.yaml", values),
                ("kyverno-test.yaml", &test),
            ],
            "kyverno-test.yaml",
        );
        assert_eq!(r.cases[0].status, Status::Pass, "{:?}", r.cases);
        assert!(r.cases[0].warnings.is_empty(), "{:?}", r.cases[0].warnings);
    }

    // A binding without validationActions is rejected by kube-apiserver (v1: Required value);
    // Kyverno's CLI evaluates it anyway, and the test says so.
    #[test]
    fn kyverno_warns_when_the_apiserver_would_reject_the_binding() {
        let binding = "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: p}\n";
        let policy = format!("{POLICY}{binding}");
        let r = run(
            &[
                ("policy.yaml", &policy),
                ("resources.yaml", DEPLOY),
                ("kyverno-test.yaml", &kyverno_test("fail")),
            ],
            "kyverno-test.yaml",
        );
        let c = &r.cases[0];
        assert_eq!(c.status, Status::Pass, "{c:?}");
        assert!(
            c.warnings.iter().any(|w| w.starts_with("kube-apiserver would reject ValidatingAdmissionPolicyBinding/b: spec.validationActions")),
            "{:?}",
            c.warnings
        );
    }

    // kaptest (README, "Evaluation Results"): an error wins over a denial; failurePolicy does
    // not matter; matchConstraints are not applied.
    #[test]
    fn kaptest_errors_win_and_match_constraints_are_ignored() {
        let policy = POLICY
            .replace("failurePolicy: Fail", "failurePolicy: Ignore")
            .replace("apiGroups: [apps]", "apiGroups: [\"\"]")
            + "  - expression: object.spec.missing == 1\n";
        let test = "version: v1alpha1\npolicies: [policy.yaml]\nresources: [resources.yaml]\nvapTestSuites:\n- policy: p\n  tests:\n  - object: {kind: Deployment, name: d}\n    expect: error\n";
        let r = run(
            &[("policy.yaml", &policy), ("resources.yaml", DEPLOY), ("kaptest.yaml", test)],
            "kaptest.yaml",
        );
        let c = &r.cases[0];
        assert_eq!((c.status, c.actual.as_str()), (Status::Pass, "error"), "{c:?}");
        assert!(c.warnings.iter().any(|w| w.contains("differs in apiGroups")), "{:?}", c.warnings);
        assert!(
            c.warnings.iter().any(|w| w.starts_with("no ValidatingAdmissionPolicyBinding")),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn missing_files_and_empty_files_fail() {
        let r = run(&[("kyverno-test.yaml", &kyverno_test("pass"))], "kyverno-test.yaml");
        assert_eq!(r.cases.len(), 1);
        assert_eq!(r.cases[0].status, Status::Fail);
        assert!(r.cases[0].details[0].contains("t/policy.yaml: no such file"), "{:?}", r.cases[0]);
        let r = run(&[("a.yaml", "kind: AdmissionTest\ntests: []\n")], "a.yaml");
        assert_eq!(r.cases[0].status, Status::Fail);
        assert!(r.cases[0].details[0].ends_with("the file defines no tests"));
    }

    #[test]
    fn junit_is_one_suite_per_file_with_failures_and_skips() {
        let mut c = CaseResult::new("a <b>".into(), "pass".into(), "fail".into());
        c.warnings.push("w".into());
        let mut s = CaseResult::new("s".into(), "x".into(), "x".into());
        s.status = Status::Skipped;
        let x = junit(&[FileReport {
            path: "f&.yaml".into(),
            format: Some(Format::Kyverno),
            cases: vec![c, s],
        }]);
        assert!(
            x.contains(
                "<testsuites name=\"vap-eval test\" tests=\"2\" failures=\"1\" skipped=\"1\">"
            ),
            "{x}"
        );
        assert!(x.contains("<testcase classname=\"f&amp;.yaml\" name=\"a &lt;b&gt;\">"), "{x}");
        assert!(
            x.contains("<failure message=\"expected pass, got fail\">- pass\n+ fail</failure>"),
            "{x}"
        );
        assert!(x.contains("<system-err>WARNING: w</system-err>"), "{x}");
    }

    #[test]
    fn xml_escapes_markup_and_control_characters() {
        assert_eq!(xml("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;\u{FFFD}");
    }

    #[test]
    fn formats_are_detected_by_their_markers() {
        let f = |t: &str| detect(&parse_input_text("t", t).unwrap());
        assert_eq!(f("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test"), Some(Format::Kyverno));
        assert_eq!(f("name: t\npolicies: [p.yaml]\nresults: []"), Some(Format::Kyverno));
        assert_eq!(f("version: v1alpha1\nvapTestSuites: []"), Some(Format::Kaptest));
        assert_eq!(f("validatingAdmissionPolicies: []\ntestSuites: []"), Some(Format::Kaptest));
        assert_eq!(f("kind: AdmissionTest"), Some(Format::VapEval));
        assert_eq!(f("kind: Deployment"), None);
    }
}
