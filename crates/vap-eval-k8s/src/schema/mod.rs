//! OpenAPI v3 schemas as the apiserver's CEL type checker sees them: the compact built-in
//! bundles (`data/schemas/<minor>.json`, made by `scripts/gen-schemas.mjs`), and the conversion of
//! a schema to CEL declared types (apiserver `pkg/cel/common/schemas.go` `SchemaDeclType`,
//! `pkg/cel/types.go` `MaybeAssignTypeName`, `pkg/cel/escaping.go`, `pkg/cel/openapi/resolver`
//! `PopulateRefs`). The rules are written out in `docs/typechecking-semantics.md` §2.
//!
//! The bundles are data, not code: the wasm module does not contain them. The JavaScript side
//! hands a version's text to [`register_builtin`] (or a native program embeds it); nothing else
//! in this module knows where they come from.

use crate::cel::decls::ObjectTypeDecl;
use crate::cel::types::Type;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::rc::Rc;

/// One Kubernetes version's built-in schemas: `kinds` maps `"<apiVersion>/<Kind>"` to a
/// definition name, `definitions` maps definition names to compact schemas whose references
/// are `{"$ref": "<definition>"}`.
#[derive(Debug, Default)]
pub struct SchemaBundle {
    pub kinds: Map<String, Value>,
    pub definitions: Map<String, Value>,
}

impl SchemaBundle {
    /// Parse a bundle's JSON text (`{kinds, definitions}`).
    pub fn parse(text: &str) -> Result<SchemaBundle, String> {
        let v = vap_eval_json::from_str(text).map_err(|e| format!("schema bundle: {e}"))?;
        let Value::Object(mut o) = v else {
            return Err("schema bundle: expected an object".into());
        };
        let take = |o: &mut Map<String, Value>, k: &str| match o.remove(k) {
            Some(Value::Object(m)) => Ok(m),
            None => Ok(Map::new()),
            Some(_) => Err(format!("schema bundle: {k} must be an object")),
        };
        Ok(SchemaBundle {
            kinds: take(&mut o, "kinds")?,
            definitions: take(&mut o, "definitions")?,
        })
    }

    /// The root schema of a kind (`{"$ref": …}`), by `"<apiVersion>/<Kind>"`.
    pub fn kind(&self, api_version_kind: &str) -> Option<Value> {
        let def = self.kinds.get(api_version_kind)?.as_str()?;
        let mut m = Map::new();
        m.insert("$ref".into(), Value::String(def.to_string()));
        Some(Value::Object(m))
    }

    /// A definition by name; also accepts the spec's `#/components/schemas/<name>` form.
    pub fn definition(&self, reference: &str) -> Option<&Value> {
        let name = reference.strip_prefix("#/components/schemas/").unwrap_or(reference);
        self.definitions.get(name)
    }
}

/// Definition name → property path → description.
type Descriptions = Rc<Map<String, Value>>;

thread_local! {
    /// (minor, bundle); a list: a handful of entries (and hash maps cost wasm bytes).
    static BUILTIN: RefCell<Vec<(String, Rc<SchemaBundle>)>> = const { RefCell::new(Vec::new()) };
    static DESCRIPTIONS: RefCell<Vec<(String, Descriptions)>> =
        const { RefCell::new(Vec::new()) };
}

fn put<T>(list: &mut Vec<(String, T)>, key: &str, value: T) {
    list.retain(|(k, _)| k != key);
    list.push((key.to_string(), value));
}

