//! Objects as the apiserver sees them: decoded into the Go type, defaulted, and converted back.
//!
//! CEL in the apiserver never reads the JSON a client sent. A built-in object is decoded into its
//! Go type (unknown fields dropped, numbers into the field's Go type), defaulted (the API group's
//! `SetDefaults_*` functions and `+default` markers), and turned back into unstructured data by
//! `runtime.DefaultUnstructuredConverter.ToUnstructured`, which honours the json tags: an
//! `omitempty` field holding its zero value is absent, a nil pointer, slice or map without
//! `omitempty` is `null`, a non-pointer scalar without it is its zero value, a non-pointer
//! struct is always there, quantities are canonical. A custom resource gets its CRD's
//! structural-schema defaults and loses the fields its schema does not declare (unless
//! `x-kubernetes-preserve-unknown-fields`). `object`, `oldObject`, `params` and
//! `namespaceObject` are all such objects.
//!
//! [`normalize`] does this to one object and lists every change it made ([`ObjectChange`]).
//! Built-in kinds follow the generated shape data ([`model`], per Kubernetes version) and the
//! hand-ported defaulting functions ([`defaults`]); custom resources their CRD ([`crd`]).
//! Kinds neither knows (other API groups, CRDs not supplied) are left as given.

pub mod crd;
pub mod defaults;
pub mod diagnostics;
pub mod gojson;
pub mod model;
pub mod registry;

use serde::Serialize;
use serde_json::Value as Json;

use crate::diagnostic::Diagnostic;
use crate::environment::KubeVersion;

/// Why a value changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub enum ChangeReason {
    /// Set by defaulting: a `SetDefaults_*` function, a `+default` marker, or a CRD schema's
    /// `default`.
    Default,
    /// An `omitempty` field held its zero value (`""`, `0`, `false`, an empty list or map), so
    /// the converter leaves it out.
    DroppedZeroValue,
    /// A pointer, slice or map field without `omitempty` was left out (Go nil): it is `null`.
    NullForNonOmitempty,
    /// A non-pointer field without `omitempty` (or a struct, which `omitempty` never drops) was
    /// left out: it holds its zero value (`""`, `0`, `false`, `{}`, `null` for a time).
    ZeroValue,
    /// A field the type (or the CRD's structural schema) does not declare: dropped by the
    /// decoder, or pruned.
    Pruned,
    /// The decoded value is written in its canonical form: a quantity (`1000m` → `1`), a time
    /// (UTC, whole seconds), an integer field given as `3.0`, a float field given as `1`.
    Canonical,
    /// Set by the registry before validating admission ([`registry`]): `metadata.uid`,
    /// `creationTimestamp`, the name from `generateName`, `generation`, the status a kind's
    /// strategy resets on create or keeps from the old object on update.
    Registry,
}

/// One change the round trip made to an object.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct ObjectChange {
    /// Which object: `object`, `oldObject`, or a manifest object as `Kind namespace/name`
    /// (`Kind name` when cluster-scoped) — a param or namespace object.
    pub object: String,
    /// Field path in the form Kubernetes prints (`spec.template.spec.containers[0].imagePullPolicy`,
    /// map keys in brackets: `metadata.labels[app]`).
    pub path: String,
    /// The value as given; absent when the field was not there.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "unknown"))]
    pub before: Option<Json>,
    /// The value a policy sees; absent when the field is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "unknown"))]
    pub after: Option<Json>,
    pub reason: ChangeReason,
}

/// A step of a field path. Ordered as kubectl writes an object (Go's `encoding/json` sorts map
/// keys): keys by their bytes, list items by index.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Render a path as Kubernetes does: `a.b[0].c`, map keys as `[key]`.
pub fn render_path(path: &[Seg], map_keys: &[bool]) -> String {
    let mut out = String::new();
    for (i, s) in path.iter().enumerate() {
        match s {
            Seg::Key(k) if map_keys.get(i).copied().unwrap_or(false) => {
                out.push('[');
                out.push_str(k);
                out.push(']');
            }
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(n) => {
                // Not `format!`: a formatter and a string for every index of every change.
                out.push('[');
                let start = out.len();
                let mut n = *n;
                loop {
                    out.insert(start, char::from(b'0' + (n % 10) as u8));
                    n /= 10;
                    if n == 0 {
                        break;
                    }
                }
                out.push(']');
            }
        }
    }
    out
}

