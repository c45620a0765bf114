//! ValidatingWebhookConfiguration and MutatingWebhookConfiguration (admissionregistration v1,
//! and v1beta1 converted to v1 with v1beta1's own defaults), decoded from the positioned
//! manifests with one diagnostic per bad field, like the policy types.
//!
//! Enum-like fields keep the string as written (API validation reports unsupported values).

use serde_json::{Map, Value};

use crate::admission::field::FieldPath;
use crate::admission::manifests::{Manifests, Source};
use crate::admission::types::{Decoder, LabelSelector, MatchCondition, NamedRuleWithOperations};
use crate::diagnostic::{Diagnostic, SourceRef};

use super::diagnostics;

/// Which of the two configuration kinds (and admission plugins) a webhook belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WebhookKind {
    Mutating,
    Validating,
}

impl WebhookKind {
    /// `MutatingWebhookConfiguration` / `ValidatingWebhookConfiguration`.
    pub fn configuration_kind(self) -> &'static str {
        match self {
            WebhookKind::Mutating => "MutatingWebhookConfiguration",
            WebhookKind::Validating => "ValidatingWebhookConfiguration",
        }
    }
}

/// `ServiceReference`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServiceReference {
    pub namespace: String,
    pub name: String,
    /// `None`: not set.
    pub path: Option<String>,
    /// Defaulted to 443.
    pub port: Option<i64>,
}

/// `WebhookClientConfig`: exactly one of `url` and `service` must be set (API validation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientConfig {
    pub url: Option<String>,
    pub service: Option<ServiceReference>,
    /// Base64 text as written; `None` when absent.
    pub ca_bundle: Option<String>,
}

/// One webhook of either kind (`MutatingWebhook` has `reinvocationPolicy` in addition).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Webhook {
    pub name: String,
    pub client_config: ClientConfig,
    /// `RuleWithOperations` (decoded into the shared rule type; `resourceNames` stays empty).
    pub rules: Vec<NamedRuleWithOperations>,
    /// `Fail` | `Ignore` after defaulting.
    pub failure_policy: Option<String>,
    /// `Exact` | `Equivalent` after defaulting.
    pub match_policy: Option<String>,
    /// `{}` after defaulting.
    pub namespace_selector: Option<LabelSelector>,
    /// `{}` after defaulting.
    pub object_selector: Option<LabelSelector>,
    /// `None`, `NoneOnDryRun` (v1); `Unknown`, `Some` only from v1beta1. No v1 default.
    pub side_effects: Option<String>,
    pub timeout_seconds: Option<i64>,
    /// Required in v1; v1beta1 defaults it to `["v1beta1"]`.
    pub admission_review_versions: Vec<String>,
    /// Mutating webhooks only: `Never` | `IfNeeded` after defaulting.
    pub reinvocation_policy: Option<String>,
    pub match_conditions: Vec<MatchCondition>,
}

/// A webhook configuration as loaded.
#[derive(Clone, Debug, PartialEq)]
pub struct WebhookConfiguration {
    pub kind: WebhookKind,
    /// As written (`admissionregistration.k8s.io/v1` or `…/v1beta1`).
    pub api_version: String,
    pub name: String,
    pub metadata: crate::admission::types::ObjectMeta,
    pub webhooks: Vec<Webhook>,
    pub source: Source,
}

const GROUP: &str = "admissionregistration.k8s.io";

/// Every webhook configuration in the manifests, **sorted by name** as the apiserver's
/// configuration managers sort them (`sort.SliceStable` by name; webhooks keep their written
/// order). Duplicate names: the later document wins (one object per name, as in a cluster).
/// Whether any document (or List item) of `m` is of a webhook configuration kind, whatever its
/// group: when none is, [`load_configurations`] finds nothing and says nothing.
pub fn mentions_configurations(m: &Manifests) -> bool {
    m.any_object(|v| {
        matches!(
            v.get("kind").and_then(Value::as_str),
            Some("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration")
        )
    })
}

