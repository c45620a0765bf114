//! The Go round trip of a built-in object: decode into the Go type, default, convert back.
//!
//! The object is walked three times against its generated type ([`super::model`]):
//! 1. **decode** (apimachinery's JSON decoder into the Go struct): fields the type does not have
//!    are dropped; `null` is Go nil / the zero value; integers into integer fields (a YAML
//!    `3.0` becomes `3`), floats into float fields, quantities parsed, times parsed. A value that
//!    does not fit is a [`DecodeError`] with sigs.k8s.io/json's text (the apiserver rejects the
//!    body, docs/objects.md §1a) and a diagnostic, and stays as given.
//! 2. **default**: at each struct, top-down as `zz_generated.defaults.go` calls them, the
//!    type's ported `SetDefaults_*` ([`super::defaults`]), then its fields' `+default` markers.
//! 3. **encode** (`runtime.DefaultUnstructuredConverter.ToUnstructured`, json tags):
//!    `omitempty` drops zero scalars and empty slices and maps; a nil pointer, slice or map
//!    without it is `null`; a non-pointer scalar without it is its zero value; a non-pointer
//!    struct is always there (`omitempty` does not apply to structs); a zero `metav1.Time` is
//!    `null` unless `omitzero` (ObjectMeta.creationTimestamp since 1.34: absent); quantities
//!    are in canonical form.
//!
//! Steps 2 and 3 are one visit of each struct ([`Walk::finish`]), with the results of two
//! passes. Step 1 is skipped for an object given as JSON text whose reading found nothing for
//! it to do ([`Check`], [`super::read_object`]): every key a field, no `null`, every value of
//! its field's JSON type and in its canonical form (a request object nearly always).
//!
//! While decoding, the object holds Go values in JSON form: a key is absent for a nil pointer,
//! slice or map and for a scalar holding its zero value.

use std::cell::RefCell;
use std::sync::{Mutex, OnceLock};

use serde_json::{Map, Value as Json};

use super::model::{Field, Model};
use super::{diagnostics, ChangeReason, DecodeError, Event, Seg};
use crate::diagnostic::Diagnostic;
use crate::environment::KubeVersion;
use crate::library::quantity::Quantity;

/// One walk over one object.
pub struct Walk<'m> {
    pub model: &'m Model,
    pub version: KubeVersion,
    label: String,
    /// The current path. A struct field's name is the model's `&'static str`: entering one
    /// allocates nothing (the walk enters every present field, three times, on every request);
    /// the path becomes [`Seg`]s only when a change or diagnostic is recorded.
    path: Vec<Step>,
    /// The version's struct types prepared for the walk ([`Plan`]), kept across walks.
    plans: &'static Plans,
    pub events: Vec<Event>,
    /// The encoding's changes, kept apart while the defaulting and the encoding visit a struct
    /// together ([`Walk::finish`]) and appended to [`Self::events`] after the walk: the list
    /// stays in the order of three separate passes (decoding, defaulting, encoding).
    encoded: Vec<Event>,
    /// Per struct in [`Walk::finish_struct`] (a stack): a field defaulted and encoded in its
    /// first loop and where its encoding's changes start in [`Self::encoded`].
    marks: Vec<(usize, usize)>,
    /// Whether changes are recorded (`events`, `nulls`): not when no list of changes is made
    /// ([`super::normalize_unlisted`], the audit), where recording was most of the walk's
    /// allocation. Native only: the package always lists changes, and the checks would cost
    /// its bytes ([`Walk::recording`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub record: bool,
    /// Paths of the fields the decoder dropped because they were `null` (Go nil or zero): an
    /// [`Event::absent`] change there had `null` as its value as given.
    pub nulls: Vec<Vec<Seg>>,
    pub diagnostics: Vec<Diagnostic>,
    /// The path in the object of each of [`Self::diagnostics`] (where to place it in the
    /// object's text).
    pub diagnostic_paths: Vec<Vec<Seg>>,
    /// The paths of the unknown fields ([`super::Normalized::unknown_fields`]).
    pub unknown_fields: Vec<Vec<Seg>>,
    /// The error the decoder returns ([`super::Normalized::decode_error`]).
    pub error: Option<DecodeError>,
    /// The struct type whose field is being decoded (Go's `errorContext.Struct`).
    owner: &'static str,
}

/// A struct type prepared for the walk: what every visit of one of its values would otherwise
/// work out again (the walk visits every struct three times on every request).
struct Plan {
    /// The type's name (a slice of the model's text).
    ty: &'static str,
    /// Its fields ([`Model::fields_at`]).
    fields: &'static [Field],
    /// The fields' names (their indices are the fields'): a struct's keys are looked up here
    /// once per visit instead of scanning the keys for every declared field.
    names: vap_eval_json::names::FieldTable,
    /// Per field: the struct type (index in [`Model::types`]) its shape ends in.
    child: Vec<Option<usize>>,
    /// Per field: a non-pointer struct whose type (or one nested in it the same way) has
    /// defaults, so an absent one can gain fields by defaulting.
    probe: Vec<bool>,
    /// [`super::defaults::apply`] can change a value of this type.
    defaulted: bool,
    /// The type's defaulting rules ([`super::defaults::rules_of`]) and whether it has coded
    /// defaults: looked up once per type, not at every visit.
    rules: &'static [usize],
    coded: bool,
    /// Any field has a `+default` marker.
    markers: bool,
    /// The fields (bit `i` for field `i`, see [`bit`]) the defaulting visit has work for
    /// whether present or not (a `+default` marker; an absent non-pointer struct that can gain
    /// defaults), and those it has work for only when present (a struct below; a resource
    /// list). A fully defaulted object's structs visit few of their declared fields.
    default_always: u128,
    default_present: u128,
    /// The same for encoding: fields that are written when absent (no `omitempty`, a
    /// struct), and fields with a struct below (work when present; a present `omitempty`
    /// field holding its zero value is found while the keys are looked up).
    encode_absent: u128,
    encode_present: u128,
    /// The `omitempty` fields whose value can be empty ([`is_empty`]: a scalar, a list, a map;
    /// not a pointer or a struct): only these are ever dropped when present.
    empties: u128,
    /// The resource lists core/v1 SetDefaults_ResourceList rounds (`{q` fields, but for
    /// node/v1's Overhead).
    lists: u128,
}

/// Bit `i` of a field mask: field `i` of a type (a plan has fewer than [`vap_eval_json::names::SLOTS`] fields). Two
/// 64-bit halves: a variable 128-bit shift is a call in the wasm.
#[inline(always)]
fn bit(i: usize) -> u128 {
    let (lo, hi) = match i {
        0..64 => (1u64 << i, 0u64),
        64..128 => (0, 1u64 << (i - 64)),
        _ => (0, 0),
    };
    (u128::from(hi) << 64) | u128::from(lo)
}

/// The lowest field of a mask, taken out of it (the fields in declaration order).
#[inline(always)]
fn next_bit(mask: &mut u128) -> Option<usize> {
    if *mask == 0 {
        return None;
    }
    let i = mask.trailing_zeros() as usize;
    *mask &= *mask - 1;
    Some(i)
}

use vap_eval_json::names::same_name;

impl Plan {
    /// The index of the field named `name`.
    #[inline(always)]
    fn find(&self, name: &str) -> Option<usize> {
        self.names.find(name)
    }

    /// The fields present in `m`, and those of them holding an `omitempty` zero value the
    /// encoding drops ([`bit`]).
    fn keys(&self, m: &Map<String, Json>) -> (u128, u128) {
        let (mut present, mut work) = (0u128, 0u128);
        for (k, v) in m.iter() {
            let Some(i) = self.find(k) else { continue };
            present |= bit(i);
            let Some(f) = self.fields.get(i) else { continue };
            if f.omitempty && lead(f.shape) != b'*' && is_empty(v, f.shape) {
                work |= bit(i);
            }
        }
        (present, work)
    }
}

/// The first byte of a shape (0 for none): compared inline (at the size opt-level a string
/// method is a call).
#[inline(always)]
fn lead(shape: &str) -> u8 {
    shape.as_bytes().first().copied().unwrap_or(0)
}

