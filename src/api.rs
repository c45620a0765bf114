//! The public API and its JSON contract (`docs/result-format.md`): what `evaluate`,
//! `evaluateExpression`, `typecheck` and `PolicySet` take and return. The wasm layer only
//! deserialises, calls these, and serialises; native tests pin the same contract.

use crate::admission::dispatcher::{dispatch, AdmissionResponse};
use crate::admission::policy_set::PolicySet;
use crate::admission::request::{derive_request, AdmissionRequest, RequestInput};
use crate::admission::trace::PolicyTrace;
use crate::admission::yaml::parse_stream;
use crate::cel::checker::ExpectedResult;
use crate::cel::runtime::CostTracker;
use crate::cel::value::Value;
use crate::diagnostic::{Diagnostic, Severity, SourceRef};
use crate::environment::{var, EnvironmentMode, ExpressionKind, KubeVersion, VariableScope};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// Input of `evaluate`: every field optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EvaluateInput {
    /// Policies, bindings, params, namespaces, CRDs and RBAC objects: YAML or JSON text
    /// (multi-document), or a list of texts and already-parsed objects.
    pub manifests: Manifests,
    /// The new object (absent on DELETE): YAML/JSON text or an object.
    pub object: Option<Document>,
    /// The old object (UPDATE, DELETE): YAML/JSON text or an object.
    pub old_object: Option<Document>,
    /// AdmissionRequest fields (`operation`, `userInfo`, `namespace`, `subResource`, `dryRun`, …);
    /// whatever is left out is derived as the apiserver fills it.
    pub request: Option<Document>,
    /// `1.30` … `1.37`; default the newest.
    pub kubernetes_version: Option<String>,
}

/// Manifests as text, or a list of texts and objects.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Manifests {
    Text(String),
    List(Vec<Document>),
}

impl Default for Manifests {
    fn default() -> Self {
        Manifests::Text(String::new())
    }
}

impl Manifests {
    /// One multi-document text (objects rendered as JSON documents).
    pub fn to_text(&self) -> String {
        match self {
            Manifests::Text(t) => t.clone(),
            Manifests::List(items) => items
                .iter()
                .map(|d| match d {
                    Document::Text(t) => t.clone(),
                    Document::Object(v) => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n---\n"),
        }
    }
}

/// A document given as YAML/JSON text or as a parsed value.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Document {
    Text(String),
    Object(Json),
}

impl Document {
    /// The document's value, or a diagnostic naming the input (`object`, `oldObject`, `request`).
    /// Empty text is `None`.
    pub fn parse(&self, name: &str) -> Result<Option<Json>, Box<Diagnostic>> {
        match self {
            Document::Object(Json::Null) => Ok(None),
            Document::Object(v) => Ok(Some(v.clone())),
            Document::Text(t) if t.trim().is_empty() => Ok(None),
            Document::Text(t) => {
                let (docs, errors) = parse_stream(t);
                if let Some(e) = errors.first() {
                    return Err(Box::new(
                        Diagnostic::error(
                            "input-yaml-syntax",
                            format!("{name}: line {}, column {}: {}", e.line, e.column, e.message),
                        )
                        .with_field(name)
                        .with_span(e.span, SourceRef::Input { name: name.to_string() }),
                    ));
                }
                let non_empty: Vec<&Json> =
                    docs.iter().map(|d| &d.value).filter(|v| !v.is_null()).collect();
                if non_empty.len() > 1 {
                    return Err(Box::new(
                        Diagnostic::error(
                            "input-multiple-documents",
                            format!("{name}: expected one document, found {}", non_empty.len()),
                        )
                        .with_field(name),
                    ));
                }
                Ok(non_empty.first().map(|v| (*v).clone()))
            }
        }
    }
}

/// The admission attributes actually used (derived where not given).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestSummary {
    pub operation: String,
    pub kind: Json,
    pub resource: Json,
    pub sub_resource: String,
    pub name: String,
    pub namespace: String,
    pub user_info: Json,
    pub dry_run: bool,
}