fn lookup<'v>(v: &'v Json, path: &[Seg]) -> Option<&'v Json> {
    let mut cur = v;
    for s in path {
        cur = match (s, cur) {
            (Seg::Key(k), Json::Object(m)) => m.get(k)?,
            (Seg::Index(i), Json::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// A change as recorded during the walk: where and why; before and after are read from the
/// original and the final object at the end, so a value touched twice is reported once.
#[derive(Clone, Debug)]
pub struct Event {
    pub path: Vec<Seg>,
    /// Which steps of `path` are map keys (rendered in brackets).
    pub map_keys: Vec<bool>,
    pub reason: ChangeReason,
    /// The value was set where the decoded object had none: as given it was absent, or `null`
    /// where the decoder dropped one (the walk's list of those paths). Such a change needs no
    /// look at the object as given.
    pub absent: bool,
}

/// Turn the walk's events into the changes a user sees: one per path whose value differs
/// between the object as given (read by `original`) and `result`; a change inside a pruned or
/// newly created subtree is covered by that subtree's own entry unless it is a default (then
/// the default is listed and the empty struct created around it is not). An
/// [`Event::absent`] change had `null` as given at the paths in `nulls`, else nothing.
fn changes(
    object: &str,
    original: &dyn Fn(&[Seg]) -> Option<Json>,
    result: &Json,
    events: &[Event],
    nulls: &[Vec<Seg>],
) -> Vec<ObjectChange> {
    let mut out: Vec<ObjectChange> = Vec::new();
    let mut seen: Vec<&[Seg]> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let under = |a: &Event| a.path.len() < e.path.len() && e.path.starts_with(&a.path);
        // Inside something pruned, dropped or set by a default: that entry says it.
        if events.iter().any(|a| {
            under(a)
                && matches!(
                    a.reason,
                    ChangeReason::Pruned | ChangeReason::DroppedZeroValue | ChangeReason::Default
                )
        }) {
            continue;
        }
        // A zero-valued struct with defaults inside: the defaults say it.
        if e.reason == ChangeReason::ZeroValue
            && events.iter().skip(i + 1).chain(events.iter().take(i)).any(|d| {
                d.path.len() > e.path.len()
                    && d.path.starts_with(&e.path)
                    && d.reason == ChangeReason::Default
            })
        {
            continue;
        }
        if seen.contains(&e.path.as_slice()) {
            continue;
        }
        let before = if e.absent {
            nulls.contains(&e.path).then_some(Json::Null)
        } else {
            original(&e.path)
        };
        let after = lookup(result, &e.path).cloned();
        if before == after {
            continue;
        }
        seen.push(&e.path);
        out.push(ObjectChange {
            object: object.to_string(),
            path: render_path(&e.path, &e.map_keys),
            before,
            after,
            reason: e.reason,
        });
    }
    out
}

/// A value the apiserver's decoder rejects (docs/objects.md §1a).
#[derive(Clone, Debug)]
pub struct DecodeError {
    pub path: Vec<Seg>,
    /// Which steps of `path` are map keys.
    pub map_keys: Vec<bool>,
    /// The error of a type's own `UnmarshalJSON` (quantity, time, int-or-string): the decoder
    /// returns it at once. Other errors are saved and decoding goes on; the first is returned.
    pub fatal: bool,
    /// The decoder's error text.
    pub message: String,
    /// Its diagnostic's index in [`Normalized::diagnostics`].
    pub diagnostic: usize,
}

/// The outcome of normalising one object.
#[derive(Clone, Debug, Default)]
pub struct Normalized {
    /// What changed (empty when the kind is not modelled or nothing changed).
    pub changes: Vec<ObjectChange>,
    /// Problems the apiserver's decoder would report: unknown fields (warnings, as kubectl
    /// prints them) and values that do not fit the Go type (the apiserver would reject the
    /// object; the value is kept as given).
    pub diagnostics: Vec<Diagnostic>,
    /// The path in the object of each of `diagnostics`, to place it in the object's text.
    pub diagnostic_paths: Vec<Vec<Seg>>,
    /// The kind was modelled (a built-in kind of the generated data, or a supplied CRD's).
    pub modelled: bool,
    /// The error the apiserver's decoder returns for this object, if any: the first value
    /// whose type's `UnmarshalJSON` fails, else the first that does not fit, in the order of
    /// the body kubectl sends (keys sorted).
    pub decode_error: Option<DecodeError>,
    /// The paths of the fields the type (or CRD schema) does not declare, as the walk met them:
    /// the decoder's strict errors (`unknown field "…"`).
    pub unknown_fields: Vec<Vec<Seg>>,
    /// The object is a custom resource (its unknown fields are the pruned ones).
    pub crd: bool,
}

/// Normalise `value` (an object with `apiVersion` and `kind`) in place, as the apiserver would
/// for `version`. `label` names the object in changes and diagnostics (`object`, `oldObject`,
/// `ConfigMap default/params`). `crds` are the supplied CustomResourceDefinitions.
pub fn normalize(value: &mut Json, version: KubeVersion, crds: &[Json], label: &str) -> Normalized {
    normalize_with(value, Some(Given::Copy), None, version, crds, label)
}

/// [`normalize`] without the list of changes (`changes` stays empty): the same object and
/// diagnostics, for a caller that does not report changes (the audit's summary trace).
pub fn normalize_unlisted(
    value: &mut Json,
    version: KubeVersion,
    crds: &[Json],
    label: &str,
) -> Normalized {
    normalize_with(value, None, None, version, crds, label)
}

/// [`normalize_unlisted`] of a value [`read_object`] read, with what it found (the decoder's
/// walk is skipped when reading found nothing to decode).
pub fn normalize_unlisted_decoded(
    value: &mut Json,
    decoded: Option<Decoded>,
    version: KubeVersion,
    crds: &[Json],
    label: &str,
) -> Normalized {
    normalize_with(value, None, decoded, version, crds, label)
}

/// [`normalize`] of the value of `text`, a JSON text the request fast path parsed
/// ([`crate::admission::yaml::parse_json_object`]): the values as given are read from the text
/// when a change is reported, instead of from a copy of the whole object taken before.
pub fn normalize_json(
    value: &mut Json,
    text: &str,
    version: KubeVersion,
    crds: &[Json],
    label: &str,
) -> Normalized {
    normalize_with(value, Some(Given::Text(text)), None, version, crds, label)
}

/// An object read from its JSON text with its decoding checked ([`read_object`]): decoding it
/// into `root` at `version` would change and report nothing.
#[derive(Clone, Copy, Debug)]
pub struct Decoded {
    version: KubeVersion,
    root: &'static str,
}

/// [`crate::admission::yaml::parse_json_object`] of `text` (the same value, or `None` for the
/// same texts), checking the object against its built-in type at `version` as it is read
/// ([`gojson::Check`]): with [`Decoded`] when decoding it would do nothing, so that
/// [`normalize_json_decoded`] skips the decoder's walk.
pub fn read_object(text: &str, version: KubeVersion) -> Option<(Json, Option<Decoded>)> {
    read_object_within(text, version, crate::admission::yaml::MAX_DEPTH)
}

/// [`read_object`], `None` for collections nested deeper than `max_depth` (the audit reads its
/// JSON documents within serde_json's limit, which it read them with before).
pub fn read_object_within(
    text: &str,
    version: KubeVersion,
    max_depth: usize,
) -> Option<(Json, Option<Decoded>)> {
    use crate::admission::yaml::{json_value_at, parse_json_object_within};
    let field = |name: &str| match json_value_at(text, &[Seg::Key(name.to_string())]) {
        Some(Json::String(s)) => Some(s),
        _ => None,
    };
    let model = model::model(version);
    let root = match (field("apiVersion"), field("kind")) {
        (Some(api_version), Some(kind)) => {
            let (group, ver) = api_version.split_once('/').unwrap_or(("", &api_version));
            model.kind(group, ver, &kind)
        }
        _ => None,
    };
    let Some(root) = root else {
        return parse_json_object_within(text, max_depth, None).map(|v| (v, None));
    };
    let mut check = gojson::Check::new(model, version, root);
    let v = parse_json_object_within(text, max_depth, Some(&mut check))?;
    Some((v, check.clean.then_some(Decoded { version, root })))
}

/// [`normalize_json`] of a value [`read_object`] read from `text`, with what it found.
pub fn normalize_json_decoded(
    value: &mut Json,
    text: &str,
    decoded: Option<Decoded>,
    version: KubeVersion,
    crds: &[Json],
    label: &str,
) -> Normalized {
    normalize_with(value, Some(Given::Text(text)), decoded, version, crds, label)
}

/// Where the changes' values as given come from; no changes are listed without it.
enum Given<'t> {
    /// A copy of the object taken before.
    Copy,
    /// The JSON text it was parsed from.
    Text(&'t str),
}

/// `decoded`: what [`read_object`] found reading the value.
fn normalize_with(
    value: &mut Json,
    given: Option<Given<'_>>,
    decoded: Option<Decoded>,
    version: KubeVersion,
    crds: &[Json],
    label: &str,
) -> Normalized {
    let (Some(api_version), Some(kind)) = (
        value.get("apiVersion").and_then(Json::as_str).map(str::to_string),
        value.get("kind").and_then(Json::as_str).map(str::to_string),
    ) else {
        return Normalized::default();
    };
    let (group, ver) = api_version.split_once('/').unwrap_or(("", &api_version));
    let original = if matches!(given, Some(Given::Copy)) { value.clone() } else { Json::Null };
    let model = model::model(version);
    let mut decode_error = None;
    let mut crd = false;
    let (events, nulls, (diagnostics, diagnostic_paths), unknown_fields) =
        if let Some(root) = model.kind(group, ver, &kind) {
            let mut w = gojson::Walk::new(model, version, label);
            #[cfg(not(target_arch = "wasm32"))]
            {
                w.record = given.is_some();
            }
            // Checked as this type at this version: nothing to decode.
            let decoded = decoded.is_some_and(|d| d.version == version && d.root == root);
            w.object(value, root, decoded);
            decode_error = w.error;
            (w.events, w.nulls, (w.diagnostics, w.diagnostic_paths), w.unknown_fields)
        } else if let Some(schema) = crd::schema_for(crds, group, ver, &kind) {
            let mut w = crd::Walk::new(label);
            w.object(value, schema);
            crd = true;
            (w.events, Vec::new(), (w.diagnostics, w.diagnostic_paths), w.unknown_fields)
        } else {
            return Normalized::default();
        };
    let changes = match given {
        Some(Given::Text(t)) => {
            let given = |p: &[Seg]| crate::admission::yaml::json_value_at(t, p);
            changes(label, &given, value, &events, &nulls)
        }
        Some(Given::Copy) => {
            let given = |p: &[Seg]| lookup(&original, p).cloned();
            changes(label, &given, value, &events, &nulls)
        }
        None => Vec::new(),
    };
    Normalized {
        changes,
        diagnostics,
        diagnostic_paths,
        modelled: true,
        decode_error,
        unknown_fields,
        crd,
    }
}

#[cfg(test)]
mod tests {
    use super::{render_path, Seg};

    #[test]
    fn render_path_writes_indices_and_map_keys() {
        for n in [0, 7, 10, 42, 123, 1000, usize::MAX] {
            let path = [Seg::Key("a".into()), Seg::Index(n), Seg::Key("k.x".into())];
            assert_eq!(render_path(&path, &[false, false, true]), format!("a[{n}][k.x]"));
        }
        let path = [Seg::Index(3), Seg::Key("b".into()), Seg::Index(0)];
        assert_eq!(render_path(&path, &[]), "[3].b[0]");
    }
}