/// Decoding `v` as `shape` would change nothing and report nothing: a string, bool or integer
/// where one belongs (most of an object). The walk then does not enter it.
fn settled(shape: &[u8], v: &Json) -> bool {
    // One scalar code, possibly behind a pointer.
    let c = match shape {
        [b'*', c] | [c] => *c,
        _ => return false,
    };
    match (c, v) {
        (b's' | b'd' | b'x', Json::String(_)) | (b'b', Json::Bool(_)) | (b'r', _) => true,
        (b'i' | b'x', Json::Number(n)) => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
        (b'l', Json::Number(n)) => n.is_i64(),
        _ => false,
    }
}

/// Whether field `i` is in a mask ([`bit`]).
#[inline(always)]
fn here(bits: u128, i: usize) -> bool {
    bits & bit(i) != 0
}

/// The plans of one version's types, built on first use of each type.
struct Plans {
    /// The model they index (its address: a plan is valid only for it).
    model: usize,
    /// Built once per type and version in the process, shared by its threads, and never freed
    /// (as the models they index, [`super::model::model`]): a `&'static` costs no reference
    /// count at every struct visit.
    plans: Box<[OnceLock<&'static Plan>]>,
}

/// The plans of the versions used so far, one per model, shared by every thread.
static PLANS: Mutex<Vec<(u32, &'static Plans)>> = Mutex::new(Vec::new());

/// The plans of `model` (the model of `version`).
fn plans_for(model: &Model, version: KubeVersion) -> &'static Plans {
    let address = model as *const Model as usize;
    // A panic while the lock was held cannot leave the list half-changed (one push).
    let mut p = PLANS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, plans)) =
        p.iter().find(|(v, plans)| *v == version.minor && plans.model == address)
    {
        return plans;
    }
    // Models live for the process (one per version), so a version's plans are made once.
    // Kept for the process: not in the per-call arena.
    let plans: &'static Plans = crate::arena::outside(|| {
        let plans: &'static Plans = Box::leak(Box::new(Plans {
            model: address,
            plans: (0..model.types.len()).map(|_| OnceLock::new()).collect(),
        }));
        p.push((version.minor, plans));
        plans
    });
    plans
}

/// The index in [`Model::types`] of the struct type a shape ends in (`[*@apps.v1.X` → X's).
fn shape_type(model: &Model, shape: &str) -> Option<usize> {
    let name = &shape[shape.find('@')? + 1..];
    model.index(name)
}

/// A step of [`Walk`]'s current path.
enum Step {
    Field(&'static str),
    /// A key of a Go map (rendered in brackets).
    MapKey(String),
    Index(usize),
}

/// Struct fields are looked up by name in objects that rarely hold more than a dozen keys:
/// compared in place (mostly a length check, then [`same_name`]'s words, no call) rather than
/// hashed (SipHash) — the walk looks up every declared field of every struct, present or not.
const LINEAR: usize = 16;

pub(super) fn get<'v>(m: &'v Map<String, Json>, name: &str) -> Option<&'v Json> {
    if m.len() <= LINEAR {
        m.iter().find(|(k, _)| same_name(k.as_bytes(), name.as_bytes())).map(|(_, v)| v)
    } else {
        m.get(name)
    }
}

pub(super) fn get_mut<'v>(m: &'v mut Map<String, Json>, name: &str) -> Option<&'v mut Json> {
    if m.len() <= LINEAR {
        m.iter_mut().find(|(k, _)| same_name(k.as_bytes(), name.as_bytes())).map(|(_, v)| v)
    } else {
        m.get_mut(name)
    }
}

/// The zero value of a non-pointer shape as the converter writes it.
fn zero(shape: &[u8]) -> Json {
    match shape.first() {
        Some(b's' | b'd') if shape == b"d" => Json::from("0s"),
        Some(b's') => Json::from(""),
        Some(b'i' | b'l' | b'x') => Json::from(0),
        Some(b'f') => serde_json::Number::from_f64(0.0).map_or(Json::Null, Json::Number),
        Some(b'b') => Json::Bool(false),
        Some(b'q') => Json::from("0"),
        Some(b'@') => Json::Object(Map::new()),
        _ => Json::Null,
    }
}

