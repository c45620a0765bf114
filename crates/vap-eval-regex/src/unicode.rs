//! Unicode classes (`\pL`, `\p{Greek}`, `\P{..}`) and `(?i)` case folding of Go regexps,
//! resolved on the parsed pattern before `regex-syntax` translates it, from the compact tables
//! of `tables.rs` (`scripts/gen-regex-tables.py`). `regex-syntax` is built without its
//! Unicode data: its `(char, char)` tables, alias tables and case-folding table were 54 KB of the
//! package's gzipped wasm; these tables and this code are 16 KB (649,676 -> 611,574 bytes).
//!
//! The result is what `regex-syntax` 0.8 with `unicode-gencat`, `unicode-script` and
//! `unicode-case` (and no other Unicode feature), as this crate built it before, makes of the
//! same pattern — the same classes, the same names accepted (its UAX44-LM3 loose matching,
//! `Any`, `Assigned`, `ASCII`, `gc=`, `sc=`, `scx=`), the same errors — which the tests check
//! against `regex-syntax` itself, built with that data (a dev-dependency). Its translator's order
//! is kept: a bracketed class is the union of its items, case-folded, then negated; a
//! `\p{..}` item is folded and negated on its own first; flags last until the end of their group.
//!
//! After [`lower`] the pattern has no Unicode class and no `i` flag left: every class that
//! needed the data is a bracketed class of explicit ranges, and every literal that folds is the
//! class of its fold orbit.

use crate::tables as t;
use regex_syntax::ast::{self, Ast, ClassSet, ClassSetItem, Span};
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

/// A `\p{..}` naming no class this engine has: its span, and whether `regex-syntax` reports it
/// as a missing Perl class (the White_Space property: "invalid or unsupported Perl syntax")
/// rather than a missing property ("invalid character class range").
pub struct ClassError {
    pub span: Span,
    pub perl: bool,
}

/// Rewrites `ast` so that translating it needs no Unicode data (see the module docs).
pub fn lower(ast: &mut Ast) -> Result<(), ClassError> {
    Lower { ci: false }.ast(ast)
}

struct Lower {
    /// Whether the `i` flag is on here.
    ci: bool,
}

/// FOLD decoded, once per process on first use: every code point with a fold orbit and the
/// next member of its orbit, sorted.
fn folds() -> &'static [(u32, u32)] {
    static FOLDS: std::sync::OnceLock<Vec<(u32, u32)>> = std::sync::OnceLock::new();
    FOLDS.get_or_init(|| {
        let (data, mut i, mut c) = (&t::FOLD[..], 0, 0u32);
        let mut folds = Vec::new();
        while i < data.len() {
            c += varint(data, &mut i);
            let z = varint(data, &mut i);
            let next = if z & 1 == 0 { c + (z >> 1) } else { c.wrapping_sub((z >> 1) + 1) };
            folds.push((c, next));
        }
        folds
    })
}

fn range(a: u32, b: u32) -> Option<ClassUnicodeRange> {
    Some(ClassUnicodeRange::new(char::from_u32(a)?, char::from_u32(b)?))
}

fn varint(data: &[u8], i: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    while let Some(&b) = data.get(*i) {
        *i += 1;
        v |= u32::from(b & 0x7F) << shift;
        shift += 7;
        if b < 0x80 {
            break;
        }
    }
    v
}

/// The code points of the runs (ids and lengths: GC_IDS and GC_LENS, SC_IDS and SC_LENS) whose
/// id `keep` accepts, adjacent runs merged (a range may span the surrogates, as regex-syntax's
/// Other does).
fn runs(ids: &[u8], lens: &[u8], keep: impl Fn(u8) -> bool) -> ClassUnicode {
    let (mut i, mut cp, mut out) = (0, 0u32, Vec::<(u32, u32)>::new());
    for &id in ids {
        let len = varint(lens, &mut i);
        if keep(id) && len > 0 {
            match out.last_mut() {
                Some(last) if last.1 + 1 == cp => last.1 = cp + len - 1,
                _ => out.push((cp, cp + len - 1)),
            }
        }
        cp += len;
    }
    ClassUnicode::new(out.into_iter().filter_map(|(a, b)| range(a, b)))
}

