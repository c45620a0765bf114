//! Runtime values: what a CEL expression evaluates to.
//!
//! A [`Value<'a>`] *borrows* the input document: a JSON object is a [`Map::Json`] view of the
//! parsed `serde_json::Map`, a JSON array a [`List::Json`] slice, a JSON string a
//! [`Str::Borrowed`]. Nothing is converted up front: a field read is one hash lookup, and a
//! comprehension over a JSON array iterates the borrowed slice. Values built during evaluation
//! own their data behind `Rc`, so cloning a value is always O(1).
//!
//! JSON numbers follow Kubernetes (spec §4.3): integers that fit `i64` are `int`, every other
//! number is `double`; nothing arrives as `uint`.

use indexmap::IndexMap;
use serde_json::Value as Json;
use std::any::Any;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// A string: borrowed from the input document, or owned.
#[derive(Clone)]
pub enum Str<'a> {
    Borrowed(&'a str),
    Owned(Rc<str>),
}

impl<'a> Str<'a> {
    #[inline]
    pub fn as_str(&self) -> &str {
        match self {
            Str::Borrowed(s) => s,
            Str::Owned(s) => s,
        }
    }
}
impl PartialEq for Str<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.as_str() == o.as_str()
    }
}
impl Eq for Str<'_> {}
impl Hash for Str<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}
impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// A timestamp: an instant (Unix seconds + nanoseconds) and the UTC offset it was written with
/// (Go's `time.Time` keeps its location; `string(t)` prints it). Years 1..=9999.
#[derive(Clone, Copy, Debug)]
pub struct Timestamp {
    pub secs: i64,
    pub nanos: u32,
    /// Seconds east of UTC.
    pub offset: i32,
}

/// Seconds between 0001-01-01T00:00:00Z and the Unix epoch, and 9999-12-31T23:59:59Z.
pub const MIN_UNIX: i64 = -62_135_596_800;
pub const MAX_UNIX: i64 = 253_402_300_799;

impl Timestamp {
    pub fn new(secs: i64, nanos: u32) -> Option<Timestamp> {
        if !(MIN_UNIX..=MAX_UNIX).contains(&secs) || nanos >= 1_000_000_000 {
            return None;
        }
        Some(Timestamp { secs, nanos, offset: 0 })
    }
    fn key(&self) -> (i64, u32) {
        (self.secs, self.nanos)
    }
}

/// Up to this many entries, a JSON map is searched linearly rather than hashed (a Kubernetes
/// container has 14 or so, a pod spec 16).
const SMALL_MAP: usize = 16;

/// A list: a borrowed JSON array or an owned vector.
#[derive(Clone)]
pub enum List<'a> {
    Json(&'a [Json]),
    Owned(Rc<Vec<Value<'a>>>),
}

impl<'a> List<'a> {
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            List::Json(a) => a.len(),
            List::Owned(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[inline]
    pub fn get(&self, i: usize) -> Option<Value<'a>> {
        match self {
            List::Json(a) => a.get(i).map(Value::from_json),
            List::Owned(v) => v.get(i).cloned(),
        }
    }
    pub fn iter(&self) -> ListIter<'a, '_> {
        ListIter { list: self, i: 0 }
    }
    pub fn to_vec(&self) -> Vec<Value<'a>> {
        self.iter().collect()
    }
}

pub struct ListIter<'a, 'l> {
    list: &'l List<'a>,
    i: usize,
}
impl<'a> Iterator for ListIter<'a, '_> {
    type Item = Value<'a>;
    #[inline]
    fn next(&mut self) -> Option<Value<'a>> {
        let v = self.list.get(self.i)?;
        self.i += 1;
        Some(v)
    }
}

/// A map key: CEL allows int, uint, bool and string keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key<'a> {
    Int(i64),
    Uint(u64),
    Bool(bool),
    String(Str<'a>),
}

impl<'a> Key<'a> {
    pub fn to_value(&self) -> Value<'a> {
        match self {
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::Uint(*u),
            Key::Bool(b) => Value::Bool(*b),
            Key::String(s) => Value::String(s.clone()),
        }
    }
    /// The key for `v`, or `None` when `v` cannot be a key.
    pub fn from_value(v: &Value<'a>) -> Option<Key<'a>> {
        Some(match v {
            Value::Int(i) => Key::Int(*i),
            Value::Uint(u) => Key::Uint(*u),
            Value::Bool(b) => Key::Bool(*b),
            Value::String(s) => Key::String(s.clone()),
            _ => return None,
        })
    }
}

