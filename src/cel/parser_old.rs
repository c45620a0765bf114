//! Parsing: the `cel` crate's ANTLR parser, guarded and converted into [`ast`](super::ast).
//!
//! Why the ANTLR parser and not the crate's smaller Pratt parser: only the ANTLR parser returns
//! node positions on success (`parse_with_source_info`), and they are cel-go's positions (a call
//! at its `(`, an operator at its token), which our diagnostics must reproduce. The Pratt parser
//! discards them.
//!
//! What we add around it:
//! - cel-go's limits, checked before the ANTLR parser runs so pathological input becomes a
//!   diagnostic instead of a stack overflow: 100,000 code points, nesting depth 250
//!   (`expression recursion limit exceeded: 250`) and the visitor's depth 250 over chains of
//!   operators, selections, calls and indexes (`max recursion depth exceeded`), estimated from
//!   the tokens;
//! - full spans for every node (the crate records only a start offset);
//! - the macros the crate does not expand: the two-variable comprehensions (`all`, `exists`,
//!   `existsOne`/`exists_one` with three arguments, `transformList`, `transformMap`,
//!   `transformMapEntry`), `optMap`, `optFlatMap` and `sortBy`, with cel-go's expansions.

use super::ast::{Ast, Comprehension, Expr, ExprKind, Literal, MapEntry, NodeId, StructField};
use crate::diagnostic::Span;
use cel::common::ast as cast;
use std::rc::Rc;

/// cel-go's default limits (`parser.NewParser`).
pub const MAX_CODE_POINTS: usize = 100_000;
pub const MAX_RECURSION_DEPTH: usize = 250;

/// Parser switches that vary by Kubernetes version.
#[derive(Clone, Copy, Debug)]
pub struct ParseOptions {
    /// Backtick-quoted field names (``a.`b-c` ``): cel-go ≥ 0.28, i.e. Kubernetes 1.37+.
    pub backtick_identifiers: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions { backtick_identifiers: true }
    }
}

/// One parse problem. `offset` is a byte offset into the source, `None` for problems cel-go
/// reports without a location (limits).
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub offset: Option<u32>,
}

impl ParseError {
    fn at(offset: Option<usize>, message: impl Into<String>) -> Self {
        ParseError { message: message.into(), offset: offset.map(|o| o as u32) }
    }
}

/// Parse `source` into an [`Ast`], or the list of problems (sorted by position).
pub fn parse(source: &str, options: ParseOptions) -> Result<Ast, Vec<ParseError>> {
    let code_points = source.chars().count();
    if code_points > MAX_CODE_POINTS {
        return Err(vec![ParseError::at(
            None,
            format!(
                "expression code point size exceeds limit: size: {code_points}, limit {MAX_CODE_POINTS}"
            ),
        )]);
    }
    prescan_depth(source)?;
    let parsed = cel::parser::Parser::new()
        .max_recursion_depth(u16::MAX)
        .enable_optional_syntax(true)
        .enable_ident_escape_syntax(options.backtick_identifiers)
        .parse_with_source_info(source);
    let (expr, info) = match parsed {
        Ok(ok) => ok,
        Err(errors) => {
            let mut out: Vec<ParseError> = errors
                .errors
                .iter()
                .map(|e| {
                    let offset = if e.pos.0 > 0 {
                        Some(offset_of_line_col(source, e.pos.0 as usize, e.pos.1.max(1) as usize))
                    } else {
                        None
                    };
                    ParseError::at(offset, e.msg.clone())
                })
                .collect();
            out.dedup();
            return Err(out);
        }
    };
    let mut conv = Converter { source, info: &info, next_id: 0, errors: Vec::new() };
    let root = conv.convert(&expr);
    if !conv.errors.is_empty() {
        conv.errors.sort_by_key(|e| e.offset);
        return Err(conv.errors);
    }
    Ok(Ast { root, source: Rc::from(source), node_count: conv.next_id })
}

/// Byte offset of a 1-based (line, code-point column) position.
fn offset_of_line_col(source: &str, line: usize, col: usize) -> usize {
    let mut line_start = 0;
    for (n, l) in source.split_inclusive('\n').enumerate() {
        if n + 1 == line {
            return line_start + l.char_indices().nth(col - 1).map(|(i, _)| i).unwrap_or(l.len());
        }
        line_start += l.len();
    }
    source.len()
}

