//! cel-go `ext/strings.go`, version 2 (Kubernetes ≥ 1.29), plus `strings.quote`.
//! All indices are code points.
//!
//! - `'hello'.charAt(1)` // 'e'; `'hello'.charAt(5)` // ''; `'hello'.charAt(6)` // error: index out of range: 6
//! - `'hello mellow'.indexOf('ello', 2)` // 7; `'abc'.indexOf('b', 4)` // error: index out of range: 4
//! - `'TacoCat'.lowerAscii()` // 'tacocat'; `'  a '.trim()` // 'a'
//! - `'hello hello'.replace('he', 'we', 1)` // 'wello hello'
//! - `'a,b,c'.split(',', 2)` // ['a', 'b,c']
//! - `'tacocat'.substring(4)` // 'cat'; `'tacocat'.substring(1, 0)` // error: invalid substring range. start: 1, end: 0
//! - `['a', 'b'].join('-')` // 'a-b'
//! - `strings.quote('a"b')` // '"a\"b"'

use super::cost;
use super::util::{int_arg, owned, str_arg};
use super::{Ctx, Fail, Overload, Overload as O, R};
use crate::cel::value::Value;

fn out_of_range<'a>(i: i64) -> R<'a> {
    Err(Fail::msg(format!("index out of range: {i}")))
}

fn char_at<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let s = str_arg(&a[0])?;
    let i = int_arg(&a[1])?;
    if i < 0 {
        return out_of_range(i);
    }
    let n = s.chars().count() as i64;
    if i > n {
        return out_of_range(i);
    }
    Ok(owned(s.chars().nth(i as usize).map(String::from).unwrap_or_default()))
}

fn index_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let s = str_arg(&a[0])?;
    let sub = str_arg(&a[1])?;
    let off = match a.get(2) {
        Some(v) => int_arg(v)?,
        None => 0,
    };
    let chars: Vec<char> = s.chars().collect();
    let subc: Vec<char> = sub.chars().collect();
    // Compared as int64: `off as usize` wraps past 2^32 on wasm32.
    if off < 0 || off > chars.len() as i64 {
        return out_of_range(off);
    }
    let off = off as usize;
    if subc.is_empty() {
        return Ok(Value::Int(off as i64));
    }
    if subc.len() > chars.len() {
        return Ok(Value::Int(-1));
    }
    for i in off..=chars.len().saturating_sub(subc.len()) {
        if chars[i..i + subc.len()] == subc[..] {
            return Ok(Value::Int(i as i64));
        }
    }
    Ok(Value::Int(-1))
}

fn last_index_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let s = str_arg(&a[0])?;
    let sub = str_arg(&a[1])?;
    let chars: Vec<char> = s.chars().collect();
    let subc: Vec<char> = sub.chars().collect();
    let off = match a.get(2) {
        Some(v) => int_arg(v)?,
        None => chars.len() as i64,
    };
    if subc.is_empty() {
        return Ok(Value::Int(off));
    }
    if off < 0 || off > chars.len() as i64 {
        return out_of_range(off);
    }
    let mut off = off as usize;
    if subc.len() > chars.len() {
        return Ok(Value::Int(-1));
    }
    if off + subc.len() > chars.len() {
        off = chars.len() - subc.len();
    }
    let mut i = off as i64;
    while i >= 0 {
        let u = i as usize;
        if chars[u..u + subc.len()] == subc[..] {
            return Ok(Value::Int(i));
        }
        i -= 1;
    }
    Ok(Value::Int(-1))
}

fn lower_ascii<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(owned(str_arg(&a[0])?.to_ascii_lowercase()))
}
fn upper_ascii<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(owned(str_arg(&a[0])?.to_ascii_uppercase()))
}

fn trim<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    // Go strings.TrimSpace: Unicode White_Space.
    Ok(owned(str_arg(&a[0])?.trim_matches(char::is_whitespace).to_string()))
}

fn replace<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let s = str_arg(&a[0])?;
    let old = str_arg(&a[1])?;
    let new = str_arg(&a[2])?;
    let n = match a.get(3) {
        Some(v) => int_arg(v)?,
        None => -1,
    };
    Ok(owned(go_replace(s, old, new, n)))
}

