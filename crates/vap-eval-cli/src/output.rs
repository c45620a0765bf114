//! Rendering: colours (only on a terminal, never with `NO_COLOR`), diagnostics located in the
//! files they came from, kubectl-like evaluation text, the test table and the audit report.

use serde_json::Value as Json;
use std::borrow::Cow;
use std::io::IsTerminal;
use vap_eval::api::{render, to_js, EvaluateResult};
use vap_eval::audit::{ObjectReport, Summary};
use vap_eval::diagnostic::{Diagnostic, Severity, SourceRef, Span};
use vap_eval::testing::{FileReport, Status};

#[derive(Clone, Copy)]
pub struct Paint(bool);

impl Paint {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty (no-color.org).
    pub fn for_stdout() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Paint(std::io::stdout().is_terminal() && !no_color)
    }

    fn wrap(self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    pub fn red(self, s: &str) -> String {
        self.wrap("31", s)
    }
    pub fn green(self, s: &str) -> String {
        self.wrap("32", s)
    }
    pub fn yellow(self, s: &str) -> String {
        self.wrap("33", s)
    }
    pub fn dim(self, s: &str) -> String {
        self.wrap("2", s)
    }
    pub fn bold(self, s: &str) -> String {
        self.wrap("1", s)
    }

    /// The first line of a rendered diagnostic in its severity's colour.
    pub fn severity(self, severity: Severity, rendered: &str) -> String {
        let (head, rest) = rendered.split_once('\n').map_or((rendered, ""), |(h, r)| (h, r));
        let head = match severity {
            Severity::Error => self.red(head),
            Severity::Warning => self.yellow(head),
            Severity::Info => self.dim(head),
        };
        if rest.is_empty() {
            head
        } else {
            format!("{head}\n{rest}")
        }
    }
}

/// The manifest files joined into the one text the library reads (`---` between files), and
/// where each file starts in it, so diagnostics name the file and its own line.
#[derive(Default)]
pub struct SourceMap {
    pub text: String,
    files: Vec<(String, usize, usize)>,
}

impl SourceMap {
    pub fn add(&mut self, name: &str, text: String) {
        if !self.text.is_empty() {
            self.text.push_str("\n---\n");
        }
        let start = self.text.len();
        self.text.push_str(&text);
        self.files.push((name.to_string(), start, self.text.len()));
    }

    /// The file holding manifest byte `offset`, its start and text.
    fn file_at(&self, offset: usize) -> Option<(&str, usize, &str)> {
        self.files
            .iter()
            .find(|(_, s, e)| (*s..=*e).contains(&offset))
            .map(|(n, s, e)| (n.as_str(), *s, &self.text[*s..*e]))
    }

    /// A manifest diagnostic rendered against its own file (`file.yaml:L:C`); an input's
    /// (`object`, …) against `inputs`' text.
    pub fn render(&self, d: &Diagnostic, inputs: &dyn Fn(&str) -> Option<String>) -> String {
        match (&d.source, d.span) {
            (Some(SourceRef::Manifest { .. }), Some(span)) => {
                match self.file_at(span.start as usize) {
                    Some((name, start, text)) => {
                        let mut local = d.clone();
                        local.span = Some(Span {
                            start: span.start - start as u32,
                            end: span.end.saturating_sub(start as u32),
                        });
                        local.source = Some(SourceRef::Input { name: name.to_string() });
                        render(&local, Some(text))
                    }
                    None => render(d, Some(&self.text)),
                }
            }
            (Some(SourceRef::Input { name }), _) => render(d, inputs(name).as_deref()),
            (Some(SourceRef::Expression { expression }), _) => render(d, Some(expression)),
            _ => render(d, None),
        }
    }
}

