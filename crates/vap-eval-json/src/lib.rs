//! A one-pass reader of plain JSON texts into `serde_json::Value`: vap-eval's fast path for
//! request objects (`vap_eval::admission::yaml::parse_json_object`).
//!
//! It reads only what vap-eval's YAML-with-positions loader would give the same value for, and
//! declines (`None`) everything else, in the same pass: a number with a fraction or an
//! exponent, beyond int64 or `-0`; an object that repeats a key; nesting deeper than the
//! loader's limit (an argument); any syntax error. Objects are collected on a stack and built
//! with their exact size (no rehashing as they grow), strings are copied once (an escaped one
//! is unescaped in a buffer reused for the whole text), integers are read directly. No
//! recursion: the depth is bounded by the limit, not by the stack.
//!
//! [`read_with`] is the same reading, telling a [`Schema`] each collection as it opens and,
//! with its members, as it closes: vap-eval checks a request object against its Go type while
//! it is read, instead of walking the tree afterwards.
//!
//! Its own crate so that the package's wasm profile can build it for speed (Cargo.toml's
//! `[profile.wasm.package.vap-eval-json]`) where vap-eval itself is built for size.
//!
//! Escapes are read as Go's `encoding/json` reads them (the apiserver's and kubectl's
//! decoder): a surrogate pair (`\ud83d\ude00`) is one character, and a surrogate escape that
//! is not half of a pair (`\ud800`) is U+FFFD.
//!
//! [`parse`] reads any JSON text, with serde_json's values and error messages: vap-eval's one
//! JSON text parser besides [`read`] (schema bundles, JavaScript values, literals), so that
//! serde_json's own text parser is not in the wasm module.

pub mod names;
pub mod ser;

use serde_json::{Map, Number, Value};
use std::{fmt, ptr};

/// The value of the JSON `text` (any JSON value, with JSON whitespace around it) when all its
/// numbers are int64, no object repeats a key and collections nest at most `max_depth` deep;
/// `None` otherwise (see the crate).
pub fn read(text: &str, max_depth: usize) -> Option<Value> {
    read_with(text, max_depth, None)
}

/// What a [`Schema`] is told of a text [`read_with`] reads: each collection with members or
/// elements as it opens and, when it closes, its members (the schema keeps its own stack of the
/// open collections). A root that is a scalar or empty is not told.
pub trait Schema {
    /// A collection opens (an object when `object`): the value of the member `key` of the
    /// object open, an element of the array open (`None`), or the root (`None`).
    fn open(&mut self, key: Option<&str>, object: bool);
    /// The collection last opened closes: an object's keys and values, an array's elements
    /// (no keys). Its values with members or elements were opened and closed before.
    fn close(&mut self, keys: &[String], values: &[Value]);
}

