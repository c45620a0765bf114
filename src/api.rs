//! The public API and its JSON contract (`docs/result-format.md`): what `evaluate`,
//! `evaluateExpression`, `typecheck` and `PolicySet` take and return. The wasm layer only
//! deserialises, calls these, and serialises; native tests pin the same contract.

use crate::admission::dispatcher::{dispatch, AdmissionResponse};
pub use crate::admission::policy_set::{MissingNamespaces, UnboundPolicies};
use crate::admission::policy_set::{PolicySet, SetupOptions};
use crate::admission::request::{derive_request_owned, AdmissionRequest, RequestInput};
use crate::admission::trace::PolicyTrace;
use crate::admission::yaml::parse_stream;
use crate::cel::checker::ExpectedResult;
use crate::cel::runtime::CostTracker;
use crate::cel::value::Value;
use crate::diagnostic::{Diagnostic, Severity, SourceRef};
use crate::environment::{var, EnvironmentMode, ExpressionKind, KubeVersion, VariableScope};
use crate::objects::ObjectChange;
use crate::webhook::dispatcher::WebhookTrace;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// Input of `evaluate` and `typecheck`: every field optional; unknown fields are an error.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct EvaluateInput {
    /// Policies, bindings, params, namespaces, CRDs, RBAC objects and webhook configurations: YAML or JSON text
    /// (multi-document), or a list of texts and already-parsed objects.
    pub manifests: Manifests,
    /// The new object (absent on DELETE): YAML/JSON text or an object.
    pub object: Option<Document>,
    /// The old object (UPDATE, DELETE): YAML/JSON text or an object.
    pub old_object: Option<Document>,
    /// AdmissionRequest fields (`operation`, `userInfo`, `namespace`, `subResource`, `dryRun`, …);
    /// whatever is left out is derived as the apiserver fills it. Also `fieldValidation`
    /// (`Strict`, `Warn`, `Ignore`; absent: the apiserver's `Warn`), the query parameter of a
    /// CREATE or UPDATE (docs/objects.md §1c).
    pub request: Option<Document>,
    /// `1.30` … `1.37`; default the newest.
    pub kubernetes_version: Option<String>,
    /// A policy no binding references: `skip` (default, the apiserver's), `preview` (also
    /// evaluated as if bound with Deny, shown under a `hypothetical` binding; the response
    /// unchanged) or `bind` (that evaluation counts in the response).
    pub unbound_policies: Option<UnboundPolicies>,
    /// The request's Namespace not supplied: `assume` (default: it exists with only its
    /// `kubernetes.io/metadata.name` label; an info diagnostic says so) or `strict` (the
    /// apiserver's 404).
    pub missing_namespaces: Option<MissingNamespaces>,
    /// Evaluate `object`, `oldObject`, params and namespace objects exactly as given, instead of
    /// as the apiserver decodes, defaults and stores them (the default; see `objectChanges`).
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub objects_as_given: bool,
    /// Schemas for type checking, used before the supplied CRDs and the built-in schemas:
    /// `"<apiVersion>/<Kind>"` (`"example.com/v1/Widget"`, `"v1/ConfigMap"`) → OpenAPI v3 schema.
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "Record<string, Record<string, unknown>> | null")
    )]
    pub schemas: Option<Document>,
}

impl EvaluateInput {
    /// The options of the policy set an `evaluate` call compiles.
    pub fn set_options(&self) -> PolicySetOptions {
        PolicySetOptions {
            kubernetes_version: self.kubernetes_version.clone(),
            unbound_policies: self.unbound_policies,
            missing_namespaces: self.missing_namespaces,
            objects_as_given: self.objects_as_given,
            schemas: self.schemas.clone(),
        }
    }
}

/// Manifests as text, or a list of texts and objects. Manifest diagnostics index the text; a
/// list is joined into one text first (objects as one-line JSON documents, `---` between
/// items), and that joined text is what their positions index.
#[derive(Clone, Debug)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(type = "string | Document[]"))]
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

/// A document given as YAML/JSON text or as a parsed object; null (or blank text) is absent.
#[derive(Clone, Debug)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify::Tsify),
    tsify(type = "string | Record<string, unknown> | null")
)]
pub enum Document {
    Text(String),
    Object(Json),
}

/// A document's value, its text when that is plain JSON, and its text otherwise.
pub type ParsedDocument = (Result<Option<Json>, Box<Diagnostic>>, Option<String>, Option<String>);

impl Document {
    /// The document's value, or a diagnostic naming the input (`object`, `oldObject`, `request`).
    /// Empty text is `None`.
    pub fn parse(&self, name: &str) -> Result<Option<Json>, Box<Diagnostic>> {
        match self {
            Document::Object(Json::Null) => Ok(None),
            Document::Object(v) => Ok(Some(v.clone())),
            Document::Text(t) => Document::parse_text(t, name),
        }
    }

    /// [`Document::parse`], moving an object out instead of copying it.
    pub fn into_value(self, name: &str) -> Result<Option<Json>, Box<Diagnostic>> {
        match self {
            Document::Object(Json::Null) => Ok(None),
            Document::Object(v) => Ok(Some(v)),
            Document::Text(t) => Document::parse_text(&t, name),
        }
    }

    /// [`Document::into_value`], and the text when the value is its plain-JSON reading
    /// ([`yaml::parse_json_object`]), from which [`crate::objects::normalize_json`] reads the
    /// values as given.
    ///
    /// [`yaml::parse_json_object`]: crate::admission::yaml::parse_json_object
    /// The third value is the text when it is not that (YAML): diagnostics may point into it.
    pub fn into_value_and_json(self, name: &str) -> ParsedDocument {
        match self {
            Document::Text(t) => match crate::admission::yaml::parse_json_object(&t) {
                Some(v) => (Ok(Some(v)), Some(t), None),
                None => (Document::parse_positioned(&t, name), None, Some(t)),
            },
            d => (d.into_value(name), None, None),
        }
    }

    /// [`Document::into_value_and_json`] of `object` or `oldObject`: a plain JSON text's object
    /// read with its decoding checked at `version` ([`crate::objects::read_object`]).
    fn into_object_and_json(
        self,
        name: &str,
        version: KubeVersion,
    ) -> (ParsedDocument, Option<crate::objects::Decoded>) {
        match self {
            Document::Text(t) => match crate::objects::read_object(&t, version) {
                Some((v, decoded)) => ((Ok(Some(v)), Some(t), None), decoded),
                None => ((Document::parse_positioned(&t, name), None, Some(t)), None),
            },
            d => (d.into_value_and_json(name), None),
        }
    }

    /// A plain JSON object takes the fast path ([`yaml::parse_json_object`]); everything else,
    /// and every text with a problem, the positions loader, whose diagnostics point into `t`.
    ///
    /// [`yaml::parse_json_object`]: crate::admission::yaml::parse_json_object
    fn parse_text(t: &str, name: &str) -> Result<Option<Json>, Box<Diagnostic>> {
        if let Some(v) = crate::admission::yaml::parse_json_object(t) {
            return Ok(Some(v));
        }
        Document::parse_positioned(t, name)
    }

    /// The document through the YAML-with-positions loader only (what [`Document::parse`] does
    /// for every text that is not a plain JSON object; tests compare the two paths).
    pub fn parse_positioned(t: &str, name: &str) -> Result<Option<Json>, Box<Diagnostic>> {
        if t.trim().is_empty() {
            return Ok(None);
        }
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
        let mut non_empty: Vec<Json> =
            docs.into_iter().map(|d| d.value).filter(|v| !v.is_null()).collect();
        if non_empty.len() > 1 {
            return Err(Box::new(
                Diagnostic::error(
                    "input-multiple-documents",
                    format!("{name}: expected one document, found {}", non_empty.len()),
                )
                .with_field(name),
            ));
        }
        Ok(non_empty.pop())
    }
}