impl RequestSummary {
    fn new(r: &AdmissionRequest) -> Self {
        RequestSummary {
            operation: r.operation.as_str().to_string(),
            kind: serde_json::json!({"group": r.kind.group, "version": r.kind.version, "kind": r.kind.kind}),
            resource: serde_json::json!({"group": r.resource.group, "version": r.resource.version, "resource": r.resource.resource}),
            sub_resource: r.sub_resource.clone(),
            name: r.name.clone(),
            namespace: r.namespace.clone(),
            user_info: serde_json::to_value(&r.user_info).unwrap_or(Json::Null),
            dry_run: r.dry_run,
        }
    }
}

/// Output of `evaluate`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateResult {
    pub response: AdmissionResponse,
    /// `None` when no request could be formed (no object and no oldObject).
    pub request: Option<RequestSummary>,
    pub policies: Vec<PolicyTrace>,
    pub diagnostics: Vec<Diagnostic>,
    pub kubernetes_version: String,
}

/// The target version of an input; an unsupported one is a diagnostic and the newest is used.
fn version_of(requested: Option<&str>, diagnostics: &mut Vec<Diagnostic>) -> KubeVersion {
    match requested.map(KubeVersion::parse) {
        None => KubeVersion::default(),
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            diagnostics.push(
                Diagnostic::error("unsupported-kubernetes-version", e)
                    .with_field("kubernetesVersion"),
            );
            KubeVersion::default()
        }
    }
}

/// Evaluate an admission request against the supplied policies (the whole pipeline).
pub fn evaluate(input: &EvaluateInput) -> EvaluateResult {
    let mut diagnostics = Vec::new();
    let version = version_of(input.kubernetes_version.as_deref(), &mut diagnostics);
    let set = PolicySet::new(&input.manifests.to_text(), version);
    let mut result = evaluate_with(&set, &RequestDocuments::from_input(input));
    diagnostics.append(&mut result.diagnostics);
    result.diagnostics = diagnostics;
    result
}

/// The request part of an input.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RequestDocuments {
    pub object: Option<Document>,
    pub old_object: Option<Document>,
    pub request: Option<Document>,
}

impl RequestDocuments {
    pub fn from_input(input: &EvaluateInput) -> Self {
        RequestDocuments {
            object: input.object.clone(),
            old_object: input.old_object.clone(),
            request: input.request.clone(),
        }
    }
}

/// Evaluate one request against an already compiled [`PolicySet`].
pub fn evaluate_with(set: &PolicySet, docs: &RequestDocuments) -> EvaluateResult {
    let mut diagnostics = set.diagnostics.clone();
    let mut parse = |d: &Option<Document>, name: &str| match d.as_ref().map(|d| d.parse(name)) {
        Some(Ok(v)) => v,
        Some(Err(diag)) => {
            diagnostics.push(*diag);
            None
        }
        None => None,
    };
    let object = parse(&docs.object, "object");
    let old_object = parse(&docs.old_object, "oldObject");
    let request_fields = parse(&docs.request, "request");
    let mut input: RequestInput = match request_fields.map(serde_json::from_value::<RequestInput>) {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            diagnostics.push(
                Diagnostic::error("input-request-invalid", format!("request: {e}"))
                    .with_field("request"),
            );
            RequestInput::default()
        }
        None => RequestInput::default(),
    };
    if object.is_some() {
        input.object = object;
    }
    if old_object.is_some() {
        input.old_object = old_object;
    }
    let catalog = set.manifests.catalog();
    let (request, derived) = derive_request(&input, &catalog);
    diagnostics.extend(derived);
    let kubernetes_version = set.version.to_string();
    let Some(request) = request else {
        return EvaluateResult {
            response: AdmissionResponse { allowed: true, ..AdmissionResponse::default() },
            request: None,
            policies: Vec::new(),
            diagnostics,
            kubernetes_version,
        };
    };
    let out = dispatch(set, &request);
    diagnostics.extend(out.diagnostics);
    EvaluateResult {
        response: out.response,
        request: Some(RequestSummary::new(&request)),
        policies: out.policies,
        diagnostics,
        kubernetes_version,
    }
}

/// Output of `typecheck`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TypecheckResult {
    pub diagnostics: Vec<Diagnostic>,
    pub kubernetes_version: String,
}