pub fn load_configurations(m: &Manifests) -> (Vec<WebhookConfiguration>, Vec<Diagnostic>) {
    let mut out: Vec<WebhookConfiguration> = Vec::new();
    let mut diags = Vec::new();
    fn kind_of(v: &Value) -> &str {
        v.get("kind").and_then(Value::as_str).unwrap_or_default()
    }
    for doc in &m.documents {
        let mut objects: Vec<(String, &Value)> = Vec::new();
        match doc.value.get("items").and_then(Value::as_array) {
            Some(items) if kind_of(&doc.value).ends_with("List") => {
                for (i, it) in items.iter().enumerate() {
                    objects.push((format!("items[{i}]"), it));
                }
            }
            _ => objects.push((String::new(), &doc.value)),
        }
        for (prefix, obj) in objects {
            let kind = match kind_of(obj) {
                "MutatingWebhookConfiguration" => WebhookKind::Mutating,
                "ValidatingWebhookConfiguration" => WebhookKind::Validating,
                _ => continue,
            };
            let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            if group != GROUP {
                continue;
            }
            let span = doc.positions.get(&prefix).map(|p| p.span).unwrap_or(doc.span);
            let at = SourceRef::Manifest { document: doc.index };
            if !matches!(version, "v1" | "v1beta1") {
                diags.push(
                    diagnostics::unsupported_version(api_version, kind.configuration_kind())
                        .with_span(span, at),
                );
                continue;
            }
            if version == "v1beta1" {
                diags.push(
                    diagnostics::converted(api_version, kind.configuration_kind())
                        .with_span(span, at),
                );
            }
            let mut dec = Decoder::new(Some(doc), &prefix);
            let source = Source { document: doc.index, path: prefix.clone() };
            let mut c = decode(&mut dec, obj, kind, api_version, source);
            apply_defaults(&mut c, version == "v1beta1");
            diags.append(&mut dec.diagnostics);
            if let Some(i) = out.iter().position(|o| o.kind == kind && o.name == c.name) {
                diags.push(diagnostics::duplicate(kind.configuration_kind(), &c.name));
                out[i] = c;
            } else {
                out.push(c);
            }
        }
    }
    // Mutating before validating (the two plugins' order in the chain); then by name, compared
    // as Go compares strings (bytes).
    vap_eval_cel::sort::sort_by(&mut out, |a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
    (out, diags)
}

fn decode(
    d: &mut Decoder<'_>,
    v: &Value,
    kind: WebhookKind,
    api_version: &str,
    source: Source,
) -> WebhookConfiguration {
    let root = FieldPath::root();
    let s = kind.configuration_kind();
    let mut c = WebhookConfiguration {
        kind,
        api_version: api_version.to_string(),
        name: String::new(),
        metadata: Default::default(),
        webhooks: Vec::new(),
        source,
    };
    let Some(m) = d.object(Some(v), &root, s, s) else { return c };
    d.unknown_fields(m, &root, &["apiVersion", "kind", "metadata", "webhooks"]);
    c.metadata = d.object_meta(m.get("metadata"), &FieldPath::new("metadata"), s);
    c.name = c.metadata.name.clone();
    let go_item = match kind {
        WebhookKind::Mutating => "MutatingWebhook",
        WebhookKind::Validating => "ValidatingWebhook",
    };
    let wp = FieldPath::new("webhooks");
    c.webhooks = d.list(m.get("webhooks"), &wp, s, &format!("[]v1.{go_item}"), |d, v, p| {
        let o = d.object(Some(v), p, go_item, go_item)?;
        Some(webhook(d, o, p, kind, go_item))
    });
    c
}

fn webhook(
    d: &mut Decoder<'_>,
    o: &Map<String, Value>,
    p: &FieldPath,
    kind: WebhookKind,
    w: &str,
) -> Webhook {
    let mut known = vec![
        "name",
        "clientConfig",
        "rules",
        "failurePolicy",
        "matchPolicy",
        "namespaceSelector",
        "objectSelector",
        "sideEffects",
        "timeoutSeconds",
        "admissionReviewVersions",
        "matchConditions",
    ];
    if kind == WebhookKind::Mutating {
        known.push("reinvocationPolicy");
    }
    d.unknown_fields(o, p, &known);
    let mut h = Webhook {
        name: d.string(o, "name", p, w),
        failure_policy: d.opt_string(o, "failurePolicy", p, w),
        match_policy: d.opt_string(o, "matchPolicy", p, w),
        side_effects: d.opt_string(o, "sideEffects", p, w),
        admission_review_versions: d.string_list(o, "admissionReviewVersions", p, w),
        reinvocation_policy: d.opt_string(o, "reinvocationPolicy", p, w),
        namespace_selector: d.label_selector(
            o.get("namespaceSelector"),
            &p.child("namespaceSelector"),
            w,
        ),
        object_selector: d.label_selector(o.get("objectSelector"), &p.child("objectSelector"), w),
        timeout_seconds: int(d, o, "timeoutSeconds", p, w),
        ..Webhook::default()
    };
    let rp = p.child("rules");
    h.rules = d.list(o.get("rules"), &rp, w, "[]v1.RuleWithOperations", |d, v, ip| {
        let r = d.object(Some(v), ip, "RuleWithOperations", "v1.RuleWithOperations")?;
        if r.contains_key("resourceNames") {
            let f = ip.child("resourceNames");
            let diag = d.locate(crate::admission::diagnostics::unknown_field(&f), &f, true);
            d.diagnostics.push(diag);
        }
        let mut without = r.clone();
        without.remove("resourceNames");
        Some(d.rule(&without, ip))
    });
    let mp = p.child("matchConditions");
    h.match_conditions =
        d.list(o.get("matchConditions"), &mp, w, "[]v1.MatchCondition", |d, v, ip| {
            let r = d.object(Some(v), ip, "MatchCondition", "v1.MatchCondition")?;
            d.unknown_fields(r, ip, &["name", "expression"]);
            Some(MatchCondition {
                name: d.string(r, "name", ip, "MatchCondition"),
                expression: d.string(r, "expression", ip, "MatchCondition"),
            })
        });
    let cp = p.child("clientConfig");
    if let Some(cc) = d.object(o.get("clientConfig"), &cp, w, "v1.WebhookClientConfig") {
        const C: &str = "WebhookClientConfig";
        d.unknown_fields(cc, &cp, &["url", "service", "caBundle"]);
        h.client_config.url = d.opt_string(cc, "url", &cp, C);
        h.client_config.ca_bundle = d.opt_string(cc, "caBundle", &cp, C);
        if let Some(at) = h.client_config.ca_bundle.as_deref().and_then(base64_error) {
            let f = cp.child("caBundle");
            let diag = d.locate(diagnostics::ca_bundle_not_base64(&f, at), &f, false);
            d.diagnostics.push(diag);
        }
        let sp = cp.child("service");
        if let Some(s) = d.object(cc.get("service"), &sp, C, "v1.ServiceReference") {
            const S: &str = "ServiceReference";
            d.unknown_fields(s, &sp, &["namespace", "name", "path", "port"]);
            h.client_config.service = Some(ServiceReference {
                namespace: d.string(s, "namespace", &sp, S),
                name: d.string(s, "name", &sp, S),
                path: d.opt_string(s, "path", &sp, S),
                port: int(d, s, "port", &sp, S),
            });
        }
    }
    h
}

/// An `int32` field; a wrong type or an out-of-range number is a decoding diagnostic.
fn int(
    d: &mut Decoder<'_>,
    m: &Map<String, Value>,
    key: &str,
    p: &FieldPath,
    go_struct: &str,
) -> Option<i64> {
    match m.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) => {
            n.as_i64()
        }
        Some(other) => {
            d.type_error(other, &p.child(key), go_struct, "int32");
            None
        }
    }
}