impl<'de> Deserialize<'de> for Manifests {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Manifests;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("YAML/JSON text or a list of texts and objects")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Manifests, E> {
                Ok(Manifests::Text(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Manifests, E> {
                Ok(Manifests::default())
            }
            // Out of line (as `Document`'s `visit_map`): the playground gives texts, and a
            // page's first `evaluate()` compiles whatever this visitor holds.
            #[inline(never)]
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Manifests, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Manifests::List)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Document;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("YAML/JSON text or an object")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Document, E> {
                Ok(Document::Text(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Document, E> {
                Ok(Document::Object(Json::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<Document, E> {
                Ok(Document::Object(Json::Null))
            }
            #[inline(never)]
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Document, A::Error> {
                Json::deserialize(de::value::MapAccessDeserializer::new(map)).map(Document::Object)
            }
        }
        d.deserialize_any(V)
    }
}

/// Deserialise a JS-facing input from its JSON value. Errors name the offending field, as
/// `what.field[index]: message` (`evaluate input.manifests[1]: invalid type: …`).
pub fn from_json<T: DeserializeOwned>(what: &str, value: Json) -> Result<T, String> {
    named_path(what, serde_path_to_error::deserialize(value))
}

/// [`from_json`] of `Json::Object(map)`, read as the map it holds (as serde_json reads an object
/// value): the same value or error, without the code that reads a struct from a list, which a
/// page's first `evaluate()` would otherwise compile for nothing.
pub fn from_json_object<T: DeserializeOwned>(
    what: &str,
    map: Map<String, Json>,
) -> Result<T, String> {
    named_path(what, serde_path_to_error::deserialize(map))
}

fn named_path<T>(
    what: &str,
    result: Result<T, serde_path_to_error::Error<serde_json::Error>>,
) -> Result<T, String> {
    result.map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            format!("{what}: {inner}")
        } else {
            format!("{what}.{path}: {inner}")
        }
    })
}

/// Parse an input given as one YAML/JSON text (`evaluate("manifests: …")`): exactly one
/// document. Errors are plain messages (the caller throws them).
pub fn parse_input_text(what: &str, text: &str) -> Result<Json, String> {
    let (docs, errors) = parse_stream(text);
    if let Some(e) = errors.first() {
        return Err(format!("{what}: line {}, column {}: {}", e.line, e.column, e.message));
    }
    match docs.len() {
        0 => Ok(Json::Null),
        1 => Ok(docs.into_iter().next().map(|d| d.value).unwrap_or(Json::Null)),
        n => Err(format!("{what}: expected one YAML/JSON document, found {n}")),
    }
}

/// The admission attributes actually used (derived where not given).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct RequestSummary {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "\"CREATE\" | \"UPDATE\" | \"DELETE\" | \"CONNECT\"")
    )]
    pub operation: String,
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "{ group: string; version: string; kind: string }")
    )]
    pub kind: crate::admission::resources::GroupVersionKind,
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "{ group: string; version: string; resource: string }")
    )]
    pub resource: crate::admission::resources::GroupVersionResource,
    pub sub_resource: String,
    pub name: String,
    pub namespace: String,
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(
            type = "{ username: string; uid: string; groups: string[]; extra: Record<string, string[]> }"
        )
    )]
    pub user_info: crate::admission::request::UserInfo,
    pub dry_run: bool,
}

impl RequestSummary {
    fn new(r: &AdmissionRequest) -> Self {
        RequestSummary {
            operation: r.operation.as_str().to_string(),
            // The same JSON as the maps `{group, version, kind}` … and `serde_json::to_value` of
            // the user info, without building them.
            kind: r.kind.clone(),
            resource: r.resource.clone(),
            sub_resource: r.sub_resource.clone(),
            name: r.name.clone(),
            namespace: r.namespace.clone(),
            user_info: r.user_info.clone(),
            dry_run: r.dry_run,
        }
    }

    /// An empty summary ([`PolicySet::summary_trace`]).
    fn empty() -> Self {
        RequestSummary {
            operation: String::new(),
            kind: Default::default(),
            resource: Default::default(),
            sub_resource: String::new(),
            name: String::new(),
            namespace: String::new(),
            user_info: Default::default(),
            dry_run: false,
        }
    }
}

/// Output of `evaluate`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct EvaluateResult {
    pub response: AdmissionResponse,
    /// `None` when no request could be formed (no object and no oldObject).
    pub request: Option<RequestSummary>,
    pub policies: Vec<PolicyTrace>,
    /// Every webhook of every webhook configuration, mutating before validating, each kind's
    /// configurations by name and their webhooks in order (`docs/webhook-semantics.md`).
    #[serde(serialize_with = "crate::out_of_line::seq")]
    pub webhooks: Vec<WebhookTrace>,
    /// Kyverno policies (ClusterPolicy, Policy) and Kyverno's webhooks; absent when the
    /// manifests hold none. `response` above already combines Kyverno's answer.
    #[cfg(feature = "kyverno")]
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::out_of_line::option"
    )]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub kyverno: Option<crate::kyverno::KyvernoResult>,
    /// Problems found (JavaScript receives them converted by `to_js`: UTF-16 positions).
    #[cfg_attr(target_arch = "wasm32", tsify(type = "Diagnostic[]"))]
    pub diagnostics: Vec<Diagnostic>,
    pub kubernetes_version: String,
    /// What the apiserver's decoding, defaulting and storage form changed in `object`,
    /// `oldObject` and the param and namespace objects before policies read them (empty with
    /// `objectsAsGiven`). Absent when nothing changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub object_changes: Vec<ObjectChange>,
    /// Per ValidatingAdmissionPolicy in the manifests, in order: its `status.typeChecking`, as
    /// `typecheck` reports it (computed when the policies are compiled; nothing is checked
    /// twice). Absent when the manifests hold no policy.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub type_checking: Vec<PolicyTypeChecking>,
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
    let set = compile(&input.manifests, &input.set_options());
    evaluate_with(&set, &RequestDocuments::from_input(input))
}

/// Options of `new PolicySet(manifests, options)`; unknown fields are an error.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct PolicySetOptions {
    /// `1.30` … `1.37`; default the newest.
    pub kubernetes_version: Option<String>,
    /// As [`EvaluateInput::unbound_policies`].
    pub unbound_policies: Option<UnboundPolicies>,
    /// As [`EvaluateInput::missing_namespaces`].
    pub missing_namespaces: Option<MissingNamespaces>,
    /// Evaluate objects exactly as given, not as the apiserver stores them.
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub objects_as_given: bool,
    /// Schemas for type checking (as `EvaluateInput.schemas`).
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "Record<string, Record<string, unknown>> | null")
    )]
    pub schemas: Option<Document>,
}

/// Load, validate and compile manifests once (`new PolicySet`). An unsupported
/// `kubernetesVersion` is the first of the set's diagnostics, and the newest version is used.
pub fn compile(manifests: &Manifests, options: &PolicySetOptions) -> PolicySet {
    let mut diagnostics = Vec::new();
    let version = version_of(options.kubernetes_version.as_deref(), &mut diagnostics);
    let schemas = schemas_map(options.schemas.as_ref(), &mut diagnostics);
    let mut set =
        PolicySet::build(&manifests.to_text(), version, Some(&schemas), !options.objects_as_given);
    set.setup = SetupOptions {
        unbound_policies: options.unbound_policies.unwrap_or_default(),
        missing_namespaces: options.missing_namespaces.unwrap_or_default(),
    };
    diagnostics.append(&mut set.diagnostics);
    // Kyverno policies: load and CEL compile problems (docs/kyverno-semantics.md).
    #[cfg(feature = "kyverno")]
    if crate::kyverno::present(&set) {
        diagnostics.extend(crate::kyverno::load(&set).diagnostics);
    }
    set.diagnostics = diagnostics;
    set
}

/// The `schemas` input (an object, or its YAML/JSON text) as a map; anything else is a
/// diagnostic and no schemas. (Held as a [`Document`]: a map type of its own would cost the wasm
/// another deserializer.)
pub fn schemas_map(
    schemas: Option<&Document>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Map<String, Json> {
    let value = match schemas.map(|d| d.parse("schemas")) {
        None => None,
        Some(Ok(v)) => v,
        Some(Err(d)) => {
            diagnostics.push(*d);
            return Map::new();
        }
    };
    match value {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(m)) => m,
        Some(_) => {
            diagnostics.push(
                Diagnostic::error(
                    "input-schemas-invalid",
                    "schemas: expected an object mapping \"<apiVersion>/<Kind>\" to an OpenAPI v3 schema",
                )
                .with_field("schemas"),
            );
            Map::new()
        }
    }
}

/// The request part of an input (`PolicySet.evaluate`); unknown fields are an error.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
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
    evaluate_owned(set, docs.clone())
}

/// [`evaluate_with`], taking the documents: objects given as parsed values are used in place,
/// not copied (the JS API's path).
pub fn evaluate_owned(set: &PolicySet, docs: RequestDocuments) -> EvaluateResult {
    evaluate_documents(set, docs, ObjectTexts::default())
}

/// The plain JSON texts ([`yaml::parse_json_object`] accepts them) of `object` and `oldObject`
/// given as parsed values, each exactly its value's text: the JS API keeps the `JSON.stringify`
/// text of an object it converted, and normalisation reads the values as given from it
/// ([`crate::objects::normalize_json`]) instead of copying the object first.
///
/// [`yaml::parse_json_object`]: crate::admission::yaml::parse_json_object
#[derive(Debug, Default)]
pub struct ObjectTexts {
    pub object: Option<String>,
    pub old_object: Option<String>,
    /// What reading each text found of the object's decoding ([`crate::objects::read_object`]).
    pub decoded: [Option<crate::objects::Decoded>; 2],
}