/// The package's result format: the result with diagnostics as JavaScript receives them.
pub fn result_json(
    r: &EvaluateResult,
    map: &SourceMap,
    inputs: &dyn Fn(&str) -> Option<String>,
) -> Json {
    let mut value = serde_json::to_value(r).unwrap_or(Json::Null);
    let text_of = |s: &SourceRef| match s {
        SourceRef::Manifest { .. } => Some(Cow::Borrowed(map.text.as_str())),
        SourceRef::Input { name } => inputs(name).map(Cow::Owned),
        SourceRef::Expression { expression } => Some(Cow::Owned(expression.clone())),
    };
    let diagnostics: Vec<Json> = r
        .diagnostics
        .iter()
        .map(|d| serde_json::to_value(to_js(d, &text_of)).unwrap_or(Json::Null))
        .collect();
    value["diagnostics"] = Json::Array(diagnostics);
    value
}

/// Block-style YAML for a JSON value (strings JSON-quoted: valid YAML double-quoted scalars).
pub fn yaml(v: &Json) -> String {
    let mut out = String::new();
    emit(v, 0, &mut out);
    out.trim_end().to_string()
}

fn scalar(v: &Json) -> String {
    match v {
        Json::Object(m) if m.is_empty() => "{}".into(),
        Json::Array(a) if a.is_empty() => "[]".into(),
        v => v.to_string(),
    }
}

fn is_block(v: &Json) -> bool {
    matches!(v, Json::Object(m) if !m.is_empty()) || matches!(v, Json::Array(a) if !a.is_empty())
}

fn emit(v: &Json, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Json::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                let key = Json::String(k.clone()).to_string();
                let key =
                    if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.is_empty() {
                        k.clone()
                    } else {
                        key
                    };
                if is_block(v) {
                    out.push_str(&format!("{pad}{key}:\n"));
                    emit(v, indent + 2, out);
                } else {
                    out.push_str(&format!("{pad}{key}: {}\n", scalar(v)));
                }
            }
        }
        Json::Array(a) if !a.is_empty() => {
            for v in a {
                if is_block(v) {
                    let mut inner = String::new();
                    emit(v, indent + 2, &mut inner);
                    // `- ` takes the place of the first line's indentation.
                    out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                } else {
                    out.push_str(&format!("{pad}- {}\n", scalar(v)));
                }
            }
        }
        v => out.push_str(&format!("{pad}{}\n", scalar(v))),
    }
}