/// Go's `omitempty` emptiness of a decoded value of `shape`.
fn is_empty(v: &Json, shape: &str) -> bool {
    match shape.as_bytes().first() {
        // Patterns, not `==` (a call at the size opt-level).
        Some(b's' | b'y') => matches!(v, Json::String(s) if s.is_empty()),
        Some(b'i' | b'l') => v.as_i64() == Some(0),
        Some(b'f') => v.as_f64() == Some(0.0),
        Some(b'b') => matches!(v, Json::Bool(false)),
        Some(b'[') => v.as_array().is_some_and(Vec::is_empty),
        Some(b'{') => v.as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// A JSON type name for decode errors (Go `encoding/json` wording).
fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// A number as kubectl writes it in the body (Go `encoding/json`: a float64 without a
/// fraction when it has none, exponent form below 1e-6 and from 1e21, `e+21`).
fn go_number(v: &Json) -> String {
    match v.as_f64() {
        Some(f) if !v.is_i64() && !v.is_u64() => {
            if f == 0.0 || (1e-6..1e21).contains(&f.abs()) {
                format!("{f}")
            } else {
                let e = format!("{f:e}");
                match e.split_once("e") {
                    Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
                    _ => e,
                }
            }
        }
        _ => v.to_string(),
    }
}

/// The Go type of a shape as `reflect.Type.String()` writes it (`int32`, `[]v1.Container`,
/// `v1.DeploymentSpec`). The shape does not keep a named string or map type's name
/// (`v1.PullPolicy`, `v1.ResourceList`): those are written as their underlying type.
fn go_type(shape: &str) -> String {
    let mut out = String::new();
    for (i, c) in shape.bytes().enumerate() {
        out.push_str(match c {
            b'*' => "*",
            b'[' => "[]",
            b'{' => "map[string]",
            b'@' => {
                // `apps.v1.DeploymentSpec`: the package's name and the type's.
                let q = &shape[i + 1..];
                let cut = q.rfind('.').and_then(|n| q[..n].rfind('.')).map_or(0, |n| n + 1);
                out.push_str(&q[cut..]);
                return out;
            }
            b'i' => "int32",
            b'l' => "int64",
            b'f' => "float64",
            b'b' => "bool",
            b'y' => "[]uint8",
            b'q' => "resource.Quantity",
            b'x' => "intstr.IntOrString",
            b't' => "v1.Time",
            b'u' => "v1.MicroTime",
            b'd' => "v1.Duration",
            b'r' => "runtime.RawExtension",
            _ => "string",
        });
        if !matches!(c, b'*' | b'[' | b'{') {
            break;
        }
    }
    out
}

/// Go's `time.Parse(layout, s)` error for metav1.Time (`time.RFC3339`) or MicroTime
/// (`RFC3339Micro`): `None` when it parses. Go's `parse` walks the layout's chunks; this is that
/// walk for these two layouts, with its messages (time/format.go `parse`, `ParseError.Error`).
#[cold]
#[inline(never)]
pub fn go_time_error(s: &str, micro: bool) -> Option<String> {
    let layout =
        if micro { "2006-01-02T15:04:05.000000Z07:00" } else { "2006-01-02T15:04:05Z07:00" };
    let b = s.as_bytes();
    let digit = |i: usize| b.get(i).filter(|c| c.is_ascii_digit()).map(|c| u32::from(c - b'0'));
    // The layout's chunks: a prefix, a kind (Y year, M month, D day, h hour,
    // m minute, s second, f fraction, z zone), the chunk's text.
    let chunks: &[(&str, u8, &str)] = &[
        ("", b'Y', "2006"),
        ("-", b'M', "01"),
        ("-", b'D', "02"),
        ("T", b'h', "15"),
        (":", b'm', "04"),
        (":", b's', "05"),
        ("", b'f', ".000000"),
        ("", b'z', "Z07:00"),
    ];
    let (mut i, mut year, mut month, mut day) = (0, 0, 0, 0);
    // Where it failed: the value from there and the layout element, or what is out of range.
    let mut failed: Option<(usize, &str)> = None;
    let mut range = "";
    for &(prefix, kind, std) in chunks {
        if kind == b'f' && !micro {
            continue;
        }
        if let Some(p) = prefix.as_bytes().first() {
            if b.get(i) != Some(p) {
                failed = Some((i, prefix));
                break;
            }
            i += 1;
        }
        let hold = i;
        let ok = match kind {
            b'Y' => {
                let mut ok = true;
                for _ in 0..4 {
                    match digit(i) {
                        Some(d) => year = year * 10 + d,
                        None => ok = false,
                    }
                    i += 1;
                }
                ok
            }
            b'f' => {
                // parseNanoseconds: `.` or `,`, then atoi of six bytes (a sign allowed).
                let sep = matches!(b.get(i), Some(b'.' | b','));
                let sign = matches!(b.get(i + 1), Some(b'-' | b'+')) as usize;
                let ok =
                    sep && b.len() >= i + 7 && (i + 1 + sign..i + 7).all(|k| digit(k).is_some());
                if ok && b.get(i + 1) == Some(&b'-') && (i + 2..i + 7).any(|k| digit(k) != Some(0))
                {
                    range = "fractional second";
                }
                i += 7;
                ok
            }
            b'z' if b.get(i) == Some(&b'Z') => {
                i += 1;
                true
            }
            b'z' => {
                let two = |k: usize| Some(digit(k)? * 10 + digit(k + 1)?);
                let ok = b.len() >= i + 6 && b.get(i + 3) == Some(&b':');
                let (h, m) =
                    if ok { (two(i + 1), two(i + 1).and(two(i + 4))) } else { (None, None) };
                if m.unwrap_or(0) > 60 {
                    range = "time zone offset minute";
                } else if h.unwrap_or(0) > 24 {
                    range = "time zone offset hour";
                }
                let signed = matches!(b.get(i), Some(b'+' | b'-'));
                i += 6;
                ok && m.is_some() && signed
            }
            _ => match (digit(i), digit(i + 1)) {
                // getnum: two digits, or one where the layout is not zero-padded (the hour).
                (Some(d), next) if next.is_some() || kind == b'h' => {
                    let n = next.map_or(d, |e| d * 10 + e);
                    i += 1 + usize::from(next.is_some());
                    match kind {
                        b'M' => month = n,
                        b'D' => day = n,
                        _ => {}
                    }
                    range = match kind {
                        b'M' if n == 0 || n > 12 => "month",
                        b'h' if n >= 24 => "hour",
                        b'm' if n >= 60 => "minute",
                        b's' if n >= 60 => "second",
                        _ => "",
                    };
                    // A fraction the layout does not have is read after the seconds.
                    if kind == b's'
                        && !micro
                        && range.is_empty()
                        && matches!(b.get(i), Some(b'.' | b','))
                        && digit(i + 1).is_some()
                    {
                        i += 2;
                        while digit(i).is_some() {
                            i += 1;
                        }
                    }
                    true
                }
                _ => false,
            },
        };
        if !range.is_empty() {
            break;
        }
        if !ok {
            failed = Some((hold, std));
            break;
        }
    }
    let days = match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let rest = |k: usize| go_quote(b.get(k..).unwrap_or_default());
    let what = match failed {
        Some((at, elem)) => format!(" as \"{layout}\": cannot parse {} as \"{elem}\"", rest(at)),
        None if !range.is_empty() => format!(": {range} out of range"),
        None if i < b.len() => format!(": extra text: {}", rest(i)),
        None if day < 1 || day > days => ": day out of range".to_string(),
        None => return None,
    };
    Some(format!("parsing time {}{what}", go_quote(b)))
}

/// time's `quote`: double quotes, bytes outside printable ASCII as `\xNN`.
fn go_quote(b: &[u8]) -> String {
    let mut out = String::from('"');
    for &c in b {
        if c == b'"' || c == b'\\' {
            out.push('\\');
        }
        if (0x20..0x80).contains(&c) {
            out.push(c as char);
        } else {
            out.push_str("\\x");
            for n in [c >> 4, c & 15] {
                out.push(char::from_digit(u32::from(n), 16).unwrap_or('0'));
            }
        }
    }
    out.push('"');
    out
}

thread_local! {
    /// Quantities' texts and their canonical forms, the last [`QUANTITIES`] parsed: objects
    /// repeat a few (`100m`, `128Mi`), and parsing and writing one is most of decoding it.
    static CANONICAL: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
}

/// Entries of [`CANONICAL`].
const QUANTITIES: usize = 32;

/// resource.Quantity's UnmarshalJSON of `text` (the value's text, trimmed), then its canonical
/// form: `None` when that is `given`, the string it was given as.
fn canonical_quantity(text: &str, given: Option<&str>) -> Result<Option<String>, String> {
    let changed = |c: &str| (given != Some(c)).then(|| c.to_string());
    let hit = CANONICAL.with(|cache| {
        let cache = cache.borrow();
        cache
            .iter()
            .find(|(t, _)| same_name(t.as_bytes(), text.as_bytes()))
            .map(|(_, c)| changed(c))
    });
    if let Some(hit) = hit {
        return Ok(hit);
    }
    let canonical = Quantity::parse(text)?.canonical();
    let out = changed(&canonical);
    // Kept beyond the call: copied outside the per-call arena (a block made in the call and
    // kept in the cache would keep its chunk from being reused).
    crate::arena::outside(|| {
        CANONICAL.with(|cache| {
            let mut cache = cache.borrow_mut();
            if cache.len() >= QUANTITIES {
                cache.remove(0);
            }
            cache.push((text.to_string(), canonical.as_str().to_string()));
        })
    });
    Ok(out)
}

/// `s` is what [`canonical_time`] writes for it, checked without writing it: the form it
/// writes (`Z`, whole seconds or six fraction digits), and a time it reads. Most times in an
/// object are so (writing one was most of decoding it).
fn is_canonical_time(s: &str, micro: bool) -> bool {
    let b = s.as_bytes();
    let (len, fraction) = if micro { (27, Some(&b'.')) } else { (20, Some(&b'Z')) };
    b.len() == len
        && b.get(19) == fraction
        && b.last() == Some(&b'Z')
        && crate::cel::stdlib::time::parse_rfc3339(s).is_some()
}

/// metav1.Time: RFC 3339 in UTC, whole seconds; MicroTime: six fraction digits.
fn canonical_time(s: &str, micro: bool) -> Option<String> {
    let t = crate::cel::stdlib::time::parse_rfc3339(s)?;
    let utc = crate::cel::value::Timestamp { secs: t.secs, nanos: 0, offset: 0 };
    let text = crate::cel::value::format_timestamp(&utc);
    if !micro {
        return Some(text);
    }
    let base = text.trim_end_matches('Z');
    Some(format!("{base}.{:06}Z", t.nanos / 1000))
}

impl<'m> Walk<'m> {
    pub fn new(model: &'m Model, version: KubeVersion, label: &str) -> Self {
        Walk {
            model,
            version,
            label: label.to_string(),
            path: Vec::new(),
            plans: plans_for(model, version),
            events: Vec::new(),
            encoded: Vec::new(),
            marks: Vec::new(),
            #[cfg(not(target_arch = "wasm32"))]
            record: true,
            nulls: Vec::new(),
            diagnostics: Vec::new(),
            diagnostic_paths: Vec::new(),
            unknown_fields: Vec::new(),
            error: None,
            owner: "",
        }
    }

    /// The current path as [`Seg`]s and which of them are map keys.
    fn segs(&self) -> (Vec<Seg>, Vec<bool>) {
        self.path
            .iter()
            .map(|s| match s {
                Step::Field(k) => (Seg::Key(k.to_string()), false),
                Step::MapKey(k) => (Seg::Key(k.clone()), true),
                Step::Index(i) => (Seg::Index(*i), false),
            })
            .unzip()
    }

    /// Record a change at the current path plus `key` (`None`: the current path).
    pub fn event(&mut self, key: Option<&str>, reason: ChangeReason) {
        self.push_event(key, reason, false);
    }

    /// An encoding's change at the current path plus `key` ([`Self::encoded`]); `absent`: a
    /// value set where the decoded object had none ([`Event::absent`]).
    fn encode_event(&mut self, key: &str, reason: ChangeReason, absent: bool) {
        if let Some(e) = self.new_event(Some(key), reason, absent) {
            self.encoded.push(e);
        }
    }

    /// Whether changes are recorded ([`Walk::record`]; always in the package).
    #[inline(always)]
    pub fn recording(&self) -> bool {
        #[cfg(not(target_arch = "wasm32"))]
        return self.record;
        #[cfg(target_arch = "wasm32")]
        true
    }

    fn push_event(&mut self, key: Option<&str>, reason: ChangeReason, absent: bool) {
        if let Some(e) = self.new_event(key, reason, absent) {
            self.events.push(e);
        }
    }

    /// A change at the current path plus `key`, when changes are recorded.
    fn new_event(&self, key: Option<&str>, reason: ChangeReason, absent: bool) -> Option<Event> {
        if !self.recording() {
            return None;
        }
        let (mut path, mut map_keys) = self.segs();
        if let Some(k) = key {
            path.push(Seg::Key(k.to_string()));
            map_keys.push(false);
        }
        Some(Event { path, map_keys, reason, absent })
    }

    /// Record a change at the current path plus `rel` (keys of structs or maps, list indices;
    /// `map` marks which keys are map keys); `absent`: as [`Event::absent`].
    pub fn event_rel(&mut self, rel: &[Seg], map: &[bool], reason: ChangeReason, absent: bool) {
        if !self.recording() {
            return;
        }
        let (mut path, mut map_keys) = self.segs();
        for (i, s) in rel.iter().enumerate() {
            path.push(s.clone());
            map_keys.push(map.get(i).copied().unwrap_or(false));
        }
        self.events.push(Event { path, map_keys, reason, absent });
    }

    /// The current path, rendered.
    pub fn here(&self, key: &str) -> String {
        let (mut p, mut m) = self.segs();
        p.push(Seg::Key(key.to_string()));
        m.push(false);
        super::render_path(&p, &m)
    }

    /// The plan of type `index` ([`Model::types`]), built on first use (inline: it is asked
    /// at every struct visit, and once built it is one load).
    #[inline(always)]
    fn plan(&self, index: usize) -> Option<&'static Plan> {
        let cell = self.plans.plans.get(index)?;
        match cell.get() {
            Some(p) => Some(p),
            None => self.first_plan(index, cell),
        }
    }

    /// [`plan`](Self::plan) of a type not used before.
    #[cold]
    #[inline(never)]
    fn first_plan(&self, index: usize, cell: &OnceLock<&'static Plan>) -> Option<&'static Plan> {
        // Kept for the process: not in the per-call arena.
        crate::arena::outside(|| self.build_plan(index, cell))
    }

    /// [`plan`](Self::plan) on first use of the type.
    fn build_plan(&self, index: usize, cell: &OnceLock<&'static Plan>) -> Option<&'static Plan> {
        let ty = self.model.types.get(index)?.name;
        let fields = self.model.fields_at(index)?;
        let names = vap_eval_json::names::FieldTable::new(fields.iter().map(|f| f.name).collect())?;
        let child: Vec<Option<usize>> =
            fields.iter().map(|f| shape_type(self.model, f.shape)).collect();
        // A non-pointer struct cannot contain itself: this recursion ends.
        let probe: Vec<bool> = fields
            .iter()
            .zip(&child)
            .map(|(f, c)| f.shape.starts_with('@') && c.is_some_and(|c| self.can_default(c)))
            .collect();
        let rules = super::defaults::rules_of(ty);
        let coded = super::defaults::is_coded(ty);
        let (mut default_always, mut default_present) = (0u128, 0u128);
        let (mut encode_absent, mut encode_present, mut lists) = (0u128, 0u128, 0u128);
        let mut empties = 0u128;
        for (i, f) in fields.iter().enumerate() {
            let has_child = child.get(i).is_some_and(Option::is_some);
            let b = bit(i);
            if f.default.is_some() || probe.get(i).copied().unwrap_or(false) {
                default_always |= b;
            }
            if f.shape == "{q" && ty != "node.v1.Overhead" {
                lists |= b;
            }
            if has_child {
                default_present |= b;
            }
            let written = match f.shape.as_bytes().first().copied().unwrap_or(b'r') {
                b'*' | b'[' | b'{' | b'y' | b's' | b'i' | b'l' | b'f' | b'b' => !f.omitempty,
                b't' | b'u' => !f.omitzero,
                _ => true,
            };
            if written {
                encode_absent |= b;
            }
            if has_child {
                encode_present |= b;
            }
            if f.omitempty
                && matches!(lead(f.shape), b's' | b'y' | b'i' | b'l' | b'f' | b'b' | b'[' | b'{')
            {
                empties |= b;
            }
        }
        default_present |= lists;
        // Never freed (see `Plans::plans`).
        let plan: &'static Plan = Box::leak(Box::new(Plan {
            ty,
            fields,
            names,
            child,
            probe,
            defaulted: !rules.is_empty() || coded,
            rules,
            coded,
            markers: fields.iter().any(|f| f.default.is_some()),
            default_always,
            default_present,
            encode_absent,
            encode_present,
            empties,
            lists,
        }));
        Some(*cell.get_or_init(|| plan))
    }

    /// Whether an empty value of type `index` can gain fields by defaulting.
    fn can_default(&self, index: usize) -> bool {
        self.plan(index).is_some_and(|p| p.defaulted || p.markers || p.probe.contains(&true))
    }

    fn enter(&mut self, step: Step) {
        self.path.push(step);
    }
    fn leave(&mut self) {
        self.path.pop();
    }

    /// Normalise a whole object of root type `root`; `decoded`: decoding it would do nothing
    /// ([`Check`]).
    pub fn object(&mut self, v: &mut Json, root: &str, decoded: bool) {
        let ty = self.model.index(root);
        if !decoded {
            self.decode(v, b"@", ty);
        }
        self.finish(v, b"@", ty, true);
        self.events.append(&mut self.encoded);
    }

    // ----- 1. decode -------------------------------------------------------------------------

    /// `ty`: the struct type `shape` ends in (an index in [`Model::types`]).
    fn decode(&mut self, v: &mut Json, shape: &[u8], ty: Option<usize>) {
        // Shapes are walked as bytes: slicing a `str` is a call (its char boundary check).
        let Some((&c, rest)) = shape.split_first() else { return };
        match (c, &mut *v) {
            (b'*', _) => self.decode(v, rest, ty),
            (b'[', Json::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if settled(rest, item) {
                        continue;
                    }
                    self.enter(Step::Index(i));
                    if item.is_null() && rest.first() != Some(&b'*') {
                        *item = zero(rest);
                    }
                    self.decode(item, rest, ty);
                    self.leave();
                }
            }
            (b'{', Json::Object(m)) => {
                for (k, item) in m.iter_mut() {
                    // Labels, annotations: nothing to do, and the key is not copied into the
                    // path.
                    if settled(rest, item) {
                        continue;
                    }
                    self.enter(Step::MapKey(k.clone()));
                    if item.is_null() && rest.first() != Some(&b'*') {
                        *item = zero(rest);
                    }
                    self.decode(item, rest, ty);
                    self.leave();
                }
            }
            (b'@', Json::Object(m)) => self.decode_struct(m, ty),
            (b's' | b'd', Json::String(_)) | (b'b', Json::Bool(_)) | (b'r', _) => {}
            // []byte: base64 (Go saves the error and goes on; no field context).
            (b'y', Json::String(s)) => {
                if let Some(at) = crate::webhook::types::base64_error(s) {
                    let msg = format!("illegal base64 data at input byte {at}");
                    self.fail(false, false, msg);
                }
            }
            (b'i' | b'l' | b'x', Json::Number(n)) => {
                // The integer kubectl sends (a whole float64 is written without a fraction, all
                // its digits: `1e16` is 10000000000000000).
                let whole = n.as_i64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < i64::MAX as f64)
                        .map(|f| f as i64)
                });
                match whole.filter(|i| c == b'l' || i32::try_from(*i).is_ok()) {
                    Some(i) if !n.is_i64() => {
                        *v = Json::from(i);
                        self.event(None, ChangeReason::Canonical);
                    }
                    Some(_) => {}
                    // IntOrString's UnmarshalJSON decodes into its int32: its error stops the
                    // decoder.
                    None => {
                        let shape = if c == b'x' { b"i" } else { shape };
                        self.type_error(c == b'x', &format!("number {}", go_number(v)), shape)
                    }
                }
            }
            (b'x', Json::String(_)) => {}
            (b'f', Json::Number(n)) => {
                if n.is_i64() || n.is_u64() {
                    if let Some(f) = n.as_f64().and_then(serde_json::Number::from_f64) {
                        *v = Json::Number(f);
                        self.event(None, ChangeReason::Canonical);
                    }
                }
            }
            // resource.Quantity's UnmarshalJSON: any JSON, quotes stripped, trimmed, parsed.
            (b'q', _) => {
                let number;
                let text = match &*v {
                    Json::String(s) => s.trim(),
                    other => {
                        number = go_number(other);
                        number.as_str()
                    }
                };
                match canonical_quantity(text, v.as_str()) {
                    Ok(None) => {}
                    Ok(Some(canonical)) => {
                        *v = Json::from(canonical);
                        self.event(None, ChangeReason::Canonical);
                    }
                    Err(e) => self.fail(true, true, e),
                }
            }
            (b't' | b'u', Json::String(s)) if is_canonical_time(s, c == b'u') => {}
            (b't' | b'u', Json::String(s)) => match canonical_time(s, c == b'u') {
                Some(t) => {
                    if *s != t {
                        *v = Json::from(t);
                        self.event(None, ChangeReason::Canonical);
                    }
                }
                // time.Parse's error; a value it accepts (a one-digit hour) stays as given.
                None => {
                    if let Some(e) = go_time_error(s, c == b'u') {
                        self.fail(true, true, e);
                    }
                }
            },
            // Time, MicroTime and Duration decode a string first: anything else is that
            // decode's error, which stops the decoder.
            (b't' | b'u' | b'd', _) => self.type_error(true, json_type(v), b"s"),
            (b'x', _) => self.type_error(true, json_type(v), b"i"),
            _ => self.type_error(false, json_type(v), shape),
        }
    }

    /// sigs.k8s.io/json's `UnmarshalTypeError` for `value` (`string`, `number 3.5`) into the Go
    /// type of `shape`, with its context: the struct whose field this is and the JSON field
    /// path from the root (map keys and list indices are not in it).
    #[cold]
    #[inline(never)]
    fn type_error(&mut self, fatal: bool, value: &str, shape: &[u8]) {
        let shape = std::str::from_utf8(shape).unwrap_or_default();
        let mut fields = String::new();
        for s in &self.path {
            if let Step::Field(f) = s {
                if !fields.is_empty() {
                    fields.push('.');
                }
                fields.push_str(f);
            }
        }
        // Every value the walk decodes is in a struct's field (the object is a struct).
        let ty = go_type(shape.trim_start_matches('*'));
        let owner = self.owner.rsplit('.').next().unwrap_or_default();
        let msg = format!(
            "json: cannot unmarshal {value} into Go struct field {owner}.{fields} of type {ty}"
        );
        self.fail(fatal, false, msg);
    }

    /// Record a value the decoder rejects at the current path: `fatal` when it stops the
    /// decoder (a type's own UnmarshalJSON failed), `invalid` for a value of the right JSON type
    /// that does not parse.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, fatal: bool, invalid: bool, message: String) {
        let (path, map_keys) = self.segs();
        let field = super::render_path(&path, &map_keys);
        let code = if invalid { "object-invalid-value" } else { "object-wrong-type" };
        let d = diagnostics::not_decoded(code, &self.label, &field, &message);
        let diagnostic = self.diagnostics.len();
        self.diagnostics.push(d);
        self.diagnostic_paths.push(path.clone());
        // The walk goes in field declaration order; the decoder in the body's, whose keys
        // kubectl sorts: an UnmarshalJSON error stops it at once, otherwise the first saved
        // error is returned.
        let first = match &self.error {
            Some(e) if fatal != e.fatal => fatal,
            Some(e) => path < e.path,
            None => true,
        };
        if first {
            self.error = Some(DecodeError { path, map_keys, fatal, message, diagnostic });
        }
    }

    fn decode_struct(&mut self, m: &mut Map<String, Json>, ty: Option<usize>) {
        let Some(plan) = ty.and_then(|i| self.plan(i)) else { return };
        let outer = std::mem::replace(&mut self.owner, plan.ty);
        let fields = plan.fields;
        // One lookup per key: which keys are unknown, and `work`, the present fields whose
        // value is `null` or not settled (most are settled: the loop below visits only these).
        let mut work = 0u128;
        let mut unknown: Vec<String> = Vec::new();
        for (k, v) in m.iter() {
            match plan.find(k) {
                Some(i) => {
                    if fields.get(i).is_none_or(|f| v.is_null() || !settled(f.shape.as_bytes(), v))
                    {
                        work |= bit(i);
                    }
                }
                None => unknown.push(k.clone()),
            }
        }
        for k in unknown {
            let (mut path, mut map_keys) = self.segs();
            path.push(Seg::Key(k.clone()));
            map_keys.push(false);
            let field = super::render_path(&path, &map_keys);
            self.diagnostics.push(diagnostics::unknown_field(&self.label, &field));
            self.diagnostic_paths.push(path.clone());
            self.unknown_fields.push(path);
            self.event(Some(&k), ChangeReason::Pruned);
            m.remove(&k);
        }
        while let Some(i) = next_bit(&mut work) {
            let Some(f) = fields.get(i) else { break };
            let Some(v) = get_mut(m, f.name) else { continue };
            if v.is_null() {
                m.remove(f.name);
                if self.recording() {
                    let (mut path, _) = self.segs();
                    path.push(Seg::Key(f.name.to_string()));
                    self.nulls.push(path);
                }
                continue;
            }
            // Not `null`, so not settled (the key pass): decoded.
            self.enter(Step::Field(f.name));
            self.decode(v, f.shape.as_bytes(), plan.child.get(i).copied().flatten());
            self.leave();
        }
        self.owner = outer;
    }

    // ----- 2. default (visited with 3: `finish`) ---------------------------------------------

    /// core/v1 SetDefaults_ResourceList of field `f`, a resource list.
    fn round_list(&mut self, m: &mut Map<String, Json>, f: &'static Field) {
        let Some(Json::Object(list)) = get_mut(m, f.name) else { return };
        self.enter(Step::Field(f.name));
        for (k, q) in list.iter_mut() {
            if q.as_str().is_some_and(milli_or_coarser) {
                continue; // RoundUp(-3) keeps it: not parsed again
            }
            let r = super::defaults::quantity(q).and_then(|x| x.round_up(-3).ok());
            let Some(r) = r.map(|r| Json::from(r.canonical())) else { continue };
            if *q != r {
                *q = r;
                // A rounding, not the decoder's canonical form, says what it is.
                self.enter(Step::MapKey(k.clone()));
                let (path, _) = self.segs();
                self.events.retain(|e| e.path != path);
                self.event(None, ChangeReason::Default);
                self.leave();
            }
        }
        self.leave();
    }

    /// The Go field is nil (pointer, slice, map) or holds its zero value (scalar).
    fn unset(&self, m: &Map<String, Json>, f: &Field) -> bool {
        match get(m, f.name) {
            None => true,
            Some(v) if !matches!(lead(f.shape), b'*' | b'[' | b'{') => is_empty(v, f.shape),
            Some(_) => false,
        }
    }

    // ----- 3. encode -------------------------------------------------------------------------

    /// Write `v` (of `shape`) as the converter would, without decoding or defaulting it: a
    /// value the registry built (a reset status) gets its non-`omitempty` fields.
    pub fn encode_value(&mut self, v: &mut Json, shape: &str) {
        let ty = shape_type(self.model, shape);
        self.encode(v, shape.as_bytes(), ty);
        self.events.append(&mut self.encoded);
    }

    fn encode(&mut self, v: &mut Json, shape: &[u8], ty: Option<usize>) {
        // Only a struct's fields are written differently: nothing to do without one below.
        if ty.is_none() {
            return;
        }
        // Shapes are walked as bytes: slicing a `str` is a call (its char boundary check).
        let Some((&c, rest)) = shape.split_first() else { return };
        match (c, v) {
            (b'*', v) => self.encode(v, rest, ty),
            (b'[', Json::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.enter(Step::Index(i));
                    self.encode(item, rest, ty);
                    self.leave();
                }
            }
            (b'{', Json::Object(m)) => {
                for (k, item) in m.iter_mut() {
                    self.enter(Step::MapKey(k.clone()));
                    self.encode(item, rest, ty);
                    self.leave();
                }
            }
            (b'@', Json::Object(m)) => self.encode_struct(m, ty),
            _ => {}
        }
    }

    fn encode_struct(&mut self, m: &mut Map<String, Json>, ty: Option<usize>) {
        let Some(plan) = ty.and_then(|i| self.plan(i)) else { return };
        let fields = plan.fields;
        let (present, work) = plan.keys(m);
        let mut visit = (plan.encode_absent & !present) | ((plan.encode_present & present) | work);
        while let Some(i) = next_bit(&mut visit) {
            let Some(f) = fields.get(i) else { break };
            let child = plan.child.get(i).copied().flatten();
            if here(present, i) {
                self.encode_present(m, f, child, true);
            } else {
                self.encode_absent(m, f, child);
            }
        }
    }

    /// Field `f` is absent after defaulting (its [`Plan::encode_absent`] bit is set): what the
    /// converter writes for the Go value it holds.
    fn encode_absent(
        &mut self,
        m: &mut Map<String, Json>,
        f: &'static Field,
        child: Option<usize>,
    ) {
        let first = f.shape.as_bytes().first().copied().unwrap_or(b'r');
        match first {
            // Nil pointer, slice or map.
            b'*' | b'[' | b'{' | b'y' => {
                if !f.omitempty {
                    m.insert(f.name.to_string(), Json::Null);
                    self.encode_event(f.name, ChangeReason::NullForNonOmitempty, true);
                }
            }
            // A zero time, omitted only by omitzero.
            b't' | b'u' => {
                if !f.omitzero {
                    m.insert(f.name.to_string(), Json::Null);
                    self.encode_event(f.name, ChangeReason::ZeroValue, true);
                }
            }
            // A zero scalar: absent with omitempty, else written.
            b's' | b'i' | b'l' | b'f' | b'b' => {
                if !f.omitempty {
                    m.insert(f.name.to_string(), zero(f.shape.as_bytes()));
                    self.encode_event(f.name, ChangeReason::ZeroValue, true);
                }
            }
            // Structs (and the struct-typed quantity, int-or-string, duration, raw JSON) are
            // always written.
            _ => {
                m.insert(f.name.to_string(), zero(f.shape.as_bytes()));
                self.encode_event(f.name, ChangeReason::ZeroValue, true);
                if first == b'@' {
                    if let Some(value) = get_mut(m, f.name) {
                        self.enter(Step::Field(f.name));
                        self.encode(value, f.shape.as_bytes(), child);
                        self.leave();
                    }
                }
            }
        }
    }

    /// Field `f` is present after defaulting: an `omitempty` zero value is dropped, a value with
    /// a struct below is encoded unless it was already (`below` false, [`Walk::finish_struct`]).
    fn encode_present(
        &mut self,
        m: &mut Map<String, Json>,
        f: &'static Field,
        child: Option<usize>,
        below: bool,
    ) {
        let Some(value) = get_mut(m, f.name) else { return };
        if f.omitempty && lead(f.shape) != b'*' && is_empty(value, f.shape) {
            // Nothing was below to default (an empty list or map, a scalar).
            m.remove(f.name);
            self.encode_event(f.name, ChangeReason::DroppedZeroValue, false);
            return;
        }
        // Only structs have anything to write below them.
        if child.is_none() || !below {
            return;
        }
        self.enter(Step::Field(f.name));
        self.encode(value, f.shape.as_bytes(), child);
        self.leave();
    }

    // ----- 2 and 3 in one visit --------------------------------------------------------------

    /// Default `v` (of `shape`), then encode it: the defaulting and encoding passes in one visit
    /// of each struct. The same as the two passes in turn: a struct's defaulting reads and
    /// writes only its own value (its `SetDefaults_*` run before anything in it is encoded,
    /// a field's `+default` and what is below it before that field is encoded), and encoding a
    /// field touches only that field; the encoding's changes are kept apart
    /// ([`Walk::encoded`]) so the list keeps the passes' order.
    /// Without `encode`, the defaulting alone (a struct that is absent, [`Plan::probe`]).
    fn finish(&mut self, v: &mut Json, shape: &[u8], ty: Option<usize>, encode: bool) {
        // Defaults live in structs, and only a struct's fields are written differently: a
        // shape without one below has nothing to do.
        if ty.is_none() {
            return;
        }
        // Shapes are walked as bytes: slicing a `str` is a call (its char boundary check).
        let Some((&c, rest)) = shape.split_first() else { return };
        match (c, v) {
            (b'*', v) => self.finish(v, rest, ty, encode),
            (b'[', Json::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.enter(Step::Index(i));
                    self.finish(item, rest, ty, encode);
                    self.leave();
                }
            }
            (b'{', Json::Object(m)) => {
                for (k, item) in m.iter_mut() {
                    self.enter(Step::MapKey(k.clone()));
                    self.finish(item, rest, ty, encode);
                    self.leave();
                }
            }
            (b'@', Json::Object(m)) => self.finish_struct(m, ty, encode),
            _ => {}
        }
    }

    /// A struct's defaulting — its `SetDefaults_*`, then field by field its `+default` markers,
    /// the absent structs that gain defaults, the resource lists and the values below — then
    /// its encoding ([`Walk::encode_struct`]'s visit). The struct's own keys change in the two
    /// passes' order (the defaulting's, then the encoding's, field by field: the map keeps its
    /// keys in insertion order and a removal moves its last key into the gap); a value below is
    /// defaulted and encoded in one visit from the first loop, and the encoding's changes of
    /// this struct's fields are placed before those of the values after them.
    fn finish_struct(&mut self, m: &mut Map<String, Json>, ty: Option<usize>, encode: bool) {
        let Some(plan) = ty.and_then(|i| self.plan(i)) else { return };
        if plan.defaulted {
            super::defaults::apply(self, plan.ty, plan.rules, plan.coded, m);
        } else if plan.default_always | plan.default_present == 0 {
            // No defaults here or below.
            if encode {
                self.encode_struct(m, ty);
            }
            return;
        }
        let fields = plan.fields;
        let (mut present, work) = plan.keys(m);
        let base = self.marks.len();
        // The fields whose value was defaulted and encoded in the first loop.
        let mut done = 0u128;
        let mut visit = plan.default_always | (plan.default_present & present);
        while let Some(i) = next_bit(&mut visit) {
            let Some(f) = fields.get(i) else { break };
            let child = plan.child.get(i).copied().flatten();
            if let Some(d) = f.default {
                if self.unset(m, f) {
                    if let Ok(value) = vap_eval_json::from_str(d) {
                        let absent = m.insert(f.name.to_string(), value).is_none();
                        self.push_event(Some(f.name), ChangeReason::Default, absent);
                        present |= bit(i);
                    }
                }
            }
            // Non-pointer structs exist in Go even when absent: their defaults apply.
            if lead(f.shape) == b'@' && !here(present, i) {
                if !plan.probe.get(i).copied().unwrap_or(false) {
                    continue;
                }
                let mut probe = Map::new();
                self.enter(Step::Field(f.name));
                self.finish_struct(&mut probe, child, false);
                self.leave();
                if !probe.is_empty() {
                    m.insert(f.name.to_string(), Json::Object(probe));
                    present |= bit(i);
                }
                continue;
            }
            if here(plan.lists, i) {
                self.round_list(m, f);
            }
            if child.is_none() || !here(present, i) {
                continue;
            }
            let Some(value) = get_mut(m, f.name) else { continue };
            if encode {
                self.marks.push((i, self.encoded.len()));
            }
            self.enter(Step::Field(f.name));
            self.finish(value, f.shape.as_bytes(), child, encode);
            self.leave();
            done |= bit(i);
        }
        if !encode {
            return;
        }
        // The encoding's visit (`encode_struct`'s, with the keys as they are now: a field
        // changed above holding an `omitempty` zero value is among the `+default` ones).
        let mut visit = (plan.encode_absent & !present)
            | ((plan.encode_present | plan.default_always) & present)
            | work;
        // The first mark of a field after the current one, and the changes placed before the
        // marks so far.
        let (mut next, mut shift) = (base, 0);
        while let Some(i) = next_bit(&mut visit) {
            let Some(f) = fields.get(i) else { break };
            // Encoded above, and not an `omitempty` value that can be empty: nothing to do.
            if here(done, i) && !here(plan.empties, i) {
                continue;
            }
            let child = plan.child.get(i).copied().flatten();
            while self.marks.get(next).is_some_and(|(j, _)| *j <= i) {
                next += 1;
            }
            let before = self.encoded.len();
            if here(present, i) {
                self.encode_present(m, f, child, !here(done, i));
            } else {
                self.encode_absent(m, f, child);
            }
            let added = self.encoded.len() - before;
            if let Some(&(_, at)) = self.marks.get(next).filter(|_| added > 0) {
                if let Some(tail) = self.encoded.get_mut(at + shift..) {
                    tail.rotate_right(added);
                }
                shift += added;
            }
        }
        self.marks.truncate(base);
    }
}