/// [`read`], telling `schema` what it reads (the request fast path checks an object against
/// its type as it reads it). One copy of the reader for both: a schema is two `dyn` calls per
/// collection, and without one a branch.
#[inline(never)]
pub fn read_with(
    text: &str,
    max_depth: usize,
    mut schema: Option<&mut dyn Schema>,
) -> Option<Value> {
    let b = text.as_bytes();
    let mut scratch = String::new();
    // Finished values of the open collections, the keys of the open objects, and for each
    // open collection where its values (and keys) start: `Some(keys start)` for an object.
    // With room for a usual object's (the benchmark Deployment's peaks: 60 values, 49 keys,
    // 12 levels), so that they do not grow from empty, a copy at each doubling.
    let mut values: Vec<Value> = Vec::with_capacity(64);
    let mut keys: Vec<String> = Vec::with_capacity(64);
    let mut open: Vec<(usize, Option<usize>)> = Vec::with_capacity(16);
    let mut i = ws(b, 0);
    // Whether a member's key comes first (set where a collection opens or goes on). One place
    // reads the keys, so that the key's reading is inlined once.
    let mut member = false;
    loop {
        if member {
            i = key(text, i, &mut keys, &mut scratch)?;
        }
        // A value starts at `i`; it is pushed onto `values` where it is made (not moved there
        // from a local afterwards).
        match *b.get(i)? {
            c @ (b'{' | b'[') => {
                if open.len() >= max_depth {
                    return None;
                }
                i = ws(b, i + 1);
                match (c, *b.get(i)?) {
                    (b'{', b'}') => {
                        i += 1;
                        values.push(Value::Object(Map::new()));
                    }
                    (b'[', b']') => {
                        i += 1;
                        values.push(Value::Array(Vec::new()));
                    }
                    _ => {
                        let object = c == b'{';
                        if let Some(s) = schema.as_deref_mut() {
                            // The member's key when the collection open is an object.
                            let key = match open.last() {
                                Some((_, Some(_))) => keys.last().map(String::as_str),
                                _ => None,
                            };
                            s.open(key, object);
                        }
                        open.push((values.len(), object.then_some(keys.len())));
                        member = object;
                        continue;
                    }
                }
            }
            b'"' => {
                let (s, end) = string_at(text, i, &mut scratch)?;
                i = end;
                values.push(Value::String(s));
            }
            b't' if b[i..].starts_with(b"true") => {
                i += 4;
                values.push(Value::Bool(true));
            }
            b'f' if b[i..].starts_with(b"false") => {
                i += 5;
                values.push(Value::Bool(false));
            }
            b'n' if b[i..].starts_with(b"null") => {
                i += 4;
                values.push(Value::Null);
            }
            _ => {
                let (n, end) = int(b, i)?;
                i = end;
                values.push(Value::Number(n));
            }
        }
        // The value on top of `values` is complete: it ends the text, or its collection goes on
        // or closes (and is then the complete value on top).
        loop {
            i = ws(b, i);
            let Some(&(start, keys_start)) = open.last() else {
                // The root value, alone on the stack.
                return if i == b.len() { values.pop() } else { None };
            };
            match (*b.get(i)?, keys_start) {
                (b',', keys_start) => {
                    i = ws(b, i + 1);
                    member = keys_start.is_some();
                    break;
                }
                (b'}', Some(keys_start)) => {
                    if let Some(s) = schema.as_deref_mut() {
                        s.close(keys.get(keys_start..)?, values.get(start..)?);
                    }
                    object(&mut keys, keys_start, &mut values, start, false)?;
                }
                (b']', None) => {
                    if let Some(s) = schema.as_deref_mut() {
                        s.close(&[], values.get(start..)?);
                    }
                    let items = values.split_off(start);
                    values.push(Value::Array(items));
                }
                _ => return None,
            }
            i += 1;
            open.pop();
        }
    }
}

/// serde_json's nesting limit as [`parse`]'s `max_depth`: a 128th nested collection is an
/// error ("recursion limit exceeded").
pub const MAX_DEPTH: usize = 127;

/// A syntax error of [`parse`]: serde_json's message and its location (line and column from
/// 1, the column in bytes, as serde_json counts them), shown as serde_json shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub message: &'static str,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at line {} column {}", self.message, self.line, self.column)
    }
}

const EOF_VALUE: &str = "EOF while parsing a value";
const EOF_LIST: &str = "EOF while parsing a list";
const EOF_OBJECT: &str = "EOF while parsing an object";
const EOF_STRING: &str = "EOF while parsing a string";

/// [`parse`] with serde_json's nesting limit ([`MAX_DEPTH`]): `serde_json::from_str::<Value>`.
pub fn from_str(text: &str) -> Result<Value, Error> {
    parse(text, MAX_DEPTH)
}

/// The value of the JSON text `text` as `serde_json::from_str::<Value>` (without its
/// `float_roundtrip` and `arbitrary_precision` features) reads it, with its error messages and
/// locations, nesting at most `max_depth` deep; and, where serde_json differs from Go's
/// `encoding/json` (the apiserver's decoder), as Go reads it:
/// - a number with a fraction or an exponent, or an integer beyond u64 (or below i64), is the
///   double nearest to it (`strconv.ParseFloat`, Rust's `str::parse`), where serde_json's
///   own float parse is sometimes one bit off; beyond the doubles it is an error in both;
/// - a surrogate escape that is not half of a pair is U+FFFD (serde_json: an error).
///
/// An object that repeats a key keeps the last value at the first one's place (serde_json's
/// `preserve_order` map; Go's maps keep the last value too). No recursion.
pub fn parse(text: &str, max_depth: usize) -> Result<Value, Error> {
    parse_at(text, max_depth).map_err(|(message, i)| {
        // serde_json's position: just after the offending byte, or the end of the text.
        let at = (i + 1).min(text.len());
        let b = &text.as_bytes()[..at];
        let line_start = b.iter().rposition(|&c| c == b'\n').map_or(0, |n| n + 1);
        let line = 1 + b[..line_start].iter().filter(|&&c| c == b'\n').count();
        Error { message, line, column: at - line_start }
    })
}