fn get<T: Clone>(list: &[(String, T)], key: &str) -> Option<T> {
    list.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

/// Make `text` (`data/schemas/<minor>.descriptions.json`: definition → property path →
/// description) the hover descriptions of Kubernetes `minor`.
pub fn register_descriptions(minor: &str, text: &str) -> Result<(), String> {
    match vap_eval_json::from_str(text) {
        Ok(Value::Object(m)) => {
            DESCRIPTIONS.with(|d| put(&mut d.borrow_mut(), minor, Rc::new(m)));
            Ok(())
        }
        Ok(_) => Err("schema descriptions: expected an object".into()),
        Err(e) => Err(format!("schema descriptions: {e}")),
    }
}

/// The description of property `path` (`""`: the definition itself) of `definition` in the
/// descriptions of `minor` (registered, or embedded in native builds).
pub fn description(minor: &str, definition: &str, path: &str) -> Option<String> {
    let table = DESCRIPTIONS.with(|d| get(&d.borrow(), minor)).or_else(|| {
        let text = embedded::descriptions(minor)?;
        register_descriptions(minor, text).ok()?;
        DESCRIPTIONS.with(|d| get(&d.borrow(), minor))
    })?;
    table.get(definition)?.get(path)?.as_str().map(str::to_string)
}

/// Make `text` the built-in bundle of Kubernetes `minor` (`"1.35"`), replacing an earlier one.
pub fn register_builtin(minor: &str, text: &str) -> Result<(), String> {
    let bundle = Rc::new(SchemaBundle::parse(text)?);
    BUILTIN.with(|b| put(&mut b.borrow_mut(), minor, bundle));
    Ok(())
}

/// The registered bundle of `minor`, if any.
pub fn builtin(minor: &str) -> Option<Rc<SchemaBundle>> {
    BUILTIN.with(|b| get(&b.borrow(), minor))
}

/// The minors with a registered bundle, sorted.
pub fn registered_versions() -> Vec<String> {
    let mut v: Vec<String> = BUILTIN.with(|b| b.borrow().iter().map(|e| e.0.clone()).collect());
    crate::sort::sort_by_key(&mut v, |m| {
        m.split('.').nth(1).and_then(|n| n.parse::<u32>().ok()).unwrap_or(0)
    });
    v
}

/// Where a schema's `$ref`s resolve.
pub trait Definitions {
    fn definition(&self, reference: &str) -> Option<&Value>;
}

impl Definitions for SchemaBundle {
    fn definition(&self, reference: &str) -> Option<&Value> {
        SchemaBundle::definition(self, reference)
    }
}

/// No definitions: every reference is unresolvable.
pub struct NoDefinitions;

impl Definitions for NoDefinitions {
    fn definition(&self, _: &str) -> Option<&Value> {
        None
    }
}

/// A schema converted to CEL: the root type and every object type it names (apiserver
/// `DeclType` after `MaybeAssignTypeName`), plus, per object type, the definition and property
/// path it came from (for descriptions).
#[derive(Clone, Debug, Default)]
pub struct DeclTypes {
    pub root: Option<Type>,
    pub objects: Vec<ObjectTypeDecl>,
    /// (object type name, definition name or "", property path inside it). A list, not a map:
    /// looked up once per hover or completion (and hash maps cost wasm bytes).
    pub origins: Vec<(String, String, String)>,
    /// (object type name, field, the property's own `description`), where the schema carries
    /// one (CRDs, supplied schemas; the compact built-in bundles keep theirs apart).
    pub docs: Vec<(String, String, String)>,
}

impl DeclTypes {
    pub fn object(&self, name: &str) -> Option<&ObjectTypeDecl> {
        self.objects.iter().find(|o| o.name == name)
    }

    /// The (definition, property path) object type `name` came from.
    pub fn origin(&self, name: &str) -> Option<(&str, &str)> {
        self.origins.iter().find(|o| o.0 == name).map(|o| (o.1.as_str(), o.2.as_str()))
    }

    /// The schema's own description of `field` of object type `name`.
    pub fn doc(&self, name: &str, field: &str) -> Option<&str> {
        self.docs.iter().find(|d| d.0 == name && d.1 == field).map(|d| d.2.as_str())
    }
}

/// A property name as CEL sees it (apiserver `Escape`), or `None` when it is not accessible:
/// empty, starting with a digit, or holding a character outside `[a-zA-Z0-9_./-]`.
pub fn escape(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if crate::cel::parser::RESERVED_WORDS.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'_' if b.get(i + 1) == Some(&b'_') => {
                out.push_str("__underscores__");
                i += 2;
                continue;
            }
            b'.' => out.push_str("__dot__"),
            b'-' => out.push_str("__dash__"),
            b'/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == b'_' => out.push(c as char),
            _ => return None,
        }
        i += 1;
    }
    Some(out)
}

