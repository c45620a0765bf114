//! Throwaway differential harness: the new parser against the old (`cel` crate) one.
//! `cargo run --release --example parser_diff -- corpus.json [fuzz]`
use std::collections::BTreeMap;
use vap_eval::cel::ast::{Expr, ExprKind};
use vap_eval::cel::errors::line_column;
use vap_eval::cel::parser::{self, ParseOptions};
use vap_eval::cel::parser_old;

fn shape(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Literal(l) => format!("lit {l:?}"),
        ExprKind::Ident(n) => format!("ident {n}"),
        ExprKind::Select { field, test, .. } => format!("select {field} {test}"),
        ExprKind::Call { function, target, args } => {
            format!("call {function} t={} n={}", target.is_some(), args.len())
        }
        ExprKind::List { elements, optional_indices } => {
            format!("list {} {optional_indices:?}", elements.len())
        }
        ExprKind::Map { entries } => format!(
            "map {:?}",
            entries.iter().map(|e| (e.id, e.pos, e.optional)).collect::<Vec<_>>()
        ),
        ExprKind::Struct { type_name, fields } => format!(
            "struct {type_name} {:?}",
            fields.iter().map(|f| (f.id, f.pos, &f.field, f.optional)).collect::<Vec<_>>()
        ),
        ExprKind::Comprehension(c) => {
            format!("comp {} {:?} {}", c.iter_var, c.iter_var2, c.accu_var)
        }
    }
}

/// First difference: (what, path, detail).
fn diff(a: &Expr, b: &Expr, path: &str, src: &str) -> Option<(String, String)> {
    let sa = shape(a);
    let sb = shape(b);
    if sa != sb {
        return Some(("kind".into(), format!("{path}: old {sa} / new {sb}")));
    }
    let ca = a.children();
    let cb = b.children();
    for (i, (x, y)) in ca.iter().zip(cb.iter()).enumerate() {
        if let Some(d) = diff(x, y, &format!("{path}/{i}"), src) {
            return Some(d);
        }
    }
    let text = |s: vap_eval::diagnostic::Span| {
        src.get(s.start as usize..s.end as usize).unwrap_or("?").to_string()
    };
    if a.pos != b.pos {
        return Some(("pos".into(), format!("{path} {sa}: old {} new {}", a.pos, b.pos)));
    }
    if a.span != b.span && std::env::var("NOSPAN").is_err() {
        return Some((
            "span".into(),
            format!("{path} {sa}: old {:?} new {:?}", text(a.span), text(b.span)),
        ));
    }
    if a.id != b.id {
        return Some(("id".into(), format!("{path} {sa}: old {} new {}", a.id, b.id)));
    }
    None
}

fn number(e: &mut Expr, next: &mut u32) {
    let id = |next: &mut u32| {
        *next += 1;
        *next - 1
    };
    match &mut e.kind {
        ExprKind::Literal(_) | ExprKind::Ident(_) => {}
        ExprKind::Select { operand, .. } => number(operand, next),
        ExprKind::Call { target, args, .. } => {
            if let Some(t) = target {
                number(t, next);
            }
            args.iter_mut().for_each(|a| number(a, next));
        }
        ExprKind::List { elements, .. } => elements.iter_mut().for_each(|a| number(a, next)),
        ExprKind::Map { entries } => {
            for en in entries {
                number(&mut en.key, next);
                number(&mut en.value, next);
                en.id = id(next);
            }
        }
        ExprKind::Struct { fields, .. } => {
            for f in fields {
                number(&mut f.value, next);
                f.id = id(next);
            }
        }
        ExprKind::Comprehension(c) => {
            for part in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                number(part, next);
            }
        }
    }
    e.id = id(next);
}

fn errs(src: &str, e: &[parser::ParseError]) -> Vec<String> {
    e.iter()
        .map(|e| {
            let lc = e.offset.map(|o| line_column(src, o));
            format!("{lc:?} {}", e.message)
        })
        .collect()
}

fn old_errs(src: &str, e: &[parser_old::ParseError]) -> Vec<String> {
    e.iter()
        .map(|e| {
            let lc = e.offset.map(|o| line_column(src, o));
            format!("{lc:?} {}", e.message)
        })
        .collect()
}

/// Old-parser junk that cel-go never prints.
fn junk(m: &str) -> bool {
    m.contains("`!")
        || m.contains("Incomplete")
        || m.contains("unsupported ident kind")
        || m.contains("invalid string literal")
        || m.contains("invalid bytes literal")
        || m.contains("Unknown `")
        || m.contains("unexpected character, wanted")
}

struct Stats {
    cats: BTreeMap<String, (usize, Vec<String>)>,
}
impl Stats {
    fn add(&mut self, cat: &str, example: String) {
        let e = self.cats.entry(cat.to_string()).or_default();
        e.0 += 1;
        if e.1.len() < std::env::var("EX").ok().and_then(|v| v.parse().ok()).unwrap_or(6) {
            e.1.push(example);
        }
    }
}

