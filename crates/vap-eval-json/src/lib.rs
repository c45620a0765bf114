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
//! Its own crate so that the package's wasm profile can build it for speed (Cargo.toml's
//! `[profile.wasm.package.vap-eval-json]`) where vap-eval itself is built for size.
//!
//! Escapes are read as Go's `encoding/json` reads them (the apiserver's and kubectl's
//! decoder): a surrogate pair (`\ud83d\ude00`) is one character, and a surrogate escape that
//! is not half of a pair (`\ud800`) is U+FFFD.

use serde_json::{Map, Number, Value};

/// The value of the JSON `text` (any JSON value, with JSON whitespace around it) when all its
/// numbers are int64, no object repeats a key and collections nest at most `max_depth` deep;
/// `None` otherwise (see the crate).
pub fn read(text: &str, max_depth: usize) -> Option<Value> {
    let b = text.as_bytes();
    let mut scratch = String::new();
    // Finished values of the open collections, the keys of the open objects, and for each
    // open collection where its values (and keys) start: `Some(keys start)` for an object.
    let mut values: Vec<Value> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    let mut open: Vec<(usize, Option<usize>)> = Vec::new();
    let mut i = ws(b, 0);
    loop {
        // A value starts at `i`.
        let mut value = match *b.get(i)? {
            c @ (b'{' | b'[') => {
                if open.len() >= max_depth {
                    return None;
                }
                i = ws(b, i + 1);
                match (c, *b.get(i)?) {
                    (b'{', b'}') => {
                        i += 1;
                        Value::Object(Map::new())
                    }
                    (b'[', b']') => {
                        i += 1;
                        Value::Array(Vec::new())
                    }
                    (b'{', _) => {
                        open.push((values.len(), Some(keys.len())));
                        i = key(text, i, &mut keys, &mut scratch)?;
                        continue;
                    }
                    _ => {
                        open.push((values.len(), None));
                        continue;
                    }
                }
            }
            b'"' => {
                let (s, end) = string(text, i, &mut scratch)?;
                i = end;
                Value::String(s)
            }
            b't' if b[i..].starts_with(b"true") => {
                i += 4;
                Value::Bool(true)
            }
            b'f' if b[i..].starts_with(b"false") => {
                i += 5;
                Value::Bool(false)
            }
            b'n' if b[i..].starts_with(b"null") => {
                i += 4;
                Value::Null
            }
            _ => {
                let (n, end) = int(b, i)?;
                i = end;
                Value::Number(n)
            }
        };
        // `value` is complete: it ends the text or joins its collection, which may close.
        loop {
            i = ws(b, i);
            let Some(&(start, keys_start)) = open.last() else {
                return (i == b.len()).then_some(value);
            };
            values.push(value);
            match (*b.get(i)?, keys_start) {
                (b',', Some(_)) => {
                    i = key(text, ws(b, i + 1), &mut keys, &mut scratch)?;
                    break;
                }
                (b',', None) => {
                    i = ws(b, i + 1);
                    break;
                }
                (b'}', Some(keys_start)) => {
                    let mut map = Map::with_capacity(values.len() - start);
                    for (k, v) in keys.drain(keys_start..).zip(values.drain(start..)) {
                        if map.insert(k, v).is_some() {
                            return None;
                        }
                    }
                    value = Value::Object(map);
                }
                (b']', None) => value = Value::Array(values.split_off(start)),
                _ => return None,
            }
            i += 1;
            open.pop();
        }
    }
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// Reads `"key" :` at `i` onto `keys`; the offset of the value after it (whitespace skipped).
fn key(text: &str, i: usize, keys: &mut Vec<String>, scratch: &mut String) -> Option<usize> {
    let b = text.as_bytes();
    if *b.get(i)? != b'"' {
        return None;
    }
    let (k, end) = string(text, i, scratch)?;
    let i = ws(b, end);
    if *b.get(i)? != b':' {
        return None;
    }
    keys.push(k);
    Some(ws(b, i + 1))
}

/// The string whose opening quote is at `i`, and the offset after its closing quote.
fn string(text: &str, i: usize, scratch: &mut String) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let start = i + 1;
    let mut j = plain(b, start);
    if *b.get(j)? == b'"' {
        return Some((text.get(start..j)?.to_owned(), j + 1));
    }
    scratch.clear();
    scratch.push_str(text.get(start..j)?);
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
        let run = plain(b, j);
        scratch.push_str(text.get(j..run)?);
        j = run;
    }
}

/// The end of the run of string bytes at `i` that need no decoding.
fn plain(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            break;
        }
        i += 1;
    }
    i
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
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
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

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    /// vap-eval's limit (`admission::yaml::MAX_DEPTH`).
    const MAX_DEPTH: usize = 255;

    fn read(text: &str) -> Option<Value> {
        super::read(text, MAX_DEPTH)
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