/// [`evaluate_owned`], with the texts of objects given as parsed values.
pub fn evaluate_documents(
    set: &PolicySet,
    docs: RequestDocuments,
    texts: ObjectTexts,
) -> EvaluateResult {
    evaluate_documents_with(set, docs, texts, true)
}

/// [`evaluate_documents`]; without the set's own diagnostics first in the result's when
/// `set_diagnostics` is false (the JS API adds their JS form, made once per set).
pub fn evaluate_documents_with(
    set: &PolicySet,
    docs: RequestDocuments,
    texts: ObjectTexts,
    set_diagnostics: bool,
) -> EvaluateResult {
    // The set's own diagnostics, object changes and type checking, and the request's object
    // changes, are in every result but the audit's summary trace: the audit has the set's
    // from the set, once, and reports no changes.
    let full = !set.summary();
    let mut diagnostics = match full && set_diagnostics {
        true => set.diagnostics.clone(),
        false => Vec::new(),
    };
    // The objects' texts when they were given as YAML (their decoding diagnostics are located
    // in them).
    let mut object_source = None;
    let mut old_object_source = None;
    // What reading `object` and `oldObject` found of their decoding (normalised below).
    let mut decoded = [None, None];
    let check = (set.normalize_objects && full).then_some(set.version);
    // The objects' texts when they took the JSON fast path (normalisation reads them).
    let mut parse = |d: Option<Document>, name: &str| match d.map(|d| match (check, name) {
        (Some(version), "object" | "oldObject") => d.into_object_and_json(name, version),
        _ => (d.into_value_and_json(name), None),
    }) {
        Some(((Ok(v), text, yaml), found)) => {
            match name {
                "object" => (object_source, decoded[0]) = (yaml, found),
                "oldObject" => (old_object_source, decoded[1]) = (yaml, found),
                _ => {}
            }
            (v, text)
        }
        Some(((Err(diag), _, _), _)) => {
            diagnostics.push(*diag);
            (None, None)
        }
        None => (None, None),
    };
    let (object, object_text) = parse(docs.object, "object");
    let (old_object, old_object_text) = parse(docs.old_object, "oldObject");
    let (mut request_fields, _) = parse(docs.request, "request");
    // Not an AdmissionRequest field: the query parameter, which the handler decodes into the
    // options it hands admission (below).
    let field_validation = match &mut request_fields {
        Some(Json::Object(m)) => m.remove("fieldValidation"),
        _ => None,
    };
    // Given as JSON text, the object's text is that (not a JavaScript object's JSON.stringify):
    // the text the user wrote, where diagnostics can point.
    let located = [
        object_source.is_some() || object_text.is_some(),
        old_object_source.is_some() || old_object_text.is_some(),
    ];
    let object_text = object_text.or(texts.object);
    let old_object_text = old_object_text.or(texts.old_object);
    let decoded = [decoded[0].or(texts.decoded[0]), decoded[1].or(texts.decoded[1])];
    let sources = [
        object_source.as_deref().or(object_text.as_deref()).filter(|_| located[0]),
        old_object_source.as_deref().or(old_object_text.as_deref()).filter(|_| located[1]),
    ];
    let mut input: RequestInput = match request_fields.map(request_input) {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            diagnostics.push(request_invalid(e));
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
    let mut object_changes = if full { set.object_changes.clone() } else { Vec::new() };
    // The object's decode error, and where its normalisation diagnostics are.
    let mut undecoded = None;
    let mut at = (0, 0);
    // The request object's unknown fields: the decoder's strict errors (warnings of the
    // response, or its 400), and whether they are a custom resource's pruned fields.
    let mut unknown_fields: Vec<Vec<crate::objects::Seg>> = Vec::new();
    let mut crd = false;
    if set.normalize_objects {
        for (value, text, label, source, found) in [
            (&mut input.object, object_text.as_deref(), "object", sources[0], decoded[0]),
            (
                &mut input.old_object,
                old_object_text.as_deref(),
                "oldObject",
                sources[1],
                decoded[1],
            ),
        ] {
            if let Some(v) = value.as_mut() {
                let crds = &set.manifests.crds;
                let n = match text {
                    _ if !full => crate::objects::normalize_unlisted_decoded(
                        v,
                        found,
                        set.version,
                        crds,
                        label,
                    ),
                    Some(t) => crate::objects::normalize_json_decoded(
                        v,
                        t,
                        found,
                        set.version,
                        crds,
                        label,
                    ),
                    None => crate::objects::normalize(v, set.version, crds, label),
                };
                object_changes.extend(n.changes);
                let mut found = n.diagnostics;
                if let (Some(t), false) = (source, found.is_empty()) {
                    locate_in_object(t, label, &mut found, &n.diagnostic_paths);
                }
                if label == "object" {
                    undecoded = n.decode_error;
                    at = (diagnostics.len(), found.len());
                    unknown_fields = n.unknown_fields;
                    crd = n.crd;
                }
                diagnostics.extend(found);
            }
        }
    }
    let (mut request, derived) = derive_request_owned(input, &set.catalog);
    // `request.fieldValidation` (a query parameter takes any text) into the CreateOptions or
    // UpdateOptions (handlers/create.go, update.go: `DecodeParameters(values, …, options)`,
    // then `admission.NewAttributesRecord(…, options, …)`); DeleteOptions have no such field.
    use crate::admission::request::Operation;
    if let (Some(v), Some(r)) = (field_validation, &mut request) {
        set_field_validation(v, r);
    }
    diagnostics.extend(derived);
    let kubernetes_version = set.version.to_string();
    // The body of a CREATE or UPDATE that does not decode is rejected (400); any other object
    // is only warned about.
    let body =
        matches!(&request, Some(r) if matches!(r.operation, Operation::Create | Operation::Update));
    if !body {
        undecoded = None;
        unknown_fields.clear();
    }
    let Some(mut request) = request else {
        return no_request(set, full, diagnostics, kubernetes_version, object_changes);
    };
    // The request as it came (the registry may name it: validating admission sees that name).
    // The summary trace (the audit) reads only that there is one.
    let summary = match set.summary() {
        true => RequestSummary::empty(),
        false => RequestSummary::new(&request),
    };
    // The body's field validation (handlers/rest.go `fieldValidation`: absent is Warn), from
    // the options as the handler decoded them; DeleteOptions have none.
    let directive = match &request.options {
        Some(o) if body => o.get("fieldValidation").and_then(Json::as_str).unwrap_or_default(),
        _ => "",
    };
    let ignore = directive == "Ignore";
    let invalid =
        (!matches!(directive, "" | "Warn" | "Strict" | "Ignore")).then(|| directive.to_string());
    let (first, strict) = match unknown_fields.is_empty() {
        true => (0, Vec::new()),
        false => strict_errors(&unknown_fields, crd),
    };
    if let (true, None, false) = (directive == "Strict", &undecoded, strict.is_empty()) {
        // Under Strict the strict errors are the decoder's error (json.go `unmarshal` returns
        // them only when nothing else failed: a value that does not decode wins).
        undecoded = Some(strict_decode_error(&unknown_fields[first], &strict, first));
    }
    if invalid.is_some() || undecoded.is_some() {
        // Nothing was decoded, defaulted or stored.
        object_changes.retain(|c| c.object != "object");
    }
    #[allow(unused_variables)]
    let (response, policies, webhooks, kyverno, registry) = match undecoded {
        _ if invalid.is_some() => invalid_options(set, &request, invalid, &mut diagnostics),
        Some(u) => bad_request(set, &request, (u, at.0, at.1), sources[0], &mut diagnostics),
        None => {
            if !ignore && !strict.is_empty() {
                strict_help(&mut diagnostics, at);
            }
            let mut out = admit(set, &mut request, &set.catalog, &mut diagnostics);
            if !ignore && !strict.is_empty() {
                out.0.warnings = unknown_field_warnings(strict, &out.0.warnings);
            }
            out
        }
    };
    object_changes.extend(registry);
    // The objects' trees freed by code compiled for speed (`dispose`).
    vap_eval_json::dispose(request.object.take());
    vap_eval_json::dispose(request.old_object.take());
    EvaluateResult {
        response,
        request: Some(summary),
        policies,
        webhooks,
        #[cfg(feature = "kyverno")]
        kyverno,
        diagnostics,
        kubernetes_version,
        object_changes,
        type_checking: if full { policy_type_checks(set) } else { Vec::new() },
    }
}

/// The diagnostic of a `request` that does not decode (out of line, as the other paths of
/// [`evaluate_documents`] the usual request does not take: V8 compiles a function whole on its
/// first call, so cold code inlined there costs a page's first `evaluate()`).
#[cold]
#[inline(never)]
fn request_invalid(e: serde_json::Error) -> Diagnostic {
    Diagnostic::error("input-request-invalid", format!("request: {e}")).with_field("request")
}

/// `request.fieldValidation` (a query parameter takes any text) into the CreateOptions or
/// UpdateOptions (handlers/create.go, update.go: `DecodeParameters(values, …, options)`, then
/// `admission.NewAttributesRecord(…, options, …)`); DeleteOptions have no such field.
#[inline(never)]
fn set_field_validation(v: Json, r: &mut AdmissionRequest) {
    use crate::admission::request::Operation;
    let v = match v {
        Json::String(s) => s,
        other => other.to_string(),
    };
    if let (Some(Json::Object(o)), Operation::Create | Operation::Update, false) =
        (&mut r.options, r.operation, v.is_empty())
    {
        o.insert("fieldValidation".into(), Json::String(v));
    }
}

/// The result when no request could be derived: allowed, nothing evaluated.
#[cold]
#[inline(never)]
fn no_request(
    set: &PolicySet,
    full: bool,
    diagnostics: Vec<Diagnostic>,
    kubernetes_version: String,
    object_changes: Vec<ObjectChange>,
) -> EvaluateResult {
    EvaluateResult {
        response: AdmissionResponse { allowed: true, ..AdmissionResponse::default() },
        request: None,
        policies: Vec::new(),
        webhooks: Vec::new(),
        #[cfg(feature = "kyverno")]
        kyverno: None,
        diagnostics,
        kubernetes_version,
        object_changes,
        type_checking: if full { policy_type_checks(set) } else { Vec::new() },
    }
}

/// Under Strict, the strict errors as the decoder's error.
#[cold]
#[inline(never)]
fn strict_decode_error(
    path: &[crate::objects::Seg],
    strict: &[String],
    first: usize,
) -> crate::objects::DecodeError {
    crate::objects::DecodeError {
        path: path.to_vec(),
        map_keys: Vec::new(),
        fatal: false,
        message: format!("strict decoding error: {}", strict.join(", ")),
        diagnostic: first,
    }
}

/// Under Warn (the apiserver's default), what kubectl's own default would get: the help of the
/// object's `at.1` diagnostics at `at.0`.
#[cold]
#[inline(never)]
fn strict_help(diagnostics: &mut [Diagnostic], at: (usize, usize)) {
    for d in diagnostics.iter_mut().skip(at.0).take(at.1) {
        d.help =
            "kubectl's default, --validate=strict (fieldValidation=Strict), gets 400 BadRequest"
                .into();
    }
}

/// The decoding diagnostics of the object given as `text` (the input `name`) placed in it: an
/// unknown field at its key, a value the decoder rejects at the value (`paths`: each
/// diagnostic's path in the object; the positions loader reads the text again, which happens
/// only when the object has such diagnostics).
#[inline(never)]
fn locate_in_object(
    text: &str,
    name: &str,
    found: &mut [Diagnostic],
    paths: &[Vec<crate::objects::Seg>],
) {
    let (docs, _) = parse_stream(text);
    let Some(doc) = docs.first() else { return };
    for (d, segs) in found.iter_mut().zip(paths) {
        // The positions loader's paths are FieldPath's.
        let mut path = String::new();
        for s in segs {
            path = match s {
                crate::objects::Seg::Key(k) => crate::admission::yaml::child_path(&path, k),
                crate::objects::Seg::Index(i) => crate::admission::yaml::index_path(&path, *i),
            };
        }
        if let Some(p) = doc.positions.nearest(&path) {
            let key = d.code == "object-unknown-field";
            d.span = Some(if key { p.key_span.unwrap_or(p.span) } else { p.span });
            d.source = Some(SourceRef::Input { name: name.into() });
        }
    }
}

/// The 400 kube-apiserver answers when the body of a CREATE or UPDATE does not decode
/// (k8s.io/apiserver handlers `transformDecodeError`: `errors.NewBadRequest("<Kind> in version
/// \"<version>\" cannot be handled as a <Kind>: <decode error>")`), and the error diagnostic of the
/// field, located in `text` (the object's text) when there is one, in place of the object's
/// normalisation diagnostics (`count` at `at`); no plugin runs. What [`admit`]
/// returns.
#[inline(never)]
fn bad_request(
    set: &PolicySet,
    r: &AdmissionRequest,
    (error, at, count): (crate::objects::DecodeError, usize, usize),
    text: Option<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (AdmissionResponse, Vec<PolicyTrace>, Vec<WebhookTrace>, KyvernoOut, Vec<ObjectChange>) {
    let object = r.object.as_ref();
    let field = |k: &str| object.and_then(|o| o.get(k)).and_then(Json::as_str).unwrap_or_default();
    let kind = field("kind");
    let version = field("apiVersion").rsplit('/').next().unwrap_or_default();
    let message = format!(
        "{kind} in version \"{version}\" cannot be handled as a {}: {}",
        r.kind.kind, error.message
    );
    // The object's `count` diagnostics at `at`: its decode error's replaces them.
    let end = (at + count).min(diagnostics.len());
    let at = at.min(end);
    let mut d = diagnostics.drain(at..end).nth(error.diagnostic).unwrap_or_else(|| {
        crate::objects::diagnostics::not_decoded("object-wrong-type", "object", "", &error.message)
    });
    crate::objects::diagnostics::rejected(&mut d, &message);
    // The field's position (a diagnostic the normaliser made is placed already).
    if let (Some(t), None) = (text, d.span) {
        locate_in_object(
            t,
            "object",
            std::slice::from_mut(&mut d),
            std::slice::from_ref(&error.path),
        );
    }
    diagnostics.insert(at, d);
    let why = "not reached: the request body does not decode (400 BadRequest)";
    before_admission(
        set,
        "The apiserver's decoder",
        why,
        (message, "BadRequest", 400, Default::default()),
        diagnostics,
    )
}

/// The 422 kube-apiserver answers when the `fieldValidation` parameter of a CREATE or UPDATE is
/// not one it knows, before the body is read (handlers/create.go, update.go:
/// `ValidateCreateOptions` / `ValidateUpdateOptions` → `errors.NewInvalid`; apimachinery
/// `ValidateFieldValidation`: `field.NotSupported` of `""`, `Ignore`, `Strict`, `Warn`).
#[inline(never)]
fn invalid_options(
    set: &PolicySet,
    r: &AdmissionRequest,
    value: Option<String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (AdmissionResponse, Vec<PolicyTrace>, Vec<WebhookTrace>, KyvernoOut, Vec<ObjectChange>) {
    use crate::admission::decision::{StatusCause, StatusDetails};
    let kind = match r.operation {
        crate::admission::request::Operation::Create => "CreateOptions",
        _ => "UpdateOptions",
    };
    let value = crate::library::gostr::quote(&value.unwrap_or_default());
    let body = format!(
        "Unsupported value: {value}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );
    let message = format!("{kind}.meta.k8s.io \"\" is invalid: fieldValidation: {body}");
    diagnostics.push(crate::admission::diagnostics::request_rejected("fieldValidation", &message));
    let details = StatusDetails {
        group: "meta.k8s.io".into(),
        kind: kind.into(),
        causes: vec![StatusCause {
            reason: "FieldValueNotSupported",
            message: body,
            field: "fieldValidation",
        }],
        ..Default::default()
    };
    let why = "not reached: the request's options are invalid (422 Invalid)";
    before_admission(
        set,
        "The apiserver's request handler",
        why,
        (message, "Invalid", 422, details),
        diagnostics,
    )
}

/// A request the apiserver's handler (`who`: `The apiserver's decoder`, …) rejects before
/// admission with `status` (message, reason, code, details): no webhook or policy runs, each
/// `why` (`not reached: …`).
fn before_admission(
    set: &PolicySet,
    who: &str,
    why: &str,
    status: (String, &str, u16, crate::admission::decision::StatusDetails),
    diagnostics: &mut Vec<Diagnostic>,
) -> (AdmissionResponse, Vec<PolicyTrace>, Vec<WebhookTrace>, KyvernoOut, Vec<ObjectChange>) {
    diagnostics.push(crate::webhook::diagnostics::chain_stopped(
        who,
        "mutating admission, the registry, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook and Kyverno",
    ));
    use crate::webhook::dispatcher::not_reached;
    use crate::webhook::types::WebhookKind::{Mutating, Validating};
    let hooks = &set.webhooks.configurations;
    let mut webhooks = not_reached(hooks, Mutating, why);
    webhooks.extend(not_reached(hooks, Validating, why));
    let (message, reason, code, details) = status;
    let status = crate::admission::decision::Status {
        kind: "Status",
        api_version: "v1",
        metadata: Default::default(),
        status: "Failure",
        message,
        reason: reason.into(),
        details,
        code,
    };
    let response = AdmissionResponse { allowed: false, status: Some(status), ..Default::default() };
    (response, Vec::new(), webhooks, Default::default(), Vec::new())
}

/// `serde_json::from_value::<RequestInput>`, without the derived visitor (its map form was
/// 8.8 KB of wasm in one function, all of it compiled on a page's first `evaluate()`): read by
/// [`read_struct`], each field's value with `from_value` of its type in a function of its own,
/// compiled only when a request has that field.
#[inline(never)]
fn request_input(value: Json) -> Result<RequestInput, serde_json::Error> {
    /// The fields in declaration order (the sequence form's), by their JSON names.
    const FIELDS: [&str; 14] = [
        "operation",
        "kind",
        "resource",
        "subResource",
        "requestKind",
        "requestResource",
        "requestSubResource",
        "name",
        "namespace",
        "userInfo",
        "dryRun",
        "options",
        "object",
        "oldObject",
    ];
    #[inline(never)]
    fn field<T: DeserializeOwned>(v: Json) -> Result<Option<T>, serde_json::Error> {
        serde_json::from_value(v)
    }
    fn set(r: &mut RequestInput, i: usize, v: Json) -> Result<(), serde_json::Error> {
        match i {
            0 => r.operation = field(v)?,
            1 => r.kind = field(v)?,
            2 => r.resource = field(v)?,
            3 => r.sub_resource = field(v)?,
            4 => r.request_kind = field(v)?,
            5 => r.request_resource = field(v)?,
            6 => r.request_sub_resource = field(v)?,
            7 => r.name = field(v)?,
            8 => r.namespace = field(v)?,
            9 => r.user_info = user_info(v)?,
            10 => r.dry_run = field(v)?,
            11 => r.options = field(v)?,
            12 => r.object = field(v)?,
            13 => r.old_object = field(v)?,
            _ => {}
        }
        Ok(())
    }
    read_struct(value, &FIELDS, "struct RequestInput", set)
}

/// `serde_json::from_value::<Option<UserInfo>>`, read as [`request_input`] reads the request
/// (the derived visitor was 2.6 KB of wasm compiled on a page's first `evaluate()`).
#[inline(never)]
fn user_info(
    value: Json,
) -> Result<Option<crate::admission::request::UserInfo>, serde_json::Error> {
    use crate::admission::request::UserInfo;
    const FIELDS: [&str; 4] = ["username", "uid", "groups", "extra"];
    fn set(u: &mut UserInfo, i: usize, v: Json) -> Result<(), serde_json::Error> {
        match i {
            0 => u.username = serde_json::from_value(v)?,
            1 => u.uid = serde_json::from_value(v)?,
            2 => u.groups = serde_json::from_value(v)?,
            3 => u.extra = serde_json::from_value(v)?,
            _ => {}
        }
        Ok(())
    }
    match value {
        Json::Null => Ok(None),
        v => read_struct(v, &FIELDS, "struct UserInfo", set).map(Some),
    }
}

/// `serde_json::from_value::<T>` for a struct `T` whose derived `Deserialize` has the
/// container's `#[serde(default)]` (`fields`: its fields' JSON names in declaration order;
/// `expected`: the derived visitor's `expecting`; `set`: field `i` from its value), without the
/// derived visitor. Read as `from_value` reads it: an object field by field in the map's order
/// (unknown keys skipped), a list as the struct's sequence form (the fields in declaration
/// order; a missing element keeps the default, as the derived `visit_seq` does under the
/// container's default; then serde_json's `fewer elements in array` when elements remain);
/// anything else is `from_value`'s invalid type error. A missing field keeps `T::default()`'s;
/// the first error wins (errors from a `Value` carry no position, so the texts are the same).
fn read_struct<T: Default>(
    value: Json,
    fields: &[&str],
    expected: &'static str,
    set: fn(&mut T, usize, Json) -> Result<(), serde_json::Error>,
) -> Result<T, serde_json::Error> {
    use serde::de::{Error, Unexpected};
    let mut r = T::default();
    let unexpected = match value {
        Json::Object(m) => {
            for (k, v) in m {
                if let Some(i) = fields.iter().position(|f| *f == k) {
                    set(&mut r, i, v)?;
                }
            }
            return Ok(r);
        }
        Json::Array(a) => {
            let len = a.len();
            for (i, v) in a.into_iter().take(fields.len()).enumerate() {
                set(&mut r, i, v)?;
            }
            return match len > fields.len() {
                false => Ok(r),
                true => Err(Error::invalid_length(len, &"fewer elements in array")),
            };
        }
        Json::Null => Unexpected::Unit,
        Json::Bool(b) => Unexpected::Bool(b),
        Json::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or_default()),
        },
        Json::String(s) => return Err(Error::invalid_type(Unexpected::Str(&s), &expected)),
    };
    Err(Error::invalid_type(unexpected, &expected))
}

/// kube-apiserver's admission chain for the parts modelled: MutatingAdmissionWebhook, then
/// ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook; the first rejection ends it.
/// With the `kyverno` feature, Kyverno's validating webhook is one of the validating webhooks
/// and the ValidatingAdmissionPolicies it generates from CEL rules are dispatched with the
/// others (docs/kyverno-semantics.md §6, §7).
fn admit(
    set: &PolicySet,
    request: &mut AdmissionRequest,
    catalog: &crate::admission::resources::ResourceCatalog,
    diagnostics: &mut Vec<Diagnostic>,
) -> (AdmissionResponse, Vec<PolicyTrace>, Vec<WebhookTrace>, KyvernoOut, Vec<ObjectChange>) {
    // One view of the namespaces for every plugin: an assumed namespace (`missingNamespaces`)
    // is the same for the webhooks' namespaceSelectors and the policies.
    let namespaces = crate::admission::namespaces::Namespaces::new(set, request);
    #[cfg(feature = "kyverno")]
    let with_kyverno = crate::kyverno::present(set);
    #[cfg(feature = "kyverno")]
    let vap_set = match with_kyverno {
        true => crate::kyverno::compiled(set).extended.as_deref().unwrap_or(set),
        false => set,
    };
    #[cfg(not(feature = "kyverno"))]
    let vap_set = set;
    #[cfg_attr(not(feature = "kyverno"), allow(unused_mut))]
    let (mut response, policies, webhooks, registry) =
        admission_chain(set, vap_set, request, catalog, &namespaces, diagnostics);
    // `request` is now the one validating admission receives (after the registry).
    #[cfg(feature = "kyverno")]
    let kyverno = match with_kyverno {
        true => kyverno_admission(set, request, &namespaces, &mut response, diagnostics),
        false => None,
    };
    diagnostics.extend(namespaces.assumed_diagnostic());
    #[cfg(not(feature = "kyverno"))]
    let kyverno = ();
    (response, policies, webhooks, kyverno, registry)
}

/// Kyverno's validating webhook on `request`, its answer combined into `response` (out of line:
/// most manifests hold no Kyverno policy).
#[cfg(feature = "kyverno")]
#[inline(never)]
fn kyverno_admission(
    set: &PolicySet,
    request: &AdmissionRequest,
    namespaces: &crate::admission::namespaces::Namespaces,
    response: &mut AdmissionResponse,
    diagnostics: &mut Vec<Diagnostic>,
) -> KyvernoOut {
    let k = crate::kyverno::evaluate(set, request, namespaces)?;
    diagnostics.extend(k.diagnostics);
    crate::kyverno::combine(response, &k.result.response);
    Some(k.result)
}

/// What the registry makes of the request's object before validating admission: its object as
/// `rest.BeforeCreate` / `rest.BeforeUpdate` leave it (crate::objects::registry), changed in
/// place, and for a generated name that name (`rest.AdmissionToValidateObjectFunc`). Returns
/// the changes; none when objects are taken as given or the request is not a CREATE or UPDATE
/// of a main resource.
fn register(set: &PolicySet, request: &mut AdmissionRequest) -> Vec<ObjectChange> {
    use crate::admission::request::Operation;
    let create = match request.operation {
        Operation::Create => true,
        Operation::Update => false,
        _ => return Vec::new(),
    };
    if !set.normalize_objects || !request.sub_resource.is_empty() {
        return Vec::new();
    }
    let r = crate::objects::registry::Request {
        create,
        namespace: &request.namespace,
        namespaced: request.namespaced,
    };
    let Some(object) = request.object.as_mut() else { return Vec::new() };
    let changes = crate::objects::registry::before_validation_in_place(
        &r,
        object,
        request.old_object.as_ref(),
        set.version,
        &set.manifests.crds,
    )
    .unwrap_or_default();
    if !changes.is_empty() && request.name.is_empty() {
        if let Some(n) = object.pointer("/metadata/name").and_then(serde_json::Value::as_str) {
            request.name = n.to_string();
        }
    }
    changes
}

#[cfg(feature = "kyverno")]
type KyvernoOut = Option<crate::kyverno::KyvernoResult>;
#[cfg(not(feature = "kyverno"))]
type KyvernoOut = ();

/// `vap_set`: the policies to dispatch (the set, plus the policies Kyverno generates).
/// Mutating admission sees `request` as it came; then the registry changes it in place
/// ([`register`]) and the validating plugins receive that. The fourth value is the registry's
/// changes when the validating plugins were reached (none otherwise).
fn admission_chain(
    set: &PolicySet,
    vap_set: &PolicySet,
    request: &mut AdmissionRequest,
    catalog: &crate::admission::resources::ResourceCatalog,
    namespaces: &crate::admission::namespaces::Namespaces,
    diagnostics: &mut Vec<Diagnostic>,
) -> (AdmissionResponse, Vec<PolicyTrace>, Vec<WebhookTrace>, Vec<ObjectChange>) {
    use crate::webhook::dispatcher::{dispatch_phase, not_reached, Env};
    use crate::webhook::types::WebhookKind::{Mutating, Validating};
    let hooks = &set.webhooks.configurations;
    // The webhooks' authorizer (the request as it came), made only when there are webhooks.
    let authorizer = match hooks.is_empty() {
        true => (Value::Null, Value::Null),
        false => set.authorizer(request),
    };
    let env = Env { version: set.version, authorizer, reviews: !set.summary() };
    let cx = crate::admission::matching::MatchContext { request, namespaces, catalog };
    let mutating = dispatch_phase(hooks, Mutating, cx, &env);
    diagnostics.extend(mutating.diagnostics);
    let mut webhooks = mutating.webhooks;
    let registry = register(set, request);
    let validated = &*request;
    if let Some(status) = mutating.status {
        let why = "not reached: MutatingAdmissionWebhook rejected the request";
        webhooks.extend(not_reached(hooks, Validating, why));
        diagnostics.push(crate::webhook::diagnostics::chain_stopped(
            "MutatingAdmissionWebhook",
            "ValidatingAdmissionPolicy and ValidatingAdmissionWebhook",
        ));
        let response =
            AdmissionResponse { allowed: false, status: Some(status), ..Default::default() };
        return (response, Vec::new(), webhooks, Vec::new());
    }
    let out = dispatch(vap_set, validated, namespaces);
    diagnostics.extend(out.diagnostics);
    let mut response = out.response;
    if !response.allowed {
        let why = "not reached: ValidatingAdmissionPolicy rejected the request";
        let skipped = not_reached(hooks, Validating, why);
        if !skipped.is_empty() {
            diagnostics.push(crate::webhook::diagnostics::chain_stopped(
                "ValidatingAdmissionPolicy",
                "ValidatingAdmissionWebhook",
            ));
        }
        webhooks.extend(skipped);
        return (response, out.policies, webhooks, registry);
    }
    let cx = crate::admission::matching::MatchContext { request: validated, namespaces, catalog };
    let validating = dispatch_phase(hooks, Validating, cx, &env);
    diagnostics.extend(validating.diagnostics);
    webhooks.extend(validating.webhooks);
    if let Some(status) = validating.status {
        response.allowed = false;
        response.status = Some(status);
    }
    (response, out.policies, webhooks, registry)
}

/// The strict decoding errors of the request body's unknown fields (`fields`, as the walk met
/// them) in the order the apiserver reports them, and the index in `fields` of the first. A
/// built-in kind's are sigs.k8s.io/json's (`strictError.Error()`: `unknown field` and the
/// `strconv.Quote`d path, keys joined by dots, map keys too, list indices in brackets), in the
/// order the decoder meets them — kubectl sends the keys sorted — and at most 100
/// (`saveStrictError`). A custom resource's are its pruned fields (apiextensions-apiserver
/// `schemaCoercingDecoder.Decode`: `unknown field "%s"`, the path unquoted), sorted as strings
/// (`pruning.PruneWithOptions`: `sort.Strings`).
fn strict_errors(fields: &[Vec<crate::objects::Seg>], crd: bool) -> (usize, Vec<String>) {
    use crate::objects::Seg;
    let mut go = Vec::with_capacity(fields.len());
    for path in fields {
        let mut p = String::new();
        for seg in path {
            match seg {
                Seg::Key(k) => {
                    if !p.is_empty() {
                        p.push('.');
                    }
                    p.push_str(k);
                }
                Seg::Index(i) => p.push_str(&format!("[{i}]")),
            }
        }
        go.push(p);
    }
    let mut order: Vec<usize> = (0..fields.len()).collect();
    vap_eval_cel::sort::sort_by(&mut order, |&a, &b| match crd {
        true => go[a].cmp(&go[b]),
        false => fields[a].cmp(&fields[b]),
    });
    if !crd {
        order.truncate(100);
    }
    let first = order.first().copied().unwrap_or_default();
    let mut out = Vec::with_capacity(order.len());
    for i in order {
        let quoted = match crd {
            true => format!("\"{}\"", go[i]),
            false => crate::library::gostr::quote(&go[i]),
        };
        out.push(format!("unknown field {quoted}"));
    }
    (first, out)
}

/// The response's warnings with the request body's strict decoding errors ([`strict_errors`])
/// first: the apiserver decodes the body before admission, and under its default field
/// validation (`fieldValidation=Warn`, `handlers/create.go` / `update.go`
/// `addStrictDecodingWarnings`) each is a warning. One recorder for both, as in the apiserver:
/// the admission warnings after them share the 4096-rune budget.
fn unknown_field_warnings(strict: Vec<String>, admission: &[String]) -> Vec<String> {
    let mut recorder = crate::admission::decision::WarningRecorder::default();
    for w in &strict {
        recorder.add(w);
    }
    for w in admission {
        recorder.add(w);
    }
    recorder.texts()
}

/// Output of `typecheck`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct TypecheckResult {
    /// Problems found (JavaScript receives them converted by `to_js`: UTF-16 positions).
    #[cfg_attr(target_arch = "wasm32", tsify(type = "Diagnostic[]"))]
    pub diagnostics: Vec<Diagnostic>,
    pub kubernetes_version: String,
    /// Per ValidatingAdmissionPolicy in the manifests, in order: its type-checking status.
    pub policies: Vec<PolicyTypeChecking>,
}

/// A policy's type checking as the apiserver's status controller reports it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct PolicyTypeChecking {
    pub name: String,
    /// `status.typeChecking`.
    pub type_checking: TypeChecking,
    /// The kinds checked against, as `<group>/<version>, Kind=<Kind>`, in order (empty when no
    /// kind resolved to a schema: nothing is checked then).
    pub checked_kinds: Vec<String>,
}

