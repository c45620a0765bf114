//! `string.format(list)`: cel-go's pre-spec (strings v1–v3) formatter with the `en_US` locale,
//! which is what Kubernetes' strings v2 uses (`ext/formatting.go`, not the v4 spec formatter).
//!
//! - `'%s and %d'.format(['a', 1])` // 'a and 1'
//! - `'%.2f'.format([1.23456])` // '1.23'
//! - `'%e'.format([1000.0])` // '1.000000\u{202f}×\u{202f}10⁰³' (x/text's en_US scientific form)
//! - `'%b %o %x %X'.format([5, 8, 255, 255])` // '101 10 ff FF'
//! - `'%s'.format([[1, 'a']])` // '[1, "a"]'; `'%s'.format([null])` // 'null'
//! - `'%d'.format([1.5])` // error: error during formatting: decimal clause can only be used on integers, was given double

use super::cost;
use super::util::{owned, str_arg};
use super::{Ctx, Fail, Overload, Overload as O, R};
use crate::cel::value::{format_double, format_duration, format_timestamp, Value};

/// The type string.format's errors name: the CEL type name, except "opaque" for library values.
fn type_desc<'v>(v: &'v Value<'_>) -> &'v str {
    match v {
        Value::Opaque(_) => "opaque",
        other => other.type_name(),
    }
}

/// `%s` rendering; `nested` quotes strings (inside lists and maps).
fn fmt_s(v: &Value<'_>, nested: bool) -> Result<String, String> {
    Ok(match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Double(d) => {
            if d.is_nan() {
                "NaN".into()
            } else if d.is_infinite() {
                if *d > 0.0 { "Infinity" } else { "-Infinity" }.into()
            } else {
                format_double(*d)
            }
        }
        Value::String(s) => {
            if nested {
                format!("{:?}", s.as_str())
            } else {
                s.as_str().to_string()
            }
        }
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b).into_owned();
            if nested {
                format!("b{s:?}")
            } else {
                s
            }
        }
        Value::Duration(d) => {
            let s = format_duration(*d);
            if nested {
                format!("duration({s:?})")
            } else {
                s
            }
        }
        Value::Timestamp(t) => {
            let s = format_timestamp(t);
            if nested {
                format!("timestamp({s:?})")
            } else {
                s
            }
        }
        Value::List(l) => {
            let mut parts = Vec::with_capacity(l.len());
            for x in l.iter() {
                parts.push(fmt_s(&x, true)?);
            }
            format!("[{}]", parts.join(", "))
        }
        Value::Map(m) => {
            let mut parts: Vec<(String, String)> = Vec::with_capacity(m.len());
            for (k, x) in m.iter() {
                parts.push((fmt_s(&k, true)?, fmt_s(&x, true)?));
            }
            // cel-go sorts map entries by their formatted key.
            crate::sort::sort_by(&mut parts, |a, b| a.cmp(b));
            let inner: Vec<String> = parts.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Type(t) => t.to_string(),
        Value::Optional(_) | Value::Opaque(_) => {
            return Err(format!(
                "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
                v.type_name()
            ))
        }
    })
}

fn fixed(d: f64, prec: usize) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    format!("{d:.prec$}")
}

/// `%e` as cel-go's pre-spec formatter produces it: `message.NewPrinter(en_US).Sprintf("%<p>e",
/// x)` — the clause's precision becomes a *width* (cel-go builds the verb with `%%%de`), so the
/// mantissa always has 6 decimals, and golang.org/x/text prints the exponent in the locale's
/// superscripting form: `×` between narrow no-break spaces, `10`, the exponent in superscript
/// digits (at least two, `⁻` when negative). cel-go `ext/strings_test.go` (locale `en_US`):
/// `'%.6e'.format([1052.032911275])` → `1.052033\u202f×\u202f10⁰³`, `'%e'.format([2.71828])` →
/// `2.718280\u202f×\u202f10⁰⁰`. The width pads on the left with spaces, counted in characters
/// (Go fmt's padding; assumed for x/text, no upstream test pins a width wider than the number).
fn sci(d: f64, width: usize) -> String {
    let body = if d.is_nan() {
        "NaN".to_string()
    } else if d.is_infinite() {
        if d > 0.0 { "∞" } else { "-∞" }.to_string()
    } else {
        let s = format!("{d:.6e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (neg, digits) = match exp.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, exp),
        };
        let mut out = format!("{mantissa}\u{202f}×\u{202f}10");
        if neg {
            out.push('⁻');
        }
        if digits.len() < 2 {
            out.push('⁰');
        }
        for c in digits.chars() {
            const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
            out.push(c.to_digit(10).map_or(c, |v| SUP[v as usize]));
        }
        out
    };
    let n = body.chars().count();
    if n < width {
        " ".repeat(width - n) + &body
    } else {
        body
    }
}

fn as_f64(v: &Value<'_>) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Uint(u) => Some(*u as f64),
        Value::Double(d) => Some(*d),
        _ => None,
    }
}

fn radix(v: &Value<'_>, clause: char) -> Result<String, String> {
    let r = |neg: bool, mag: u128| -> String {
        let body = match clause {
            'b' => format!("{mag:b}"),
            'o' => format!("{mag:o}"),
            'x' => format!("{mag:x}"),
            _ => format!("{mag:X}"),
        };
        if neg {
            format!("-{body}")
        } else {
            body
        }
    };
    match v {
        Value::Int(i) => Ok(r(*i < 0, i.unsigned_abs() as u128)),
        Value::Uint(u) => Ok(r(false, *u as u128)),
        Value::Bool(b) if clause == 'b' => Ok(if *b { "1" } else { "0" }.into()),
        Value::String(s) if clause == 'x' || clause == 'X' => {
            Ok(hex(s.as_str().as_bytes(), clause == 'X'))
        }
        Value::Bytes(b) if clause == 'x' || clause == 'X' => Ok(hex(b, clause == 'X')),
        other => {
            let what = match clause {
                'b' => "only integers and bools can be formatted as binary",
                'o' => "octal clause can only be used on integers",
                _ => "only integers, byte buffers, and strings can be formatted as hex",
            };
            Err(format!("{what}, was given {}", type_desc(other)))
        }
    }
}

