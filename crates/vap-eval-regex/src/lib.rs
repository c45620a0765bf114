//! Go `regexp` (RE2) for vap-eval's CEL engine: `matches` and the Kubernetes `Regex` library.
//!
//! Go `regexp` (RE2) `FindString` / `FindAllString` on top of the `regex` crate's parser and
//! engine (`regex-syntax`, `regex-automata`; apiserver `pkg/cel/library/regex.go`).
//!
//! ```text
//! <string>.find(<string>) <string>                 -> find  (first match or "")
//! <string>.findAll(<string>) <list<string>>        -> find_all(.., -1)
//! <string>.findAll(<string>, <int>) <list<string>> -> find_all (n < 0: all, n = 0: none)
//! ```
//!
//! Examples (apiserver `regex.go` docs, Go `regexp` tests):
//!
//! ```text
//! "abc 123".find('[0-9]+')          // "123"
//! "abc 123".find('xyz')             // ""
//! "123 abc 456".findAll('[0-9]+')   // ["123", "456"]
//! "123 abc 456".findAll('[0-9]+', 1) // ["123"]
//! "baaab".findAll('a*')             // ["", "aaa", ""]  (Go skips an empty match right after a match)
//! "abc".find('(abc')                // error: Illegal regex: error parsing regexp: missing closing ): `(abc`
//! ```
//!
//! # RE2 vs the `regex` crate
//! Patterns are translated before compiling so that they mean what Go means:
//! `\d \w \s \b \B` are ASCII-only in Go (Unicode in Rust), `\Q…\E` literals and octal escapes
//! exist only in Go, and `&`, `~`, `[` inside a bracket expression are literals in Go but set
//! operators / nested classes in Rust. Go-only rejections are checked first: nested repetition
//! (`a**`), repeat counts above 1000, flags other than `imsU`, escapes Go does not know
//! (`\<`, `\>`, `\1`…). Error texts follow Go's `error parsing regexp: <code>: `<fragment>``
//! for the common codes; other syntax errors fall back to the `regex` crate's description.
//! Unicode classes and `(?i)` case folding are resolved by the `unicode` module from compact tables
//! (`tables`); regex-syntax is built without its Unicode data.

//!
//! A crate of its own so that the package's wasm profile builds compiling a pattern for size
//! (opt-level "z", the root Cargo.toml's `[profile.wasm]` default): a pattern is compiled once
//! (vap-eval-cel caches it), and matching runs in regex-automata's PikeVM, built for size too.

#[rustfmt::skip]
mod tables;
mod unicode;

use regex_automata::nfa::thompson::{self, backtrack, pikevm};
use regex_automata::util::primitives::NonMaxUsize;
use regex_automata::Input;
use regex_syntax::ast::{ErrorKind, Span};
use std::ops::Range;

/// A compiled pattern: its Thompson NFA, run by regex-automata's bounded backtracker when the
/// text is short enough for its visited set (a bit per NFA state and text position, 256 KiB:
/// texts up to ≈ 2 M bits / states, tens of KB), else by its PikeVM. The `regex` crate's meta
/// regex picks them the same way; both report the same leftmost-first matches, the backtracker
/// ≈ 4-8× faster on Kubernetes names and image references (bench/README.md, "Regexps on the
/// bounded backtracker"); a pattern that is one class from start to end (`^[a-z0-9-]+$`) runs
/// neither (`Whole`). Running them directly leaves the meta layer, its literal extraction
/// and prefilter code out of the wasm (−22 KB gzip of the package). The engines' scratch space
/// is reused across searches (one thread: the cache holding a `Regex` is per thread).
pub struct Regex {
    vm: pikevm::PikeVM,
    bt: backtrack::BoundedBacktracker,
    /// The longest text (bytes) the backtracker takes.
    bt_max: usize,
    /// The pattern is `^[class]{min,max}$`: matched without an engine.
    whole: Option<Whole>,
    cache: std::cell::RefCell<(backtrack::Cache, pikevm::Cache)>,
}

/// A pattern that is one character class repeated from the text's start to its end
/// (`^[a-z0-9-]+$`, `^\d{1,5}$`, `^([A-Z]*)$`; greedy or not): it matches the whole text or
/// nothing, whether every character is in the class and their count in `min..=max`.
struct Whole {
    ranges: Box<[(char, char)]>,
    min: u32,
    max: Option<u32>,
}

