//! The YAML Kyverno writes into its denial message: `go.yaml.in/yaml/v3` encoding a
//! `map[string]map[string]string` with indent 2 (keys sorted, no line folding). Only what that
//! map needs: plain, single-quoted, double-quoted and literal scalars, chosen as yaml.v3's
//! `stringv` and libyaml's scalar analysis choose them. `docs/kyverno-semantics.md` §6.

/// libyaml's `is_printable` over a character (yaml.v3 checks UTF-8 bytes: 4-byte characters
/// are not printable, so they are escaped).
fn printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0A
        || (0x20..=0x7E).contains(&u)
        || (0xA0..=0xD7FF).contains(&u)
        || ((0xE000..=0xFFFD).contains(&u) && u != 0xFEFF)
}

fn blank_or_end(c: Option<char>) -> bool {
    matches!(c, None | Some(' ' | '\t' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}'))
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// What `yaml_emitter_analyze_scalar` allows for `s`: (block plain, single quoted, block).
fn analyze(s: &str) -> (bool, bool, bool) {
    if s.is_empty() {
        return (true, true, false);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut previous_space, mut previous_break) =
        (false, false, false, false);
    let (mut line_breaks, mut special) = (false, false);
    let mut preceded_by_whitespace = true;
    for (i, &c) in chars.iter().enumerate() {
        let followed = blank_or_end(chars.get(i + 1).copied());
        let last = i + 1 == chars.len();
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' if followed => block_indicators = true,
                '-' if followed => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !printable(c) {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            if i == 0 {
                leading_break = true;
            }
            if last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_break = true;
            previous_space = false;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = blank_or_end(Some(c));
    }
    let (mut plain, mut single, mut block) = (true, true, true);
    if leading_space || leading_break || trailing_space || trailing_break {
        plain = false;
    }
    if trailing_space {
        block = false;
    }
    if break_space {
        plain = false;
        single = false;
    }
    if space_break || special {
        plain = false;
        single = false;
        block = false;
    }
    if line_breaks || block_indicators {
        plain = false;
    }
    (plain, single, block)
}

/// Whether yaml.v3 would read `s` unquoted as something other than a string (so `stringv`
/// quotes it): null, booleans (also YAML 1.1's), numbers, base-60 floats, timestamps.
fn resolves_to_non_string(s: &str) -> bool {
    const WORDS: [&str; 27] = [
        "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y",
        "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
        "OFF",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let t = s.strip_prefix(['-', '+']).unwrap_or(s);
    if matches!(t, ".inf" | ".Inf" | ".INF") || matches!(s, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if let Some(h) =
        t.strip_prefix("0x").or_else(|| t.strip_prefix("0o")).or_else(|| t.strip_prefix("0b"))
    {
        return !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_');
    }
    // Decimal integers and floats: digits, an optional fraction, an optional exponent.
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((a, b)) => {
            (digits(a) || a.is_empty())
                && (b.is_empty() || digits(b))
                && !(a.is_empty() && b.is_empty())
        }
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    if mantissa_ok
        && exponent_ok
        && t.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'.')
    {
        return true;
    }
    // Base-60 (`1:20`) and timestamps (`2001-12-14`, with an optional time).
    let b = t.as_bytes();
    if !b.is_empty()
        && b[0].is_ascii_digit()
        && t.contains(':')
        && t.split(':').all(|p| digits(p.split('.').next().unwrap_or("")))
    {
        return true;
    }
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..].iter().take(5).filter(|c| c.is_ascii_digit()).count() >= 3
        && s.len() <= 35
        && s.chars().all(|c| c.is_ascii_digit() || "-:.TtZz +".contains(c))
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if printable(c) => out.push(c),
            c if (c as u32) <= 0xFF => out.push_str(&format!("\\x{:02X}", c as u32)),
            c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// One scalar as yaml.v3 writes it: a mapping key (`key`), or a value at `indent` (for the
/// lines of a literal block).
fn scalar(s: &str, key: bool, indent: usize) -> String {
    let (plain, single, block) = analyze(s);
    let quote = resolves_to_non_string(s);
    if s.contains('\n') && !key && block {
        // Literal style; chomping from the trailing line breaks.
        let trailing = s.len() - s.trim_end_matches('\n').len();
        let chomp = match trailing {
            0 => "-",
            1 => "",
            _ => "+",
        };
        let hint = if s.starts_with([' ', '\n']) { "2" } else { "" };
        let pad = " ".repeat(indent + 2);
        let mut out = format!("|{hint}{chomp}");
        let body = if trailing == 1 { &s[..s.len() - 1] } else { s };
        for line in body.split('\n') {
            out.push('\n');
            if !line.is_empty() {
                out.push_str(&pad);
                out.push_str(line);
            }
        }
        return out;
    }
    if s.contains('\n') || quote {
        return double_quoted(s);
    }
    if plain && !s.is_empty() {
        return s.to_string();
    }
    if single {
        return format!("'{}'", s.replace('\'', "''"));
    }
    double_quoted(s)
}

/// `yaml.Encode(map[string]map[string]string)` with indent 2, keys in byte order (yaml.v3
/// sorts map keys). A later duplicate key replaces an earlier one, as in a Go map.
pub fn encode(failures: &[(String, Vec<(String, String)>)]) -> String {
    let mut sorted: Vec<&(String, Vec<(String, String)>)> = failures.iter().collect();
    vap_eval_cel::sort::sort_by(&mut sorted, |a, b| a.0.cmp(&b.0));
    let mut out = String::new();
    for (policy, rules) in sorted {
        let mut rules: Vec<&(String, String)> = rules
            .iter()
            .enumerate()
            .filter(|(i, (r, _))| !rules.iter().skip(i + 1).any(|(x, _)| x == r))
            .map(|(_, x)| x)
            .collect();
        vap_eval_cel::sort::sort_by(&mut rules, |a, b| a.0.cmp(&b.0));
        out.push_str(&scalar(policy, true, 0));
        out.push_str(":\n");
        for (rule, message) in rules {
            out.push_str("  ");
            out.push_str(&scalar(rule, true, 2));
            out.push_str(": ");
            out.push_str(&scalar(message, false, 2));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(s: &str) -> String {
        scalar(s, false, 2)
    }

    // Expected forms are what yaml.v3 prints for these strings (its encode tests and
    // libyaml's scalar analysis): ": " forces quotes, leading indicators force quotes,
    // numbers and booleans are quoted, 4-byte characters are escaped.
    #[test]
    fn scalars_are_styled_as_yaml_v3_styles_them() {
        assert_eq!(value("plain text"), "plain text");
        assert_eq!(
            value("failed expression: object.spec.replicas <= 5"),
            "'failed expression: object.spec.replicas <= 5'"
        );
        assert_eq!(value("it's: x"), "'it''s: x'");
        assert_eq!(value("- a"), "'- a'");
        assert_eq!(value("a #b"), "'a #b'");
        assert_eq!(value("a#b"), "a#b");
        assert_eq!(value("true"), "\"true\"");
        assert_eq!(value("5"), "\"5\"");
        assert_eq!(value("1.5"), "\"1.5\"");
        assert_eq!(value("yes"), "\"yes\"");
        assert_eq!(value(""), "\"\"");
        assert_eq!(value(" lead"), "' lead'");
        assert_eq!(value("tab\there"), "\"tab\\there\"");
        assert_eq!(value("smile 😀"), "\"smile \\U0001F600\"");
        assert_eq!(value("é ok"), "é ok");
        assert_eq!(value("a\nb"), "|-\n    a\n    b");
        assert_eq!(value("a\nb\n"), "|\n    a\n    b");
    }

    #[test]
    fn maps_are_sorted_and_indented_by_two() {
        let m = vec![
            (
                "require-labels".to_string(),
                vec![("check-team".to_string(), "label 'team' is required".to_string())],
            ),
            ("a".to_string(), vec![("r".to_string(), "x: y".to_string())]),
        ];
        assert_eq!(
            encode(&m),
            "a:\n  r: 'x: y'\nrequire-labels:\n  check-team: label 'team' is required\n"
        );
    }
}
