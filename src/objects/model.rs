//! The Go JSON shape of the built-in kinds, per Kubernetes version: the data
//! `scripts/gen-objects.py` generates from kubernetes/api and kubernetes/apimachinery
//! (`data/objects/types.txt`; `sources.txt` beside it records the tags and commits). Parsed on first
//! use of a version and kept for the life of the instance.
//!
//! A field's shape is a short code (the generator's doc has the grammar): `s` string, `i`
//! int32, `l` int64, `f` float, `b` bool, `y` `[]byte`, `q` Quantity, `x` IntOrString, `t` metav1.Time,
//! `u` MicroTime, `d` metav1.Duration, `r` any JSON, `@T` a struct; prefixes `*` pointer,
//! `[` slice, `{` map with string keys.
//!
//! Size: the table is about 11 KB of the package's gzipped wasm (60 KB raw, eight versions in
//! one file, a type written once with per-field version masks where versions differ). To keep
//! it out of the wasm, [`TYPES`] could be text the JavaScript side loads on demand and hands
//! over once (the parser only needs a `&'static str`), as `shared/guides/schemas.md` proposes
//! for schema descriptions.

use std::sync::{Mutex, OnceLock};

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

/// One struct type: its qualified name, and its fields parsed from the table's line on first use
/// (a request reaches a few dozen of the version's types; parsing all of them was most of the
/// first request's normalising).
#[derive(Debug)]
pub struct Type {
    pub name: &'static str,
    /// The line's field specs, after the type's name.
    specs: &'static str,
    /// Parsed once per process and never freed (the walk's per-type plans hold them).
    fields: OnceLock<&'static [Field]>,
}

/// The types of one Kubernetes version. Both lists are sorted by name (the generated file is)
/// and searched by bisection: no hash map code in the wasm for a few hundred lookups.
#[derive(Debug, Default)]
pub struct Model {
    /// Struct types by qualified name (`apps.v1.DeploymentSpec`).
    pub types: Vec<Type>,
    /// Root type of each top-level kind, by `group/version/Kind` (core: `v1/Kind`).
    pub kinds: Vec<(&'static str, &'static str)>,
    /// The version's bit in the table's masks.
    bit: u32,
    /// The index [`Model::index`] found last: a request looks its kind's root type up several
    /// times in a row (reading, normalising, the registry), each a bisection of the names.
    last: std::sync::atomic::AtomicUsize,
    /// The index in [`Model::kinds`] [`Model::kind`] found last (for the same reason).
    last_kind: std::sync::atomic::AtomicUsize,
}

impl Model {
    /// The index of struct type `ty` in [`Model::types`].
    pub fn index(&self, ty: &str) -> Option<usize> {
        use std::sync::atomic::Ordering::Relaxed;
        let last = self.last.load(Relaxed);
        if self.types.get(last).is_some_and(|t| t.name == ty) {
            return Some(last);
        }
        let i = self.types.binary_search_by(|t| t.name.cmp(ty)).ok()?;
        self.last.store(i, Relaxed);
        Some(i)
    }