impl Whole {
    fn of(hir: &regex_syntax::hir::Hir) -> Option<Whole> {
        use regex_syntax::hir::{Class, HirKind, Look};
        let HirKind::Concat(parts) = hir.kind() else { return None };
        let [first, body, last] = parts.as_slice() else { return None };
        if first.kind() != &HirKind::Look(Look::Start) || last.kind() != &HirKind::Look(Look::End) {
            return None;
        }
        let mut body = body;
        let (mut min, mut max) = (1, Some(1));
        loop {
            match body.kind() {
                HirKind::Capture(c) => body = &c.sub,
                HirKind::Repetition(r) if (min, max) == (1, Some(1)) => {
                    (min, max) = (r.min, r.max);
                    body = &r.sub;
                }
                HirKind::Class(Class::Unicode(c)) => {
                    let ranges = c.ranges().iter().map(|r| (r.start(), r.end())).collect();
                    return Some(Whole { ranges, min, max });
                }
                _ => return None,
            }
        }
    }

    #[inline]
    fn is_match(&self, s: &str) -> bool {
        let mut n: u32 = 0;
        for c in s.chars() {
            // The ranges are sorted and apart: the first that ends at or after `c`.
            let i = self.ranges.partition_point(|r| r.1 < c);
            if self.ranges.get(i).is_none_or(|r| r.0 > c) {
                return false;
            }
            n = n.saturating_add(1);
        }
        n >= self.min && self.max.is_none_or(|m| n <= m)
    }
}

impl std::fmt::Debug for Regex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Regex")
    }
}

impl Regex {
    /// Searches `input`, the leftmost-first match's bounds written into `slots` (none: only
    /// whether there is one).
    #[inline]
    fn search(&self, input: &Input<'_>, slots: &mut [Option<NonMaxUsize>]) -> bool {
        let (bt, vm) = &mut *self.cache.borrow_mut();
        // As the meta regex: not for a match-only search of a long text, which the PikeVM can
        // end at the first match state while the backtracker runs on greedily.
        let long = input.get_earliest() && input.haystack().len() > 128;
        if !long && input.get_span().len() <= self.bt_max {
            // Err only for a text over its limit, which `bt_max` rules out.
            if let Ok(m) = self.bt.try_search_slots(bt, input, slots) {
                return m.is_some();
            }
        }
        self.vm.search_slots(vm, input, slots).is_some()
    }

    /// Whether the pattern matches anywhere in `s`.
    #[inline]
    pub fn is_match(&self, s: &str) -> bool {
        if let Some(w) = &self.whole {
            return w.is_match(s);
        }
        self.search(&Input::new(s).earliest(true), &mut [])
    }

    /// The leftmost-first match in `s` starting at byte `start` or later, as a byte range (the
    /// text before `start` still counts for `^`, `\b`).
    #[inline]
    pub fn find_at(&self, s: &str, start: usize) -> Option<Range<usize>> {
        if let Some(w) = &self.whole {
            // `^` holds only at the text's start.
            return (start == 0 && w.is_match(s)).then_some(0..s.len());
        }
        let mut slots = [None, None];
        if !self.search(&Input::new(s).range(start..), &mut slots) {
            return None;
        }
        Some(slots[0]?.get()..slots[1]?.get())
    }

    /// The text of the leftmost-first match in `s`.
    #[inline]
    pub fn find<'h>(&self, s: &'h str) -> Option<&'h str> {
        self.find_at(s, 0).and_then(|r| s.get(r))
    }
}

fn go_error(code: &str, fragment: &str) -> String {
    format!("error parsing regexp: {code}: `{fragment}`")
}

const ASCII_D: &str = "0-9";
const ASCII_W: &str = "0-9A-Za-z_";
const ASCII_S: &str = r"\t\n\x0C\r ";