/// apiserver defaulting (`admissionregistration/v1/defaults.go`, `v1beta1/defaults.go`):
///
/// | field | v1 | v1beta1 |
/// |---|---|---|
/// | failurePolicy | `Fail` | `Ignore` |
/// | matchPolicy | `Equivalent` | `Exact` |
/// | namespaceSelector, objectSelector | `{}` | `{}` |
/// | sideEffects | — (required) | `Unknown` |
/// | timeoutSeconds | 10 | 30 |
/// | admissionReviewVersions | — (required) | `["v1beta1"]` |
/// | reinvocationPolicy (mutating) | `Never` | `Never` |
/// | rules[*].scope | `*` | `*` |
/// | clientConfig.service.port | 443 | 443 |
fn apply_defaults(c: &mut WebhookConfiguration, v1beta1: bool) {
    let kind = c.kind;
    let (fp, mp, timeout) =
        if v1beta1 { ("Ignore", "Exact", 30) } else { ("Fail", "Equivalent", 10) };
    for h in &mut c.webhooks {
        h.failure_policy.get_or_insert_with(|| fp.into());
        h.match_policy.get_or_insert_with(|| mp.into());
        h.namespace_selector.get_or_insert_with(LabelSelector::default);
        h.object_selector.get_or_insert_with(LabelSelector::default);
        h.timeout_seconds.get_or_insert(timeout);
        if v1beta1 {
            h.side_effects.get_or_insert_with(|| "Unknown".into());
            if h.admission_review_versions.is_empty() {
                h.admission_review_versions = vec!["v1beta1".into()];
            }
        }
        if kind == WebhookKind::Mutating {
            h.reinvocation_policy.get_or_insert_with(|| "Never".into());
        }
        for r in &mut h.rules {
            r.scope.get_or_insert_with(|| "*".into());
        }
        if let Some(s) = &mut h.client_config.service {
            s.port.get_or_insert(443);
        }
    }
}