    /// The fields of the type at `index`.
    pub fn fields_at(&self, index: usize) -> Option<&'static [Field]> {
        let t = self.types.get(index)?;
        let bit = self.bit;
        Some(t.fields.get_or_init(|| {
            // Kept for the process: not in the per-call arena.
            crate::arena::outside(|| {
                let fields: Vec<Field> = t
                    .specs
                    .split(' ')
                    .filter(|f| !f.is_empty())
                    .filter_map(|f| parse_field(f, bit))
                    .collect();
                Vec::leak(fields)
            })
        }))
    }

    /// The fields of struct type `ty`.
    pub fn fields(&self, ty: &str) -> Option<&[Field]> {
        self.fields_at(self.index(ty)?)
    }

    /// The root type of a kind (`group` empty for core).
    ///
    /// The key `group/version/Kind` is compared in its parts, not formatted: three calls a
    /// request (reading, normalising and the registry), each was a `format!`.
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<&'static str> {
        let parts: [&[u8]; 5] = match group.is_empty() {
            true => [b"", b"", version.as_bytes(), b"/", kind.as_bytes()],
            false => [group.as_bytes(), b"/", version.as_bytes(), b"/", kind.as_bytes()],
        };
        use std::sync::atomic::Ordering::Relaxed;
        let last = self.last_kind.load(Relaxed);
        if let Some((n, r)) = self.kinds.get(last) {
            if cmp_joined(n.as_bytes(), &parts).is_eq() {
                return Some(r);
            }
        }
        let i = self.kinds.binary_search_by(|(n, _)| cmp_joined(n.as_bytes(), &parts)).ok()?;
        self.last_kind.store(i, Relaxed);
        self.kinds.get(i).map(|(_, r)| *r)
    }

    /// Whether struct type `ty` has a field `name` in this version (ported defaulting sets a
    /// field only where the version's type has it).
    pub fn has_field(&self, ty: &str, name: &str) -> bool {
        self.fields(ty).is_some_and(|f| f.iter().any(|f| f.name == name))
    }
}