/// Translates Go RE2 syntax into equivalent `regex` crate syntax, rejecting what Go rejects.
fn translate(p: &str) -> Result<String, String> {
    let chars: Vec<(usize, char)> = p.char_indices().collect();
    let frag = |from: usize, to: usize| -> &str {
        let a = chars.get(from).map_or(p.len(), |c| c.0);
        let b = chars.get(to).map_or(p.len(), |c| c.0);
        &p[a..b]
    };
    let mut out = String::with_capacity(p.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    let mut class_start = 0;
    // Start index of the previous repetition operator, when the last token was one.
    let mut last_repeat: Option<usize> = None;
    while i < chars.len() {
        let c = chars[i].1;
        if c == '\\' {
            let Some(&(_, e)) = chars.get(i + 1) else {
                return Err(go_error("trailing backslash at end of expression", ""));
            };
            last_repeat = None;
            match e {
                'Q' if !in_class => {
                    let rest = &p[chars.get(i + 2).map_or(p.len(), |c| c.0)..];
                    let (lit, consumed) = match rest.find("\\E") {
                        Some(k) => (&rest[..k], k + 2),
                        None => (rest, rest.len()),
                    };
                    out.push_str(&regex_syntax::escape(lit));
                    let end_byte = chars.get(i + 2).map_or(p.len(), |c| c.0) + consumed;
                    i = chars.iter().position(|c| c.0 >= end_byte).unwrap_or(chars.len());
                    continue;
                }
                'd' | 'w' | 's' | 'D' | 'W' | 'S' => {
                    let set = match e.to_ascii_lowercase() {
                        'd' => ASCII_D,
                        'w' => ASCII_W,
                        _ => ASCII_S,
                    };
                    let neg = e.is_ascii_uppercase();
                    match (in_class, neg) {
                        (true, false) => out.push_str(set),
                        (true, true) => out.push_str(&format!("[^{set}]")),
                        (false, false) => out.push_str(&format!("[{set}]")),
                        (false, true) => out.push_str(&format!("[^{set}]")),
                    }
                }
                'b' | 'B' if !in_class => out.push_str(&format!("(?-u:\\{e})")),
                '0'..='7' => {
                    // Go: \0 plus up to two octal digits; \1-\7 only when followed by one.
                    let mut j = i + 1;
                    let mut v = 0u32;
                    while j < chars.len() && j < i + 4 && ('0'..='7').contains(&chars[j].1) {
                        v = v * 8 + chars[j].1.to_digit(8).unwrap_or(0);
                        j += 1;
                    }
                    if e != '0' && j == i + 2 {
                        return Err(go_error("invalid escape sequence", frag(i, i + 2)));
                    }
                    out.push_str(&format!("\\x{{{v:x}}}"));
                    i = j;
                    continue;
                }
                // `\p{Greek}`, `\x{263a}`: the braces belong to the escape, not a repetition.
                'p' | 'P' | 'x' if chars.get(i + 2).map(|c| c.1) == Some('{') => {
                    let Some(close) = chars[i + 2..].iter().position(|c| c.1 == '}') else {
                        return Err(go_error(
                            "invalid character class range",
                            frag(i, chars.len()),
                        ));
                    };
                    let end = i + 2 + close + 1;
                    out.push_str(frag(i, end));
                    i = end;
                    continue;
                }
                'a' | 'f' | 't' | 'n' | 'r' | 'v' | 'A' | 'z' | 'p' | 'P' | 'x' | 'b' => {
                    out.push('\\');
                    out.push(e);
                }
                e if e.is_ascii_punctuation() => {
                    out.push('\\');
                    out.push(e);
                }
                _ => return Err(go_error("invalid escape sequence", frag(i, i + 2))),
            }
            i += 2;
            continue;
        }
        if in_class {
            match c {
                ']' if i > class_start => in_class = false,
                '[' if chars.get(i + 1).map(|c| c.1) == Some(':') => {
                    // POSIX class: copy through to the closing ":]".
                    let rest = &p[chars[i].0..];
                    if let Some(k) = rest.find(":]") {
                        out.push_str(&rest[..k + 2]);
                        let end_byte = chars[i].0 + k + 2;
                        i = chars.iter().position(|c| c.0 >= end_byte).unwrap_or(chars.len());
                        continue;
                    }
                    out.push_str("\\[");
                    i += 1;
                    continue;
                }
                '[' | '&' | '~' => {
                    out.push('\\');
                    out.push(c);
                    i += 1;
                    continue;
                }
                '-' if chars.get(i + 1).map(|c| c.1) == Some('-') => {
                    out.push_str("\\-");
                    i += 1;
                    continue;
                }
                _ => {}
            }
            out.push(c);
            i += 1;
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                out.push('[');
                i += 1;
                if chars.get(i).map(|c| c.1) == Some('^') {
                    out.push('^');
                    i += 1;
                }
                // A leading ']' is a literal in both dialects.
                class_start = i + 1;
                last_repeat = None;
                continue;
            }
            '(' if chars.get(i + 1).map(|c| c.1) == Some('?') => {
                let next = chars.get(i + 2).map(|c| c.1);
                if !matches!(next, Some('P') | Some('<')) {
                    let mut j = i + 2;
                    loop {
                        match chars.get(j).map(|c| c.1) {
                            Some(':') | Some(')') => break,
                            Some('i' | 'm' | 's' | 'U' | '-') => j += 1,
                            Some(_) => {
                                return Err(go_error(
                                    "invalid or unsupported Perl syntax",
                                    frag(i, j + 1),
                                ))
                            }
                            None => {
                                return Err(go_error("missing closing )", p));
                            }
                        }
                    }
                }
                last_repeat = None;
            }
            '*' | '+' | '?' | '{' => {
                let start = i;
                let mut end = i + 1;
                if c == '{' {
                    // Only a well-formed {n}, {n,} or {n,m} is a repetition in Go.
                    let rest: String = chars[i + 1..].iter().map(|c| c.1).collect();
                    match rest.find('}') {
                        Some(k)
                            if {
                                let body = &rest[..k];
                                let (a, b) = body.split_once(',').unwrap_or((body, body));
                                !a.is_empty()
                                    && a.bytes().all(|x| x.is_ascii_digit())
                                    && b.bytes().all(|x| x.is_ascii_digit())
                            } =>
                        {
                            let body = &rest[..k];
                            let too_big = body.split(',').any(|n| {
                                !n.is_empty() && n.parse::<u64>().map_or(true, |v| v > 1000)
                            });
                            end = i + 1 + body.chars().count() + 1;
                            if too_big {
                                return Err(go_error("invalid repeat count", frag(i, end)));
                            }
                        }
                        _ => {
                            // A literal '{'.
                            out.push_str("\\{");
                            i += 1;
                            last_repeat = None;
                            continue;
                        }
                    }
                }
                if chars.get(end).map(|c| c.1) == Some('?') {
                    end += 1;
                }
                if let Some(prev) = last_repeat {
                    return Err(go_error("invalid nested repetition operator", frag(prev, end)));
                }
                out.push_str(frag(start, end));
                last_repeat = Some(start);
                i = end;
                continue;
            }
            _ => last_repeat = None,
        }
        out.push(c);
        i += 1;
    }
    Ok(out)
}