/// Where Go's `base64.StdEncoding` rejects `s` (the offset of its `CorruptInputError`), as
/// `encoding/json` does when decoding a `[]byte` field; `None` when it decodes. Line breaks
/// are skipped, padding is required.
pub fn base64_error(s: &str) -> Option<usize> {
    let src = s.as_bytes();
    let valid = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let newline = |b: u8| b == b'\n' || b == b'\r';
    let mut si = 0;
    loop {
        // One quantum of four characters.
        let mut j = 0;
        while j < 4 {
            let Some(&c) = src.get(si) else {
                return if j == 0 { None } else { Some(si - j) };
            };
            si += 1;
            if valid(c) {
                j += 1;
                continue;
            }
            if newline(c) {
                continue;
            }
            if c != b'=' || j < 2 {
                return Some(si - 1);
            }
            if j == 2 {
                while src.get(si).is_some_and(|&b| newline(b)) {
                    si += 1;
                }
                match src.get(si) {
                    None => return Some(src.len()),
                    Some(b'=') => si += 1,
                    Some(_) => return Some(si - 1),
                }
            }
            while src.get(si).is_some_and(|&b| newline(b)) {
                si += 1;
            }
            return (si < src.len()).then_some(si);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{base64_error, load_configurations, mentions_configurations};
    use crate::admission::manifests::load_manifests;

    /// The shortcut `WebhookSet::new` takes: manifests without a configuration kind load none
    /// and say nothing; a configuration inside a List, or in another group (skipped without a
    /// word), counts as mentioned.
    #[test]
    fn only_manifests_without_configurations_skip_loading() {
        let cases = [
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", false),
            ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: admissionregistration.k8s.io/v1\n  kind: ValidatingWebhookConfiguration\n  metadata: {name: a}\n  webhooks: []\n", true),
            ("apiVersion: example.com/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: a}\n", true),
        ];
        for (text, mentioned) in cases {
            let m = load_manifests(text);
            assert_eq!(mentions_configurations(&m), mentioned, "{text}");
            if !mentioned {
                let (configs, diags) = load_configurations(&m);
                assert!(configs.is_empty() && diags.is_empty(), "{text}");
            }
        }
        let m = load_manifests(cases[1].0);
        assert_eq!(load_configurations(&m).0.len(), 1);
    }

    /// Go `encoding/base64` `TestDecodeCorrupt` (StdEncoding rows).
    #[test]
    fn base64_offsets_follow_go() {
        for (input, want) in [
            ("", None),
            ("\n", None),
            ("AAA=", None),
            ("AAAA", None),
            ("AA==", None),
            ("AAA=\n", None),
            ("!!!!", Some(0)),
            ("====", Some(0)),
            ("x===", Some(1)),
            ("=AAA", Some(0)),
            ("A=AA", Some(1)),
            ("AA=A", Some(2)),
            ("AA==A", Some(4)),
            ("AAA=AAAA", Some(4)),
            ("AAAAA", Some(4)),
            ("AAAAAA", Some(4)),
            ("A=", Some(1)),
            ("A==", Some(1)),
            ("AA=", Some(3)),
            ("AAAA\n", None),
            ("AAAAAA=", Some(7)),
            ("YWJjZA=====", Some(8)),
            ("A!\n", Some(1)),
            ("A=\n", Some(1)),
        ] {
            assert_eq!(base64_error(input), want, "{input:?}");
        }
    }
}