pub type OwnedMap<'a> = IndexMap<Key<'a>, Value<'a>>;

/// A map: a borrowed JSON object or an owned, insertion-ordered map.
#[derive(Clone)]
pub enum Map<'a> {
    Json(&'a serde_json::Map<String, Json>),
    Owned(Rc<OwnedMap<'a>>),
}

impl<'a> Map<'a> {
    pub fn len(&self) -> usize {
        match self {
            Map::Json(m) => m.len(),
            Map::Owned(m) => m.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// String-key lookup (field selection).
    #[inline]
    pub fn get_str(&self, k: &str) -> Option<Value<'a>> {
        match self {
            Map::Json(m) => json_get(m, k).map(Value::from_json),
            Map::Owned(m) => m.get(&Key::String(Str::Borrowed(k))).cloned(),
        }
    }
    /// Lookup with CEL's key semantics: numeric keys compare by value across int/uint/double.
    /// `Err(())` when the key's type cannot index a map.
    #[allow(clippy::result_unit_err)]
    pub fn get(&self, k: &Value<'_>) -> Result<Option<Value<'a>>, ()> {
        match k {
            Value::String(s) => Ok(self.get_str(s.as_str())),
            Value::Int(_) | Value::Uint(_) | Value::Double(_) | Value::Bool(_) => {
                let Map::Owned(m) = self else {
                    return Ok(None);
                };
                let probe = |key: Key<'static>| m.get(&key).cloned();
                Ok(match *k {
                    Value::Bool(b) => probe(Key::Bool(b)),
                    Value::Int(i) => probe(Key::Int(i))
                        .or_else(|| u64::try_from(i).ok().and_then(|u| probe(Key::Uint(u)))),
                    Value::Uint(u) => probe(Key::Uint(u))
                        .or_else(|| i64::try_from(u).ok().and_then(|i| probe(Key::Int(i)))),
                    Value::Double(d) => {
                        let mut r = None;
                        if let Some(i) = double_to_i64_lossless(d) {
                            r = probe(Key::Int(i));
                        }
                        if r.is_none() {
                            if let Some(u) = double_to_u64_lossless(d) {
                                r = probe(Key::Uint(u));
                            }
                        }
                        r
                    }
                    _ => None,
                })
            }
            _ => Err(()),
        }
    }
    /// Entries in iteration order (JSON document order, or insertion order).
    pub fn iter(&self) -> Box<dyn Iterator<Item = (Value<'a>, Value<'a>)> + '_> {
        match self {
            Map::Json(m) => Box::new(
                m.iter()
                    .map(|(k, v)| (Value::String(Str::Borrowed(k.as_str())), Value::from_json(v))),
            ),
            Map::Owned(m) => Box::new(m.iter().map(|(k, v)| (k.to_value(), v.clone()))),
        }
    }
    pub fn keys(&self) -> Vec<Value<'a>> {
        match self {
            Map::Json(m) => m.keys().map(|k| Value::String(Str::Borrowed(k.as_str()))).collect(),
            Map::Owned(m) => m.keys().map(Key::to_value).collect(),
        }
    }
}

/// The member `k` of a JSON object. Kubernetes objects are mostly small maps: comparing a few
/// keys is cheaper than hashing the probe (SipHash), especially in wasm. Keys are unique, so the
/// first equal key is the entry `get` would find.
#[inline]
pub fn json_get<'a>(m: &'a serde_json::Map<String, Json>, k: &str) -> Option<&'a Json> {
    if m.len() <= SMALL_MAP {
        let k = k.as_bytes();
        m.iter().find(|(key, _)| bytes_eq(key.as_bytes(), k)).map(|(_, v)| v)
    } else {
        m.get(k)
    }
}

/// `a == b` for short byte strings (map keys): the lengths, then whole words, the last one
/// overlapping, instead of a call of `memcmp` (a byte loop in wasm).
#[inline(always)]
fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    fn w8(s: &[u8], i: usize) -> u64 {
        let mut w = [0; 8];
        w.copy_from_slice(&s[i..i + 8]);
        u64::from_ne_bytes(w)
    }
    fn w4(s: &[u8], i: usize) -> u32 {
        let mut w = [0; 4];
        w.copy_from_slice(&s[i..i + 4]);
        u32::from_ne_bytes(w)
    }
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            if w8(a, i) != w8(b, i) {
                return false;
            }
            i += 8;
        }
        w8(a, n - 8) == w8(b, n - 8)
    } else if n >= 4 {
        w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4)
    } else {
        a == b
    }
}