/// Maps a `regex-syntax` parse error onto Go's wording; `pattern` is the translated text.
fn map_syntax_error(original: &str, pattern: &str, err: &regex_syntax::ast::Error) -> String {
    let span: &Span = err.span();
    let text = pattern.get(span.start.offset..span.end.offset).unwrap_or("");
    match err.kind() {
        ErrorKind::GroupUnclosed => go_error("missing closing )", original),
        ErrorKind::GroupUnopened => go_error("unexpected )", original),
        ErrorKind::ClassUnclosed => {
            go_error("missing closing ]", pattern.get(span.start.offset..).unwrap_or(""))
        }
        ErrorKind::ClassRangeInvalid => go_error("invalid character class range", text),
        ErrorKind::ClassEscapeInvalid
        | ErrorKind::EscapeUnrecognized
        | ErrorKind::EscapeHexInvalid
        | ErrorKind::EscapeHexInvalidDigit
        | ErrorKind::EscapeHexEmpty
        | ErrorKind::UnsupportedBackreference => go_error("invalid escape sequence", text),
        ErrorKind::EscapeUnexpectedEof => go_error("trailing backslash at end of expression", ""),
        ErrorKind::RepetitionMissing => {
            // The crate's span is empty; Go quotes the operator itself.
            let rest = pattern.get(span.start.offset..).unwrap_or("");
            let op = match rest.chars().next() {
                Some('{') => rest.find('}').map_or(rest, |k| &rest[..=k]),
                Some(c) => &rest[..c.len_utf8()],
                None => "",
            };
            go_error("missing argument to repetition operator", op)
        }
        ErrorKind::RepetitionCountInvalid | ErrorKind::RepetitionCountUnclosed => {
            go_error("invalid repeat count", text)
        }
        ErrorKind::GroupNameInvalid
        | ErrorKind::GroupNameEmpty
        | ErrorKind::GroupNameUnexpectedEof
        | ErrorKind::GroupNameDuplicate { .. } => go_error("invalid named capture", text),
        ErrorKind::FlagUnrecognized
        | ErrorKind::FlagDanglingNegation
        | ErrorKind::FlagRepeatedNegation { .. }
        | ErrorKind::FlagDuplicate { .. }
        | ErrorKind::FlagUnexpectedEof => go_error("invalid or unsupported Perl syntax", text),
        ErrorKind::UnicodeClassInvalid => go_error("invalid character class range", text),
        ErrorKind::NestLimitExceeded(_) => go_error("expression nests too deeply", original),
        other => format!("error parsing regexp: {other}: `{original}`"),
    }
}

/// The translated pattern parsed (Go's error text on failure): the Unicode classes and case
/// folding resolved by `regex_unicode` (an unknown class is Go's "invalid character class
/// range": Go has general categories and scripts only, no binary properties), then translated
/// by `regex-syntax` with its defaults (Unicode, UTF-8 only, nesting limit 250).
fn parse(original: &str, pattern: &str) -> Result<regex_syntax::hir::Hir, String> {
    let mut ast = regex_syntax::ast::parse::Parser::new()
        .parse(pattern)
        .map_err(|e| map_syntax_error(original, pattern, &e))?;
    let class_error = |span: &Span, perl: bool| {
        let text = pattern.get(span.start.offset..span.end.offset).unwrap_or("");
        let code = if perl {
            "invalid or unsupported Perl syntax"
        } else {
            "invalid character class range"
        };
        go_error(code, text)
    };
    crate::unicode::lower(&mut ast).map_err(|e| class_error(&e.span, e.perl))?;
    regex_syntax::hir::translate::Translator::new().translate(pattern, &ast).map_err(|e| {
        use regex_syntax::hir::ErrorKind as K;
        let missing =
            matches!(e.kind(), K::UnicodePropertyNotFound | K::UnicodePropertyValueNotFound);
        class_error(e.span(), !missing)
    })
}

