//! The tokens of cel-go's grammar (`parser/gen/CEL.g4`), matched as its ANTLR lexer matches them:
//! at each position the longest match of any rule wins (keywords over identifiers on a tie), and
//! when no rule matches, the characters up to and including the first one that no rule can
//! continue with are skipped and reported as `token recognition error at: '…'`.
//!
//! Token kinds are the grammar's token type numbers, so a set of kinds is a `u64` bit set and
//! prints in ANTLR's order ([`set_display`]). Whitespace and `//` comments are skipped.

/// The grammar's token types (`CEL.tokens`); `EOF` is 0 here (ANTLR's -1) so that it is bit 0.
pub const EOF: u8 = 0;
pub const EQUALS: u8 = 1;
pub const NOT_EQUALS: u8 = 2;
pub const IN: u8 = 3;
pub const LESS: u8 = 4;
pub const LESS_EQUALS: u8 = 5;
pub const GREATER_EQUALS: u8 = 6;
pub const GREATER: u8 = 7;
pub const AND: u8 = 8;
pub const OR: u8 = 9;
pub const LBRACKET: u8 = 10;
pub const RBRACKET: u8 = 11;
pub const LBRACE: u8 = 12;
pub const RBRACE: u8 = 13;
pub const LPAREN: u8 = 14;
pub const RPAREN: u8 = 15;
pub const DOT: u8 = 16;
pub const COMMA: u8 = 17;
pub const MINUS: u8 = 18;
pub const EXCLAM: u8 = 19;
pub const QUESTION: u8 = 20;
pub const COLON: u8 = 21;
pub const PLUS: u8 = 22;
pub const STAR: u8 = 23;
pub const SLASH: u8 = 24;
pub const PERCENT: u8 = 25;
pub const TRUE: u8 = 26;
pub const FALSE: u8 = 27;
pub const NULL: u8 = 28;
pub const NUM_FLOAT: u8 = 31;
pub const NUM_INT: u8 = 32;
pub const NUM_UINT: u8 = 33;
pub const STRING: u8 = 34;
pub const BYTES: u8 = 35;
pub const IDENTIFIER: u8 = 36;
pub const ESC_IDENTIFIER: u8 = 37;

/// How ANTLR prints each token type in `expecting …` (literal name, else symbolic name).
const NAMES: [&str; 38] = [
    "<EOF>",
    "'=='",
    "'!='",
    "'in'",
    "'<'",
    "'<='",
    "'>='",
    "'>'",
    "'&&'",
    "'||'",
    "'['",
    "']'",
    "'{'",
    "'}'",
    "'('",
    "')'",
    "'.'",
    "','",
    "'-'",
    "'!'",
    "'?'",
    "':'",
    "'+'",
    "'*'",
    "'/'",
    "'%'",
    "'true'",
    "'false'",
    "'null'",
    "WHITESPACE",
    "COMMENT",
    "NUM_FLOAT",
    "NUM_INT",
    "NUM_UINT",
    "STRING",
    "BYTES",
    "IDENTIFIER",
    "ESC_IDENTIFIER",
];

/// A set of token kinds as ANTLR prints it: one name alone, several as `{a, b}`.
pub fn set_display(set: u64) -> String {
    let names: Vec<&str> = (0..38).filter(|&t| set & (1 << t) != 0).map(|t| NAMES[t]).collect();
    match names.as_slice() {
        [one] => one.to_string(),
        many => format!("{{{}}}", many.join(", ")),
    }
}

/// A token: its kind and byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Token {
    pub kind: u8,
    pub start: u32,
    pub end: u32,
}

/// Tokenize `src`: the tokens (ending with `EOF` at `src.len()`) and the byte ranges the lexer
/// skipped as unrecognized (each reported as one `token recognition error`).
pub fn tokenize(src: &str) -> (Vec<Token>, Vec<(u32, u32)>) {
    let s = src.as_bytes();
    let mut tokens = Vec::with_capacity(s.len() / 3 + 1);
    let mut errors = Vec::new();
    let mut i = 0;
    while i < s.len() {
        match scan(s, i) {
            Scan::Skip(end) => i = end,
            Scan::Token(kind, end) => {
                tokens.push(Token { kind, start: i as u32, end: end as u32 });
                i = end;
            }
            Scan::Error(fail) => {
                // ANTLR's text runs to the character no rule could take, inclusive, and the
                // lexer resumes after it.
                let end = if fail < s.len() { fail + char_len(s[fail]) } else { s.len() };
                errors.push((i as u32, end as u32));
                i = end;
            }
        }
    }
    tokens.push(Token { kind: EOF, start: s.len() as u32, end: s.len() as u32 });
    (tokens, errors)
}

enum Scan {
    /// Whitespace or a comment, ending here.
    Skip(usize),
    Token(u8, usize),
    /// No rule matches; every rule stopped at or before this index.
    Error(usize),
}