/// `regex-syntax`'s `symbolic_name_normalize` (UAX44-LM3): an `is` prefix, spaces, `_`, `-`
/// and non-ASCII bytes dropped, ASCII lowercased; `isc` stays `isc`.
fn normalize(name: &str) -> String {
    let b = name.as_bytes();
    let is = b.len() >= 2 && b[..2].eq_ignore_ascii_case(b"is");
    let mut out: String = b[if is { 2 } else { 0 }..]
        .iter()
        .filter(|&&c| c.is_ascii() && !matches!(c, b' ' | b'_' | b'-'))
        .map(|&c| char::from(c.to_ascii_lowercase()))
        .collect();
    if is && out == "c" {
        out = "isc".into();
    }
    out
}

/// The id whose aliases (`names`: ids separated by `;`, aliases by `,`) include `n`.
fn lookup(names: &str, n: &str) -> Option<u8> {
    let i = names.split(';').position(|g| g.split(',').any(|a| a == n))?;
    u8::try_from(i).ok()
}

/// A general category (or `any`, `assigned`, `ascii`) by normalized name.
fn gencat(n: &str) -> Option<ClassUnicode> {
    let leaves = t::GC_LEAVES;
    Some(match n {
        "any" => ClassUnicode::new(range(0, 0x10FFFF)),
        "ascii" => ClassUnicode::new(range(0, 0x7F)),
        "assigned" => {
            let mut c = gencat("cn")?;
            c.negate();
            c
        }
        _ => match lookup(t::GC_NAMES, n)? {
            id if id < leaves => runs(&t::GC_IDS, &t::GC_LENS, |x| x == id),
            id => {
                let mask = *t::GC_GROUPS.get(usize::from(id - leaves))?;
                runs(&t::GC_IDS, &t::GC_LENS, |x| x <= leaves && mask >> x & 1 == 1)
            }
        },
    })
}

/// A script by normalized name; with `ext`, its Script_Extensions set.
fn script(n: &str, ext: bool) -> Option<ClassUnicode> {
    let id = lookup(t::SC_NAMES, n)?;
    let mut c = runs(&t::SC_IDS, &t::SC_LENS, |x| x == id);
    if ext {
        let data = &t::SCX[..];
        let mut i = 0;
        for s in 0..=id {
            for add in [true, false] {
                let (mut part, mut prev) = (Vec::new(), 0);
                for _ in 0..varint(data, &mut i) {
                    let a = prev + varint(data, &mut i);
                    prev = a + varint(data, &mut i);
                    part.extend(range(a, prev));
                }
                if s == id {
                    let part = ClassUnicode::new(part);
                    if add {
                        c.union(&part);
                    } else {
                        c.difference(&part);
                    }
                }
            }
        }
    }
    Some(c)
}

/// `\pX`, `\p{X}`: a binary property (none is available: an error), a category or a script.
fn binary(name: &str) -> Result<ClassUnicode, bool> {
    let n = normalize(name);
    // White_Space is the one property regex-syntax reports as a missing Perl class.
    if matches!(n.as_str(), "space" | "whitespace" | "wspace") {
        return Err(true);
    }
    gencat(&n).or_else(|| script(&n, false)).ok_or(false)
}

/// `\p{name=value}`: only General_Category, Script and Script_Extensions have data.
fn by_value(name: &str, value: &str) -> Result<ClassUnicode, bool> {
    let v = normalize(value);
    match normalize(name).as_str() {
        "gc" | "generalcategory" => gencat(&v),
        "sc" | "script" => script(&v, false),
        "scx" | "scriptextensions" => script(&v, true),
        _ => None,
    }
    .ok_or(false)
}