/// [`parse`]'s reading; an error is its message and the offset of the offending byte (the
/// text's length at its end).
fn parse_at(text: &str, max_depth: usize) -> Result<Value, (&'static str, usize)> {
    let b = text.as_bytes();
    let mut scratch = String::new();
    // As in `read`.
    let mut values: Vec<Value> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    let mut open: Vec<(usize, Option<usize>)> = Vec::new();
    let mut i = ws(b, 0);
    loop {
        let mut value = match *b.get(i).ok_or((EOF_VALUE, i))? {
            c @ (b'{' | b'[') => {
                if open.len() >= max_depth {
                    return Err(("recursion limit exceeded", i));
                }
                let object = c == b'{';
                i = ws(b, i + 1);
                match b.get(i) {
                    None => return Err((if object { EOF_OBJECT } else { EOF_LIST }, i)),
                    Some(b'}') if object => {
                        i += 1;
                        Value::Object(Map::new())
                    }
                    Some(b']') if !object => {
                        i += 1;
                        Value::Array(Vec::new())
                    }
                    Some(_) => {
                        open.push((values.len(), object.then_some(keys.len())));
                        if object {
                            i = member_key(text, i, &mut keys, &mut scratch)?;
                        }
                        continue;
                    }
                }
            }
            b'"' => {
                let (s, end) =
                    string(text, i, &mut scratch).ok_or_else(|| string_error(b, i + 1))?;
                i = end;
                Value::String(s)
            }
            b't' => {
                i = ident(b, i, b"true")?;
                Value::Bool(true)
            }
            b'f' => {
                i = ident(b, i, b"false")?;
                Value::Bool(false)
            }
            b'n' => {
                i = ident(b, i, b"null")?;
                Value::Null
            }
            b'-' | b'0'..=b'9' => {
                let (n, end) = number(text, i)?;
                i = end;
                Value::Number(n)
            }
            _ => return Err(("expected value", i)),
        };
        // `value` is complete: it ends the text or joins its collection, which may close.
        loop {
            i = ws(b, i);
            let Some(&(start, keys_start)) = open.last() else {
                return if i == b.len() { Ok(value) } else { Err(("trailing characters", i)) };
            };
            values.push(value);
            match (b.get(i), keys_start) {
                (None, Some(_)) => return Err((EOF_OBJECT, i)),
                (None, None) => return Err((EOF_LIST, i)),
                (Some(b','), _) => {
                    i = ws(b, i + 1);
                    match (b.get(i), keys_start) {
                        (None, _) => return Err((EOF_VALUE, i)),
                        (Some(b'}'), Some(_)) | (Some(b']'), None) => {
                            return Err(("trailing comma", i))
                        }
                        (Some(_), Some(_)) => i = member_key(text, i, &mut keys, &mut scratch)?,
                        (Some(_), None) => {}
                    }
                    break;
                }
                (Some(b'}'), Some(keys_start)) => {
                    // With `last_wins`, always `Some`.
                    let _ = object(&mut keys, keys_start, &mut values, start, true);
                    value = values.pop().unwrap_or_default();
                }
                (Some(b']'), None) => value = Value::Array(values.split_off(start)),
                (Some(_), Some(_)) => return Err(("expected `,` or `}`", i)),
                (Some(_), None) => return Err(("expected `,` or `]`", i)),
            }
            i += 1;
            open.pop();
        }
    }
}

/// [`key`] with [`parse`]'s errors; `i` is not the end of the text.
fn member_key(
    text: &str,
    i: usize,
    keys: &mut Vec<String>,
    scratch: &mut String,
) -> Result<usize, (&'static str, usize)> {
    let b = text.as_bytes();
    if b[i] != b'"' {
        return Err(("key must be a string", i));
    }
    let (k, end) = string(text, i, scratch).ok_or_else(|| string_error(b, i + 1))?;
    let j = ws(b, end);
    match b.get(j) {
        Some(b':') => {}
        Some(_) => return Err(("expected `:`", j)),
        None => return Err((EOF_OBJECT, j)),
    }
    keys.push(k);
    Ok(ws(b, j + 1))
}

/// Why [`string`] failed on the string whose contents start at `j`.
fn string_error(b: &[u8], mut j: usize) -> (&'static str, usize) {
    loop {
        match b.get(j) {
            None => return (EOF_STRING, b.len()),
            Some(b'\\') => match b.get(j + 1) {
                None => return (EOF_STRING, b.len()),
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                Some(b'u') if hex4(b, j + 2).is_some() => j += 6,
                Some(b'u') if b.len() < j + 6 => return (EOF_STRING, b.len()),
                Some(b'u') => return ("invalid escape", j + 5),
                Some(_) => return ("invalid escape", j + 1),
            },
            Some(&c) if c < 0x20 => {
                return ("control character (\\u0000-\\u001F) found while parsing a string", j)
            }
            // Not reached: the string ends well.
            Some(b'"') => return (EOF_STRING, j),
            Some(_) => j += 1,
        }
    }
}