// ---------------------------------------------------------------------------------------------
// Token scanning (limits and spans)

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}
fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Skip whitespace and `//` comments from `i`.
fn skip_trivia(s: &[u8], mut i: usize) -> usize {
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i + 1 < s.len() && s[i] == b'/' && s[i + 1] == b'/' {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        return i;
    }
}

/// End of the string literal whose quote (after any prefix) is at `q`.
fn string_end(s: &[u8], q: usize, raw: bool) -> usize {
    let quote = s[q];
    let triple = q + 2 < s.len() && s[q + 1] == quote && s[q + 2] == quote;
    let mut i = if triple { q + 3 } else { q + 1 };
    while i < s.len() {
        if s[i] == b'\\' && !raw {
            i += 2;
            continue;
        }
        if s[i] == quote {
            if !triple {
                return i + 1;
            }
            if i + 2 < s.len() && s[i + 1] == quote && s[i + 2] == quote {
                return i + 3;
            }
        }
        if s[i] == b'\n' && !triple {
            return i;
        }
        i += 1;
    }
    s.len()
}

/// End of the token starting at `i` (which must not be trivia).
fn token_end(s: &[u8], i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let b = s[i];
    // String and bytes literals, with r/b prefixes in any case and order.
    let mut p = i;
    let mut raw = false;
    while p < s.len() && p < i + 2 && matches!(s[p], b'r' | b'R' | b'b' | b'B') {
        raw |= matches!(s[p], b'r' | b'R');
        p += 1;
    }
    if p < s.len() && (s[p] == b'\'' || s[p] == b'"') {
        return string_end(s, p, raw);
    }
    if is_ident_start(b) {
        let mut j = i + 1;
        while j < s.len() && is_ident_char(s[j]) {
            j += 1;
        }
        return j;
    }
    if b.is_ascii_digit() || (b == b'.' && i + 1 < s.len() && s[i + 1].is_ascii_digit()) {
        let mut j = i + 1;
        if b == b'0' && j < s.len() && (s[j] == b'x' || s[j] == b'X') {
            j += 1;
            while j < s.len() && s[j].is_ascii_hexdigit() {
                j += 1;
            }
        } else {
            while j < s.len() && (s[j].is_ascii_digit() || s[j] == b'.') {
                j += 1;
            }
            if j < s.len() && (s[j] == b'e' || s[j] == b'E') {
                j += 1;
                if j < s.len() && (s[j] == b'+' || s[j] == b'-') {
                    j += 1;
                }
                while j < s.len() && s[j].is_ascii_digit() {
                    j += 1;
                }
            }
        }
        if j < s.len() && (s[j] == b'u' || s[j] == b'U') {
            j += 1;
        }
        return j;
    }
    if b == b'`' {
        let mut j = i + 1;
        while j < s.len() && s[j] != b'`' && s[j] != b'\n' {
            j += 1;
        }
        return (j + 1).min(s.len());
    }
    if i + 1 < s.len() {
        let two = [b, s[i + 1]];
        if matches!(&two, b"==" | b"!=" | b"<=" | b">=" | b"&&" | b"||") {
            return i + 2;
        }
    }
    // One character (UTF-8 aware).
    let mut j = i + 1;
    while j < s.len() && (s[j] & 0xC0) == 0x80 {
        j += 1;
    }
    j
}