/// Go `strings.Replace` (empty `old` matches at every code-point boundary).
fn go_replace(s: &str, old: &str, new: &str, n: i64) -> String {
    if n == 0 {
        return s.to_string();
    }
    // A count past usize::MAX (wasm32: 2^32) is no limit, as on 64 bits (`as usize` wrapped it).
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    if old.is_empty() {
        let mut out = String::new();
        let mut count = 0;
        for (i, c) in s.char_indices() {
            if count < limit {
                out.push_str(new);
                count += 1;
            }
            let _ = i;
            out.push(c);
        }
        if count < limit {
            out.push_str(new);
        }
        return out;
    }
    s.replacen(old, new, limit)
}

fn split<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let s = str_arg(&a[0])?;
    let sep = str_arg(&a[1])?;
    let n = match a.get(2) {
        Some(v) => int_arg(v)?,
        None => -1,
    };
    let parts: Vec<String> = go_split_n(s, sep, n);
    Ok(Value::list(parts.into_iter().map(owned).collect()))
}

/// Go `strings.SplitN`.
fn go_split_n(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return vec![];
    }
    if sep.is_empty() {
        // explode into code points, at most n
        let chars: Vec<char> = s.chars().collect();
        let mut out = Vec::new();
        let limit = if n < 0 { chars.len() } else { count(n).min(chars.len()) };
        for (i, c) in chars.iter().enumerate() {
            if i + 1 == limit && limit < chars.len() {
                out.push(chars[i..].iter().collect());
                break;
            }
            out.push(c.to_string());
        }
        return out;
    }
    if n < 0 {
        return s.split(sep).map(String::from).collect();
    }
    s.splitn(count(n), sep).map(String::from).collect()
}

/// A non-negative int64 count as usize, saturating: `as usize` wraps past 2^32 on wasm32
/// (`'a,b,c'.split(',', 4294967296)` was `[]`).
fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn substring<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let s = str_arg(&a[0])?;
    let start = int_arg(&a[1])?;
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len() as i64;
    let end = match a.get(2) {
        Some(v) => int_arg(v)?,
        None => {
            if start < 0 || start > n {
                return out_of_range(start);
            }
            return Ok(owned(chars[start as usize..].iter().collect()));
        }
    };
    if start < 0 || start > n {
        return out_of_range(start);
    }
    if end < 0 || end > n {
        return out_of_range(end);
    }
    if start > end {
        return Err(Fail::msg(format!("invalid substring range. start: {start}, end: {end}")));
    }
    Ok(owned(chars[start as usize..end as usize].iter().collect()))
}

fn join<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let Value::List(l) = &a[0] else {
        return Err(Fail::NoMatch);
    };
    let sep = match a.get(1) {
        Some(v) => str_arg(v)?,
        None => "",
    };
    let mut out = String::new();
    for (i, v) in l.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        match &v {
            Value::String(s) => out.push_str(s.as_str()),
            _ => return Err(Fail::msg("join: list must contain only strings")),
        }
    }
    Ok(owned(out))
}

fn quote<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(owned(go_quote(str_arg(&a[0])?)))
}

/// cel-go `strings.quote`: Go-style escapes, non-printable characters as `\uXXXX`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// cel-go ext strings (v2) and `strings.quote`, in registration order.
pub(crate) static OVERLOADS: &[Overload] = &[
    O::member("charAt", "string_char_at_int", 2, char_at),
    O::member("indexOf", "string_index_of_string", 2, index_of),
    O::member("indexOf", "string_index_of_string_int", 3, index_of),
    O::member("lastIndexOf", "string_last_index_of_string", 2, last_index_of),
    O::member("lastIndexOf", "string_last_index_of_string_int", 3, last_index_of),
    O::member("lowerAscii", "string_lower_ascii", 1, lower_ascii),
    O::member("upperAscii", "string_upper_ascii", 1, upper_ascii),
    O::member("trim", "string_trim", 1, trim),
    O::member("replace", "string_replace_string_string", 3, replace),
    O::member("replace", "string_replace_string_string_int", 4, replace),
    O::member("split", "string_split_string", 2, split),
    O::member("split", "string_split_string_int", 3, split),
    O::member("substring", "string_substring_int", 2, substring),
    O::member("substring", "string_substring_int_int", 3, substring),
    O::member("join", "list_join", 1, join),
    O::member("join", "list_join_string", 2, join),
    O::global("strings.quote", "strings_quote", 1, quote).with_cost(cost::first_traversal_cost),
];
