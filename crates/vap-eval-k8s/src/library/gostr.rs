//! Go formatting helpers shared by the libraries, so error texts match what Go prints.
//!
//! Only what the libraries' error messages need: `strconv.Quote` (also what `%q` prints for a
//! string), `strconv.ParseUint`/`ParseInt` error texts, and `strings.ToLower`.

/// Go `strconv.Quote(s)` (also what `%q` prints for a string): double-quoted, with Go escapes for
/// non-printable runes.
///
/// Printability approximates Go's `unicode.IsPrint` (categories L, M, N, P, S plus ASCII space):
/// controls, non-ASCII spaces, the common format characters (Cf), private-use code points and
/// noncharacters are escaped. Unassigned code points are treated as printable (difference).
pub fn quote(s: &str) -> String {
    quote_bytes(s.as_bytes())
}

/// Go `strconv.Quote` of a Go string holding arbitrary bytes: as [`quote`], with each byte that is
/// not part of valid UTF-8 as `\xNN`.
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
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
                c if is_print(c) => out.push(c),
                c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
                c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push_str(&format!("\\U{:08x}", c as u32)),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

/// Approximation of Go `unicode.IsPrint` (see [`quote`]).
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let u = c as u32;
    let format_chars = matches!(u,
        0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x0890..=0x0891 | 0x08E2 | 0x180E
        | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F);
    let private_or_non = matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
        || (u & 0xFFFE) == 0xFFFE
        || (0xFDD0..=0xFDEF).contains(&u);
    !(format_chars || private_or_non)
}

/// Go `strconv.ParseUint(s, 10, 64)` including its error text.
pub fn parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.ParseUint: parsing {}: invalid syntax", quote(s)));
    }
    s.parse::<u64>()
        .map_err(|_| format!("strconv.ParseUint: parsing {}: value out of range", quote(s)))
}

/// Go `strings.ToLower`: each rune mapped on its own by Unicode's simple lowercase mapping. Unlike
/// Rust's `str::to_lowercase`, a final `Σ` becomes `σ` (not `ς`) and `İ` becomes `i` (not `i̇`),
/// so lengths can differ from Rust's. ASCII (the common case) takes the fast path, as in Go.
pub fn to_lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    // `char::to_lowercase` is the full mapping; the only rune it maps to more than one is U+0130,
    // whose simple mapping is its first rune.
    s.chars().map(|c| c.to_lowercase().next().unwrap_or(c)).collect()
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
        // Go strings are bytes: strconv.Quote("a\xffé\xe2\x82") escapes the invalid bytes.
        assert_eq!(quote_bytes(b"a\xff\xc3\xa9\xe2\x82"), r#""a\xffé\xe2\x82""#);
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

    #[test]
    fn to_lower_maps_runes_as_go_does() {
        assert_eq!(to_lower("Deployment"), "deployment");
        assert_eq!(to_lower("example.COM/Key"), "example.com/key");
        // Go: unicode.ToLower per rune (strings.ToLower("İSTANBUL") == "istanbul").
        assert_eq!(to_lower("İSTANBUL"), "istanbul");
        assert_eq!("İSTANBUL".to_lowercase(), "i\u{307}stanbul");
        // No final-sigma rule: strings.ToLower("ΟΔΟΣ") == "οδοσ".
        assert_eq!(to_lower("ΟΔΟΣ"), "οδοσ");
        assert_eq!(to_lower("ÀÉ日本"), "àé日本");
    }
}