/// Parse and check every expression of the supplied policies; no evaluation.
pub fn typecheck(input: &EvaluateInput) -> TypecheckResult {
    let mut diagnostics = Vec::new();
    let version = version_of(input.kubernetes_version.as_deref(), &mut diagnostics);
    let set = PolicySet::new(&input.manifests.to_text(), version);
    diagnostics.extend(set.diagnostics);
    TypecheckResult { diagnostics, kubernetes_version: version.to_string() }
}

/// Options of `evaluateExpression`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExpressionOptions {
    pub kubernetes_version: Option<String>,
    /// `validation`, `messageExpression`, `matchCondition`, `auditAnnotation`, `variable`: its
    /// variables and required result type. Default: a validation's variables, any result type.
    pub kind: Option<String>,
}

/// Output of `evaluateExpression`.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpressionResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none", rename = "type")]
    pub type_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<u64>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The expression kind named in the options, and the result type it must have. Without a
/// kind: the environment of a validation, any result type (a scratchpad).
fn expression_kind(s: Option<&str>) -> Result<(ExpressionKind, ExpectedResult), String> {
    let kind = match s {
        None => return Ok((ExpressionKind::Validation, ExpectedResult::Any)),
        Some("validation") => ExpressionKind::Validation,
        Some("messageExpression") => ExpressionKind::MessageExpression,
        Some("matchCondition") => ExpressionKind::MatchCondition,
        Some("auditAnnotation") => ExpressionKind::AuditAnnotation,
        Some("variable") => ExpressionKind::Variable,
        Some(other) => {
            return Err(format!(
                "unknown expression kind {other:?}: expected validation, messageExpression, matchCondition, auditAnnotation or variable"
            ))
        }
    };
    Ok((kind, kind.expected_result()))
}

/// Check and evaluate one CEL expression in the environment of a VAP expression (spec §4.2).
/// `variables` binds `object`, `oldObject`, `params`, `request`, `namespaceObject` (JSON; absent
/// ones are null) and declares any other name as `dyn`.
pub fn evaluate_expression(
    expression: &str,
    variables: &Map<String, Json>,
    options: &ExpressionOptions,
) -> ExpressionResult {
    let mut out = ExpressionResult::default();
    let version = version_of(options.kubernetes_version.as_deref(), &mut out.diagnostics);
    let (kind, expected) = match expression_kind(options.kind.as_deref()) {
        Ok(k) => k,
        Err(e) => {
            out.diagnostics
                .push(Diagnostic::error("unknown-expression-kind", e).with_field("kind"));
            return out;
        }
    };
    let compiler =
        crate::admission::compile::CelCompiler::new(version, EnvironmentMode::StoredExpressions);
    let standard = [
        var::OBJECT,
        var::OLD_OBJECT,
        var::PARAMS,
        var::REQUEST,
        var::NAMESPACE_OBJECT,
        var::AUTHORIZER,
    ];
    let scope = VariableScope { has_params: true, variables: None, ..VariableScope::default() };
    let mut decls = compiler.declarations(kind, &scope);
    for name in variables.keys().filter(|k| !standard.contains(&k.as_str())) {
        decls.add_variable(name, crate::cel::types::Type::Dyn);
    }
    let compiled = compiler.compile_in(expression, kind, &decls, expected);
    let source = SourceRef::Expression { expression: expression.to_string() };
    for issue in &compiled.issues {
        let mut d = Diagnostic::error("cel-compile", issue.message.clone());
        if let Some(span) = issue.span {
            d = d.with_span(span, source.clone());
        }
        out.diagnostics.push(d);
    }
    let Some(program) = &compiled.program else { return out };
    out.type_name = Some(crate::cel::checker::format_cel_type(&compiled.output_type));
    let bindings: Vec<(String, Value<'_>)> =
        variables.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect();
    let act = ExpressionActivation { bindings: &bindings };
    let mut tracker = CostTracker::default();
    match program.eval(&act, &mut tracker) {
        Ok(v) => {
            out.value = Some(v.to_json());
            // The static type says more (`list(string)`) unless it is `dyn`.
            if compiled.output_type.is_dyn_or_error() {
                out.type_name = Some(v.type_name().to_string());
            }
        }
        Err(e) => out.diagnostics.push(
            Diagnostic::error("cel-runtime", e.message.clone()).with_span(e.span, source.clone()),
        ),
    }
    out.cost = Some(tracker.actual_cost());
    out
}

/// `evaluateExpression`'s activation: the supplied values; the standard VAP names default to null.
struct ExpressionActivation<'b, 'a> {
    bindings: &'b [(String, Value<'a>)],
}