/// The characters (code points) of `s`, as `s.chars().count()`: the bytes that are not UTF-8
/// continuation bytes (`10xxxxxx`), counted 8 at a time (std counts short strings a byte at a
/// time).
#[inline]
pub fn char_count(s: &str) -> usize {
    let b = s.as_bytes();
    let mut cont = 0;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0; 8];
        w.copy_from_slice(c);
        let x = u64::from_ne_bytes(w);
        // Bit 7 of a byte set and bit 6 clear (shifting left moves each byte's bit 6 into its
        // bit 7; carries go into the next byte's bit 0).
        cont += (x & !(x << 1) & 0x8080_8080_8080_8080).count_ones() as usize;
    }
    cont += chunks.remainder().iter().filter(|&&c| (c as i8) < -0x40).count();
    b.len() - cont
}

/// 2^63 and -2^63 as doubles: the int64 range bounds.
pub const TWO_63: f64 = 9_223_372_036_854_775_808.0;
pub const TWO_63_NEG: f64 = -9_223_372_036_854_775_808.0;
/// 2^64 as a double: the uint64 range bound.
pub const TWO_64: f64 = 18_446_744_073_709_551_616.0;

pub fn double_to_i64_lossless(d: f64) -> Option<i64> {
    if d.fract() == 0.0 && (TWO_63_NEG..TWO_63).contains(&d) {
        Some(d as i64)
    } else {
        None
    }
}
pub fn double_to_u64_lossless(d: f64) -> Option<u64> {
    if d.fract() == 0.0 && (0.0..TWO_64).contains(&d) {
        Some(d as u64)
    } else {
        None
    }
}

/// A value of a type registered by a library (Kubernetes `Quantity`, `IP`, `CIDR`, `URL`,
/// `Semver`, `NamedFormat`, authorizer objects). Implementations live with their library.
pub trait OpaqueValue {
    /// The CEL type name, e.g. `kubernetes.Quantity`, `net.IP`.
    fn type_name(&self) -> &str;
    /// CEL `==` against another opaque value (only called when both type names are equal).
    fn equals(&self, other: &dyn OpaqueValue) -> bool;
    /// CEL `==` with this value on the left and a non-null right side (cel-go
    /// `lhs.Equal(rhs)`). `Err` is cel-go's error value. Default, as every Kubernetes library
    /// type does it: `no such overload` unless `other` has the same type.
    fn equal_to(&self, other: &Value<'_>) -> Result<bool, String> {
        match other {
            Value::Opaque(o) if o.type_name() == self.type_name() => Ok(self.equals(&**o)),
            _ => Err("no such overload".to_string()),
        }
    }
    /// The string form used when the value is converted to JSON or formatted.
    fn display(&self) -> String;
    /// `size()` for the cost model (cel-go `traits.Sizer`); `None`: not a sizer (size 1).
    fn size(&self) -> Option<u64> {
        None
    }
    fn as_any(&self) -> &dyn Any;
}

/// A CEL value. Covariant in `'a`: a `Value<'static>` (plan-time constant) is a `Value<'a>`.
#[derive(Clone)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Str<'a>),
    Bytes(Rc<[u8]>),
    /// Go `time.Duration`: nanoseconds.
    Duration(i64),
    /// Behind an `Rc`: inline, its 16 bytes made every value 24 bytes in wasm (16 now), and
    /// every node returns one through memory.
    Timestamp(Rc<Timestamp>),
    List(List<'a>),
    Map(Map<'a>),
    /// A type value, by its CEL name (`int`, `list`, `google.protobuf.Duration`, `net.IP`, …).
    Type(Rc<str>),
    /// `optional_type`: `None` is `optional.none()`.
    Optional(Option<Rc<Value<'a>>>),
    Opaque(Rc<dyn OpaqueValue>),
}

// Two words in wasm: the timestamp is behind an `Rc` for it.
#[cfg(target_arch = "wasm32")]
const _: () = assert!(std::mem::size_of::<Value<'static>>() == 16);

impl fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug_string())
    }
}

impl<'a> Value<'a> {
    /// A view of a JSON value (no copy of aggregates or strings).
    #[inline]
    pub fn from_json(j: &'a Json) -> Value<'a> {
        match j {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::String(Str::Borrowed(s)),
            Json::Array(a) => Value::List(List::Json(a)),
            Json::Object(m) => Value::Map(Map::Json(m)),
        }
    }

    pub fn timestamp(t: Timestamp) -> Value<'a> {
        Value::Timestamp(Rc::new(t))
    }