/// `status.typeChecking`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct TypeChecking {
    /// Byte for byte what the apiserver writes to `expressionWarnings` (empty when none).
    pub expression_warnings: Vec<crate::admission::typechecking::ExpressionWarning>,
}

/// Parse and check every expression of the supplied policies, and type check them against the
/// schemas of the kinds they match (`status.typeChecking`); no evaluation.
pub fn typecheck(input: &EvaluateInput) -> TypecheckResult {
    let set = compile(&input.manifests, &input.set_options());
    TypecheckResult {
        policies: policy_type_checks(&set),
        diagnostics: set.diagnostics,
        kubernetes_version: set.version.to_string(),
    }
}

/// Each policy's type checking, computed when the set was compiled (`PolicySet::type_checks`).
fn policy_type_checks(set: &PolicySet) -> Vec<PolicyTypeChecking> {
    set.manifests
        .policies
        .iter()
        .zip(&set.type_checks)
        .map(|(p, t)| PolicyTypeChecking {
            name: p.object.metadata.name.clone(),
            type_checking: TypeChecking { expression_warnings: t.expression_warnings.clone() },
            checked_kinds: t.kinds.iter().map(ToString::to_string).collect(),
        })
        .collect()
}

/// Options of `evaluateExpression`; unknown fields are an error.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct ExpressionOptions {
    /// `1.30` … `1.37`; default the newest.
    pub kubernetes_version: Option<String>,
    /// `validation`, `messageExpression`, `matchCondition`, `auditAnnotation`, `variable`: its
    /// variables and required result type. Default: a validation's variables, any result type.
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(
            type = "\"validation\" | \"messageExpression\" | \"matchCondition\" | \"auditAnnotation\" | \"variable\" | null"
        )
    )]
    pub kind: Option<String>,
    /// Type `object` and `oldObject` with the schema of this kind, `"<apiVersion>/<Kind>"`
    /// (`"apps/v1/Deployment"`, `"v1/Pod"`; from `schemas` or the built-in schemas of the
    /// version) for type checking; evaluation is unaffected (`dyn` as at admission), findings are
    /// `cel-typecheck` warnings.
    pub object_kind: Option<String>,
    /// Type `object`/`oldObject` with this OpenAPI v3 schema instead (refs resolve against the
    /// built-in definitions).
    #[cfg_attr(target_arch = "wasm32", tsify(type = "string | Record<string, unknown> | null"))]
    pub object_schema: Option<Document>,
    /// Schemas by `"<apiVersion>/<Kind>"`, used before the built-in ones.
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "Record<string, Record<string, unknown>> | null")
    )]
    pub schemas: Option<Document>,
}