impl<'a> crate::cel::runtime::Activation<'a> for ExpressionActivation<'_, 'a> {
    fn resolve(&self, name: &str) -> Option<Value<'a>> {
        if let Some((_, v)) = self.bindings.iter().find(|(n, _)| n == name) {
            return Some(v.clone());
        }
        match name {
            var::OBJECT | var::OLD_OBJECT | var::PARAMS | var::REQUEST | var::NAMESPACE_OBJECT => {
                Some(Value::Null)
            }
            _ => None,
        }
    }
}

/// A diagnostic as JavaScript receives it: positions in UTF-16 code units and 1-based
/// line/column (column in UTF-16 code units), plus the rendered text.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsDiagnostic {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub field: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    pub rendered: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub help: String,
}

/// UTF-16 offset and 1-based (line, UTF-16 column) of byte `offset` in `text`.
pub fn utf16_position(text: &str, offset: u32) -> (u32, u32, u32) {
    let offset = (offset as usize).min(text.len());
    let mut units = 0u32;
    let mut line = 1u32;
    let mut column = 1u32;
    for (i, c) in text.char_indices() {
        if i >= offset {
            break;
        }
        let n = c.len_utf16() as u32;
        units += n;
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += n;
        }
    }
    (units, line, column)
}

/// Convert a diagnostic for JavaScript. `text_of` gives the text a [`SourceRef`] points into.
pub fn to_js(d: &Diagnostic, text_of: &dyn Fn(&SourceRef) -> Option<String>) -> JsDiagnostic {
    let text = d.source.as_ref().and_then(text_of);
    let mut js = JsDiagnostic {
        severity: d.severity,
        code: d.code,
        message: d.message.clone(),
        field: d.field.clone(),
        source: d.source.clone(),
        start: None,
        end: None,
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        rendered: String::new(),
        help: d.help.clone(),
    };
    if let (Some(text), Some(span)) = (&text, d.span) {
        let (s, l, c) = utf16_position(text, span.start);
        let (e, el, ec) = utf16_position(text, span.end);
        js.start = Some(s);
        js.end = Some(e);
        js.line = Some(l);
        js.column = Some(c);
        js.end_line = Some(el);
        js.end_column = Some(ec);
    }
    js.rendered = render(d, text.as_deref());
    js
}

/// The deterministic text form of a diagnostic:
/// `ERROR: <where>:L:C: <field>: <message>` then the source line and a caret under the span.
pub fn render(d: &Diagnostic, text: Option<&str>) -> String {
    let severity = match d.severity {
        Severity::Error => "ERROR",
        Severity::Warning => "WARNING",
        Severity::Info => "INFO",
    };
    let place = match &d.source {
        Some(SourceRef::Manifest { .. }) => "manifests".to_string(),
        Some(SourceRef::Expression { .. }) => "<input>".to_string(),
        Some(SourceRef::Input { name }) => name.clone(),
        None => String::new(),
    };
    let mut head = severity.to_string();
    let mut snippet = String::new();
    match (text, d.span) {
        (Some(text), Some(span)) => {
            let (line, col) = crate::cel::errors::line_column(text, span.start);
            head.push_str(&format!(": {place}:{line}:{col}"));
            if let Some(src_line) = text.lines().nth(line as usize - 1) {
                let width = (span.end.saturating_sub(span.start) as usize).max(1);
                let line_start =
                    text[..span.start as usize].rfind('\n').map(|i| i + 1).unwrap_or(0);
                let width = width
                    .min(src_line.len().saturating_sub(span.start as usize - line_start).max(1));
                let underline: String = text
                    [span.start as usize..(span.start as usize + width).min(text.len())]
                    .chars()
                    .map(|_| '^')
                    .collect();
                snippet =
                    format!("\n | {src_line}\n | {}{}", ".".repeat(col as usize - 1), underline);
            }
        }
        _ if !place.is_empty() => head.push_str(&format!(": {place}")),
        _ => {}
    }
    if !d.field.is_empty() {
        head.push_str(&format!(": {}", d.field));
    }
    format!("{head}: {}{snippet}", d.message)
}