/// The end of `word` (`true`, `false`, `null`) at `i`.
fn ident(b: &[u8], i: usize, word: &[u8]) -> Result<usize, (&'static str, usize)> {
    for (n, &c) in word.iter().enumerate() {
        match b.get(i + n) {
            None => return Err((EOF_VALUE, b.len())),
            Some(&d) if d != c => return Err(("expected ident", i + n)),
            Some(_) => {}
        }
    }
    Ok(i + word.len())
}

/// The number at `i` (a `-` or a digit there) as [`parse`] reads it, and its end: an integer
/// is a u64 or (negative) an i64 where it fits, anything else the nearest double.
fn number(text: &str, i: usize) -> Result<(Number, usize), (&'static str, usize)> {
    let b = text.as_bytes();
    let digits = |mut j: usize| -> Result<usize, (&'static str, usize)> {
        match b.get(j) {
            None => return Err((EOF_VALUE, j)),
            Some(b'0'..=b'9') => {}
            Some(_) => return Err(("invalid number", j)),
        }
        while let Some(b'0'..=b'9') = b.get(j) {
            j += 1;
        }
        Ok(j)
    };
    let negative = b[i] == b'-';
    let first = i + usize::from(negative);
    let mut j = digits(first)?;
    if b[first] == b'0' && j > first + 1 {
        return Err(("invalid number", first + 1)); // a leading zero
    }
    let integer = !matches!(b.get(j), Some(b'.' | b'e' | b'E'));
    if b.get(j) == Some(&b'.') {
        j = digits(j + 1)?;
    }
    if let Some(b'e' | b'E') = b.get(j) {
        j += 1;
        if let Some(b'+' | b'-') = b.get(j) {
            j += 1;
        }
        j = digits(j)?;
    }
    let s = &text[i..j];
    if integer {
        if let Ok(n) = s.parse::<u64>() {
            return Ok((n.into(), j));
        }
        // `-0` is a double, as in serde_json.
        if let Ok(n @ ..=-1) = s.parse::<i64>() {
            return Ok((n.into(), j));
        }
    }
    match s.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(n) => Ok((n, j)),
        None => Err(("number out of range", j - 1)),
    }
}

/// The members `keys[keys_start..]`, `values[start..]` (drained) as an object, pushed onto
/// `values`; when a key repeats, `None`, or with `last_wins` its last value at its first place
/// (serde_json's map, and Go's). Both readers' one map building, out of line, so that the map's insertion is
/// compiled once and inlined here (shared by two callers, it was not, and `read`, the request
/// path, was ~3 % slower).
#[inline(never)]
fn object(
    keys: &mut Vec<String>,
    keys_start: usize,
    values: &mut Vec<Value>,
    start: usize,
    last_wins: bool,
) -> Option<()> {
    let n = values.len() - start;
    if keys.len() - keys_start != n {
        return None; // not reached: each key is followed by its value
    }
    let mut map = Map::with_capacity(n);
    // The members moved out of the two stacks' buffers one by one, not by two `Drain`s zipped
    // (their checks at each step and their drop were ~1 % of the reader in wasm).
    // SAFETY: the lengths are cut first, so the `n` members past them, still initialised in
    // the buffers, are owned here: each is read (moved) once, or dropped in place when a key
    // repeats; `insert` does not touch the two vectors. A panic in `insert` (only an
    // allocation failure, which aborts) would leak the members not yet moved, not free them
    // twice.
    unsafe {
        keys.set_len(keys_start);
        values.set_len(start);
        let k = keys.as_mut_ptr().add(keys_start);
        let v = values.as_mut_ptr().add(start);
        for j in 0..n {
            if map.insert(k.add(j).read(), v.add(j).read()).is_some() && !last_wins {
                ptr::drop_in_place(ptr::slice_from_raw_parts_mut(k.add(j + 1), n - j - 1));
                ptr::drop_in_place(ptr::slice_from_raw_parts_mut(v.add(j + 1), n - j - 1));
                return None;
            }
        }
    }
    values.push(Value::Object(map));
    Some(())
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// Reads `"key" :` at `i` onto `keys`; the offset of the value after it (whitespace skipped).
/// Inlined in `read`, with the string's plain case (below).
#[inline(always)]
fn key(text: &str, i: usize, keys: &mut Vec<String>, scratch: &mut String) -> Option<usize> {
    let b = text.as_bytes();
    if *b.get(i)? != b'"' {
        return None;
    }
    let (k, end) = string_at(text, i, scratch)?;
    let i = ws(b, end);
    if *b.get(i)? != b':' {
        return None;
    }
    keys.push(k);
    Some(ws(b, i + 1))
}

/// The string whose opening quote is at `i`, and the offset after its closing quote.
fn string(text: &str, i: usize, scratch: &mut String) -> Option<(String, usize)> {
    string_with(text, i, scratch, plain_call)
}

/// [`string`], inlined where it is called in `read`: a string without escapes (nearly every
/// key and value of an object) is scanned and copied there, the others read out of line.
#[inline(always)]
fn string_at(text: &str, i: usize, scratch: &mut String) -> Option<(String, usize)> {
    string_with(text, i, scratch, plain)
}

/// [`string`] with `scan` finding the end of its plain run ([`plain`] inlined, or
/// [`plain_call`]).
#[inline(always)]
fn string_with(
    text: &str,
    i: usize,
    scratch: &mut String,
    scan: impl Fn(&[u8], usize) -> usize,
) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let start = i + 1;
    let j = scan(b, start);
    if *b.get(j)? == b'"' {
        // SAFETY: `start` follows a quote and `j` is at a quote: both are character
        // boundaries of `text`, and `start <= j < text.len()`.
        return Some((unsafe { text.get_unchecked(start..j) }.to_owned(), j + 1));
    }
    escaped(text, start, j, scratch)
}

