//! The Go JSON shape of the built-in kinds, per Kubernetes version: the data
//! `scripts/gen-objects.py` generates from kubernetes/api and kubernetes/apimachinery
//! (`data/objects/types.txt`; the file's header records the tags and commits). Parsed on first
//! use of a version and kept for the life of the instance.
//!
//! A field's shape is a short code (the generator's doc has the grammar): `s` string, `i`
//! integer, `f` float, `b` bool, `y` `[]byte`, `q` Quantity, `x` IntOrString, `t` metav1.Time,
//! `u` MicroTime, `d` metav1.Duration, `r` any JSON, `@T` a struct; prefixes `*` pointer,
//! `[` slice, `{` map with string keys.
//!
//! Size: the table is about 11 KB of the package's gzipped wasm (60 KB raw, eight versions in
//! one file, a type written once with per-field version masks where versions differ). To keep
//! it out of the wasm, [`TYPES`] could be text the JavaScript side loads on demand and hands
//! over once (the parser only needs a `&'static str`), as `shared/guides/schemas.md` proposes
//! for schema descriptions.

use std::cell::RefCell;
use std::rc::Rc;

use crate::environment::KubeVersion;

static TYPES: &str = include_str!("../../data/objects/types.txt");

/// One JSON field of a Go struct.
#[derive(Debug)]
pub struct Field {
    /// The JSON name.
    pub name: &'static str,
    /// The shape code, e.g. `*i`, `[@core.v1.Container`.
    pub shape: &'static str,
    /// `omitempty` in the json tag.
    pub omitempty: bool,
    /// `omitzero` in the json tag (honoured by the unstructured converter since 1.34).
    pub omitzero: bool,
    /// The declarative `+default=` marker's value as JSON text.
    pub default: Option<&'static str>,
}

/// The types of one Kubernetes version. Both lists are sorted by name (the generated file is)
/// and searched by bisection: no hash map code in the wasm for a few hundred lookups.
#[derive(Debug, Default)]
pub struct Model {
    /// Struct types by qualified name (`apps.v1.DeploymentSpec`).
    pub types: Vec<(&'static str, Vec<Field>)>,
    /// Root type of each top-level kind, by `group/version/Kind` (core: `v1/Kind`).
    pub kinds: Vec<(&'static str, &'static str)>,
}

impl Model {
    /// The fields of struct type `ty`.
    pub fn fields(&self, ty: &str) -> Option<&[Field]> {
        let i = self.types.binary_search_by(|(n, _)| (*n).cmp(ty)).ok()?;
        self.types.get(i).map(|(_, f)| f.as_slice())
    }

    /// The root type of a kind (`group` empty for core).
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<&'static str> {
        let key = if group.is_empty() {
            format!("{version}/{kind}")
        } else {
            format!("{group}/{version}/{kind}")
        };
        let i = self.kinds.binary_search_by(|(n, _)| (*n).cmp(key.as_str())).ok()?;
        self.kinds.get(i).map(|(_, r)| *r)
    }

    /// Whether struct type `ty` has a field `name` in this version (ported defaulting sets a
    /// field only where the version's type has it).
    pub fn has_field(&self, ty: &str, name: &str) -> bool {
        self.fields(ty).is_some_and(|f| f.iter().any(|f| f.name == name))
    }
}

fn parse_mask(s: &str) -> u32 {
    u32::from_str_radix(s, 16).unwrap_or(0)
}

fn parse_field(spec: &'static str, bit: u32) -> Option<Field> {
    let (spec, mask) = match spec.rsplit_once('~') {
        Some((f, m)) if m.len() <= 2 && m.bytes().all(|c| c.is_ascii_hexdigit()) => {
            (f, Some(parse_mask(m)))
        }
        _ => (spec, None),
    };
    if mask.is_some_and(|m| m & bit == 0) {
        return None;
    }
    let (name, rest) = spec.split_once(':')?;
    let (rest, default) = match rest.split_once('=') {
        Some((r, d)) => (r, Some(d)),
        None => (rest, None),
    };
    let omitzero = rest.ends_with('!');
    let rest = rest.trim_end_matches('!');
    let omitempty = rest.ends_with('?');
    let shape = rest.trim_end_matches('?');
    Some(Field { name, shape, omitempty, omitzero, default })
}