/// Estimate cel-go's two parse-depth limits from the tokens, before the recursive ANTLR parser
/// sees the input. Nesting (`(`, `[`, `{`) must stay within 250; and within each nesting level,
/// chains of binary operators, selections, member calls and indexes add to the visitor's depth
/// (cel-go counts ternary, relation, calc, select, member-call and index contexts; `&&`/`||`
/// chains are balanced and don't count). The estimate is an upper bound of cel-go's count.
fn prescan_depth(source: &str) -> Result<(), Vec<ParseError>> {
    let s = source.as_bytes();
    // Per open bracket: the chain length counted in that frame.
    let mut frames: Vec<usize> = vec![0];
    let mut chain_total = 0usize;
    let mut i = skip_trivia(s, 0);
    while i < s.len() {
        let end = token_end(s, i);
        let tok = &s[i..end];
        match tok {
            b"(" | b"[" | b"{" => {
                if tok == b"[" {
                    // An index or a list; either way it may add an index context.
                    if let Some(f) = frames.last_mut() {
                        *f += 1;
                        chain_total += 1;
                    }
                }
                frames.push(0);
                if frames.len() > MAX_RECURSION_DEPTH {
                    return Err(vec![ParseError::at(
                        None,
                        format!("expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"),
                    )]);
                }
            }
            b")" | b"]" | b"}" if frames.len() > 1 => {
                if let Some(f) = frames.pop() {
                    chain_total -= f;
                }
            }
            b"&&" | b"||" | b"?" | b":" | b"," => {
                if let Some(f) = frames.last_mut() {
                    chain_total -= *f;
                    *f = 0;
                }
            }
            b"+" | b"-" | b"*" | b"/" | b"%" | b"<" | b"<=" | b">" | b">=" | b"==" | b"!="
            | b"." | b"in" => {
                if let Some(f) = frames.last_mut() {
                    *f += 1;
                    chain_total += 1;
                }
            }
            _ => {}
        }
        if chain_total > MAX_RECURSION_DEPTH {
            return Err(vec![ParseError::at(None, "max recursion depth exceeded")]);
        }
        i = skip_trivia(s, end);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Conversion

struct Converter<'s> {
    source: &'s str,
    info: &'s cast::SourceInfo,
    next_id: NodeId,
    errors: Vec<ParseError>,
}

/// Operators written as a single token between or before operands (no closing delimiter).
fn is_operator(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('!') || name.starts_with('-') || name == "@in"
}

impl<'s> Converter<'s> {
    fn id(&mut self) -> NodeId {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn offset(&self, e: &cast::IdedExpr) -> u32 {
        self.info.offset_for(e.id).map(|(start, _)| start).unwrap_or(0)
    }

    /// The span of the token at `pos` alone.
    fn token_span(&self, pos: u32) -> Span {
        let s = self.source.as_bytes();
        let start = (pos as usize).min(s.len());
        Span::new(start, token_end(s, start))
    }

    /// Extend `span` over a closing delimiter that follows it.
    fn close(&self, span: Span, closer: u8) -> Span {
        let s = self.source.as_bytes();
        let i = skip_trivia(s, span.end as usize);
        if i < s.len() && s[i] == closer {
            Span { start: span.start, end: i as u32 + 1 }
        } else {
            span
        }
    }

    /// Extend `span` backwards over `word` (a function or macro name) before it.
    fn open_with(&self, span: Span, word: &str) -> Span {
        let head = self.source[..span.start as usize].trim_end();
        if head.ends_with(word) {
            Span { start: (head.len() - word.len()) as u32, end: span.end }
        } else {
            span
        }
    }

    fn node(&mut self, pos: u32, span: Span, kind: ExprKind) -> Expr {
        let id = self.id();
        Expr { id, pos, span, kind }
    }

    fn convert(&mut self, e: &cast::IdedExpr) -> Expr {
        let pos = self.offset(e);
        let own = self.token_span(pos);
        match &e.expr {
            cast::Expr::Unspecified => self.node(pos, own, ExprKind::Literal(Literal::Null)),
            cast::Expr::Literal(l) => {
                let lit = match l {
                    cast::LiteralValue::Null => Literal::Null,
                    cast::LiteralValue::Boolean(b) => Literal::Bool(**b),
                    cast::LiteralValue::Int(i) => Literal::Int(**i),
                    cast::LiteralValue::UInt(u) => Literal::Uint(**u),
                    cast::LiteralValue::Double(d) => Literal::Double(**d),
                    cast::LiteralValue::String(s) => Literal::String(Rc::from(s.inner())),
                    cast::LiteralValue::Bytes(b) => Literal::Bytes(Rc::from(b.inner())),
                };
                // A negative number literal starts at the `-` before its number token.
                let mut span = own;
                let negative = matches!(lit, Literal::Int(i) if i < 0)
                    || matches!(lit, Literal::Double(d) if d.is_sign_negative());
                if negative {
                    let head = self.source[..pos as usize].trim_end();
                    if head.ends_with('-') {
                        span.start = (head.len() - 1) as u32;
                    }
                }
                self.node(pos, span, ExprKind::Literal(lit))
            }
            cast::Expr::Ident(name) => self.node(pos, own, ExprKind::Ident(name.clone())),
            cast::Expr::Select(sel) => {
                let operand = self.convert(&sel.operand);
                // The field name after the operand's `.`.
                let s = self.source.as_bytes();
                let mut f = skip_trivia(s, operand.span.end as usize);
                if s.get(f) == Some(&b'.') {
                    f = skip_trivia(s, f + 1);
                }
                let mut span = own.cover(operand.span).cover(Span::new(f, token_end(s, f)));
                if sel.test {
                    span = self.close(self.open_with(span, "has"), b')');
                }
                self.node(
                    pos,
                    span,
                    ExprKind::Select {
                        operand: Box::new(operand),
                        field: sel.field.clone(),
                        test: sel.test,
                    },
                )
            }
            cast::Expr::Call(call) => {
                let target = call.target.as_ref().map(|t| self.convert(t));
                let args: Vec<Expr> = call.args.iter().map(|a| self.convert(a)).collect();
                let mut span = own;
                for c in target.iter().chain(&args) {
                    span = span.cover(c.span);
                }
                let name = call.func_name.as_str();
                if name == "_[_]" || name == "_[?_]" {
                    span = self.close(span, b']');
                } else if !is_operator(name) {
                    span = self.close(span, b')');
                    if target.is_none() {
                        span = self.open_with(span, name.rsplit('.').next().unwrap_or(name));
                    }
                }
                if let Some(expanded) = self.expand_macro(name, pos, span, &target, &args) {
                    return expanded;
                }
                self.node(
                    pos,
                    span,
                    ExprKind::Call {
                        function: call.func_name.clone(),
                        target: target.map(Box::new),
                        args,
                    },
                )
            }
            cast::Expr::List(list) => {
                let elements: Vec<Expr> = list.elements.iter().map(|a| self.convert(a)).collect();
                let span = elements.iter().fold(own, |s, c| s.cover(c.span));
                let span = self.close(span, b']');
                self.node(
                    pos,
                    span,
                    ExprKind::List { elements, optional_indices: list.optional_indices.clone() },
                )
            }
            cast::Expr::Map(map) => {
                let mut entries = Vec::with_capacity(map.entries.len());
                let mut span = own;
                for entry in &map.entries {
                    if let cast::EntryExpr::MapEntry(me) = &entry.expr {
                        let key = self.convert(&me.key);
                        let value = self.convert(&me.value);
                        span = span.cover(key.span).cover(value.span);
                        let id = self.id();
                        let epos = self.info.offset_for(entry.id).map(|(s, _)| s).unwrap_or(pos);
                        entries.push(MapEntry { id, pos: epos, key, value, optional: me.optional });
                    }
                }
                let span = self.close(span, b'}');
                self.node(pos, span, ExprKind::Map { entries })
            }
            cast::Expr::Struct(st) => {
                let mut fields = Vec::with_capacity(st.entries.len());
                let mut span = own;
                for entry in &st.entries {
                    if let cast::EntryExpr::StructField(sf) = &entry.expr {
                        let value = self.convert(&sf.value);
                        span = span.cover(value.span);
                        let id = self.id();
                        let epos = self.info.offset_for(entry.id).map(|(s, _)| s).unwrap_or(pos);
                        fields.push(StructField {
                            id,
                            pos: epos,
                            field: sf.field.clone(),
                            value,
                            optional: sf.optional,
                        });
                    }
                }
                let span = self.open_with(self.close(span, b'}'), &st.type_name);
                self.node(pos, span, ExprKind::Struct { type_name: st.type_name.clone(), fields })
            }
            cast::Expr::Comprehension(c) => {
                let iter_range = self.convert(&c.iter_range);
                let accu_init = self.convert(&c.accu_init);
                let loop_cond = self.convert(&c.loop_cond);
                let loop_step = self.convert(&c.loop_step);
                let result = self.convert(&c.result);
                // The macro call: from its target to its closing parenthesis.
                let mut span = own.cover(iter_range.span);
                for part in [&loop_step, &loop_cond, &result] {
                    if part.span.start >= span.start {
                        span = span.cover(part.span);
                    }
                }
                let span = self.close(span, b')');
                self.node(
                    pos,
                    span,
                    ExprKind::Comprehension(Box::new(Comprehension {
                        iter_range,
                        iter_var: c.iter_var.clone(),
                        iter_var2: c.iter_var2.clone(),
                        accu_var: c.accu_var.clone(),
                        accu_init,
                        loop_cond,
                        loop_step,
                        result,
                    })),
                )
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Macros the `cel` crate leaves as calls (cel-go `ext/comprehensions.go`, `cel/macro.go`
// optional macros, `ext/lists.go` sortBy).

/// The accumulator name cel-go's macros use.
pub const ACCU_VAR: &str = "@result";

impl<'s> Converter<'s> {
    fn lit(&mut self, pos: u32, span: Span, l: Literal) -> Expr {
        self.node(pos, span, ExprKind::Literal(l))
    }
    fn ident(&mut self, pos: u32, span: Span, name: &str) -> Expr {
        self.node(pos, span, ExprKind::Ident(name.to_string()))
    }
    fn call(
        &mut self,
        pos: u32,
        span: Span,
        f: &str,
        target: Option<Expr>,
        args: Vec<Expr>,
    ) -> Expr {
        self.node(
            pos,
            span,
            ExprKind::Call { function: f.to_string(), target: target.map(Box::new), args },
        )
    }
    #[allow(clippy::too_many_arguments)]
    fn comprehension(
        &mut self,
        pos: u32,
        span: Span,
        iter_range: Expr,
        iter_var: &str,
        iter_var2: Option<&str>,
        accu_var: &str,
        accu_init: Expr,
        loop_cond: Expr,
        loop_step: Expr,
        result: Expr,
    ) -> Expr {
        self.node(
            pos,
            span,
            ExprKind::Comprehension(Box::new(Comprehension {
                iter_range,
                iter_var: iter_var.to_string(),
                iter_var2: iter_var2.map(str::to_string),
                accu_var: accu_var.to_string(),
                accu_init,
                loop_cond,
                loop_step,
                result,
            })),
        )
    }

    /// The identifier name of a macro variable argument, or an error at it.
    fn var_name(&mut self, e: &Expr, what: &str) -> Option<String> {
        match &e.kind {
            ExprKind::Ident(n) => Some(n.clone()),
            _ => {
                self.errors.push(ParseError::at(
                    Some(e.pos as usize),
                    format!("{what} must be a simple name"),
                ));
                None
            }
        }
    }

    fn expand_macro(
        &mut self,
        name: &str,
        pos: u32,
        span: Span,
        target: &Option<Expr>,
        args: &[Expr],
    ) -> Option<Expr> {
        let target = target.as_ref()?;
        match (name, args.len()) {
            ("all" | "exists" | "existsOne" | "exists_one", 3)
            | ("transformList" | "transformMap" | "transformMapEntry", 3 | 4) => {
                let k = self.var_name(&args[0], "argument")?;
                let v = self.var_name(&args[1], "argument")?;
                if k == v {
                    self.errors.push(ParseError::at(
                        Some(args[1].pos as usize),
                        format!("duplicate variable name: {v}"),
                    ));
                    return None;
                }
                if k == ACCU_VAR || v == ACCU_VAR {
                    self.errors.push(ParseError::at(
                        Some(args[0].pos as usize),
                        "iteration variable overwrites accumulator variable",
                    ));
                    return None;
                }
                Some(self.two_var(name, pos, span, target.clone(), &k, &v, &args[2..]))
            }
            ("optMap" | "optFlatMap", 2) => {
                let v = self.var_name(&args[0], "optMap() variable name")?;
                Some(self.opt_map(
                    name == "optFlatMap",
                    pos,
                    span,
                    target.clone(),
                    &v,
                    args[1].clone(),
                ))
            }
            ("sortBy", 2) => {
                let v = self.var_name(&args[0], "sortBy(var, ...) variable name")?;
                Some(self.sort_by(pos, span, target.clone(), &v, args[1].clone()))
            }
            _ => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn two_var(
        &mut self,
        name: &str,
        pos: u32,
        span: Span,
        range: Expr,
        k: &str,
        v: &str,
        rest: &[Expr],
    ) -> Expr {
        let accu = |c: &mut Self| c.ident(pos, span, ACCU_VAR);
        match name {
            "all" | "exists" => {
                let all = name == "all";
                let init = self.lit(pos, span, Literal::Bool(all));
                let a = accu(self);
                let cond_inner = if all { a } else { self.call(pos, span, "!_", None, vec![a]) };
                let cond = self.call(pos, span, "@not_strictly_false", None, vec![cond_inner]);
                let a = accu(self);
                let op = if all { "_&&_" } else { "_||_" };
                let step = self.call(pos, span, op, None, vec![a, rest[0].clone()]);
                let result = accu(self);
                self.comprehension(pos, span, range, k, Some(v), ACCU_VAR, init, cond, step, result)
            }
            "existsOne" | "exists_one" => {
                let init = self.lit(pos, span, Literal::Int(0));
                let cond = self.lit(pos, span, Literal::Bool(true));
                let a = accu(self);
                let one = self.lit(pos, span, Literal::Int(1));
                let inc = self.call(pos, span, "_+_", None, vec![a, one]);
                let a = accu(self);
                let step = self.call(pos, span, "_?_:_", None, vec![rest[0].clone(), inc, a]);
                let a = accu(self);
                let one = self.lit(pos, span, Literal::Int(1));
                let result = self.call(pos, span, "_==_", None, vec![a, one]);
                self.comprehension(pos, span, range, k, Some(v), ACCU_VAR, init, cond, step, result)
            }
            _ => {
                // transformList: accu + [expr]; transformMap: accu with k -> expr (cel-go's
                // `cel.@mapInsert`); transformMapEntry: accu merged with the entry map.
                let (filter, expr) = if rest.len() == 2 {
                    (Some(rest[0].clone()), rest[1].clone())
                } else {
                    (None, rest[0].clone())
                };
                let init = if name == "transformList" {
                    self.node(
                        pos,
                        span,
                        ExprKind::List { elements: vec![], optional_indices: vec![] },
                    )
                } else {
                    self.node(pos, span, ExprKind::Map { entries: vec![] })
                };
                let cond = self.lit(pos, span, Literal::Bool(true));
                let a = accu(self);
                let add = match name {
                    "transformList" => {
                        let l = self.node(
                            pos,
                            span,
                            ExprKind::List { elements: vec![expr], optional_indices: vec![] },
                        );
                        self.call(pos, span, "_+_", None, vec![a, l])
                    }
                    "transformMap" => {
                        let key = self.ident(pos, span, k);
                        self.call(pos, span, "cel.@mapInsert", None, vec![a, key, expr])
                    }
                    _ => self.call(pos, span, "cel.@mapInsert", None, vec![a, expr]),
                };
                let step = match filter {
                    Some(f) => {
                        let a = accu(self);
                        self.call(pos, span, "_?_:_", None, vec![f, add, a])
                    }
                    None => add,
                };
                let result = accu(self);
                self.comprehension(pos, span, range, k, Some(v), ACCU_VAR, init, cond, step, result)
            }
        }
    }

    /// `opt.optMap(v, e)` → `opt.hasValue() ? optional.of(<bind v = opt.value()> e) : optional.none()`;
    /// `optFlatMap` leaves out the `optional.of`. The bind is cel-go's single-step comprehension
    /// over an empty list with the variable as accumulator.
    fn opt_map(
        &mut self,
        flat: bool,
        pos: u32,
        span: Span,
        target: Expr,
        v: &str,
        e: Expr,
    ) -> Expr {
        let has = self.call(pos, span, "hasValue", Some(target.clone()), vec![]);
        let value = self.call(pos, span, "value", Some(target), vec![]);
        let bound = self.bind(pos, span, v, value, e);
        let some =
            if flat { bound } else { self.call(pos, span, "optional.of", None, vec![bound]) };
        let none = self.call(pos, span, "optional.none", None, vec![]);
        self.call(pos, span, "_?_:_", None, vec![has, some, none])
    }

    fn bind(&mut self, pos: u32, span: Span, var: &str, init: Expr, body: Expr) -> Expr {
        let empty =
            self.node(pos, span, ExprKind::List { elements: vec![], optional_indices: vec![] });
        let cond = self.lit(pos, span, Literal::Bool(false));
        let step = self.ident(pos, span, var);
        self.comprehension(pos, span, empty, "#unused", None, var, init, cond, step, body)
    }

    /// `l.sortBy(v, key)` → bind `@__sortBy_input__ = l` in
    /// `@__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key))` (a member call, as
    /// cel-go declares it).
    fn sort_by(&mut self, pos: u32, span: Span, target: Expr, v: &str, key: Expr) -> Expr {
        const INPUT: &str = "@__sortBy_input__";
        let input = self.ident(pos, span, INPUT);
        // map(v, key) as cel-go's map macro expands it.
        let range = self.ident(pos, span, INPUT);
        let init =
            self.node(pos, span, ExprKind::List { elements: vec![], optional_indices: vec![] });
        let cond = self.lit(pos, span, Literal::Bool(true));
        let a = self.ident(pos, span, ACCU_VAR);
        let l =
            self.node(pos, span, ExprKind::List { elements: vec![key], optional_indices: vec![] });
        let step = self.call(pos, span, "_+_", None, vec![a, l]);
        let result = self.ident(pos, span, ACCU_VAR);
        let keys =
            self.comprehension(pos, span, range, v, None, ACCU_VAR, init, cond, step, result);
        let sorted = self.call(pos, span, "@sortByAssociatedKeys", Some(input), vec![keys]);
        self.bind(pos, span, INPUT, target, sorted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(src: &str, span: Span) -> &str {
        &src[span.start as usize..span.end as usize]
    }

    #[test]
    fn spans_cover_whole_subexpressions() {
        let src = "a.b + f(x, [1, 2]) * -3";
        let ast = parse(src, ParseOptions::default()).unwrap();
        assert_eq!(text(src, ast.root.span), src);
        let ExprKind::Call { args, .. } = &ast.root.kind else { panic!() };
        assert_eq!(text(src, args[0].span), "a.b");
        assert_eq!(text(src, args[1].span), "f(x, [1, 2]) * -3");
        let ExprKind::Call { args: inner, .. } = &args[1].kind else { panic!() };
        assert_eq!(text(src, inner[0].span), "f(x, [1, 2])");
        assert_eq!(text(src, inner[1].span), "-3");
    }

    #[test]
    fn positions_are_cel_go_positions() {
        // cel-go reports `_+_` at the operator and a call at its `(`.
        let ast = parse("114 + '514'", ParseOptions::default()).unwrap();
        assert_eq!(ast.root.pos, 4);
        let ast = parse("x.exists(y, y)", ParseOptions::default()).unwrap();
        assert_eq!(ast.root.pos, 8);
        assert_eq!(text("x.exists(y, y)", ast.root.span), "x.exists(y, y)");
    }

    #[test]
    fn macro_spans_include_has_and_parens() {
        let src = "has(a.b) && m.all(k, v, k == v)";
        let ast = parse(src, ParseOptions::default()).unwrap();
        let ExprKind::Call { args, .. } = &ast.root.kind else { panic!() };
        assert_eq!(text(src, args[0].span), "has(a.b)");
        assert_eq!(text(src, args[1].span), "m.all(k, v, k == v)");
        let ExprKind::Comprehension(c) = &args[1].kind else { panic!("{:?}", args[1].kind) };
        assert_eq!(c.iter_var, "k");
        assert_eq!(c.iter_var2.as_deref(), Some("v"));
    }

    #[test]
    fn syntax_error_offsets_count_code_points() {
        // cel-go: ERROR: <input>:1:10 for the EOF after `'é' + 1 +`.
        let src = "'é' + 1 +";
        let errs = parse(src, ParseOptions::default()).unwrap_err();
        assert_eq!(errs[0].offset, Some(src.len() as u32));
    }

    #[test]
    fn limits_are_diagnostics_not_overflows() {
        let chain = vec!["1"; 10_000].join(" + ");
        let e = parse(&chain, ParseOptions::default()).unwrap_err();
        assert_eq!(e[0].message, "max recursion depth exceeded");
        let nested = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        let e = parse(&nested, ParseOptions::default()).unwrap_err();
        assert_eq!(e[0].message, "expression recursion limit exceeded: 250");
        let lists = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse(&lists, ParseOptions::default()).is_err());
        let big = "a".repeat(100_001);
        let e = parse(&big, ParseOptions::default()).unwrap_err();
        assert_eq!(
            e[0].message,
            "expression code point size exceeds limit: size: 100001, limit 100000"
        );
        // Balanced logical chains are fine, as in cel-go.
        let ands = vec!["a"; 10_000].join(" && ");
        assert!(parse(&ands, ParseOptions::default()).is_ok());
        // A 200-term arithmetic chain is within cel-go's limit.
        let ok = vec!["1"; 200].join(" + ");
        assert!(parse(&ok, ParseOptions::default()).is_ok());
    }
}