/// The kind named by `"<apiVersion>/<Kind>"` (`"apps/v1/Deployment"`, `"v1/Pod"`).
pub fn parse_kind(s: &str) -> Option<crate::admission::resources::GroupVersionKind> {
    let (api_version, kind) = s.rsplit_once('/')?;
    crate::admission::resources::GroupVersionKind::from_api_version(api_version, kind)
}

/// The typed object of a standalone expression's options, if any resolves.
pub fn standalone_object_types(
    version: KubeVersion,
    object_kind: Option<&str>,
    object_schema: Option<&Document>,
    schemas: Option<&Document>,
) -> Option<crate::schema::DeclTypes> {
    use crate::admission::typechecking::{object_types, SchemaSources};
    let user = schemas_map(schemas, &mut Vec::new());
    let object_schema = object_schema.and_then(|d| d.parse("objectSchema").ok().flatten());
    let object_schema = object_schema.as_ref();
    let sources =
        SchemaSources { user: &user, crds: &[], builtin: SchemaSources::builtin_for(version) };
    let gvk = object_kind.and_then(parse_kind);
    object_types(&sources, gvk.as_ref(), object_schema)
}

/// Output of `evaluateExpression`.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct ExpressionResult {
    /// The value as JSON: int/uint/double → number, bytes → base64, duration/timestamp → their
    /// CEL string form. Absent when the expression did not compile or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(type = "unknown"))]
    pub value: Option<Json>,
    /// The CEL type: of the value when evaluated, else the checked type. Absent when the
    /// expression did not compile.
    #[serde(skip_serializing_if = "Option::is_none", rename = "type")]
    pub type_name: Option<String>,
    /// Actual cost; absent when the expression did not compile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<u64>,
    /// Problems found (JavaScript receives them converted by `to_js`: UTF-16 positions).
    #[cfg_attr(target_arch = "wasm32", tsify(type = "Diagnostic[]"))]
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