fn char_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn digits(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// The end of `EXPONENT` (`[eE][+-]?DIGIT+`) at `i`, if there is one.
fn exponent(s: &[u8], i: usize) -> Option<usize> {
    if !matches!(s.get(i), Some(b'e' | b'E')) {
        return None;
    }
    let j = if matches!(s.get(i + 1), Some(b'+' | b'-')) { i + 2 } else { i + 1 };
    let k = digits(s, j);
    (k > j).then_some(k)
}

fn scan(s: &[u8], i: usize) -> Scan {
    let at = |k: usize| s.get(k).copied().unwrap_or(0);
    let c = s[i];
    let one = |kind| Scan::Token(kind, i + 1);
    let two = |second: u8, long, short: Option<u8>| match (at(i + 1) == second, short) {
        (true, _) => Scan::Token(long, i + 2),
        (false, Some(k)) => Scan::Token(k, i + 1),
        (false, None) => Scan::Error(i + 1),
    };
    match c {
        b'\t' | b'\n' | 0x0C | b'\r' | b' ' => {
            let mut j = i + 1;
            while matches!(at(j), b'\t' | b'\n' | 0x0C | b'\r' | b' ') {
                j += 1;
            }
            Scan::Skip(j)
        }
        b'/' if at(i + 1) == b'/' => {
            let mut j = i + 2;
            while j < s.len() && s[j] != b'\n' {
                j += 1;
            }
            Scan::Skip(j)
        }
        b'=' => two(b'=', EQUALS, None),
        b'!' => two(b'=', NOT_EQUALS, Some(EXCLAM)),
        b'<' => two(b'=', LESS_EQUALS, Some(LESS)),
        b'>' => two(b'=', GREATER_EQUALS, Some(GREATER)),
        b'&' => two(b'&', AND, None),
        b'|' => two(b'|', OR, None),
        b'[' => one(LBRACKET),
        b']' => one(RBRACKET),
        b'{' => one(LBRACE),
        b'}' => one(RBRACE),
        b'(' => one(LPAREN),
        b')' => one(RPAREN),
        b',' => one(COMMA),
        b'-' => one(MINUS),
        b'?' => one(QUESTION),
        b':' => one(COLON),
        b'+' => one(PLUS),
        b'*' => one(STAR),
        b'/' => one(SLASH),
        b'%' => one(PERCENT),
        b'.' if at(i + 1).is_ascii_digit() => {
            let j = digits(s, i + 1);
            Scan::Token(NUM_FLOAT, exponent(s, j).unwrap_or(j))
        }
        b'.' => one(DOT),
        b'0'..=b'9' => {
            if c == b'0' && at(i + 1) == b'x' && at(i + 2).is_ascii_hexdigit() {
                let mut j = i + 3;
                while at(j).is_ascii_hexdigit() {
                    j += 1;
                }
                return match at(j) {
                    b'u' | b'U' => Scan::Token(NUM_UINT, j + 1),
                    _ => Scan::Token(NUM_INT, j),
                };
            }
            let j = digits(s, i);
            if matches!(at(j), b'u' | b'U') {
                return Scan::Token(NUM_UINT, j + 1);
            }
            if at(j) == b'.' && at(j + 1).is_ascii_digit() {
                let k = digits(s, j + 1);
                return Scan::Token(NUM_FLOAT, exponent(s, k).unwrap_or(k));
            }
            match exponent(s, j) {
                Some(k) => Scan::Token(NUM_FLOAT, k),
                None => Scan::Token(NUM_INT, j),
            }
        }
        b'"' | b'\'' => match string(s, i, false) {
            Ok(end) => Scan::Token(STRING, end),
            Err(fail) => Scan::Error(fail),
        },
        b'`' => {
            let mut j = i + 1;
            while j < s.len() && (is_ident_char(s[j]) || matches!(s[j], b'.' | b'-' | b'/' | b' '))
            {
                j += 1;
            }
            if at(j) == b'`' && j > i + 1 {
                Scan::Token(ESC_IDENTIFIER, j + 1)
            } else {
                Scan::Error(j)
            }
        }
        b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
            let mut j = i + 1;
            while j < s.len() && is_ident_char(s[j]) {
                j += 1;
            }
            // A string or bytes prefix (`r`, `b`, `br` in any case) right before a quote: the
            // literal is the longer match when it is well formed, else the identifier stands.
            if matches!(at(j), b'"' | b'\'') {
                let (bytes, raw) = match &s[i..j] {
                    [b'r' | b'R'] => (false, true),
                    [b'b' | b'B'] => (true, false),
                    [b'b' | b'B', b'r' | b'R'] => (true, true),
                    _ => (false, false),
                };
                if bytes || raw {
                    if let Ok(end) = string(s, j, raw) {
                        return Scan::Token(if bytes { BYTES } else { STRING }, end);
                    }
                }
            }
            let kind = match &s[i..j] {
                b"in" => IN,
                b"true" => TRUE,
                b"false" => FALSE,
                b"null" => NULL,
                _ => IDENTIFIER,
            };
            Scan::Token(kind, j)
        }
        _ => Scan::Error(i),
    }
}