    pub fn string(s: impl Into<Rc<str>>) -> Value<'a> {
        Value::String(Str::Owned(s.into()))
    }
    pub fn list(v: Vec<Value<'a>>) -> Value<'a> {
        Value::List(List::Owned(Rc::new(v)))
    }
    pub fn map(m: OwnedMap<'a>) -> Value<'a> {
        Value::Map(Map::Owned(Rc::new(m)))
    }
    pub fn type_value(name: &str) -> Value<'a> {
        Value::Type(Rc::from(name))
    }

    /// The CEL type name of the value (`type(x)`), as cel-go prints it.
    pub fn type_name(&self) -> &str {
        match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Type(_) => "type",
            Value::Optional(_) => "optional_type",
            Value::Opaque(o) => o.type_name(),
        }
    }

    /// cel-go `traits.Sizer` size, used by the cost model: code points of strings, bytes,
    /// elements; 1 for everything that is not a sizer.
    pub fn cost_size(&self) -> u64 {
        match self {
            Value::String(s) => char_count(s.as_str()) as u64,
            Value::Bytes(b) => b.len() as u64,
            Value::List(l) => l.len() as u64,
            Value::Map(m) => m.len() as u64,
            Value::Opaque(o) => o.size().unwrap_or(1),
            _ => 1,
        }
    }

    /// CEL heterogeneous equality (cel-go `Equal`): numbers compare by value across int, uint
    /// and double; values of different kinds are unequal; NaN equals nothing.
    pub fn equals(&self, other: &Value<'_>) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (String(a), String(b)) => a.as_str() == b.as_str(),
            (Bytes(a), Bytes(b)) => a == b,
            (Duration(a), Duration(b)) => a == b,
            (Timestamp(a), Timestamp(b)) => a.key() == b.key(),
            (Type(a), Type(b)) => a == b,
            (List(a), List(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.equals(&y))
            }
            (Map(a), Map(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(k, v)| match b.get(&k) {
                        Ok(Some(w)) => v.equals(&w),
                        _ => false,
                    })
            }
            (Optional(a), Optional(b)) => match (a, b) {
                (None, None) => true,
                (Some(x), Some(y)) => x.equals(y),
                _ => false,
            },
            (Opaque(a), Opaque(b)) => a.type_name() == b.type_name() && a.equals(&**b),
            _ => match numeric_cmp(self, other) {
                Some(o) => o == Ordering::Equal,
                None => false,
            },
        }
    }

    /// Conversion to JSON for output: numbers stay numbers, bytes become base64, durations and
    /// timestamps their CEL string form, opaque values their string form, type values their name.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Uint(u) => Json::from(*u),
            Value::String(s) => Json::String(s.as_str().to_string()),
            Value::List(List::Json(a)) => Json::Array(a.to_vec()),
            Value::List(l) => Json::Array(l.iter().map(|v| v.to_json()).collect()),
            Value::Map(Map::Json(m)) => Json::Object((*m).clone()),
            Value::Optional(None) => Json::Null,
            Value::Optional(Some(v)) => v.to_json(),
            _ => self.other_to_json(),
        }
    }

    /// [`to_json`](Self::to_json) of the kinds a request's JSON does not hold, out of line: the
    /// first evaluation compiles their formatting only when a result has one (bench/README.md,
    /// "The first evaluate(), seventh round").
    #[inline(never)]
    fn other_to_json(&self) -> Json {
        match self {
            Value::Double(d) => serde_json::Number::from_f64(*d)
                .map(Json::Number)
                .unwrap_or_else(|| Json::String(format_double(*d))),
            Value::Bytes(b) => {
                use base64::Engine;
                Json::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Value::Duration(d) => Json::String(format_duration(*d)),
            Value::Timestamp(t) => Json::String(format_timestamp(t)),
            Value::Map(m) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m.iter() {
                    let key = match &k {
                        Value::String(s) => s.as_str().to_string(),
                        other => other.debug_string(),
                    };
                    out.insert(key, v.to_json());
                }
                Json::Object(out)
            }
            Value::Type(t) => Json::String(t.to_string()),
            Value::Opaque(o) => Json::String(o.display()),
            // The kinds `to_json` converts itself.
            _ => self.to_json(),
        }
    }

    /// A CEL-literal-like rendering for diagnostics and tests (`"a"`, `1u`, `[1, 2]`).
    pub fn debug_string(&self) -> String {
        let mut s = String::new();
        self.write_debug(&mut s);
        s
    }

    fn write_debug(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => write!(out, "{b}").unwrap_or(()),
            Value::Int(i) => write!(out, "{i}").unwrap_or(()),
            Value::Uint(u) => write!(out, "{u}u").unwrap_or(()),
            Value::Double(d) => out.push_str(&format_double(*d)),
            Value::String(s) => write!(out, "{:?}", s.as_str()).unwrap_or(()),
            Value::Bytes(b) => write!(out, "b{:?}", String::from_utf8_lossy(b)).unwrap_or(()),
            Value::Duration(d) => {
                write!(out, "duration(\"{}\")", format_duration(*d)).unwrap_or(())
            }
            Value::Timestamp(t) => {
                write!(out, "timestamp(\"{}\")", format_timestamp(t)).unwrap_or(())
            }
            Value::List(l) => {
                out.push('[');
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write_debug(out);
                }
                out.push(']');
            }
            Value::Map(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write_debug(out);
                    out.push_str(": ");
                    v.write_debug(out);
                }
                out.push('}');
            }
            Value::Type(t) => out.push_str(t),
            Value::Optional(None) => out.push_str("optional.none()"),
            Value::Optional(Some(v)) => {
                out.push_str("optional.of(");
                v.write_debug(out);
                out.push(')');
            }
            Value::Opaque(o) => out.push_str(&o.display()),
        }
    }

    /// How a value prints inside an error message where cel-go uses `%v` (`no such key: a`).
    pub fn error_string(&self) -> String {
        match self {
            Value::String(s) => s.as_str().to_string(),
            Value::Uint(u) => u.to_string(),
            Value::Double(d) => format_double(*d),
            other => other.debug_string(),
        }
    }
}