fn compare(src: &str, st: &mut Stats, errors_too: bool) {
    let opts = ParseOptions::default();
    let old = std::panic::catch_unwind(|| {
        parser_old::parse(src, parser_old::ParseOptions { backtick_identifiers: true })
    });
    let new = std::panic::catch_unwind(|| parser::parse(src, opts));
    let (Ok(old), Ok(new)) = (old, new) else {
        st.add("PANIC", format!("{src:?}"));
        return;
    };
    match (old, new) {
        (Ok(a), Ok(b)) => match diff(&a.root, &b.root, "", src) {
            None if a.node_count == b.node_count => st.add("same-ast", String::new()),
            None => st.add("node-count", format!("{src:?} {} {}", a.node_count, b.node_count)),
            Some((what, d)) => {
                let mut renumbered = a.root.clone();
                let mut n = 0;
                number(&mut renumbered, &mut n);
                match diff(&renumbered, &b.root, "", src) {
                    None if n == b.node_count => st.add("ast-same-but-macro-ids", String::new()),
                    Some((w2, d2)) if w2 == "span" => {
                        st.add("ast-diff-span", format!("{src:?}\n      {d2}"))
                    }
                    _ => st.add(&format!("ast-diff-{what}"), format!("{src:?}\n      {d}")),
                }
            }
        },
        (Err(a), Err(b)) => {
            st.add("both-reject", String::new());
            if !errors_too {
                return;
            }
            let a: Vec<String> = old_errs(src, &a).into_iter().filter(|m| !junk(m)).collect();
            let b = errs(src, &b);
            // Known, deliberate differences: antlr4rust keeps the expected set of an earlier
            // sync for `mismatched input` (Go's ANTLR runtime, which cel-go uses, doesn't);
            // cel-go says `argument is not an identifier` for map/filter.
            let norm = |v: &[String]| -> Vec<String> {
                v.iter()
                    .map(|m| {
                        let mut m = m.replace(
                            "argument is not an identifier",
                            "argument must be a simple name",
                        );
                        for k in ["true", "false", "null"] {
                            m = m.replace(
                                &format!("no viable alternative at input '.{k}'"),
                                &format!("mismatched input '{k}' expecting IDENTIFIER"),
                            );
                        }
                        if m.contains("no viable alternative") {
                            m = m.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r");
                        }
                        match m.find(" expecting ") {
                            Some(i) if m.contains("mismatched input") => m[..i].to_string(),
                            _ => m,
                        }
                    })
                    .collect()
            };
            let b: Vec<String> = if src.contains("__result__") {
                b.into_iter().filter(|m| !m.contains("overwrites accumulator")).collect()
            } else {
                b
            };
            if a != b && norm(&a) == norm(&b) {
                st.add("errors-same-modulo-known", String::new());
                return;
            }
            let syntax = |v: &[String]| -> Vec<String> {
                norm(v).into_iter().filter(|m| m.contains("Syntax error")).collect()
            };
            if a != b && syntax(&a) == syntax(&b) {
                st.add("errors-syntax-same", format!("{src:?}\n      old {a:?}\n      new {b:?}"));
                return;
            }
            if a == b && !src.contains("__result__") {
                st.add("errors-same", String::new());
            } else if a == b {
                st.add("errors-same-modulo-known", String::new());
            } else if a.first() == b.first() {
                st.add("errors-first-same", format!("{src:?}\n      old {a:?}\n      new {b:?}"));
            } else {
                st.add("errors-differ", format!("{src:?}\n      old {a:?}\n      new {b:?}"));
            }
        }
        (Ok(_), Err(b)) => st.add("old-accepts", format!("{src:?} {:?}", errs(src, &b))),
        (Err(a), Ok(_)) => st.add("new-accepts", format!("{src:?} {:?}", old_errs(src, &a))),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("corpus");
    let corpus: Vec<(String, String)> = serde_json::from_str(&text).expect("json");
    let fuzz = args.get(2).map(|s| s.as_str());
    std::panic::set_hook(Box::new(|_| {}));
    let mut st = Stats { cats: BTreeMap::new() };
    match fuzz {
        None => {
            for (src, _) in &corpus {
                compare(src, &mut st, true);
            }
        }
        Some(mode) => {
            // Deterministic mutations of each corpus expression.
            let mut seed: u64 = 0x9E3779B97F4A7C15;
            let mut rnd = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            let alphabet: Vec<&str> = vec![
                "(", ")", "[", "]", "{", "}", ".", ",", ":", "?", "!", "-", "+", "*", "==", "<",
                "&&", "||", "in", "a", "1", "'s'", ".?", "[?", "`x`", "@", "|", "=", "\"", "'",
                "1.5", "2u", "true", "null", "has(", "x.all(", "\\", "\n", " ",
            ];
            for (src, _) in &corpus {
                if src.len() > 300 {
                    continue;
                }
                let chars: Vec<(usize, char)> = src.char_indices().collect();
                let n = chars.len();
                let cut = |k: usize| chars.get(k).map(|c| c.0).unwrap_or(src.len());
                let mut muts = Vec::new();
                if mode == "trunc" {
                    for k in 0..n {
                        muts.push(src[..cut(k)].to_string());
                    }
                } else {
                    for _ in 0..8 {
                        if n == 0 {
                            break;
                        }
                        let k = (rnd() as usize) % n;
                        let l = 1 + (rnd() as usize) % 3;
                        let ins = alphabet[(rnd() as usize) % alphabet.len()];
                        let m = match rnd() % 3 {
                            0 => format!("{}{}", &src[..cut(k)], &src[cut((k + l).min(n))..]),
                            1 => format!("{}{}{}", &src[..cut(k)], ins, &src[cut(k)..]),
                            _ => {
                                format!("{}{}{}", &src[..cut(k)], ins, &src[cut((k + 1).min(n))..])
                            }
                        };
                        muts.push(m);
                    }
                }
                for m in muts {
                    compare(&m, &mut st, true);
                }
            }
        }
    }
    for (cat, (n, ex)) in &st.cats {
        println!("{cat}: {n}");
        for e in ex {
            if !e.is_empty() {
                println!("    {e}");
            }
        }
    }
}