/// The decoding checked while the object's text is read ([`super::read_object`]): whether
/// [`Walk::decode`] would do nothing to the value read — no field the type does not declare, no
/// `null`, every value of its field's JSON type and already in its canonical form — so that the
/// walk need not run. A sufficient test, not an exact one: anything it is not sure of (any
/// `null`, a value the decoder changes or rejects) makes the object unchecked, and the decoder
/// then runs as on any other object.
pub struct Check<'m> {
    walk: Walk<'m>,
    /// The open collections.
    stack: Vec<Frame>,
    /// The root's type.
    root: Option<usize>,
    /// Nothing found so far that the decoder would change or report.
    pub clean: bool,
}

/// An open collection of [`Check`]: a struct, or the shape (and type below) of a list's or
/// map's elements (empty: not looked into).
#[derive(Clone, Copy)]
enum Frame {
    Struct(&'static Plan),
    Elements(&'static [u8], Option<usize>),
}

/// A shape without its pointers (the decoder goes through them).
#[inline(always)]
fn deref(mut shape: &'static [u8]) -> &'static [u8] {
    while let [b'*', rest @ ..] = shape {
        shape = rest;
    }
    shape
}

/// A value with members or elements: the reader opened and closed it ([`Check`] checked it
/// then).
#[inline(always)]
fn opened(v: &Json) -> bool {
    match v {
        Json::Object(m) => !m.is_empty(),
        Json::Array(a) => !a.is_empty(),
        _ => false,
    }
}

impl<'m> Check<'m> {
    pub fn new(model: &'m Model, version: KubeVersion, root: &str) -> Self {
        Check {
            walk: Walk::new(model, version, ""),
            stack: Vec::with_capacity(16),
            root: model.index(root),
            clean: true,
        }
    }

    /// The shape (without pointers) and type of field `key` of `plan`'s struct; `None` for a
    /// key it does not declare.
    #[inline(always)]
    fn field(plan: &Plan, key: &str) -> Option<(&'static [u8], Option<usize>)> {
        let i = plan.find(key)?;
        Some((deref(plan.fields.get(i)?.shape.as_bytes()), plan.child.get(i).copied().flatten()))
    }

    /// Decoding the scalar (or empty collection) `v` as `shape` would do nothing (the reader's
    /// numbers are all integers: a float field's value is never left as it is).
    fn leaf(shape: &[u8], v: &Json) -> bool {
        match (shape, v) {
            (_, Json::Null) => false,
            ([] | [b'r', ..], _) => true,
            ([b'@' | b'{', ..], Json::Object(m)) => m.is_empty(),
            ([b'[', ..], Json::Array(a)) => a.is_empty(),
            _ if settled(shape, v) => true,
            ([b'y'], Json::String(s)) => crate::webhook::types::base64_error(s).is_none(),
            ([b'q'], Json::String(s)) => canonical_quantity(trimmed(s), Some(s)) == Ok(None),
            ([c @ (b't' | b'u')], Json::String(s)) => is_canonical_time(s, *c == b'u'),
            _ => false,
        }
    }
}

impl vap_eval_json::Schema for Check<'_> {
    fn open(&mut self, key: Option<&str>, object: bool) {
        if !self.clean {
            return;
        }
        let at = match (self.stack.last(), key) {
            (None, _) => Some((b"@".as_slice(), self.root)),
            (Some(Frame::Struct(plan)), Some(key)) => Self::field(plan, key),
            (Some(Frame::Elements(shape, ty)), _) => Some((*shape, *ty)),
            (Some(Frame::Struct(_)), None) => None,
        };
        let frame = match at.map(|(shape, ty)| (shape, ty, object)) {
            // Not entered: no shape, raw JSON, a struct without a plan.
            Some(([] | [b'r', ..], _, _)) => Frame::Elements(b"", None),
            Some(([b'@', ..], ty, true)) => match ty.and_then(|i| self.walk.plan(i)) {
                Some(plan) => Frame::Struct(plan),
                None => Frame::Elements(b"", None),
            },
            Some(([b'{', rest @ ..], ty, true) | ([b'[', rest @ ..], ty, false)) => {
                Frame::Elements(deref(rest), ty)
            }
            _ => {
                self.clean = false;
                return;
            }
        };
        self.stack.push(frame);
    }

    fn close(&mut self, keys: &[String], values: &[Json]) {
        if !self.clean {
            return;
        }
        self.clean = match self.stack.pop() {
            Some(Frame::Struct(plan)) => keys.iter().zip(values).all(|(k, v)| {
                opened(v) || Self::field(plan, k).is_some_and(|(shape, _)| Self::leaf(shape, v))
            }),
            Some(Frame::Elements([], _)) => true,
            Some(Frame::Elements(shape, _)) => {
                values.iter().all(|v| opened(v) || Self::leaf(shape, v))
            }
            None => false,
        };
    }
}

/// `s.trim()`, without its call when `s` starts and ends with a visible ASCII character (most
/// quantities): nothing is trimmed then.
#[inline(always)]
fn trimmed(s: &str) -> &str {
    match s.as_bytes() {
        [a, .., b] if a.is_ascii_graphic() && b.is_ascii_graphic() => s,
        [a] if a.is_ascii_graphic() => s,
        _ => s.trim(),
    }
}

/// Whether a quantity's text is a whole number of milli units or of a coarser unit (digits and
/// a decimal or binary suffix, `m` included, no fraction or exponent): `RoundUp(-3)` leaves such
/// a quantity as it is. The decoder has already written every quantity in its canonical form.
fn milli_or_coarser(s: &str) -> bool {
    // Bytes: a `char` search is a decoding loop and calls.
    let digits = match s.as_bytes() {
        [b'+' | b'-', rest @ ..] => rest,
        all => all,
    };
    let end = digits.iter().position(|c| !c.is_ascii_digit()).unwrap_or(digits.len());
    end > 0
        && matches!(
            digits.get(end..),
            Some(
                b"" | b"m"
                    | b"k"
                    | b"M"
                    | b"G"
                    | b"T"
                    | b"P"
                    | b"E"
                    | b"Ki"
                    | b"Mi"
                    | b"Gi"
                    | b"Ti"
                    | b"Pi"
                    | b"Ei"
            )
        )
}

#[cfg(test)]
mod tests {
    use super::milli_or_coarser;
    use vap_eval_k8s::library::quantity::Quantity;

    /// A time's text is found canonical exactly when [`super::canonical_time`] gives it back.
    #[test]
    fn canonical_times_are_found_without_writing_them() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut pick = |options: &[&str]| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            options[(x % options.len() as u64) as usize].to_string()
        };
        let mut canonical = 0;
        for _ in 0..40_000 {
            let year =
                pick(&["0000", "0001", "1900", "2000", "2024", "2025", "2100", "9999", "20x5"]);
            let month = pick(&["00", "01", "02", "04", "11", "12", "13", "1"]);
            let day = pick(&["00", "01", "28", "29", "30", "31", "32", "9"]);
            let h = pick(&["00", "09", "23", "24", "7"]);
            let m = pick(&["00", "59", "60"]);
            let sec = pick(&["00", "59", "60"]);
            let frac = pick(&["", "", ".000000", ".123456", ".5", ".1234567", ".12a456", "."]);
            let zone = pick(&["Z", "Z", "+00:00", "-01:30", "z", ""]);
            let sep = pick(&["T", "T", "T", "t", " "]);
            let t = format!("{year}-{month}-{day}{sep}{h}:{m}:{sec}{frac}{zone}");
            for micro in [false, true] {
                let written = super::canonical_time(&t, micro).as_deref() == Some(t.as_str());
                assert_eq!(super::is_canonical_time(&t, micro), written, "{t} {micro}");
                canonical += usize::from(written);
            }
        }
        assert!(canonical > 100, "{canonical}");
    }