/// Cross-type numeric ordering (cel-go with `CrossTypeNumericComparisons`). `None` when either
/// side is not a number or a NaN is involved.
pub fn numeric_cmp(a: &Value<'_>, b: &Value<'_>) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Uint(x), Uint(y)) => Some(x.cmp(y)),
        (Double(x), Double(y)) => x.partial_cmp(y),
        (Int(x), Uint(y)) => Some(if *x < 0 { Ordering::Less } else { (*x as u64).cmp(y) }),
        (Uint(x), Int(y)) => Some(if *y < 0 { Ordering::Greater } else { x.cmp(&(*y as u64)) }),
        (Int(x), Double(y)) => cmp_i64_f64(*x, *y),
        (Double(x), Int(y)) => cmp_i64_f64(*y, *x).map(Ordering::reverse),
        (Uint(x), Double(y)) => cmp_u64_f64(*x, *y),
        (Double(x), Uint(y)) => cmp_u64_f64(*y, *x).map(Ordering::reverse),
        _ => None,
    }
}

// cel-go `compareIntDouble` / `compareUintDouble` (common/types/compare.go): out-of-range doubles
// order outside the integer range, everything else compares *as doubles*, so the comparison is
// lossy near 2^63 and 2^64 (`9223372036854775807 >= 9223372036854775808.0` is true), as the
// cel-spec `comparisons/*_lossy_double` tests pin.
fn cmp_i64_f64(i: i64, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < TWO_63_NEG {
        return Some(Ordering::Greater);
    }
    if d > TWO_63 {
        return Some(Ordering::Less);
    }
    (i as f64).partial_cmp(&d)
}
fn cmp_u64_f64(u: u64, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < 0.0 {
        return Some(Ordering::Greater);
    }
    if d > TWO_64 {
        return Some(Ordering::Less);
    }
    (u as f64).partial_cmp(&d)
}

/// Ordering for `<`, `<=`, `>`, `>=` and `sort()`: same-kind scalars plus cross-type numbers.
pub fn compare(a: &Value<'_>, b: &Value<'_>) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Bool(x), Bool(y)) => Some(x.cmp(y)),
        (String(x), String(y)) => Some(x.as_str().cmp(y.as_str())),
        (Bytes(x), Bytes(y)) => Some(x.cmp(y)),
        (Duration(x), Duration(y)) => Some(x.cmp(y)),
        (Timestamp(x), Timestamp(y)) => Some(x.key().cmp(&y.key())),
        _ => numeric_cmp(a, b),
    }
}