/// The string whose contents start at `start` and need decoding from `j` on (a backslash or a
/// control character at `j`, or the end of the text), and the offset after its closing quote.
#[inline(never)]
fn escaped(
    text: &str,
    start: usize,
    mut j: usize,
    scratch: &mut String,
) -> Option<(String, usize)> {
    let b = text.as_bytes();
    // SAFETY: `start` follows a quote and `j` is at an ASCII byte or the end (`plain`): both
    // are character boundaries of `text`, and `start <= j <= text.len()`.
    let run = unsafe { text.get_unchecked(start..j) };
    scratch.clear();
    scratch.push_str(run);
    loop {
        // At a quote, a backslash or a control character.
        match *b.get(j)? {
            b'"' => return Some((scratch.as_str().to_owned(), j + 1)),
            b'\\' => {
                let c = match *b.get(j + 1)? {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        let mut c = hex4(b, j + 2)?;
                        if (0xD800..0xE000).contains(&c) {
                            // Go's `utf16.DecodeRune`: a high half and an escaped low half are
                            // one character; any other surrogate is U+FFFD, and what follows is
                            // read on its own.
                            let low = match b.get(j + 6..j + 8) {
                                Some(b"\\u") => hex4(b, j + 8),
                                _ => None,
                            };
                            c = match low {
                                Some(low @ 0xDC00..0xE000) if c < 0xDC00 => {
                                    j += 6;
                                    0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00)
                                }
                                _ => 0xFFFD,
                            };
                        }
                        j += 4;
                        char::from_u32(c)?
                    }
                    _ => return None,
                };
                scratch.push(c);
                j += 2;
            }
            _ => return None, // a control character
        }
        let run = plain_call(b, j);
        scratch.push_str(text.get(j..run)?);
        j = run;
    }
}