fn hex(b: &[u8], upper: bool) -> String {
    b.iter().map(|x| if upper { format!("{x:02X}") } else { format!("{x:02x}") }).collect()
}

/// Format `fmt` with `args`.
pub fn format(fmt: &str, args: &[Value<'_>]) -> Result<String, String> {
    let mut out = String::new();
    let mut it = fmt.char_indices().peekable();
    let mut argi = 0usize;
    while let Some((_, c)) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // precision
        let mut prec: Option<usize> = None;
        if let Some((_, '.')) = it.peek() {
            it.next();
            let mut p = 0usize;
            while let Some((_, d)) = it.peek() {
                if let Some(v) = d.to_digit(10) {
                    p = p.saturating_mul(10).saturating_add(v as usize);
                    it.next();
                } else {
                    break;
                }
            }
            prec = Some(p.min(1000));
        }
        let Some((_, clause)) = it.next() else {
            return Err("could not parse formatting clause: unexpected end of string".into());
        };
        if clause == '%' {
            out.push('%');
            continue;
        }
        if !matches!(clause, 's' | 'd' | 'f' | 'e' | 'b' | 'x' | 'X' | 'o') {
            return Err(format!(
                "could not parse formatting clause: unrecognized formatting clause \"{clause}\""
            ));
        }
        let Some(arg) = args.get(argi) else {
            return Err(format!("index {argi} out of range"));
        };
        argi += 1;
        let piece = match clause {
            's' => fmt_s(arg, false)?,
            'd' => match arg {
                Value::Int(i) => i.to_string(),
                Value::Uint(u) => u.to_string(),
                Value::Double(d) if d.is_nan() || d.is_infinite() => fixed(*d, 0),
                other => {
                    return Err(format!(
                        "decimal clause can only be used on integers, was given {}",
                        type_desc(other)
                    ))
                }
            },
            'f' => match as_f64(arg) {
                Some(d) => fixed(d, prec.unwrap_or(6)),
                None => {
                    return Err(format!(
                        "fixed-point clause can only be used on doubles, was given {}",
                        type_desc(arg)
                    ))
                }
            },
            'e' => match as_f64(arg) {
                Some(d) => sci(d, prec.unwrap_or(6)),
                None => {
                    return Err(format!(
                        "scientific clause can only be used on doubles, was given {}",
                        type_desc(arg)
                    ))
                }
            },
            c => radix(arg, c)?,
        };
        out.push_str(&piece);
    }
    Ok(out)
}

fn string_format<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let f = str_arg(&a[0])?;
    let Value::List(l) = &a[1] else {
        return Err(Fail::NoMatch);
    };
    let args = l.to_vec();
    format(f, &args).map(owned).map_err(|e| Fail::msg(format!("error during formatting: {e}")))
}

/// The pre-spec `string.format` (v1).
pub(crate) static OVERLOADS: &[Overload] =
    &[O::member("format", "string_format", 2, string_format).with_cost(cost::first_traversal_cost)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::approx_constant)] // 2.71828 is the upstream test's input, not e
    fn clauses() {
        let s = |x: &str| Value::string(x);
        assert_eq!(format("%s and %d", &[s("a"), Value::Int(1)]).unwrap(), "a and 1");
        assert_eq!(format("%.2f", &[Value::Double(1.23456)]).unwrap(), "1.23");
        assert_eq!(format("%f", &[Value::Int(2)]).unwrap(), "2.000000");
        // cel-go ext/strings_test.go, locale en_US (the pre-spec formatter Kubernetes uses).
        let e = |f: &str, d: f64| format(f, &[Value::Double(d)]).unwrap();
        assert_eq!(e("%.6e", 1052.032911275), "1.052033\u{202f}\u{00d7}\u{202f}10\u{2070}\u{00b3}");
        assert_eq!(e("%e", 2.71828), "2.718280\u{202f}\u{00d7}\u{202f}10\u{2070}\u{2070}");
        assert_eq!(
            format("unescaped unicode: %e, escaped unicode: %e", &[Value::Double(2.71828), Value::Double(2.71828)]).unwrap(),
            "unescaped unicode: 2.718280\u{202f}×\u{202f}10⁰⁰, escaped unicode: 2.718280\u{202f}\u{00d7}\u{202f}10\u{2070}\u{2070}"
        );
        // The precision is a width, never fewer than 6 decimals.
        assert_eq!(e("%.1e", 0.00125), "1.250000\u{202f}×\u{202f}10⁻⁰³");
        assert_eq!(e("%.20e", -1e100), "   -1.000000\u{202f}×\u{202f}10¹⁰⁰");
        assert_eq!(
            format(
                "%b %o %x %X",
                &[Value::Int(5), Value::Int(8), Value::Int(255), Value::Int(255)]
            )
            .unwrap(),
            "101 10 ff FF"
        );
        assert_eq!(
            format("%s", &[Value::list(vec![Value::Int(1), s("a")])]).unwrap(),
            "[1, \"a\"]"
        );
        assert_eq!(format("%s", &[Value::Null]).unwrap(), "null");
        assert_eq!(format("100%%", &[]).unwrap(), "100%");
        assert!(format("%d", &[Value::Double(1.5)]).is_err());
    }
}