/// Go `strconv.FormatFloat(d, 'g', -1, 64)` as cel-go's `string(double)` prints it:
/// `1`, `1.5`, `1e+06`, `1e-05`, `+Inf`, `NaN`.
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Shortest round-trip digits via `{:e}`: "d.ddde[-]x".
    let e = format!("{:e}", d);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let ndig = digits.len() as i32;
    // Go's %g with shortest precision uses the exponent form when exp < -4 || exp >= 6
    // (`eprec = 6` for shortest in strconv.FormatFloat).
    let eprec = 6;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if exp < -4 || exp >= eprec {
        out.push_str(&digits[..1]);
        if ndig > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        out.push_str(&a.to_string());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let int_len = (exp + 1) as usize;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in 0..(int_len - digits.len()) {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

/// cel-go `string(duration)`: `strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"`.
pub fn format_duration(ns: i64) -> String {
    let secs = (ns / 1_000_000_000) as f64 + (ns % 1_000_000_000) as f64 / 1e9;
    format!("{}s", secs)
}

/// Go `t.Format(time.RFC3339Nano)` in the timestamp's own offset.
pub fn format_timestamp(t: &Timestamp) -> String {
    let local = t.secs + t.offset as i64;
    let (y, mo, d, h, mi, s) = civil_from_unix(local);
    let mut out = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}");
    if t.nanos != 0 {
        let frac = format!("{:09}", t.nanos);
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    if t.offset == 0 {
        out.push('Z');
    } else {
        let sign = if t.offset < 0 { '-' } else { '+' };
        let a = t.offset.unsigned_abs();
        out.push_str(&format!("{sign}{:02}:{:02}", a / 3600, (a / 60) % 60));
    }
    out
}

/// Days since the Unix epoch → (year, month 1..=12, day 1..=31) (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since the Unix epoch.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix seconds → (year, month, day, hour, minute, second).
pub fn civil_from_unix(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    (y, m, d, (rem / 3600) as u32, ((rem / 60) % 60) as u32, (rem % 60) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_g_formatting() {
        // Go strconv.FormatFloat(f, 'g', -1, 64).
        for (d, s) in [
            (1.0, "1"),
            (1.5, "1.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (1e20, "1e+20"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
            (1.0 / 3.0, "0.3333333333333333"),
            (f64::INFINITY, "+Inf"),
        ] {
            assert_eq!(format_double(d), s, "{d}");
        }
    }

    #[test]
    fn duration_and_timestamp_strings() {
        assert_eq!(format_duration(60_000_000_000), "60s");
        assert_eq!(format_duration(1_500_000_000), "1.5s");
        assert_eq!(format_duration(1), "0.000000001s");
        assert_eq!(format_duration(-1_500_000_000), "-1.5s");
        let t = Timestamp::new(1_234_567_890, 500_000_000).unwrap();
        assert_eq!(format_timestamp(&t), "2009-02-13T23:31:30.5Z");
        assert_eq!(days_from_civil(2009, 2, 13), 1_234_567_890 / 86400);
    }

    #[test]
    fn char_count_and_bytes_eq_as_std() {
        let words = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "abcde",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "é",
            "aé",
            "日本語",
            "ab日本語cd",
            "🦀🦀🦀",
            "x🦀yz日本語abcdefé",
            "abcdefgé",
            "abcdefghé",
        ];
        for n in 0..40 {
            for at in 0..=n {
                for ch in ["é", "日", "🦀"] {
                    let s = format!("{}{ch}{}", "a".repeat(at), "b".repeat(n - at));
                    assert_eq!(char_count(&s), s.chars().count(), "{s}");
                }
            }
        }
        for a in words {
            assert_eq!(char_count(a), a.chars().count(), "{a}");
            for b in words {
                assert_eq!(bytes_eq(a.as_bytes(), b.as_bytes()), a == b, "{a} {b}");
            }
            // One byte changed at each position.
            for i in 0..a.len() {
                let mut c = a.as_bytes().to_vec();
                c[i] ^= 1;
                assert!(!bytes_eq(a.as_bytes(), &c), "{a} {i}");
            }
        }
    }

    #[test]
    fn json_numbers_are_int_or_double() {
        let j: Json = serde_json::from_str(r#"[1, 1.0, 1e3, 18446744073709551615]"#).unwrap();
        let Value::List(l) = Value::from_json(&j) else { panic!() };
        let v = l.to_vec();
        assert!(matches!(v[0], Value::Int(1)));
        assert!(matches!(v[1], Value::Double(_)));
        assert!(matches!(v[2], Value::Double(_)));
        assert!(matches!(v[3], Value::Double(_)));
        assert!(v[0].equals(&v[1]));
    }
}