/// Go `regexp.Compile`: RE2 syntax translated for the `regex` crate, and Go's error text
/// (`error parsing regexp: …`), as the standard `matches` reports it.
pub fn compile_go(pattern: &str) -> Result<Regex, String> {
    let translated = translate(pattern)?;
    // All capture groups in the NFA, a 4 MiB limit on the compiled program.
    let hir = parse(pattern, &translated)?;
    let config = thompson::Config::new().nfa_size_limit(Some(1 << 22)).shrink(false);
    let too_large = |_| go_error("expression too large", pattern);
    let nfa =
        thompson::Compiler::new().configure(config).build_from_hir(&hir).map_err(too_large)?;
    let bt = backtrack::BoundedBacktracker::new_from_nfa(nfa.clone()).map_err(too_large)?;
    let vm = pikevm::PikeVM::new_from_nfa(nfa).map_err(too_large)?;
    let cache = std::cell::RefCell::new((bt.create_cache(), vm.create_cache()));
    Ok(Regex { bt_max: bt.max_haystack_len(), whole: Whole::of(&hir), vm, bt, cache })
}

/// Go `regexp.Compile`, error text as the Kubernetes regex library reports it (`Illegal regex: …`).
pub fn compile(pattern: &str) -> Result<Regex, String> {
    compile_go(pattern).map_err(|e| format!("Illegal regex: {e}"))
}

/// `<string>.find(<regex>)`: the leftmost-first match, or `""`.
pub fn find(s: &str, pattern: &str) -> Result<String, String> {
    let re = compile(pattern)?;
    Ok(re.find(s).unwrap_or_default().to_string())
}

/// `<string>.findAll(<regex>, n)`: Go `FindAllString` (an empty match directly after the
/// previous match is skipped; `n < 0` means all, `n == 0` none).
pub fn find_all(s: &str, pattern: &str, n: i64) -> Result<Vec<String>, String> {
    Ok(compile(pattern)?.find_all(s, n))
}

impl Regex {
    /// Go `FindAllString(s, n)` (see [`find_all`]).
    #[inline]
    pub fn find_all(&self, s: &str, n: i64) -> Vec<String> {
        let mut out = Vec::new();
        if n == 0 {
            return out;
        }
        let (mut pos, mut prev_end): (usize, Option<usize>) = (0, None);
        while (n < 0 || (out.len() as i64) < n) && pos <= s.len() {
            let Some(m) = self.find_at(s, pos) else { break };
            let mut accept = true;
            if m.end == pos {
                if Some(m.start) == prev_end {
                    accept = false;
                }
                pos += s[pos..].chars().next().map_or(1, char::len_utf8);
            } else {
                pos = m.end;
            }
            prev_end = Some(m.end);
            if accept {
                out.push(s.get(m).unwrap_or_default().to_string());
            }
        }
        out
    }
}