/// Build the model of one version from the generated table.
fn load(version: KubeVersion) -> Model {
    let bit = 1u32 << version.minor.saturating_sub(30).min(31);
    let mut m = Model::default();
    for line in TYPES.lines() {
        if line.starts_with('#') {
            continue;
        }
        let mut parts = line.split(' ');
        let (Some(mask), Some(name)) = (parts.next(), parts.next()) else { continue };
        if parse_mask(mask) & bit == 0 {
            continue;
        }
        if let Some(kind) = name.strip_prefix('=') {
            if let Some(root) = parts.next() {
                m.kinds.push((kind, root));
            }
            continue;
        }
        m.types.push((name, parts.filter_map(|f| parse_field(f, bit)).collect()));
    }
    // The generator writes lines sorted; sorting again keeps the bisection right regardless.
    vap_eval_cel::sort::sort_by(&mut m.types, |a, b| a.0.cmp(b.0));
    vap_eval_cel::sort::sort_by(&mut m.kinds, |a, b| a.0.cmp(b.0));
    m
}

thread_local! {
    static MODELS: RefCell<Vec<(u32, Rc<Model>)>> = const { RefCell::new(Vec::new()) };
}

/// The model of `version`, parsed on first use.
pub fn model(version: KubeVersion) -> Rc<Model> {
    MODELS.with(|m| {
        let mut m = m.borrow_mut();
        if let Some((_, model)) = m.iter().find(|(v, _)| *v == version.minor) {
            return model.clone();
        }
        let model = Rc::new(load(version));
        m.push((version.minor, model.clone()));
        model
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_resolves_in_every_version() {
        for minor in 30..=37 {
            let m = model(KubeVersion::new(minor));
            assert!(m.kinds.len() > 50, "1.{minor}: {} kinds", m.kinds.len());
            for (ty, fields) in &m.types {
                for f in fields {
                    if let Some(i) = f.shape.find('@') {
                        let target = &f.shape[i + 1..];
                        assert!(m.fields(target).is_some(), "1.{minor} {ty}.{}: {target}", f.name);
                    }
                    if let Some(d) = f.default {
                        assert!(serde_json::from_str::<serde_json::Value>(d).is_ok(), "{d}");
                    }
                }
            }
            for (_, root) in &m.kinds {
                assert!(m.fields(root).is_some());
            }
        }
    }

    #[test]
    fn field_presence_follows_the_json_tags() {
        // schemas.md §5 (kubernetes/api json tags): ClusterRole.rules has no omitempty, so a
        // nil slice is null; creationTimestamp is omitempty, and omitzero since 1.34.
        let m = model(KubeVersion::new(33));
        let field = |m: &Model, ty: &str, name: &str| {
            let f = m.fields(ty).unwrap().iter().find(|f| f.name == name);
            f.map(|f| (f.shape, f.omitempty, f.omitzero, f.default)).unwrap()
        };
        let rules = field(&m, "rbac.v1.ClusterRole", "rules");
        assert_eq!((rules.0, rules.1), ("[@rbac.v1.PolicyRule", false));
        let ts = |m: &Model| field(m, "meta.v1.ObjectMeta", "creationTimestamp");
        assert_eq!(ts(&m), ("t", true, false, None));
        assert_eq!(ts(&model(KubeVersion::new(34))), ("t", true, true, None));
        assert_eq!(m.kind("apps", "v1", "Deployment"), Some("apps.v1.Deployment"));
        assert_eq!(m.kind("", "v1", "Pod"), Some("core.v1.Pod"));
        assert_eq!(field(&m, "core.v1.ContainerPort", "protocol").3, Some("\"TCP\""));
    }
}