/// The reference a schema makes, directly or through a one-element `allOf` (resolver `refOf`).
fn ref_of(s: &Value) -> Option<&str> {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return Some(r);
    }
    match s.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        Some([one]) => ref_of(one),
        _ => None,
    }
}

/// A JSON literal written as text (parsed by the JSON parser the crate has anyway: smaller in
/// wasm than `json!`'s expansion).
pub fn literal(text: &str) -> Value {
    vap_eval_json::from_str(text).unwrap_or(Value::Null)
}

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn type_of(s: &Value) -> &str {
    match s.get("type") {
        Some(Value::String(t)) => t,
        Some(Value::Array(ts)) => ts.first().and_then(Value::as_str).unwrap_or(""),
        _ => "",
    }
}

fn is_int_or_string(s: &Value) -> bool {
    s.get("format").and_then(Value::as_str) == Some("int-or-string")
        || flag(s, "x-kubernetes-int-or-string")
}

/// Whether a resolved property's `type` names `t` (`spec.Schema.Type.Contains`).
fn has_type(s: Option<&Value>, t: &str) -> bool {
    match s.and_then(|s| s.get("type")) {
        Some(Value::String(x)) => x == t,
        Some(Value::Array(xs)) => xs.iter().any(|x| x.as_str() == Some(t)),
        _ => false,
    }
}

struct Converter<'a> {
    defs: &'a dyn Definitions,
    /// References on the current path (a reference to one of them is circular).
    visiting: Vec<String>,
    out: DeclTypes,
    /// Definition the schema being converted came from, and the path inside it.
    origin: (String, String),
}

/// Convert `root` (a kind's schema, possibly a `$ref`) to CEL types named from `type_name`
/// (`type_name` for the root object, `type_name.field` for its object fields, `.@idx` for list
/// elements and `.@elem` for map values). `root` is treated as a resource root (`apiVersion`,
/// `kind`, `metadata.name`, `metadata.generateName` always present). `root: None` in the result
/// means the schema has no CEL type (the apiserver then skips the kind).
pub fn decl_types(root: &Value, defs: &dyn Definitions, type_name: &str) -> DeclTypes {
    let mut c = Converter {
        defs,
        visiting: Vec::new(),
        out: DeclTypes::default(),
        origin: (String::new(), String::new()),
    };
    let t = c.convert(root, true, type_name);
    let mut out = c.out;
    out.root = t;
    out
}