/// Cost of `find`/`findAll`: ceil(0.1 × (1 + len(s))) × ceil(0.25 × len(regex)).
pub fn find_cost(str_len: u64, regex_len: u64) -> u64 {
    (str_len + 1).div_ceil(10) * regex_len.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    // apiserver pkg/cel/library/regex.go doc examples
    #[test]
    fn library_examples() {
        assert_eq!(find("abc 123", "[0-9]+").unwrap(), "123");
        assert_eq!(find("abc 123", "xyz").unwrap(), "");
        assert_eq!(find_all("123 abc 456", "[0-9]+", -1).unwrap(), ["123", "456"]);
        assert_eq!(find_all("123 abc 456", "[0-9]+", 1).unwrap(), ["123"]);
        assert_eq!(find_all("123 abc 456", "xyz", -1).unwrap(), Vec::<String>::new());
        assert_eq!(find_all("123 abc 456", "[0-9]+", 0).unwrap(), Vec::<String>::new());
    }

    // Go regexp find_test.go FindAll cases with empty matches
    #[test]
    fn go_empty_match_iteration() {
        assert_eq!(find_all("baaab", "a*", -1).unwrap(), ["", "aaa", ""]);
        assert_eq!(find_all("abc", "", -1).unwrap(), ["", "", "", ""]);
        assert_eq!(find_all("abcd", "b*", -1).unwrap(), ["", "b", "", ""]);
        assert_eq!(find_all("xyz", "x*", -1).unwrap(), ["x", "", ""]);
        assert_eq!(find_all("日本語", "", -1).unwrap(), ["", "", "", ""]);
    }

    // Go regexp semantics that differ from the regex crate's defaults
    #[test]
    fn go_dialect() {
        assert_eq!(find("٣3", r"\d").unwrap(), "3", "\\d is ASCII in Go");
        assert_eq!(find("é_x", r"\w+").unwrap(), "_x");
        assert_eq!(find("a.b*c", r"\Q.b*\E").unwrap(), ".b*");
        assert_eq!(find("a&b", "[&]").unwrap(), "&");
        assert_eq!(find("A", r"\101").unwrap(), "A");
        assert_eq!(find("ÉCOLE", "(?i)école").unwrap(), "ÉCOLE");
        assert_eq!(find("Ωmega", r"\pL+").unwrap(), "Ωmega");
        assert_eq!(find("x{1}", "x{").unwrap(), "x{");
        assert_eq!(find("ab", "[[:alpha:]]+").unwrap(), "ab");
    }

    // Go regexp/syntax parse_test.go invalidRegexps (error texts as regexp.Compile prints them)
    #[test]
    fn go_error_texts() {
        let table = [
            ("(abc", "missing closing ): `(abc`"),
            ("abc)", "unexpected ): `abc)`"),
            ("a**", "invalid nested repetition operator: `**`"),
            ("a*+", "invalid nested repetition operator: `*+`"),
            ("a{2}*", "invalid nested repetition operator: `{2}*`"),
            ("*", "missing argument to repetition operator: `*`"),
            ("x{1001}", "invalid repeat count: `{1001}`"),
            ("[a", "missing closing ]: `[a`"),
            ("[z-a]", "invalid character class range: `z-a`"),
            ("\\q", "invalid escape sequence: `\\q`"),
            ("\\1", "invalid escape sequence: `\\1`"),
            ("a\\", "trailing backslash at end of expression: ``"),
            ("(?x)a", "invalid or unsupported Perl syntax: `(?x`"),
        ];
        for (pattern, want) in table {
            assert_eq!(
                compile(pattern).unwrap_err(),
                format!("Illegal regex: error parsing regexp: {want}"),
                "{pattern}"
            );
        }
        assert_eq!(find_cost(9, 6), 2);
    }

    /// What the engine made of `pattern` before its Unicode data moved into regex_unicode.rs:
    /// regex-syntax's own parser with its `unicode-gencat`, `unicode-script`, `unicode-case`
    /// data (the dev-dependency), errors mapped as they were then.
    fn reference(original: &str) -> Result<regex_syntax::hir::Hir, String> {
        let pattern = translate(original)?;
        regex_syntax::ParserBuilder::new().build().parse(&pattern).map_err(|e| match e {
            regex_syntax::Error::Parse(e) => map_syntax_error(original, &pattern, &e),
            regex_syntax::Error::Translate(e) => {
                let span = e.span();
                let text = pattern.get(span.start.offset..span.end.offset).unwrap_or("");
                match e.kind() {
                    regex_syntax::hir::ErrorKind::UnicodePropertyNotFound
                    | regex_syntax::hir::ErrorKind::UnicodePropertyValueNotFound => {
                        go_error("invalid character class range", text)
                    }
                    _ => go_error("invalid or unsupported Perl syntax", text),
                }
            }
            _ => unreachable!(),
        })
    }

    fn same_as_reference(original: &str) {
        let ours = translate(original).and_then(|p| {
            if let Ok(mut ast) = regex_syntax::ast::parse::Parser::new().parse(&p) {
                if crate::unicode::lower(&mut ast).is_ok() {
                    assert!(
                        crate::unicode::tests::needs_no_data(&ast),
                        "{original}: Unicode data still needed"
                    );
                }
            }
            parse(original, &p)
        });
        let want = reference(original);
        if ours != want {
            let short = |r: &Result<regex_syntax::hir::Hir, String>| {
                format!("{r:?}").chars().take(300).collect::<String>()
            };
            panic!("{original}: {} != {}", short(&ours), short(&want));
        }
    }

    /// Every category and script alias, in every form, and the names regex-syntax resolves
    /// otherwise (loose matching, properties without data, values of other properties).
    #[test]
    fn unicode_classes_as_before() {
        let tables = [crate::tables::GC_NAMES, crate::tables::SC_NAMES];
        let mut names: Vec<&str> = tables.iter().flat_map(|t| t.split([';', ','])).collect();
        names.extend([
            "Any",
            "assigned",
            "ASCII",
            "L",
            "Lu",
            "Letter",
            "Uppercase-Letter",
            "is_Greek",
            "GREEK",
            "Gré ek",
            "Greek ",
            "isc",
            "c",
            "Cs",
            "surrogate",
            "Zzzz",
            "Unknown",
            "Hrkt",
            "Katakana_Or_Hiragana",
            "",
            "^",
            "Alphabetic",
            "alpha",
            "White_Space",
            "space",
            "wspace",
            "digit",
            "Decimal_Number",
            "Age=1.1",
            "age=V1_1",
            "gc=",
            "=L",
            "gc=L",
            "gc:Lu",
            "General_Category=Letter",
            "gc!=L",
            "sc=Greek",
            "Script=grek",
            "sc!=Greek",
            "scx=Greek",
            "Script_Extensions=Hira",
            "scx!=Latn",
            "scx=Zzzz",
            "sc=Lu",
            "gc=Greek",
            "Bidi_Class=L",
            "bc=AL",
            "gcb=CR",
            "wb=ALetter",
            "sb=Upper",
            "Alphabetic=Yes",
            "lc",
            "cf",
            "sc",
            "L&",
            "Han",
        ]);
        for n in names {
            for p in [
                format!("\\p{{{n}}}"),
                format!("\\P{{{n}}}"),
                format!("(?i)\\p{{{n}}}"),
                format!("(?i)[^\\P{{{n}}}x]"),
                format!("\\p{{scx={n}}}"),
            ] {
                same_as_reference(&p);
            }
        }
        for c in "LMNPSZCXa!é".chars() {
            same_as_reference(&format!("\\p{c}"));
            same_as_reference(&format!("(?i)\\P{c}"));
        }
    }

    /// Case folding where flags start, stop and nest, in literals and every kind of class.
    #[test]
    fn case_folding_as_before() {
        for p in [
            "(?i)k",
            "(?i)K",
            "(?i)ſ",
            "(?i)ǅ",
            "(?i)Σ",
            "(?i)ϑ",
            "(?i)ß",
            "(?i)ẞ",
            "(?i)İ",
            "(?i)1",
            "(?i)abc",
            "(?i)école",
            "(?i:a)b",
            "a(?i)b|c",
            "((?i)a)b",
            "(?i)a(?-i)b",
            "(?i)(?-i:a)b",
            "(?i-s:k)K",
            "(?U)(?i)a+b*?",
            "(?is)k.s",
            "(?i)[a-z]",
            "(?i)[^a-z]",
            "(?i)[^[^a]b]",
            "(?i)[[:upper:]]",
            "(?i)[[:^lower:]k]",
            "(?i)[^[:^alpha:]]",
            "(?i)[k&&s]",
            "(?i)\\Q.K\\E",
            "(?i)\\d\\w\\s\\D\\W\\S",
            "(?i)[\\d\\W]",
            "(?i)\\x{212A}",
            "(?i)\\101",
            "(?i)[\\x{100}-\\x{17F}]",
            "(?i)[\\x{0}-\\x{10FFFF}]",
            "(?i)[^\\x{0}-\\x{10FFFF}]",
            "(?i)\\bk\\B",
            "(?i)^k$",
            "(?im)^k$",
            "[\\pL\\d]",
            "[^\\P{Greek}]",
            "[\\p{Greek}--α]",
            "(?i)(?P<n>k)|(?:s)",
            "(?i)k{2,3}",
            "\\p{Greek}(",
            "[\\p{Foo}",
            "\\p{Foo}\\p{Bar}",
            "x**\\p{Foo}",
            "\\p{Foo}(?z)",
            "(?i)\\p{Foo}",
            "[\\p{Greek}\\p{Foo}]",
            "\\p{White_Space}\\p{Foo}",
        ] {
            same_as_reference(p);
        }
    }

    /// The bounded backtracker (short texts) against the PikeVM (the one engine before it) on
    /// the same NFA: `is_match`, and the match from every byte offset (what `find` and
    /// `findAll` search), on patterns with anchors, alternations, captures, empty matches,
    /// word boundaries, flags and Unicode classes, and texts empty, ASCII, non-ASCII, multi-line
    /// and long (past 128 bytes `is_match` runs the PikeVM, past the visited set's limit both).
    #[test]
    fn backtracker_as_pikevm() {
        let patterns = [
            "",
            "^",
            "$",
            "^$",
            "a",
            "a*",
            "a+?",
            "(?U)a+",
            "a|ab",
            "ab|a",
            "(a|ab)(c|bcd)(d*)",
            "(a+)(b+)?",
            "(?:x*y*z*)*",
            "^[a-z0-9-]+$",
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
            "^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9/._-]+(:[a-zA-Z0-9._-]+)?$",
            ":latest$",
            "^(.*/)?[^/:]+(:[^/]+)?(@sha256:[a-f0-9]{64})?$",
            "[0-9]+",
            "[0-9]{2,3}",
            "\\d+|\\w+",
            "\\bapp\\b",
            "\\Bp",
            "(?m)^\\w+$",
            "(?s)a.b",
            "a.b",
            ".",
            "(?i)app|ÉCOLE",
            "\\pL+",
            "[^a-z]+",
            "日本|本語",
            "[日本語]+$",
            "(?P<name>[a-z]+)-(?P<num>\\d+)",
            "((a)|b)*?c",
            "x?",
            "(|a)+",
            "(a*)+$",
            "^(a|b|)*c",
            "^[a-z]$",
            "^[a-z]*$",
            "^[a-z]+?$",
            "^([a-z0-9-]+)$",
            "^(?:[0-9]{2,3})$",
            "^\\d{1,5}$",
            "\\A[^a]{0,3}\\z",
            "(?i)^[k-m]+$",
            "^\\pL+$",
            "^[日本語a-]+$",
            "^.*$",
            "(?s)^.{3}$",
            "^[a-z]+$|x",
            "(?m)^[a-z]+$",
        ];
        let long_a = "a".repeat(300);
        let long_name = "my-app-1".repeat(40);
        let texts = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "aab",
            "baaab",
            "xyzzy",
            "my-app-12345",
            "My-App",
            "app-1 app_2 apps",
            "registry.example.com/team/app:v1.2.3",
            "localhost:5000/app:latest",
            "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "日本語",
            "école ÉCOLE",
            "a\nbc\n",
            "a\u{FFFD}b",
            "ΣΑΣ",
            "-",
            long_a.as_str(),
            long_name.as_str(),
            "日本語-a",
            "abcdefghijklm",
            "k",
            "KLM\u{212A}",
            "1234",
            "123456",
        ];
        for p in patterns {
            let re = compile_go(p).unwrap();
            let mut vm = re.vm.create_cache();
            for t in texts {
                assert_eq!(re.is_match(t), re.vm.is_match(&mut vm, t), "{p:?} is_match {t:?}");
                for start in 0..=t.len() {
                    let want = re.vm.find(&mut vm, Input::new(t).range(start..)).map(|m| m.range());
                    assert_eq!(re.find_at(t, start), want, "{p:?} find_at {t:?} {start}");
                }
            }
        }
        // Past the backtracker's limit (bt_max bytes) the PikeVM runs alone.
        let re = compile_go("^[a-z0-9-]+-?$").unwrap();
        assert!(re.whole.is_none());
        let big = "a".repeat(re.bt_max + 1);
        assert!(re.is_match(&big) && re.find(&big) == Some(big.as_str()));
        assert_eq!(re.find_all(&(big.clone() + "A"), -1), Vec::<String>::new());
        // Which patterns match without an engine (compared with the PikeVM above).
        for (p, whole) in [
            ("^[a-z0-9-]+$", true),
            ("^([a-z0-9-]+)$", true),
            ("^\\d{1,5}$", true),
            ("(?s)^.{3}$", true),
            ("^[a-z]+$|x", false),
            ("(?m)^[a-z]+$", false),
            ("^[a-z]+", false),
        ] {
            assert_eq!(compile_go(p).unwrap().whole.is_some(), whole, "{p}");
        }
    }

    /// Go `FindAllString` results (go1.19.8 `regexp`) through the backtracker and, for patterns
    /// without empty matches, past its limit through the PikeVM.
    #[test]
    fn find_all_either_engine() {
        let cases: [(&str, &str, &[&str]); 5] = [
            ("(a|ab)(c|bcd)(d*)", "abcd acd", &["abcd", "acd"]),
            ("[a-z]+", "my-app-12345 x", &["my", "app", "x"]),
            ("a*?", "aa", &["", "", ""]),
            ("\\b", "ab cd", &["", "", "", ""]),
            ("本|", "日本語", &["", "本", ""]),
        ];
        for (p, t, want) in cases {
            assert_eq!(find_all(t, p, -1).unwrap(), want, "{p:?} {t:?}");
            let re = compile_go(p).unwrap();
            if re.is_match("") {
                continue; // an empty match at each of the padding's offsets: slow unoptimised
            }
            let pad = " ".repeat(re.bt_max);
            let got = re.find_all(&(pad.clone() + t), -1);
            assert_eq!(&got[got.len() - want.len()..], want, "{p:?} {t:?} long");
        }
    }

    /// Go `regexp/syntax`: `\p{Name}` names a general category or a script (no binary
    /// properties), and the braces of `\p{…}` / `\x{…}` are part of the escape.
    #[test]
    fn unicode_classes_and_braced_escapes() {
        assert_eq!(find("x αβ y", r"\p{Greek}+"), Ok("αβ".to_string()));
        assert_eq!(find("ÀB", r"\p{Lu}{2}"), Ok("ÀB".to_string()));
        assert_eq!(find("zA", r"\x{41}"), Ok("A".to_string()));
        assert_eq!(
            compile_go(r"\p{Alphabetic}").err(),
            Some(
                r"error parsing regexp: invalid character class range: `\p{Alphabetic}`"
                    .to_string()
            )
        );
        assert_eq!(
            compile_go(r"\p{Greek").err(),
            Some(r"error parsing regexp: invalid character class range: `\p{Greek`".to_string())
        );
    }
}