/// `name` compared with the concatenation of `parts`, as `str::cmp` compares (bytewise).
fn cmp_joined(name: &[u8], parts: &[&[u8]]) -> std::cmp::Ordering {
    let mut rest = name;
    for part in parts {
        let n = part.len().min(rest.len());
        match rest[..n].cmp(&part[..n]) {
            std::cmp::Ordering::Equal if n < part.len() => return std::cmp::Ordering::Less,
            std::cmp::Ordering::Equal => rest = &rest[n..],
            other => return other,
        }
    }
    match rest.is_empty() {
        true => std::cmp::Ordering::Equal,
        false => std::cmp::Ordering::Greater,
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
    let mut m = Model { bit, ..Model::default() };
    for line in TYPES.lines() {
        if line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(3, ' ');
        let (Some(mask), Some(name)) = (parts.next(), parts.next()) else { continue };
        if parse_mask(mask) & bit == 0 {
            continue;
        }
        let rest = parts.next().unwrap_or("");
        if let Some(kind) = name.strip_prefix('=') {
            if let Some(root) = rest.split(' ').next().filter(|r| !r.is_empty()) {
                m.kinds.push((kind, root));
            }
            continue;
        }
        m.types.push(Type { name, specs: rest, fields: OnceLock::new() });
    }
    // The generator writes lines sorted; sorting again keeps the bisection right regardless.
    vap_eval_cel::sort::sort_by(&mut m.types, |a, b| a.name.cmp(b.name));
    vap_eval_cel::sort::sort_by(&mut m.kinds, |a, b| a.0.cmp(b.0));
    m
}

/// The models parsed so far, one per version, shared by every thread of the process (the
/// CLI's audit normalises on a pool): each is parsed once and kept, so the memory they and the
/// walk's plans take is bounded by the versions used, not by the threads that used them.
static MODELS: Mutex<Vec<(u32, &'static Model)>> = Mutex::new(Vec::new());

/// The model of `version`, parsed on first use.
pub fn model(version: KubeVersion) -> &'static Model {
    // A panic while the lock was held cannot leave the list half-changed (one push).
    let mut m = MODELS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, model)) = m.iter().find(|(v, _)| *v == version.minor) {
        return model;
    }
    // Kept for the process: not in the per-call arena.
    let model: &'static Model = crate::arena::outside(|| {
        let model: &'static Model = Box::leak(Box::new(load(version)));
        m.push((version.minor, model));
        model
    });
    model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_resolves_in_every_version() {
        for minor in 30..=37 {
            let m = model(KubeVersion::new(minor));
            assert!(m.kinds.len() > 50, "1.{minor}: {} kinds", m.kinds.len());
            for (i, t) in m.types.iter().enumerate() {
                let ty = t.name;
                for f in m.fields_at(i).unwrap() {
                    if let Some(i) = f.shape.find('@') {
                        let target = &f.shape[i + 1..];
                        assert!(m.fields(target).is_some(), "1.{minor} {ty}.{}: {target}", f.name);
                    }
                    if let Some(d) = f.default {
                        assert!(vap_eval_json::from_str(d).is_ok(), "{d}");
                    }
                }
            }
            for (_, root) in &m.kinds {
                assert!(m.fields(root).is_some());
            }
        }
    }

    /// The walk plans a type only if it has fewer than 128 fields (its field masks and
    /// names' table, `vap_eval_json::names::SLOTS`); the largest, PodSpec, has 43.
    #[test]
    fn every_type_fits_a_plan() {
        for minor in 30..=37 {
            let m = model(KubeVersion::new(minor));
            for (i, t) in m.types.iter().enumerate() {
                assert!(m.fields_at(i).unwrap().len() < 128, "1.{minor} {}", t.name);
            }
        }
    }

    /// [`Model::kind`] compares the key in parts as `str::cmp` compares the formatted key.
    #[test]
    fn kind_compares_the_key_in_parts() {
        use super::cmp_joined;
        let names =
            ["", "a", "a/", "a/b", "a/b/", "a/b/c", "a/b/cd", "a/bc/d", "ab/c/d", "b", "v1/Pod"];
        let splits: [[&str; 3]; 8] = [
            ["", "", ""],
            ["a", "b", "c"],
            ["a", "b", ""],
            ["", "v1", "Pod"],
            ["a", "bc", "d"],
            ["", "a", "b/c"],
            ["ab", "c", "d"],
            ["a", "b", "cd"],
        ];
        for [g, v, k] in splits {
            let key = if g.is_empty() { format!("{v}/{k}") } else { format!("{g}/{v}/{k}") };
            let parts: [&[u8]; 5] = match g.is_empty() {
                true => [b"", b"", v.as_bytes(), b"/", k.as_bytes()],
                false => [g.as_bytes(), b"/", v.as_bytes(), b"/", k.as_bytes()],
            };
            for n in names.iter().copied().chain([key.as_str()]) {
                assert_eq!(cmp_joined(n.as_bytes(), &parts), n.cmp(key.as_str()), "{n:?} {key:?}");
            }
        }
        for minor in 30..=37 {
            let m = model(KubeVersion::new(minor));
            for (key, root) in &m.kinds {
                let (gv, kind) = key.rsplit_once('/').unwrap();
                let (g, v) = gv.rsplit_once('/').unwrap_or(("", gv));
                assert_eq!(m.kind(g, v, kind), Some(*root), "{key}");
                assert_eq!(m.kind(g, v, &format!("{kind}x")), None);
                assert_eq!(m.kind(&format!("{g}x"), v, kind), None);
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
        let rules = field(m, "rbac.v1.ClusterRole", "rules");
        assert_eq!((rules.0, rules.1), ("[@rbac.v1.PolicyRule", false));
        let ts = |m: &Model| field(m, "meta.v1.ObjectMeta", "creationTimestamp");
        assert_eq!(ts(m), ("t", true, false, None));
        assert_eq!(ts(model(KubeVersion::new(34))), ("t", true, true, None));
        assert_eq!(m.kind("apps", "v1", "Deployment"), Some("apps.v1.Deployment"));
        assert_eq!(m.kind("", "v1", "Pod"), Some("core.v1.Pod"));
        assert_eq!(field(m, "core.v1.ContainerPort", "protocol").3, Some("\"TCP\""));
    }

    #[test]
    fn one_model_per_version_for_every_thread() {
        // Parsed once per process: a thread pool (the CLI's audit) or short-lived threads
        // share it instead of each keeping a copy and its plans after it ends.
        let here = model(KubeVersion::new(35)) as *const Model as usize;
        let there = std::thread::spawn(|| model(KubeVersion::new(35)) as *const Model as usize)
            .join()
            .unwrap();
        assert_eq!(here, there);
        assert_ne!(here, model(KubeVersion::new(36)) as *const Model as usize);
    }
}