impl Converter<'_> {
    /// `PopulateRefs` then `SchemaDeclType` for one schema node.
    fn convert(&mut self, s: &Value, is_root: bool, name: &str) -> Option<Type> {
        if let Some(r) = ref_of(s) {
            let r = r.strip_prefix("#/components/schemas/").unwrap_or(r).to_string();
            if self.visiting.contains(&r) {
                // A circular reference becomes an empty object (resolver `populateRefs`).
                let empty = literal(r#"{"type": "object"}"#);
                return self.convert(&empty, is_root, name);
            }
            let resolved = self.defs.definition(&r)?;
            self.visiting.push(r.clone());
            let saved = std::mem::replace(&mut self.origin, (r, String::new()));
            let t = self.convert(resolved, is_root, name);
            self.origin = saved;
            self.visiting.pop();
            return t;
        }
        if is_int_or_string(s) {
            return Some(Type::Dyn);
        }
        match type_of(s) {
            "array" => {
                let items = s.get("items")?;
                let embedded = self.embedded(items);
                let elem = self.convert(items, embedded, &format!("{name}.@idx"))?;
                Some(Type::list(elem))
            }
            "object" => {
                if let Some(ap) = s.get("additionalProperties").filter(|v| v.is_object()) {
                    let embedded = self.embedded(ap);
                    let v = self.convert(ap, embedded, &format!("{name}.@elem"))?;
                    return Some(Type::map(Type::String, v));
                }
                let mut fields: Vec<(String, Type)> = Vec::new();
                let props = s.get("properties").and_then(Value::as_object);
                if is_root && !self.has_type_and_object_meta(props) {
                    // `WithTypeAndObjectMeta`: kind, apiVersion strings and a metadata object
                    // with only name and generateName replace what the schema says.
                    let mut p: Map<String, Value> = props.cloned().unwrap_or_default();
                    let string = literal(r#"{"type": "string"}"#);
                    p.insert("kind".into(), string.clone());
                    p.insert("apiVersion".into(), string.clone());
                    p.insert(
                        "metadata".into(),
                        literal(
                            r#"{"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}"#,
                        ),
                    );
                    let mut s2 = s.as_object().cloned().unwrap_or_default();
                    s2.insert("properties".into(), Value::Object(p));
                    return self.convert(&Value::Object(s2), false, name);
                }
                if let Some(props) = props {
                    let base_path = self.origin.1.clone();
                    for (prop_name, prop) in props {
                        let Some(escaped) = escape(prop_name) else { continue };
                        let embedded = self.embedded(prop);
                        self.origin.1 = if base_path.is_empty() {
                            prop_name.clone()
                        } else {
                            format!("{base_path}.{prop_name}")
                        };
                        let t = self.convert(prop, embedded, &format!("{name}.{escaped}"));
                        if let (Some(_), Some(d)) =
                            (&t, prop.get("description").and_then(Value::as_str))
                        {
                            self.out.docs.push((name.to_string(), escaped.clone(), d.to_string()));
                        }
                        if let Some(t) = t {
                            fields.push((escaped, t));
                        }
                    }
                    self.origin.1 = base_path;
                }
                crate::sort::sort_by(&mut fields, |a, b| a.0.cmp(&b.0));
                self.out.objects.push(ObjectTypeDecl { name: name.to_string(), fields });
                let (def, path) = self.origin.clone();
                self.out.origins.push((name.to_string(), def, path));
                Some(Type::object(name))
            }
            "string" => Some(match s.get("format").and_then(Value::as_str) {
                Some("byte") => Type::Bytes,
                Some("duration") => Type::Duration,
                Some("date") | Some("date-time") => Type::Timestamp,
                _ => Type::String,
            }),
            "boolean" => Some(Type::Bool),
            "number" => Some(Type::Double),
            "integer" => Some(Type::Int),
            _ => None,
        }
    }

    /// `x-kubernetes-embedded-resource` of a schema after its reference is resolved.
    fn embedded(&self, s: &Value) -> bool {
        match ref_of(s) {
            Some(r) => {
                let r = r.strip_prefix("#/components/schemas/").unwrap_or(r);
                self.defs.definition(r).is_some_and(|d| flag(d, "x-kubernetes-embedded-resource"))
            }
            None => flag(s, "x-kubernetes-embedded-resource"),
        }
    }

    /// Whether `kind`, `apiVersion`, `metadata.name` and `metadata.generateName` are declared
    /// with the right types (then `WithTypeAndObjectMeta` leaves the schema alone).
    fn has_type_and_object_meta(&self, props: Option<&Map<String, Value>>) -> bool {
        let Some(props) = props else { return false };
        let resolved = |v: Option<&Value>| -> Option<Value> {
            let v = v?;
            match ref_of(v) {
                Some(r) => self.defs.definition(r).cloned(),
                None => Some(v.clone()),
            }
        };
        let meta = resolved(props.get("metadata"));
        let meta_props = meta.as_ref().and_then(|m| m.get("properties"));
        has_type(resolved(props.get("kind")).as_ref(), "string")
            && has_type(resolved(props.get("apiVersion")).as_ref(), "string")
            && has_type(meta.as_ref(), "object")
            && meta_props.is_some()
            && has_type(resolved(meta_props.and_then(|p| p.get("name"))).as_ref(), "string")
            && has_type(resolved(meta_props.and_then(|p| p.get("generateName"))).as_ref(), "string")
    }
}

pub mod embedded;

#[cfg(test)]
mod tests;