/// The quoted part of a string literal at `q`: `Ok(end)` of the longest well-formed literal, or
/// `Err` with the index of the first character none of the string rules could take.
///
/// A quote starts both the one-line form (`'…'`, no raw newlines) and, tripled, the multi-line
/// form (`'''…'''`, ending at the first closing triple quote). Escapes are checked here, as the
/// grammar does (`\x` needs two hex digits, `\u` four, `\U` eight, octal is `\[0-3][0-7][0-7]`);
/// raw literals have none.
fn string(s: &[u8], q: usize, raw: bool) -> Result<usize, usize> {
    let quote = s[q];
    let body = |mut j: usize, triple: bool| -> Result<usize, usize> {
        loop {
            let Some(&c) = s.get(j) else { return Err(j) };
            if triple && c == quote && s.get(j + 1) == Some(&quote) && s.get(j + 2) == Some(&quote)
            {
                return Ok(j + 3);
            }
            if !triple {
                if c == quote {
                    return Ok(j + 1);
                }
                if c == b'\n' || c == b'\r' {
                    return Err(j);
                }
            }
            j = if c == b'\\' && !raw { escape(s, j)? } else { j + 1 };
        }
    };
    let single = body(q + 1, false);
    let triple = if s.get(q + 1) == Some(&quote) && s.get(q + 2) == Some(&quote) {
        body(q + 3, true)
    } else {
        Err(q + 1)
    };
    match (single, triple) {
        (_, Ok(end)) | (Ok(end), Err(_)) => Ok(end),
        (Err(a), Err(b)) => Err(a.max(b)),
    }
}

/// The end of the escape sequence whose backslash is at `j`, or the index where it goes wrong.
fn escape(s: &[u8], j: usize) -> Result<usize, usize> {
    let Some(&c) = s.get(j + 1) else { return Err(j + 1) };
    let (n, ok): (usize, fn(u8) -> bool) = match c {
        b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'"' | b'\'' | b'\\' | b'?' | b'`' => {
            return Ok(j + 2)
        }
        b'x' | b'X' => (2, |b| b.is_ascii_hexdigit()),
        b'u' => (4, |b| b.is_ascii_hexdigit()),
        b'U' => (8, |b| b.is_ascii_hexdigit()),
        b'0'..=b'3' => (2, |b| (b'0'..=b'7').contains(&b)),
        _ => return Err(j + 1),
    };
    for k in j + 2..j + 2 + n {
        if !s.get(k).is_some_and(|&b| ok(b)) {
            return Err(k);
        }
    }
    Ok(j + 2 + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(u8, &str)> {
        let (toks, _) = tokenize(src);
        toks.iter().map(|t| (t.kind, &src[t.start as usize..t.end as usize])).collect()
    }

    #[test]
    fn longest_match_as_antlr() {
        assert_eq!(
            kinds("1.e5 0x 1u .5e 'a'b r\"x\" rb'y' inx in"),
            [
                (NUM_INT, "1"),
                (DOT, "."),
                (IDENTIFIER, "e5"),
                (NUM_INT, "0"),
                (IDENTIFIER, "x"),
                (NUM_UINT, "1u"),
                (NUM_FLOAT, ".5"),
                (IDENTIFIER, "e"),
                (STRING, "'a'"),
                (IDENTIFIER, "b"),
                (STRING, "r\"x\""),
                (IDENTIFIER, "rb"),
                (STRING, "'y'"),
                (IDENTIFIER, "inx"),
                (IN, "in"),
                (EOF, ""),
            ]
        );
        // An unterminated triple quote falls back to the empty string before it.
        assert_eq!(kinds("'''a'")[..2], [(STRING, "''"), (STRING, "'a'")]);
    }

    #[test]
    fn unrecognized_text_runs_to_the_failing_character() {
        let errs = |src: &str| {
            let (_, e) = tokenize(src);
            e.iter().map(|&(a, b)| src[a as usize..b as usize].to_string()).collect::<Vec<_>>()
        };
        assert_eq!(errs("a | b"), ["| "]);
        assert_eq!(errs("\"\\xFh\""), ["\"\\xFh", "\""]);
        assert_eq!(errs("\"hello\nworld\""), ["\"hello\n", "\""]);
        assert_eq!(errs("a.`$b`"), ["`$", "`"]);
        assert_eq!(errs("😁"), ["😁"]);
    }
}
