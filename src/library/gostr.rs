//! Go formatting helpers shared by the libraries, so error texts match what Go prints.
//!
//! Only what the libraries' error messages need: `strconv.Quote` (also what `%q` prints for a
//! string) and `strconv.ParseUint`/`ParseInt` error texts.

/// Go `strconv.Quote(s)`: double-quoted, Go escapes.
///
/// Printable runes are kept as they are. Go decides printability with `unicode.IsPrint`; this
/// uses "not a control character and not an unassigned/format code point we know of", which
/// agrees for every ASCII and Latin-1 rune and for ordinary letters beyond. Rare format
/// characters (e.g. U+200B) may differ.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn is_go_printable(c: char) -> bool {
    if c.is_control() {
        return false;
    }
    // Go's IsPrint excludes the spaces other than U+0020 and format characters.
    !matches!(c,
        '\u{a0}' | '\u{ad}' | '\u{1680}' | '\u{2000}'..='\u{200f}' | '\u{2028}'..='\u{202f}'
        | '\u{205f}'..='\u{206f}' | '\u{3000}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
}

/// Go `strconv.ParseUint(s, 10, 64)` including its error text.
pub fn parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.ParseUint: parsing {}: invalid syntax", quote(s)));
    }
    s.parse::<u64>()
        .map_err(|_| format!("strconv.ParseUint: parsing {}: value out of range", quote(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_escapes_like_go() {
        // Go strconv.Quote results.
        let table = [
            ("abc", r#""abc""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("tab\there", r#""tab\there""#),
            ("\u{1}", r#""\x01""#),
            ("\u{7f}", r#""\x7f""#),
            ("é", r#""é""#),
            ("\u{feff}", r#""\ufeff""#),
        ];
        for (input, want) in table {
            assert_eq!(quote(input), want, "{input:?}");
        }
    }

    #[test]
    fn parse_uint_errors() {
        assert_eq!(parse_uint("12"), Ok(12));
        assert_eq!(
            parse_uint(""),
            Err(r#"strconv.ParseUint: parsing "": invalid syntax"#.to_string())
        );
        assert_eq!(
            parse_uint("99999999999999999999"),
            Err(r#"strconv.ParseUint: parsing "99999999999999999999": value out of range"#
                .to_string())
        );
    }
}