/// kubectl's words for the response, then the trace and the diagnostics.
pub fn eval_text(
    r: &EvaluateResult,
    map: &SourceMap,
    inputs: &dyn Fn(&str) -> Option<String>,
    file: &str,
    paint: Paint,
) -> String {
    let mut out = String::new();
    for w in &r.response.warnings {
        out.push_str(&format!("{} {w}\n", paint.yellow("Warning:")));
    }
    let verb = match r.request.as_ref().map(|q| q.operation.as_str()) {
        Some("UPDATE") => ("updating", "configured"),
        Some("DELETE") => ("deleting", "deleted"),
        _ => ("creating", "created"),
    };
    match (&r.response.status, &r.request) {
        // kubectl's checkErr: an Invalid status with details is "The <resource> <name> is
        // invalid: " and its causes as `field: message` (one cause printed alone, several as
        // a list); any other reason "Error from server (<reason>): " and the message, which
        // `create -f` prefixes with the file.
        (Some(s), _) if s.reason == "Invalid" => {
            let d = &s.details;
            let head = if !d.kind.is_empty() || !d.name.is_empty() {
                format!("The {} {:?} is invalid", d.kind, d.name)
            } else {
                "The request is invalid".to_string()
            };
            let causes: Vec<String> =
                d.causes.iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
            let line = match causes.len() {
                0 => head,
                1 => format!("{head}: {}", causes[0]),
                _ => format!("{head}: [{}]", causes.join(", ")),
            };
            out.push_str(&paint.red(&line));
        }
        (Some(s), _) => out.push_str(&paint.red(&format!(
            "Error from server ({}): error when {} \"{file}\": {}",
            s.reason, verb.0, s.message
        ))),
        (None, Some(q)) => {
            let group = q.resource.group.as_str();
            let resource = q.resource.resource.as_str();
            let singular = q.kind.kind.to_lowercase();
            let what = if group.is_empty() { singular } else { format!("{singular}.{group}") };
            let _ = resource;
            out.push_str(&paint.green(&format!("{what}/{} {} (admitted)", q.name, verb.1)));
        }
        (None, None) => out.push_str("no request: give an object or --old-object"),
    }
    out.push('\n');
    if !r.response.audit_annotations.is_empty() {
        out.push_str(&format!("\n{}\n", paint.bold("Audit annotations:")));
        for (k, v) in &r.response.audit_annotations {
            out.push_str(&format!("  {k}: {v}\n"));
        }
    }
    out.push_str(&format!("\n{}\n", paint.bold("Trace:")));
    // No policy ran because the chain stopped before them (the decoder's 400, a mutating
    // webhook's rejection): say so.
    if r.policies.is_empty() {
        if let Some(d) = r.diagnostics.iter().find(|d| d.code == "admission-chain-stopped") {
            out.push_str(&format!("  {}\n", paint.dim(&d.message)));
        }
    }
    for p in &r.policies {
        let mark = if p.matched { paint.green("matched") } else { paint.dim("not matched") };
        out.push_str(&format!("  ValidatingAdmissionPolicy {} — {mark}: {}\n", p.name, p.reason));
        for b in &p.bindings {
            let mark = if b.matched { paint.green("matched") } else { paint.dim("not matched") };
            out.push_str(&format!(
                "    binding {} [{}] — {mark}: {}\n",
                b.name,
                b.validation_actions.join(", "),
                b.reason
            ));
            for e in &b.evaluations {
                if let Some(p) = &e.param {
                    let ns = if p.namespace.is_empty() {
                        String::new()
                    } else {
                        format!("{}/", p.namespace)
                    };
                    out.push_str(&format!("      param {ns}{}\n", p.name));
                }
                for m in &e.match_conditions {
                    let v = m
                        .value
                        .as_ref()
                        .map(|v| v.to_string())
                        .or(m.error.clone())
                        .unwrap_or_default();
                    out.push_str(&format!(
                        "      matchCondition {}: {v}\n",
                        m.name.as_deref().unwrap_or("")
                    ));
                }
                if !e.matched {
                    out.push_str("      a matchCondition is false: not evaluated\n");
                }
                if let Some(err) = &e.error {
                    out.push_str(&format!("      {}\n", paint.red(&format!("error: {err}"))));
                }
                for v in &e.validations {
                    let decision = match v.decision {
                        "admit" => paint.green("admit"),
                        "deny" => paint.red("deny"),
                        d => paint.red(d),
                    };
                    let mut line =
                        format!("      validations[{}] {decision}: {}", v.index, v.expression);
                    if let Some(m) = &v.message {
                        line.push_str(&format!(" — {m}"));
                    }
                    if !v.actions.is_empty() {
                        line.push_str(&format!(" → {}", v.actions.join(", ")));
                    }
                    out.push_str(&line);
                    out.push('\n');
                }
            }
        }
    }
    if !r.diagnostics.is_empty() {
        out.push('\n');
        for d in &r.diagnostics {
            out.push_str(&paint.severity(d.severity, &map.render(d, inputs)));
            out.push_str("\n\n");
        }
    }
    out
}

