//! vap-eval's own test format (`kind: AdmissionTest`, `docs/testing.md`): the whole pipeline,
//! exactly as kube-apiserver admits the request — no synthesized bindings, no skipped
//! matching — with expectations on the response the client would see.

use super::*;

const EXPECT_KEYS: [&str; 6] =
    ["allowed", "message", "reason", "code", "warnings", "auditAnnotations"];

pub(crate) fn run(
    doc: &Json,
    files: &Files<'_>,
    version: Option<&str>,
) -> Result<Vec<CaseResult>, String> {
    let mut objects = Vec::new();
    for f in strings(doc.get("manifests")) {
        objects.extend(files.objects(&f)?);
    }
    let version = doc.get("kubernetesVersion").and_then(Json::as_str).or(version);
    let set = compile_objects(&objects, version, false);
    let problems: Vec<String> = set
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            if d.field.is_empty() {
                d.message.clone()
            } else {
                format!("{}: {}", d.field, d.message)
            }
        })
        .collect();
    let mut out = Vec::new();
    for (i, t) in doc.get("tests").and_then(Json::as_array).into_iter().flatten().enumerate() {
        let name = t
            .get("name")
            .and_then(Json::as_str)
            .map(String::from)
            .unwrap_or_else(|| format!("tests[{i}]"));
        let load = |k: &str| -> Result<Option<Json>, String> {
            match t.get(k) {
                None | Some(Json::Null) => Ok(None),
                Some(Json::String(f)) => files.document(f).map(Some),
                Some(v) => Ok(Some(v.clone())),
            }
        };
        let (object, old, request) = match (load("object"), load("oldObject"), load("request")) {
            (Ok(o), Ok(p), Ok(r)) => (o, p, r),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                out.push(CaseResult::setup_error(name, "a request".into(), e));
                continue;
            }
        };
        let expect = t.get("expect").cloned().unwrap_or(json!({}));
        if let Some(unknown) =
            expect.as_object().and_then(|m| m.keys().find(|k| !EXPECT_KEYS.contains(&k.as_str())))
        {
            out.push(CaseResult::setup_error(
                name,
                "an expectation".into(),
                format!(
                    "expect.{unknown}: unknown field, expected one of {}",
                    EXPECT_KEYS.join(", ")
                ),
            ));
            continue;
        }
        let r = evaluate(&set, object.as_ref(), old.as_ref(), request);
        let status = r.response.status.as_ref();
        let actual = json!({
            "allowed": r.response.allowed,
            "message": status.map(|s| s.message.clone()),
            "reason": status.map(|s| s.reason.clone()),
            "code": status.map(|s| s.code),
            "warnings": r.response.warnings,
            "auditAnnotations": r.response.audit_annotations,
        });
        let mut c = CaseResult::new(name, String::new(), String::new());
        for key in EXPECT_KEYS {
            let Some(want) = expect.get(key) else { continue };
            let got = &actual[key];
            let same = match (key, want, got) {
                // Audit annotations: the listed keys, each with its value.
                ("auditAnnotations", Json::Object(w), Json::Object(g)) => {
                    w.iter().all(|(k, v)| g.get(k) == Some(v))
                }
                _ => want == got,
            };
            if !same {
                c.status = Status::Fail;
                c.diff.push(format!("- {key}: {want}"));
                c.diff.push(format!("+ {key}: {got}"));
            }
        }
        // The table shows the verdict; the diff shows every field that differs.
        let verdict = |v: &Json| match v.as_bool() {
            Some(true) => "allowed".to_string(),
            Some(false) => "denied".to_string(),
            None => "response".to_string(),
        };
        c.expected = verdict(expect.get("allowed").unwrap_or(&actual["allowed"]));
        c.actual = verdict(&actual["allowed"]);
        if c.status == Status::Fail && c.expected == c.actual {
            c.actual.push_str(" (differs)");
        }

        c.details.extend(
            r.diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| d.message.clone()),
        );
        c.warnings = problems
            .iter()
            .map(|p| format!("kube-apiserver would reject the manifests: {p}"))
            .collect();
        out.push(c);
    }
    Ok(out)
}