fn ascii(kind: &ast::ClassAsciiKind) -> ClassUnicode {
    use ast::ClassAsciiKind::*;
    let r: &[(u8, u8)] = match kind {
        Alnum => &[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z')],
        Alpha => &[(b'A', b'Z'), (b'a', b'z')],
        Ascii => &[(0, 0x7F)],
        Blank => &[(b'\t', b'\t'), (b' ', b' ')],
        Cntrl => &[(0, 0x1F), (0x7F, 0x7F)],
        Digit => &[(b'0', b'9')],
        Graph => &[(b'!', b'~')],
        Lower => &[(b'a', b'z')],
        Print => &[(b' ', b'~')],
        Punct => &[(b'!', b'/'), (b':', b'@'), (b'[', b'`'), (b'{', b'~')],
        Space => &[(b'\t', b'\r'), (b' ', b' ')],
        Upper => &[(b'A', b'Z')],
        Word => &[(b'0', b'9'), (b'A', b'Z'), (b'_', b'_'), (b'a', b'z')],
        Xdigit => &[(b'0', b'9'), (b'A', b'F'), (b'a', b'f')],
    };
    ClassUnicode::new(r.iter().map(|&(a, b)| ClassUnicodeRange::new(a.into(), b.into())))
}

/// A bracketed class holding exactly `cls`.
fn bracket(span: Span, cls: &ClassUnicode) -> Ast {
    let lit = |c| ast::Literal { span, kind: ast::LiteralKind::Verbatim, c };
    let items = cls
        .iter()
        .map(|r| {
            ClassSetItem::Range(ast::ClassSetRange {
                span,
                start: lit(r.start()),
                end: lit(r.end()),
            })
        })
        .collect();
    Ast::class_bracketed(ast::ClassBracketed {
        span,
        negated: false,
        kind: ClassSet::union(ast::ClassSetUnion { span, items }),
    })
}

/// Whether a class set holds a Unicode or Perl class (which need the data).
fn needs_data(set: &ClassSet) -> bool {
    fn item(i: &ClassSetItem) -> bool {
        match i {
            ClassSetItem::Unicode(_) | ClassSetItem::Perl(_) => true,
            ClassSetItem::Bracketed(b) => needs_data(&b.kind),
            ClassSetItem::Union(u) => u.items.iter().any(item),
            _ => false,
        }
    }
    match set {
        ClassSet::Item(i) => item(i),
        ClassSet::BinaryOp(op) => needs_data(&op.lhs) || needs_data(&op.rhs),
    }
}

impl Lower {
    fn ast(&mut self, ast: &mut Ast) -> Result<(), ClassError> {
        let new = match ast {
            Ast::Flags(f) => {
                self.flags(&mut f.flags);
                None
            }
            Ast::Literal(lit) if self.ci => {
                let mut orbit = vec![ClassUnicodeRange::new(lit.c, lit.c)];
                self.orbit(u32::from(lit.c), &mut orbit);
                (orbit.len() > 1).then(|| bracket(lit.span, &ClassUnicode::new(orbit)))
            }
            Ast::ClassUnicode(u) => Some(bracket(u.span, &self.unicode(u)?)),
            Ast::ClassPerl(p) => Some(bracket(p.span, &self.perl(p)?)),
            Ast::ClassBracketed(b) if self.ci || needs_data(&b.kind) => {
                Some(bracket(b.span, &self.bracketed(b)?))
            }
            Ast::Repetition(r) => {
                self.ast(&mut r.ast)?;
                None
            }
            Ast::Group(g) => {
                let outer = self.ci;
                if let ast::GroupKind::NonCapturing(f) = &mut g.kind {
                    self.flags(f);
                }
                self.ast(&mut g.ast)?;
                self.ci = outer;
                None
            }
            Ast::Alternation(x) => {
                for a in &mut x.asts {
                    self.ast(a)?;
                }
                None
            }
            Ast::Concat(x) => {
                for a in &mut x.asts {
                    self.ast(a)?;
                }
                None
            }
            _ => None,
        };
        if let Some(new) = new {
            *ast = new;
        }
        Ok(())
    }

    /// Applies a flag group's `i` (until the end of the enclosing group) and drops it.
    fn flags(&mut self, f: &mut ast::Flags) {
        let mut enable = true;
        f.items.retain(|item| match item.kind {
            ast::FlagsItemKind::Negation => {
                enable = false;
                true
            }
            ast::FlagsItemKind::Flag(ast::Flag::CaseInsensitive) => {
                self.ci = enable;
                false
            }
            _ => true,
        });
    }

    fn next(&self, c: u32) -> Option<u32> {
        let folds = folds();
        let i = folds.binary_search_by_key(&c, |f| f.0).ok()?;
        Some(folds[i].1)
    }

    /// Adds the other members of `c`'s simple case folding orbit (a cycle in `folds`).
    fn orbit(&self, c: u32, out: &mut Vec<ClassUnicodeRange>) {
        let mut n = self.next(c);
        for _ in 0..4 {
            match n {
                Some(m) if m != c => {
                    out.extend(range(m, m));
                    n = self.next(m);
                }
                _ => break,
            }
        }
    }

    /// Simple case folding of a class: adds the orbit of every member.
    fn fold(&mut self, cls: &mut ClassUnicode) {
        let mut add = Vec::new();
        let ranges = cls.ranges();
        let mut r = 0;
        for &(c, _) in folds() {
            while ranges.get(r).is_some_and(|x| u32::from(x.end()) < c) {
                r += 1;
            }
            match ranges.get(r) {
                None => break,
                Some(x) if u32::from(x.start()) <= c => self.orbit(c, &mut add),
                _ => {}
            }
        }
        cls.union(&ClassUnicode::new(add));
    }

    fn fold_negate(&mut self, cls: &mut ClassUnicode, negated: bool) {
        if self.ci {
            self.fold(cls);
        }
        if negated {
            cls.negate();
        }
    }

    fn unicode(&mut self, u: &ast::ClassUnicode) -> Result<ClassUnicode, ClassError> {
        let r = match &u.kind {
            ast::ClassUnicodeKind::OneLetter(c) => binary(&c.to_string()),
            ast::ClassUnicodeKind::Named(name) => binary(name),
            ast::ClassUnicodeKind::NamedValue { name, value, .. } => by_value(name, value),
        };
        let mut cls = r.map_err(|perl| ClassError { span: u.span, perl })?;
        self.fold_negate(&mut cls, u.is_negated());
        Ok(cls)
    }

    /// `\d` is Unicode's Decimal_Number there; `\s`, `\w` have no data. (Go's are ASCII: the
    /// translation writes them as ASCII classes, so none reaches here.)
    fn perl(&mut self, p: &ast::ClassPerl) -> Result<ClassUnicode, ClassError> {
        if p.kind != ast::ClassPerlKind::Digit {
            return Err(ClassError { span: p.span, perl: true });
        }
        let mut cls = gencat("nd").unwrap_or_else(ClassUnicode::empty);
        if p.negated {
            cls.negate();
        }
        Ok(cls)
    }

    fn bracketed(&mut self, b: &ast::ClassBracketed) -> Result<ClassUnicode, ClassError> {
        let mut cls = self.set(&b.kind)?;
        self.fold_negate(&mut cls, b.negated);
        Ok(cls)
    }

    fn set(&mut self, set: &ClassSet) -> Result<ClassUnicode, ClassError> {
        match set {
            ClassSet::Item(i) => self.item(i),
            ClassSet::BinaryOp(op) => {
                let mut lhs = self.set(&op.lhs)?;
                let mut rhs = self.set(&op.rhs)?;
                if self.ci {
                    self.fold(&mut rhs);
                    self.fold(&mut lhs);
                }
                match op.kind {
                    ast::ClassSetBinaryOpKind::Intersection => lhs.intersect(&rhs),
                    ast::ClassSetBinaryOpKind::Difference => lhs.difference(&rhs),
                    ast::ClassSetBinaryOpKind::SymmetricDifference => {
                        lhs.symmetric_difference(&rhs)
                    }
                }
                Ok(lhs)
            }
        }
    }

    fn item(&mut self, item: &ClassSetItem) -> Result<ClassUnicode, ClassError> {
        Ok(match item {
            ClassSetItem::Empty(_) => ClassUnicode::empty(),
            ClassSetItem::Literal(l) => ClassUnicode::new([ClassUnicodeRange::new(l.c, l.c)]),
            ClassSetItem::Range(r) => {
                ClassUnicode::new([ClassUnicodeRange::new(r.start.c, r.end.c)])
            }
            ClassSetItem::Ascii(a) => {
                let mut cls = ascii(&a.kind);
                self.fold_negate(&mut cls, a.negated);
                cls
            }
            ClassSetItem::Unicode(u) => self.unicode(u)?,
            ClassSetItem::Perl(p) => self.perl(p)?,
            ClassSetItem::Bracketed(b) => self.bracketed(b)?,
            ClassSetItem::Union(u) => {
                let mut cls = ClassUnicode::empty();
                for i in &u.items {
                    cls.union(&self.item(i)?);
                }
                cls
            }
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Whether translating `ast` needs no Unicode data: no Unicode or Perl class, no `i` flag.
    pub(crate) fn needs_no_data(ast: &Ast) -> bool {
        let no_i = |f: &ast::Flags| {
            f.items.iter().all(|i| i.kind != ast::FlagsItemKind::Flag(ast::Flag::CaseInsensitive))
        };
        match ast {
            Ast::Flags(f) => no_i(&f.flags),
            Ast::ClassUnicode(_) | Ast::ClassPerl(_) => false,
            Ast::ClassBracketed(b) => !needs_data(&b.kind),
            Ast::Repetition(r) => needs_no_data(&r.ast),
            Ast::Group(g) => g.flags().is_none_or(no_i) && needs_no_data(&g.ast),
            Ast::Alternation(x) => x.asts.iter().all(needs_no_data),
            Ast::Concat(x) => x.asts.iter().all(needs_no_data),
            _ => true,
        }
    }

    /// Case folding of every code point alone, and of ranges, as regex-syntax's own table
    /// folds them (the dev-dependency has its `unicode-case` data).
    #[test]
    fn folding_matches_regex_syntax() {
        let mut l = Lower { ci: true };
        let check = |l: &mut Lower, a: char, b: char| {
            let mut ours = ClassUnicode::new([ClassUnicodeRange::new(a, b)]);
            let mut want = ours.clone();
            want.case_fold_simple();
            l.fold(&mut ours);
            assert_eq!(ours, want, "U+{:04X}-U+{:04X}", u32::from(a), u32::from(b));
        };
        for c in (0..0x20000).filter_map(char::from_u32) {
            check(&mut l, c, c);
        }
        for start in (0..0x110000).step_by(0x1000).filter_map(char::from_u32) {
            let end = char::from_u32(u32::from(start) + 0xFFF).unwrap_or('\u{10FFFF}');
            check(&mut l, start, end);
        }
        check(&mut l, '\0', '\u{10FFFF}');
        assert_eq!(folds().len(), 2938);
    }

    #[test]
    fn names_normalize_as_regex_syntax_does() {
        assert_eq!(normalize("Is_Greek"), "greek");
        assert_eq!(normalize("Gré ek"), "grek");
        assert_eq!(normalize("isc"), "isc");
        assert_eq!(normalize("IS-C"), "isc");
        assert_eq!(normalize("Uppercase-Letter"), "uppercaseletter");
    }
}