/// The end of the run of string bytes at `i` that need no decoding: a quote, a backslash, a
/// control character, or the end of `b`. Eight bytes at a time (a `u64` word, in wasm too),
/// then byte by byte for the last few. Inlined in `read` (as a call, the user path was 4–14 µs
/// slower); [`plain_call`] elsewhere.
#[inline(always)]
fn plain(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        // A byte's high bit is set in `found` when it is `"` or `\\` (`x - 1` borrows from a
        // zero byte of `w ^ quotes`) or below 0x20 (`x - 0x20` borrows), and not ≥ 0x80
        // (`!w`). A borrow can set bits above a byte that is found, never below: the lowest
        // one is exact, and little-endian it is the first byte.
        let found = ((w ^ (b'"' as u64 * ONES)).wrapping_sub(ONES)
            | (w ^ (b'\\' as u64 * ONES)).wrapping_sub(ONES)
            | w.wrapping_sub(0x20 * ONES))
            & !w
            & HIGH;
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

/// [`plain`] out of line: for the general parser, the escapes and the writer (each inlined
/// copy of the scan was ~90 B of the package).
#[inline(never)]
pub(crate) fn plain_call(b: &[u8], i: usize) -> usize {
    plain(b, i)
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let mut n = 0;
    for &c in b.get(i..i + 4)? {
        n = n * 16 + (c as char).to_digit(16)?;
    }
    Some(n)
}

/// The integer at `i` (JSON's grammar) and its end; `None` for anything else: a fraction or
/// an exponent, beyond int64, `-0`, leading zeros.
fn int(b: &[u8], i: usize) -> Option<(Number, usize)> {
    let negative = b.get(i) == Some(&b'-');
    let mut j = i + usize::from(negative);
    let mut n: u64 = 0;
    let first = j;
    while let Some(c @ b'0'..=b'9') = b.get(j) {
        // 19 digits fit a u64 (below 10^19) unchecked (in wasm a checked u64 multiplication
        // is a call to `__multi3`); a 20th is beyond int64 or after a leading zero: declined.
        if j - first == 19 {
            return None;
        }
        n = n * 10 + u64::from(c - b'0');
        j += 1;
    }
    let digits = j - first;
    // No digits, a leading zero (`01`, or `-0`: a double), or a fraction or an exponent.
    if digits == 0
        || (b[first] == b'0' && (digits > 1 || negative))
        || matches!(b.get(j), Some(b'.' | b'e' | b'E'))
    {
        return None;
    }
    let n = if negative {
        // -2^63 is the last one.
        (n <= 1 << 63).then(|| (n as i64).wrapping_neg())?.into()
    } else {
        i64::try_from(n).ok()?.into()
    };
    Some((n, j))
}

/// Frees a document read here (the request's objects, after their evaluation). The drop of a
/// `Value` tree is compiled where it is called: in the package's root crate, at opt-level
/// `z`, the walk over the tree cost as much again as the allocator's frees; here, at the
/// crate's opt-level 3, about half (bench/README.md, "The user path, fourth round").
#[inline(never)]
pub fn dispose(value: Option<Value>) {
    drop(value)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    /// vap-eval's limit (`admission::yaml::MAX_DEPTH`).
    const MAX_DEPTH: usize = 255;

    fn read(text: &str) -> Option<Value> {
        super::read(text, MAX_DEPTH)
    }

    /// serde_json's reading, which [`super::parse`] keeps except where Go's differs.
    fn serde(text: &str) -> Result<Value, String> {
        serde_json::from_str::<Value>(text).map_err(|e| e.to_string())
    }

    fn parse(text: &str) -> Result<Value, String> {
        super::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn parse_reads_as_serde_json() {
        for text in [
            r#" {"a": 1, "b": [true, false, null, -5, {"c": "x"}], "d": {}, "e": [],
            "f": "k:\"q\" \\ \/ \b \f \n \r \t \u00e9 é😀 \ud83d\ude00", "g": [[[]]], "":""} "#,
            "0",
            "-0",
            "-0.0",
            "0.0",
            "1.5",
            "-2.5e-3",
            "1E3",
            "1e+3",
            "1e-0",
            "0.1",
            "1e-400",
            "0e999",
            "1.7976931348623157e308",
            "5e-324",
            "18446744073709551615",
            "18446744073709551616",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "-18446744073709551616",
            "9007199254740993",
            "[1, 1.0, 1e3, 18446744073709551615, -1, 12.75]",
            "\"\"",
            "\"\\u0000\\u001f\\u007f\\uffff\"",
            "\t\r\n [ \t\r\n ] \t\r\n",
            // A repeated key: the last value at the first one's place.
            r#"{"a": 1, "b": 2, "a": 3}"#,
            r#"{"a": {"x": 1}, "a": [2]}"#,
        ] {
            let (ours, theirs) = (parse(text), serde(text));
            assert_eq!(ours, theirs, "{text:?}");
            assert_eq!(
                ours.map(|v| v.to_string()),
                theirs.map(|v| v.to_string()),
                "{text:?}: member order, number kinds"
            );
        }
        let keys: Vec<_> = parse(r#"{"z": 1, "a": 2, "z": 3}"#)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["z", "a"]);
        // Integers keep serde_json's kinds: u64, i64, else a double (`-0` too).
        assert!(parse("18446744073709551615").unwrap().is_u64());
        assert!(parse("-9223372036854775808").unwrap().is_i64());
        assert!(parse("-0").unwrap().is_f64());
        assert!(parse("18446744073709551616").unwrap().is_f64());
    }

    #[test]
    fn doubles_as_go_reads_them() {
        // Go's strconv.ParseFloat (and JavaScript's JSON.parse) give the nearest double;
        // serde_json without `float_roundtrip` is one bit off for these: JSON.stringify's texts
        // of 1.2345678901234568e20 and 194063.61382741499, and a number of a schema-like size.
        for (text, nearest, serde_json_reads) in [
            ("123456789012345680000", 1.2345678901234568e20, 1.2345678901234567e20),
            ("194063.61382741499", 194063.61382741499, 194063.613827415),
            ("1.2345678901234567e+25", 1.2345678901234566e25, 1.2345678901234568e25),
            ("9.812652307351939e-86", 9.812652307351939e-86, 9.81265230735194e-86),
        ] {
            assert_eq!(parse(text).unwrap().as_f64(), Some(nearest), "{text}");
            assert_eq!(serde(text).unwrap().as_f64(), Some(serde_json_reads), "{text}");
            assert_ne!(nearest.to_bits(), serde_json_reads.to_bits());
        }
        // Every double's shortest text (JSON.stringify's, Go's) reads back as that double.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = f64::from_bits(x);
            if !f.is_finite() {
                continue;
            }
            for text in [format!("{f:e}"), format!("{f:?}")] {
                let v = parse(&text).unwrap().as_f64().unwrap();
                assert_eq!(v.to_bits(), f.to_bits(), "{text}");
            }
        }
        // Beyond the doubles: an error in both (and in Go's decoder), located after the number
        // (serde_json locates an exponent too long for it where it stops reading it).
        for text in ["1e309", "-1e309", "1.7976931348623159e308"] {
            assert_eq!(parse(text), serde(text), "{text}");
        }
        for text in ["1e309", "[1e99999999999]"] {
            assert!(parse(text).unwrap_err().starts_with("number out of range at line 1"));
            assert!(serde(text).unwrap_err().starts_with("number out of range at line 1"));
        }
    }

    #[test]
    fn lone_surrogates_as_go_reads_them() {
        // serde_json rejects a surrogate escape that is not half of a pair; Go's decoder (and
        // `read`) reads U+FFFD.
        for (text, go) in [
            (r#""\ud800""#, "\u{fffd}"),
            (r#""a\udc00b""#, "a\u{fffd}b"),
            (r#""\ud83d\u0041""#, "\u{fffd}A"),
            (r#""\ud83d\ud83d\ude00""#, "\u{fffd}😀"),
        ] {
            assert_eq!(parse(text), Ok(json!(go)), "{text}");
            assert!(serde(text).is_err(), "{text}");
        }
    }

    #[test]
    fn parse_errors_as_serde_json_reports_them() {
        for text in [
            "",
            "   ",
            "\n\n  ",
            "{",
            "[",
            "}",
            "]",
            "{]",
            "[}",
            "{,}",
            "[,]",
            "[1,]",
            "[1,",
            "[1",
            "[1 2]",
            "{\"a\":1,}",
            "{\"a\":1,",
            "{\"a\":1",
            "{\"a\":1 \"b\":2}",
            "{\"a\" 1}",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":}",
            "{1: 2}",
            "{\"a\":1, 2: 3}",
            "{a: 1}",
            "{'a': 1}",
            "\"x",
            "\"x\\",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12",
            "\"\\u12zz\"",
            "\"\\ud83d\\uzzzz\"",
            "\"\t\"",
            "[\"a\nb\"]",
            "tru",
            "trux",
            "nul",
            "nulx",
            "falsy",
            "truex",
            "[true1]",
            "01",
            "-01",
            "00",
            "-",
            "-x",
            "+1",
            ".5",
            "1.",
            "1.x",
            "1e",
            "1e+",
            "1ex",
            "1.5.5",
            "{} {}",
            "{}x",
            "\u{feff}{}",
            "NaN",
            "Infinity",
            "[1]\u{a0}",
            "[\u{b}]",
            "{\n  \"a\": [1,\n    2,,\n  ]\n}",
            "{\n  \"a\": \"é\" x\n}",
        ] {
            let ours = parse(text);
            assert!(ours.is_err(), "{text:?}");
            assert_eq!(ours, serde(text), "{text:?}");
        }
    }

    #[test]
    fn parse_nests_as_deep_as_serde_json() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let objects = |n: usize| format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
        for text in [nested(127), objects(127), nested(128), objects(128), nested(1000)] {
            assert_eq!(parse(&text), serde(&text));
        }
        assert!(parse(&nested(127)).is_ok());
        assert_eq!(
            parse(&nested(128)).unwrap_err(),
            "recursion limit exceeded at line 1 column 128"
        );
        // Unclosed, very deep: an error without recursion.
        assert!(super::parse(&"[".repeat(1_000_000), usize::MAX).is_err());
    }

    #[test]
    fn reads_plain_json() {
        let text = r#" {"a": 1, "b": [true, false, null, -5, {"c": "x"}], "d": {}, "e": [],
            "f": "k:\"q\" \\ \/ \b \f \n \r \t \u00e9 é😀", "g": [[[]]], "":""} "#;
        assert_eq!(read(text), Some(text.parse().unwrap()));
        assert_eq!(read("[1, \"x\"]"), Some(json!([1, "x"])));
        assert_eq!(read("\"s\""), Some(json!("s")));
        assert_eq!(read("-12"), Some(json!(-12)));
        assert_eq!(read("true"), Some(json!(true)));
        assert_eq!(
            read(r#"[9223372036854775807, -9223372036854775808, 0]"#),
            Some(json!([i64::MAX, i64::MIN, 0]))
        );
        // The order of members is kept.
        let keys: Vec<_> = read(r#"{"z": 1, "a": 2, "m": 3}"#)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["z", "a", "m"]);
    }

    #[test]
    fn surrogates_as_go_reads_them() {
        let s = |text: &str| read(text).map(|v| v.as_str().unwrap().to_owned());
        assert_eq!(s(r#""\ud83d\ude00""#).as_deref(), Some("😀"));
        assert_eq!(s(r#""\uD83D\uDE00x""#).as_deref(), Some("😀x"));
        assert_eq!(s(r#""\ud800""#).as_deref(), Some("\u{fffd}"));
        assert_eq!(s(r#""a\ud800b""#).as_deref(), Some("a\u{fffd}b"));
        assert_eq!(s(r#""\ude00\ud83d""#).as_deref(), Some("\u{fffd}\u{fffd}"));
        assert_eq!(s(r#""\ud83d\ud83d\ude00""#).as_deref(), Some("\u{fffd}😀"));
        assert_eq!(s(r#""\ud83d\u0041""#).as_deref(), Some("\u{fffd}A"));
        assert_eq!(s(r#""\ud83d\n""#).as_deref(), Some("\u{fffd}\n"));
        assert_eq!(s(r#""\ud83d\u00""#), None);
        assert_eq!(s(r#""\ud83d\uzzzz""#), None);
    }

    #[test]
    fn declines_what_the_positions_loader_decides() {
        for text in [
            "",
            " ",
            "{",
            "}",
            "[",
            "]",
            "{]",
            "[}",
            "{,}",
            "[,]",
            "[1,]",
            "{\"a\":1,}",
            "[1 2]",
            "{\"a\" 1}",
            "{\"a\":}",
            "{1: 2}",
            "{a: 1}",
            "{'a': 1}",
            "\"x",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\t\"",
            "\"\n\"",
            "tru",
            "nul",
            "truex",
            "[true1]",
            "01",
            "-",
            "-01",
            "+1",
            "1.5",
            "1.0",
            "1e3",
            "1E3",
            "-0",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999999",
            "{\"a\": 1, \"a\": 1}",
            "[{\"b\": [], \"b\": {}}]",
            // Members after the repeated key, owning memory, dropped with it.
            "{\"a\": \"x\", \"b\": [\"y\"], \"a\": {\"c\": \"z\"}, \"d\": \"w\", \"e\": {\"f\": [1]}}",
            "[\"v\", {\"k\": \"v\", \"k\": \"v\", \"m\": [\"n\"]}]",
            "{} {}",
            "{}x",
            "\u{feff}{}",
            "NaN",
            "[1]\u{a0}",
            "[\u{b}]",
        ] {
            assert_eq!(read(text), None, "{text:?}");
        }
    }

    #[test]
    fn plain_stops_where_a_byte_by_byte_scan_stops() {
        let naive = |b: &[u8], i: usize| {
            (i..b.len()).find(|&j| matches!(b[j], b'"' | b'\\' | ..=0x1f)).unwrap_or(b.len())
        };
        // Every byte value at every place of two words, after every byte value (a borrow from
        // the byte before), and random texts rich in the bytes near the thresholds.
        let mut b = vec![b'a'; 24];
        for at in 0..17 {
            for before in 0..=255u8 {
                for c in 0..=255u8 {
                    b.fill(b'a');
                    if at > 0 {
                        b[at - 1] = before;
                    }
                    b[at] = c;
                    for i in [0, at / 2, at] {
                        assert_eq!(super::plain(&b, i), naive(&b, i), "{b:?} from {i}");
                    }
                }
            }
        }
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            let len = (x % 40) as usize;
            let b: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    [0x00, 0x1f, 0x20, 0x21, b'"', 0x23, b'\\', 0x5d, 0x7f, 0x80, 0xff, b'a']
                        [(x % 12) as usize]
                })
                .collect();
            x = x.wrapping_add(len as u64);
            for i in 0..=len {
                assert_eq!(super::plain(&b, i), naive(&b, i), "{b:?} from {i}");
            }
        }
    }

    #[test]
    fn depth_is_bounded_as_in_the_positions_loader() {
        let max = MAX_DEPTH;
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let objects = |n: usize| format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
        assert!(read(&nested(max)).is_some());
        assert!(read(&objects(max)).is_some());
        assert_eq!(read(&nested(max + 1)), None);
        assert_eq!(read(&objects(max + 1)), None);
        // Unclosed, very deep: declined without recursion.
        assert_eq!(read(&"[".repeat(1_000_000)), None);
    }
}