    /// An object the reader found nothing to decode in ([`super::Check`]) normalises as the
    /// decoder's walk would; anything it is unsure of leaves the walk to run.
    #[test]
    fn checked_objects_normalise_as_decoded_ones() {
        use crate::environment::KubeVersion;
        let pod = |spec: &str| {
            format!(
                r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","creationTimestamp":"2025-03-14T09:26:53Z","labels":{{"a":"b"}}}},"spec":{spec}}}"#
            )
        };
        let containers = |c: &str| pod(&format!(r#"{{"containers":[{c}]}}"#));
        let cases = [
            (
                containers(
                    r#"{"name":"a","image":"b","resources":{"limits":{"cpu":"100m","memory":"128Mi"}}}"#,
                ),
                true,
            ),
            (containers(r#"{"name":"a","ports":[{"containerPort":80}],"args":["x"]}"#), true),
            (pod(r#"{"containers":[],"x":1}"#), false),
            (pod(r#"{"containers":null}"#), false),
            (containers(r#"{"name":"a","resources":{"limits":{"cpu":"0.5"}}}"#), false),
            (containers(r#"{"name":"a","resources":{"limits":{"cpu":100}}}"#), false),
            (containers(r#"{"name":"a","ports":[{"containerPort":3000000000}]}"#), false),
            (containers(r#"{"name":"a","ports":[{"containerPort":"80"}]}"#), false),
            (containers(r#"{"name":"a","args":[null]}"#), false),
            (containers(r#"{"name":1}"#), false),
            (containers(r#"{"name":{}}"#), false),
            (containers(r#"{"name":"a","env":{}}"#), false),
            (pod(r#"{"containers":[],"overhead":{"cpu":" 1 "}}"#), false),
            (pod(r#"{"containers":[],"terminationGracePeriodSeconds":30}"#), true),
            (pod(r#"{"containers":[],"activeDeadlineSeconds":9000000000}"#), true),
            (pod(r#"{"containers":[],"hostNetwork":true,"nodeSelector":{}}"#), true),
            (pod(r#"{"containers":[],"hostNetwork":"yes"}"#), false),
            (pod(r#"{"containers":[]},"status":{"startTime":"2025-01-01T00:00:00+01:00"}"#), false),
            (pod(r#"{"containers":[]},"status":{"startTime":"2025-01-01T00:00:00Z"}"#), true),
            (r#"{"apiVersion":"v1","kind":"Secret","data":{"k":"aGVsbG8="}}"#.to_string(), true),
            (r#"{"apiVersion":"v1","kind":"Secret","data":{"k":"!!"}}"#.to_string(), false),
            (
                r#"{"kind":"Pod","apiVersion":"v1","spec":{"containers":[{"name":"a"}]}}"#
                    .to_string(),
                true,
            ),
            (
                r#"{"apiVersion":"example.com/v1","kind":"Thing","spec":{"x":null}}"#.to_string(),
                false,
            ),
            (r#"{"apiVersion":"v1","kind":"Pod","metadata":{}}"#.to_string(), true),
        ];
        for (text, clean) in &cases {
            for minor in [30, 33, 37] {
                let version = KubeVersion::new(minor);
                let mut a = crate::admission::yaml::parse_json_object(text).unwrap();
                let ra = super::super::normalize_json(&mut a, text, version, &[], "object");
                let (mut b, decoded) = super::super::read_object(text, version).unwrap();
                assert_eq!(decoded.is_some(), *clean, "{text}");
                let rb = super::super::normalize_json_decoded(
                    &mut b,
                    text,
                    decoded,
                    version,
                    &[],
                    "object",
                );
                assert_eq!(a.to_string(), b.to_string(), "{text}");
                assert_eq!(ra.changes, rb.changes, "{text}");
                assert_eq!(ra.diagnostics, rb.diagnostics, "{text}");
                assert_eq!(ra.unknown_fields, rb.unknown_fields, "{text}");
                assert_eq!(
                    ra.decode_error.map(|e| e.message),
                    rb.decode_error.map(|e| e.message),
                    "{text}"
                );
            }
        }
        // Texts the reader declines stay declined.
        for text in ["[1]", "{\"a\": 1.5}", "{\"a\": 1, \"a\": 2}", " x"] {
            assert!(super::super::read_object(text, KubeVersion::new(33)).is_none());
        }
    }

    /// The shortcut is only taken where `RoundUp(-3)` gives the quantity's own canonical text
    /// back (core/v1 SetDefaults_ResourceList), and never where it changes the value.
    #[test]
    fn milli_or_coarser_quantities_round_to_themselves() {
        for s in [
            "1",
            "0",
            "-2",
            "+3",
            "100m",
            "1500m",
            "-1m",
            "1k",
            "2M",
            "3G",
            "4T",
            "5P",
            "6E",
            "1Ki",
            "512Mi",
            "1Gi",
            "2Ti",
            "3Pi",
            "1Ei",
            "9223372036854775807",
        ] {
            assert!(milli_or_coarser(s), "{s}");
            let q = Quantity::parse(s).unwrap();
            assert_eq!(q.round_up(-3).unwrap().canonical(), q.canonical(), "{s}");
        }
        for s in ["1u", "1n", "0.0001", "1.5", "1e-7", "1e3", ".5", "m", "", "1.0001m", "1Mx"] {
            assert!(!milli_or_coarser(s), "{s}");
        }
    }

    #[test]
    fn quantities_are_trimmed_as_by_trim() {
        for s in [
            "1",
            " 1",
            "1 ",
            " ",
            "",
            "\t2Gi\n",
            "\u{a0}3",
            "3\u{a0}",
            "é",
            "1é",
            "\u{2003}x\u{2003}",
        ] {
            assert_eq!(super::trimmed(s), s.trim(), "{s:?}");
        }
        for s in ["+", "-5", "5-", "1é", "é1", "+é", "", "m"] {
            let want = {
                let d = s.strip_prefix(['+', '-']).unwrap_or(s);
                let end = d.find(|c: char| !c.is_ascii_digit()).unwrap_or(d.len());
                end > 0 && matches!(&d[end..], "" | "m" | "k" | "Ki")
            };
            assert_eq!(milli_or_coarser(s), want, "{s:?}");
        }
    }
}