/// The variables of `evaluateExpression` that hold a Kubernetes object or request: a string
/// value is YAML/JSON text to parse, as in `evaluate`.
pub const DOCUMENT_VARIABLES: [&str; 5] =
    [var::OBJECT, var::OLD_OBJECT, var::PARAMS, var::REQUEST, var::NAMESPACE_OBJECT];

/// Check and evaluate one CEL expression in the environment of a VAP expression (spec §4.2).
/// `variables` binds `object`, `oldObject`, `params`, `request`, `namespaceObject` (JSON values,
/// or YAML/JSON text to parse; absent ones are null) and declares any other name as `dyn`
/// (bound to its JSON value as is: a string stays a string). Text that does not parse is an
/// `input-yaml-syntax` diagnostic and the expression is only checked.
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
    // Typed check (warnings only; evaluation below uses the untyped compilation).
    let typed = standalone_object_types(
        version,
        options.object_kind.as_deref(),
        options.object_schema.as_ref(),
        options.schemas.as_ref(),
    );
    if let (Some(types), None) = (&typed, &compiled.error) {
        let base = crate::environment::base_declarations(compiler.features());
        let layer = crate::admission::typechecking::with_types(base, &[types]);
        let mut d = crate::cel::decls::Declarations::extending(layer);
        let scope = VariableScope { object_type: types.root.clone(), ..scope.clone() };
        crate::environment::declare_admission_variables(&mut d, kind, &scope);
        for name in variables.keys().filter(|k| !standard.contains(&k.as_str())) {
            d.add_variable(name, crate::cel::types::Type::Dyn);
        }
        let c = compiler.compile_in(expression, kind, &d, expected);
        for issue in &c.issues {
            let mut w = Diagnostic::warning("cel-typecheck", issue.message.clone());
            if let Some(span) = issue.span {
                w = w.with_span(span, source.clone());
            }
            out.diagnostics.push(w);
        }
    }
    for issue in &compiled.issues {
        let mut d = Diagnostic::error("cel-compile", issue.message.clone());
        if let Some(span) = issue.span {
            d = d.with_span(span, source.clone());
        }
        out.diagnostics.push(d);
    }
    let mut values = Vec::with_capacity(variables.len());
    let mut bad_input = false;
    for (name, v) in variables {
        let v = match v {
            Json::String(text) if DOCUMENT_VARIABLES.contains(&name.as_str()) => {
                match Document::Text(text.clone()).parse(name) {
                    Ok(v) => v.unwrap_or(Json::Null),
                    Err(d) => {
                        out.diagnostics.push(*d);
                        bad_input = true;
                        Json::Null
                    }
                }
            }
            v => v.clone(),
        };
        values.push((name, v));
    }
    let Some(program) = &compiled.program else { return out };
    // The result's type stays the untyped compilation's (typing never changes a result).
    let static_type = compiled.output_type.clone();
    out.type_name = Some(static_type.to_string());
    if bad_input {
        return out;
    }
    let bindings: Vec<(String, Value<'_>)> =
        values.iter().map(|(k, v)| ((*k).clone(), Value::from_json(v))).collect();
    let act = ExpressionActivation { bindings: &bindings };
    let mut tracker = CostTracker::default();
    match program.eval(&act, &mut tracker) {
        Ok(v) => {
            out.value = Some(v.to_json());
            // The static type says more (`list(string)`) unless it is `dyn`.
            if static_type.is_dyn_or_error() {
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

/// A diagnostic as JavaScript receives it (`Diagnostic` in the TypeScript types): positions in
/// UTF-16 code units and 1-based line/column (column in UTF-16 code units), plus the rendered
/// text. The positions are present only when the diagnostic has a `source` and a span.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify::Tsify),
    tsify(missing_as_null, hashmap_as_object, rename = "Diagnostic")
)]
pub struct JsDiagnostic {
    pub severity: Severity,
    /// Stable kebab-case identifier (`cel-compile`, `manifest-yaml-syntax`, …).
    pub code: &'static str,
    pub message: String,
    /// Kubernetes field path, prefixed by the object where relevant; may be empty.
    pub field: String,
    /// The text `start`/`end` index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRef>,
    /// UTF-16 code-unit offset of the first character (0-based, half-open with `end`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    /// UTF-16 code-unit offset one past the last character.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<u32>,
    /// 1-based line of `start`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column of `start`, in UTF-16 code units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// 1-based line of `end`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// 1-based column of `end`, in UTF-16 code units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    /// `ERROR: <where>:L:C: <field>: <message>`, then the source line and a caret line.
    pub rendered: String,
    /// A hint on how to fix it; absent when there is none.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
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
/// (Borrowed where it can be: the manifests' text is not copied for each of their diagnostics.)
pub fn to_js<'t>(
    d: &Diagnostic,
    text_of: &dyn Fn(&SourceRef) -> Option<std::borrow::Cow<'t, str>>,
) -> JsDiagnostic {
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

/// The largest char boundary of `text` at or before `i` (clamped to its length).
fn floor_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
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
        Some(SourceRef::Manifest { .. }) => "manifests",
        Some(SourceRef::Expression { .. }) => "<input>",
        Some(SourceRef::Input { name }) => name.as_str(),
        None => "",
    };
    // Written piece by piece, not formatted: a result renders each of its diagnostics.
    let mut out = String::with_capacity(severity.len() + d.field.len() + d.message.len() + 24);
    out.push_str(severity);
    let mut snippet = String::new();
    match (text, d.span) {
        (Some(text), Some(span)) => {
            let (line, col) = crate::cel::errors::line_column(text, span.start);
            out.push_str(&format!(": {place}:{line}:{col}"));
            if let Some(src_line) = text.lines().nth(line as usize - 1) {
                // One caret per character of the span on its first line; one for an empty span
                // (whatever the width of the character it points at).
                let start = floor_char_boundary(text, span.start as usize);
                let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
                let line_end = line_start + src_line.len();
                let end = floor_char_boundary(
                    text,
                    (span.end as usize).clamp(start, line_end.max(start)),
                );
                let carets = text[start..end].chars().count().max(1);
                snippet = format!(
                    "\n | {src_line}\n | {}{}",
                    ".".repeat(col as usize - 1),
                    "^".repeat(carets)
                );
            }
        }
        _ if !place.is_empty() => {
            out.push_str(": ");
            out.push_str(place);
        }
        _ => {}
    }
    if !d.field.is_empty() {
        render_field(d, &mut out);
    }
    out.push_str(": ");
    out.push_str(&d.message);
    out.push_str(&snippet);
    out
}

/// [`render`]'s naming of the field (out of line: most diagnostics of a first result have none).
#[inline(never)]
fn render_field(d: &Diagnostic, head: &mut String) {
    // apimachinery field errors already start with their path (`spec.x: Required value`):
    // name only the object then.
    let (object, path) = d.field.rsplit_once(": ").unwrap_or(("", d.field.as_str()));
    if d.message.strip_prefix(path).is_some_and(|rest| rest.starts_with(": ")) {
        if !object.is_empty() {
            head.push_str(": ");
            head.push_str(object);
        }
    } else {
        head.push_str(": ");
        head.push_str(&d.field);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_input_reads_as_from_value() {
        let mut inputs = vec![
            json!({}),
            json!({"operation": "CREATE", "userInfo": {"username": "a", "groups": ["g"]}}),
            json!({"operation": null, "kind": {"group": "apps", "version": "v1", "kind": "D"},
                "resource": {"resource": "deployments"}, "subResource": "scale",
                "requestKind": {"kind": "Scale"}, "requestResource": {"group": "x"},
                "requestSubResource": "", "name": "n", "namespace": "ns", "dryRun": true,
                "options": {"a": 1}, "object": {"b": 2}, "oldObject": null, "unknown": [1]}),
            json!({"operation": 3}),
            json!({"name": "n", "kind": "Deployment"}),
            json!({"userInfo": {"groups": "g"}}),
            json!({"dryRun": "yes", "operation": []}),
            json!({"kind": {"group": 1}}),
            json!({"userInfo": null}),
            json!({"userInfo": {"username": null}}),
            json!({"userInfo": {"uid": "u", "extra": {"a": ["b"]}, "other": 1}}),
            json!({"userInfo": {"extra": {"a": "b"}}}),
            json!({"userInfo": {"groups": [1]}}),
            json!({"userInfo": []}),
            json!({"userInfo": ["alice"]}),
            json!({"userInfo": ["alice", "u", ["g"], {}]}),
            json!({"userInfo": ["alice", "u", ["g"], {}, 1]}),
            json!({"userInfo": "alice"}),
            json!({"userInfo": 1.5}),
            json!({"userInfo": false}),
            json!(null),
            json!(true),
            json!(3),
            json!(-3),
            json!(1.5),
            json!("CREATE"),
            json!([]),
            json!(["CREATE"]),
            json!([3]),
            json!(["CREATE", null, null, null, null, null, null, "n"]),
        ];
        let mut long = vec![json!("DELETE")];
        long.extend(std::iter::repeat_n(json!(null), 13));
        inputs.push(Json::Array(long.clone()));
        long.push(json!(null));
        inputs.push(Json::Array(long.clone()));
        long[0] = json!(3);
        inputs.push(Json::Array(long));
        for v in inputs {
            let want = serde_json::from_value::<RequestInput>(v.clone()).map_err(|e| e.to_string());
            let got = request_input(v.clone()).map_err(|e| e.to_string());
            assert_eq!(got, want, "{v}");
        }
    }

    #[test]
    fn inputs_deserialise_with_errors_naming_the_field() {
        let ok: EvaluateInput = from_json(
            "input",
            json!({"manifests": ["a: 1", {"b": 2}, null], "object": "x: 1", "request": null}),
        )
        .unwrap();
        assert!(matches!(&ok.manifests, Manifests::List(l) if l.len() == 3));
        assert!(matches!(ok.object, Some(Document::Text(_))));
        let err = |v| from_json::<EvaluateInput>("input", v).unwrap_err();
        assert_eq!(
            err(json!({"manifest": ""})),
            "input.manifest: unknown field `manifest`, expected one of `manifests`, `object`, `oldObject`, `request`, `kubernetesVersion`, `unboundPolicies`, `missingNamespaces`, `objectsAsGiven`, `schemas`"
        );
        assert_eq!(
            err(json!({"manifests": 5})),
            "input.manifests: invalid type: integer `5`, expected YAML/JSON text or a list of texts and objects"
        );
        assert_eq!(
            err(json!({"manifests": ["", [1]]})),
            "input.manifests[1]: invalid type: sequence, expected YAML/JSON text or an object"
        );
        assert_eq!(
            err(json!({"kubernetesVersion": 1.3})),
            "input.kubernetesVersion: invalid type: floating point `1.3`, expected a string"
        );
        let err = from_json::<ExpressionOptions>("options", json!({"kind": 1})).unwrap_err();
        assert_eq!(err, "options.kind: invalid type: integer `1`, expected a string");
    }

    #[test]
    fn input_text_is_one_yaml_or_json_document() {
        assert_eq!(parse_input_text("input", "manifests: ''").unwrap(), json!({"manifests": ""}));
        assert_eq!(parse_input_text("input", "{\"a\": 1.0}").unwrap(), json!({"a": 1.0}));
        assert_eq!(parse_input_text("input", "  ").unwrap(), Json::Null);
        assert_eq!(
            parse_input_text("input", "a: 1\n---\nb: 2").unwrap_err(),
            "input: expected one YAML/JSON document, found 2"
        );
        assert!(parse_input_text("input", "a: [").unwrap_err().starts_with("input: line "));
    }

    #[test]
    fn unsupported_version_is_the_first_diagnostic_of_a_set() {
        let set = compile(
            &Manifests::Text(String::new()),
            &PolicySetOptions { kubernetes_version: Some("1.2".into()), ..Default::default() },
        );
        assert_eq!(set.version, KubeVersion::NEWEST);
        assert_eq!(set.diagnostics[0].code, "unsupported-kubernetes-version");
    }

    #[test]
    fn expression_document_variables_may_be_text() {
        let options = ExpressionOptions { kind: Some("variable".into()), ..Default::default() };
        let vars = json!({"object": "spec: {replicas: 3}", "name": "spec: 1"});
        let vars = vars.as_object().unwrap();
        let r = evaluate_expression("[object.spec.replicas, name]", vars, &options);
        assert_eq!(r.value, Some(json!([3, "spec: 1"])), "{:?}", r.diagnostics);
        let vars = json!({"object": "a: ["});
        let r = evaluate_expression("object.a", vars.as_object().unwrap(), &options);
        assert_eq!(r.value, None);
        assert_eq!(r.diagnostics[0].code, "input-yaml-syntax");
        assert_eq!(r.diagnostics[0].source, Some(SourceRef::Input { name: "object".into() }));
    }
}

#[cfg(test)]
mod rendering_tests {
    use super::*;
    use crate::diagnostic::Span;

    #[test]
    fn rendered_diagnostics_name_object_and_path_once() {
        let text = "spec:\n  failurePolicy: Sometimes\n";
        let api = Diagnostic::error(
            "api-unsupported-value",
            "spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\"",
        )
        .with_field("ValidatingAdmissionPolicy/demo: spec.failurePolicy")
        .with_span(Span::new(23, 32), SourceRef::Manifest { document: 0 });
        assert_eq!(
            render(&api, Some(text)),
            "ERROR: manifests:2:18: ValidatingAdmissionPolicy/demo: spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\"\n |   failurePolicy: Sometimes\n | .................^^^^^^^^^"
        );
        let info = Diagnostic::new(
            Severity::Info,
            "request-derived",
            "operation CREATE derived from the objects supplied",
        )
        .with_field("operation");
        assert_eq!(
            render(&info, None),
            "INFO: operation: operation CREATE derived from the objects supplied"
        );
    }

    // Found by tests/node/fuzz.test.mjs: a YAML scan error (an empty span) on a multi-byte
    // character sliced the text inside it, and the panic trapped the wasm instance.
    #[test]
    fn rendered_carets_count_characters_and_never_split_one() {
        let text = "a: \u{888}\"\"\"\nb: é😀x\n";
        let at = |start, end| {
            let d = Diagnostic::error("yaml", "bad")
                .with_span(Span::new(start, end), SourceRef::Input { name: "request".into() });
            render(&d, Some(text))
        };
        // Empty span at a 3-byte character: one caret under it.
        assert_eq!(at(3, 3), "ERROR: request:1:4: bad\n | a: \u{888}\"\"\"\n | ...^");
        // A span over "é😀" (2 + 4 bytes): two carets; one ending inside a character stops before it.
        assert_eq!(at(13, 19), "ERROR: request:2:4: bad\n | b: é😀x\n | ...^^");
        assert_eq!(at(13, 16), "ERROR: request:2:4: bad\n | b: é😀x\n | ...^");
        // Past the line end: clipped to the line; past the text: clamped.
        assert_eq!(at(13, 100), "ERROR: request:2:4: bad\n | b: é😀x\n | ...^^^");
    }

    #[test]
    fn utf16_positions_count_code_units() {
        // "é" is 2 bytes / 1 unit; "😀" is 4 bytes / 2 units.
        let text = "é😀\nx";
        assert_eq!(utf16_position(text, 0), (0, 1, 1));
        assert_eq!(utf16_position(text, 2), (1, 1, 2));
        assert_eq!(utf16_position(text, 6), (3, 1, 4));
        assert_eq!(utf16_position(text, 7), (4, 2, 1));
    }
}