pub fn test_table(reports: &[FileReport], paint: Paint) -> String {
    let mut out = String::new();
    let mut counts = [0usize; 3];
    let mut warned = 0usize;
    let rows: Vec<(String, &str, String, String, String)> = reports
        .iter()
        .flat_map(|r| {
            r.cases.iter().map(move |c| {
                let status = match c.status {
                    Status::Pass => "PASS",
                    Status::Fail => "FAIL",
                    Status::Skipped => "SKIP",
                };
                (r.path.clone(), status, c.name.clone(), c.expected.clone(), c.actual.clone())
            })
        })
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| match i {
                0 => r.0.chars().count(),
                2 => r.2.chars().count(),
                _ => 0,
            })
            .max()
            .unwrap_or(0)
            .min(60)
    };
    let (wf, wn) = (width(0).max(4), width(2).max(4));
    out.push_str(
        &paint
            .bold(&format!("{:<6} {:<wf$}  {:<wn$}  EXPECTED → ACTUAL", "RESULT", "FILE", "TEST")),
    );
    out.push('\n');
    for (file, status, name, expected, actual) in &rows {
        let s = match *status {
            "PASS" => paint.green(&format!("{status:<6}")),
            "FAIL" => paint.red(&format!("{status:<6}")),
            _ => paint.yellow(&format!("{status:<6}")),
        };
        out.push_str(&format!("{s} {file:<wf$}  {name:<wn$}  {expected} → {actual}\n"));
    }
    for r in reports {
        for c in &r.cases {
            counts[match c.status {
                Status::Pass => 0,
                Status::Fail => 1,
                Status::Skipped => 2,
            }] += 1;
            let failed = c.status == Status::Fail;
            if !failed && c.warnings.is_empty() && c.status != Status::Skipped {
                continue;
            }
            warned += usize::from(!c.warnings.is_empty());
            out.push_str(&format!(
                "\n{} {}: {}\n",
                if failed { paint.red("✗") } else { paint.yellow("!") },
                r.path,
                c.name
            ));
            if failed {
                for l in &c.diff {
                    let l = if l.starts_with('-') {
                        paint.red(l)
                    } else if l.starts_with('+') {
                        paint.green(l)
                    } else {
                        l.clone()
                    };
                    out.push_str(&format!("    {l}\n"));
                }
            }
            for d in c.details.iter().filter(|d| !d.is_empty()) {
                out.push_str(&format!("    {}\n", paint.dim(d)));
            }
            for w in &c.warnings {
                out.push_str(&format!("    {} {w}\n", paint.yellow("warning:")));
            }
        }
    }
    out.push_str(&format!(
        "\n{} passed, {} failed, {} skipped; {warned} passed or failed only thanks to a shortcut (warnings above)\n",
        counts[0], counts[1], counts[2]
    ));
    out
}

pub fn audit_line(r: &ObjectReport, paint: Paint) -> String {
    let outcome = if !r.problems.is_empty() {
        paint.red("ERROR   ")
    } else if !r.allowed {
        paint.red("DENIED  ")
    } else if !r.warnings.is_empty() {
        paint.yellow("WARNED  ")
    } else if r.outcomes.iter().any(|o| o.audited) {
        paint.yellow("AUDITED ")
    } else if r.outcomes.iter().any(|o| o.error) {
        paint.red("ERROR   ")
    } else {
        paint.green("ALLOWED ")
    };
    let ns = if r.namespace.is_empty() { String::new() } else { format!("{}/", r.namespace) };
    let kind = r.kind.rsplit('/').next().unwrap_or_default();
    let mut line =
        format!("{outcome}    {kind} {ns}{}  {}", r.name, paint.dim(&format!("({})", r.origin)));
    if let Some(m) = &r.message {
        line.push_str(&format!("\n            {m}"));
    }
    for w in &r.warnings {
        line.push_str(&format!("\n            Warning: {w}"));
    }
    for p in &r.problems {
        line.push_str(&format!("\n            {p}"));
    }
    line
}

pub fn audit_summary(s: &Summary, paint: Paint) -> String {
    let mut out = format!(
        "{} {} objects: {} denied, {} with warnings, {} could not be evaluated",
        paint.bold("Summary:"),
        s.objects,
        s.denied,
        s.with_warnings,
        s.problems
    );
    if s.assumed_namespaces > 0 {
        out.push_str(&format!(
            "; {} in namespaces not supplied (assumed with only the kubernetes.io/metadata.name label)",
            s.assumed_namespaces
        ));
    }
    out.push_str(&format!(
        "\n\n{}\n",
        paint.bold(&format!(
            "{:<40} {:<40} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "POLICY", "BINDING", "MATCHED", "DENIED", "WARNED", "AUDITED", "ERRORS"
        ))
    ));
    for (policy, bindings) in &s.bindings {
        for (binding, c) in bindings {
            let binding = if binding.is_empty() { "(policy configuration)" } else { binding };
            out.push_str(&format!(
                "{policy:<40} {binding:<40} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
                c.matched, c.denied, c.warned, c.audited, c.errors
            ));
        }
    }
    out
}
