#![cfg(not(target_arch = "wasm32"))]
//! The `vap-eval` binary, run as a user runs it: exit codes, output, JUnit, stdin, dumps.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn data(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(p).display().to_string()
}

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vap-eval"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: staging}\nspec: {replicas: 5}\n";

#[test]
fn test_runs_kyverno_kaptest_and_native_files_and_writes_junit() {
    let junit = std::env::temp_dir().join(format!("vap-eval-junit-{}.xml", std::process::id()));
    let o = run(&["test", &data(""), "--junit", junit.to_str().unwrap()], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("23 passed, 0 failed, 0 skipped"), "{out}");
    // The shortcut warnings: no binding, matchConstraints that never select a Deployment.
    assert!(
        out.contains(
            "no ValidatingAdmissionPolicyBinding references policy \"require-team-label\""
        ),
        "{out}"
    );
    assert!(out.contains("kube-apiserver would not evaluate policy \"wrong-group\" for this object: resourceRules[0] differs in apiGroups"), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("valid XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("tests"), Some("23"));
    assert_eq!(root.attribute("failures"), Some("0"));
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("testcase")).count(), 23);
    let _ = std::fs::remove_file(junit);
}

// kyverno-test.yaml results for a CEL ClusterPolicy, checked as `kyverno test` checks them
// (docs/kyverno-semantics.md §9; cmd/cli/kubectl-kyverno/commands/test): `rule` also names the
// rules generated for controllers (`lookupRuleResponses`), a resource no rule reports on is
// excluded (a pass), a policy Kyverno's validation rejects is skipped (not a failure). The
// file mirrors test/cli/test/cel-preconditions and check-deployment-namespace-cel.
#[test]
fn kyverno_test_checks_cel_cluster_policy_results() {
    let o = run(&["test", &data("kyverno-cel"), "-o", "json"], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let cases: Vec<(String, String, String)> = v
        .as_array()
        .and_then(|files| files.first())
        .and_then(|f| f["cases"].as_array())
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                    (s("name"), s("status"), s("actual"))
                })
                .collect()
        })
        .unwrap_or_default();
    let want = [
        ("results[0] no-latest-tag/check-image Pod/production/latest-pod", "pass", "fail"),
        ("results[1] no-latest-tag/check-image Pod/production/pinned-pod", "pass", "pass"),
        ("results[2] no-latest-tag/check-image Pod/production/exempt-pod", "pass", "skip"),
        ("results[3] no-latest-tag/check-image Pod/dev/dev-pod", "pass", "excluded"),
        (
            "results[4] no-latest-tag/autogen-check-image Deployment/production/latest-deploy",
            "pass",
            "fail",
        ),
        (
            "results[5] no-latest-tag/autogen-cronjob-check-image CronJob/production/pinned-cron",
            "pass",
            "pass",
        ),
        (
            "results[6] cel-with-context/r Pod/production/pinned-pod",
            "pass",
            "skipped: invalid policy",
        ),
        ("results[7] no-latest-tag/check-image Pod/production/legacy-pod", "pass", "skip"),
    ];
    let got: Vec<(&str, &str, &str)> =
        cases.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    assert_eq!(got, want, "{out}");

    // A wrong expectation fails with the rule's status and Kyverno's message.
    let dir = std::env::temp_dir().join(format!("vap-eval-kyverno-cel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let test = format!(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {{name: t}}\npolicies: [{:?}]\nresources: [{:?}]\nvariables: {:?}\nresults:\n- policy: no-latest-tag\n  rule: check-image\n  kind: Deployment\n  resources: [latest-deploy]\n  result: pass\n",
        data("kyverno-cel/policy.yaml"),
        data("kyverno-cel/resources.yaml"),
        data("kyverno-cel/values.yaml"),
    );
    let file = dir.join("kyverno-test.yaml");
    std::fs::write(&file, test).unwrap();
    let o = run(&["test", file.to_str().unwrap()], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("- pass\n    + fail"), "{out}");
    assert!(out.contains("images must not use the latest tag"), "{out}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_failing_test_exits_1_with_a_diff_and_a_junit_failure() {
    let dir = std::env::temp_dir().join(format!("vap-eval-fail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = data("kyverno/policy.yaml");
    let resources = data("kyverno/resources.yaml");
    let test = format!(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {{name: t}}\npolicies: [{policy:?}]\nresources: [{resources:?}]\nresults:\n- policy: require-team-label\n  kind: Deployment\n  resources: [staging-small]\n  result: pass\n- policy: require-team-label\n  kind: Deployment\n  resources: [missing]\n  result: pass\n"
    );
    let file = dir.join("kyverno-test.yaml");
    std::fs::write(&file, test).unwrap();
    let junit = dir.join("junit.xml");
    let o = run(&["test", file.to_str().unwrap(), "--junit", junit.to_str().unwrap()], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("- pass\n    + fail"), "{out}");
    assert!(out.contains("no Deployment named \"missing\""), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("valid XML");
    assert_eq!(doc.root_element().attribute("failures"), Some("2"));
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("failure")).count(), 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn eval_reads_the_object_from_stdin_and_answers_like_kubectl() {
    let o = run(
        &["eval", "-f", &data("kyverno/policy.yaml"), "-f", &data("native/namespaces.yaml"), "-"],
        Some(DEPLOYMENT),
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    // kubectl's rendering of an Invalid status with causes, as in the Kubernetes docs'
    // Validating Admission Policy page: `The deployments "nginx" is invalid: : ValidatingAdmissionPolicy …`.
    assert!(out.starts_with("The deployments \"web\" is invalid: : ValidatingAdmissionPolicy 'check-deployment-replicas' with binding 'check-deployment-replicas-binding' denied request: at most 2 replicas"), "{out}");
    assert!(
        out.contains("validations[0] deny: object.spec.replicas <= 2 — at most 2 replicas → Deny"),
        "{out}"
    );

    let o = run(
        &[
            "eval",
            "-f",
            &data("kyverno/policy.yaml"),
            "-f",
            &data("native/namespaces.yaml"),
            "-o",
            "json",
            "-",
        ],
        Some(DEPLOYMENT),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["response"]["allowed"], false);
    assert_eq!(v["response"]["status"]["code"], 422);
    assert_eq!(v["request"]["operation"], "CREATE");

    let small = DEPLOYMENT.replace("replicas: 5", "replicas: 1");
    let o = run(
        &[
            "eval",
            "-f",
            &data("kyverno/policy.yaml"),
            "-f",
            &data("native/namespaces.yaml"),
            "-o",
            "yaml",
            "-",
        ],
        Some(&small),
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("response:\n  allowed: true\n"), "{}", stdout(&o));
}

/// `--field-validation` is the request's `fieldValidation` (k8s.io/apiserver
/// pkg/endpoints/handlers/create.go `createHandler`: `fieldValidation(options.FieldValidation)`,
/// a strict decoding error is a 400 through `transformDecodeError` unless the directive is Warn;
/// apimachinery pkg/apis/meta/v1/validation `ValidateFieldValidation` for a value it does not
/// know). Without it the apiserver's default, Warn: the unknown field is a warning.
#[test]
fn eval_field_validation_flag() {
    let deployment = DEPLOYMENT.replace("replicas: 5", "replicas: 1, bogus: 1");
    let (policy, namespaces) = (data("kyverno/policy.yaml"), data("native/namespaces.yaml"));
    let eval = |extra: &[&str]| {
        let mut args = vec!["eval", "-f", &policy, "-f", &namespaces, "-"];
        args.extend_from_slice(extra);
        let o = run(&args, Some(&deployment));
        (o.status.code(), stdout(&o))
    };
    let (code, out) = eval(&[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("Warning: unknown field \"spec.bogus\"\n"), "{out}");
    let (code, out) = eval(&["--field-validation", "Strict"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("Error from server (BadRequest): error when creating \"-\": Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.bogus\"\n"), "{out}");
    let (code, out) = eval(&["--field-validation", "Ignore"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("Warning: unknown field"), "{out}");
    let (code, out) = eval(&["--field-validation", "strict"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("The CreateOptions \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"\n"), "{out}");
}

#[test]
fn check_renders_carets_and_exits_1_on_errors() {
    let dir = std::env::temp_dir().join(format!("vap-eval-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  failurePolicy: Fail\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}\n  validations:\n  - expression: \"object.spec.replicas > 1 + 'x'\"\n").unwrap();
    let o = run(&["check", "-f", bad.to_str().unwrap()], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains(&format!("ERROR: {}:10:41: ValidatingAdmissionPolicy/p: spec.validations[0].expression: found no matching overload for '_+_' applied to '(int, string)'", bad.display())), "{out}");
    assert!(out.contains("^^^"), "{out}");
    let o = run(&["check", "-f", &data("kyverno/policy.yaml")], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn audit_reports_a_broken_document_and_goes_on() {
    let o = run(
        &[
            "audit",
            "-f",
            &data("kyverno/policy.yaml"),
            "-f",
            &data("native/namespaces.yaml"),
            &data("audit/dump.yaml"),
        ],
        None,
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("4 objects: 2 denied, 0 with warnings, 1 could not be evaluated"),
        "{out}"
    );
    assert!(out.contains("DENIED      Deployment staging/after-the-broken-one"), "{out}");
    assert!(out.contains("invalid YAML"), "{out}");
    assert!(!out.contains("staging/small"), "only notable objects are listed: {out}");
}

#[test]
fn audit_reads_json_lines_from_stdin_as_json() {
    let lines = "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"a\",\"namespace\":\"staging\"},\"spec\":{\"replicas\":9}}\n{\"broken\": \n{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"b\",\"namespace\":\"dev\"},\"spec\":{\"replicas\":9}}\n";
    let o = run(
        &[
            "audit",
            "-f",
            &data("kyverno/policy.yaml"),
            "-f",
            &data("native/namespaces.yaml"),
            "-o",
            "json",
            "--update",
            "-",
        ],
        Some(lines),
    );
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert_eq!(v["summary"]["objects"], 3);
    assert_eq!(v["summary"]["denied"], 1);
    assert_eq!(v["summary"]["problems"], 1);
    assert_eq!(v["summary"]["assumedNamespaces"], 1);
    let c =
        &v["summary"]["bindings"]["check-deployment-replicas"]["check-deployment-replicas-binding"];
    assert_eq!((c["matched"].as_u64(), c["denied"].as_u64()), (Some(1), Some(1)));
    assert_eq!(v["objects"][0]["name"], "a");
    assert_eq!(v["objects"][1]["origin"]["line"], 2);
}

#[test]
fn completions_are_generated() {
    let o = run(&["completions", "bash"], None);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("vap-eval"));
}
