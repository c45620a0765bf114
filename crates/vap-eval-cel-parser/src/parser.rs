//! Parsing: CEL source text → [`ast`](crate::ast), with cel-go's AST, positions and errors.
//!
//! A hand-written lexer ([`lexer`]) and recursive-descent parser for cel-go's grammar
//! (`parser/gen/CEL.g4`), with the options Kubernetes sets: optional syntax (`a.?b`, `a[?b]`,
//! `[?x]`, `{?k: v}`, `Msg{?f: v}`) always, backtick-quoted field names (``a.`b-c` ``) per
//! [`ParseOptions`]. Each grammar rule is one function, so that syntax errors are what cel-go's
//! ANTLR parser reports for the same input: its messages (`mismatched input 'X' expecting {…}`,
//! `extraneous input …`, `missing … at …`, `no viable alternative at input …`), at the same
//! tokens, and the same recovery afterwards (single-token deletion and insertion, resynchronising
//! on the tokens that may follow the enclosing rules, at most 30 attempts).
//!
//! On top of the grammar, what cel-go's visitor adds:
//! - the AST: cel-go's node shapes and positions (`pos`: a call at its `(`, an operator at its
//!   token, a select at its `.`, an index at its `[`, a map entry or struct field at its `:`),
//!   plus the byte span of every node; dense ids in post-order;
//! - cel-go's limits, so that deep input becomes a diagnostic, not a stack overflow: 100,000
//!   code points; nesting depth 250 (`expression recursion limit exceeded: 250`), checked from
//!   the tokens before the descent (and during it for nested `?:` else-branches, which cel-go
//!   counts too); cel-go's visitor depth over chains of operators, selections, calls and indexes
//!   (`max recursion depth exceeded`), estimated from the tokens;
//! - literal values and their errors (`invalid int literal`, `invalid unicode code point`),
//!   reserved identifiers (`reserved identifier: var`);
//! - macro expansion with cel-go's expansion shapes: `has`, `all`, `exists`, `exists_one` /
//!   `existsOne`, `map`, `filter`, the two-variable comprehensions (`all`, `exists`,
//!   `existsOne`, `transformList`, `transformMap`, `transformMapEntry`), `optMap`, `optFlatMap`
//!   and `sortBy`.

mod lexer;

use crate::ast::{Ast, Comprehension, Expr, ExprKind, Literal, MapEntry, StructField};
use crate::Span;
use lexer::*;
use std::rc::Rc;

/// cel-go's default limits (`parser.NewParser`).
pub const MAX_CODE_POINTS: usize = 100_000;
pub const MAX_RECURSION_DEPTH: usize = 250;
const ERROR_RECOVERY_LIMIT: u32 = 30;
const ERROR_REPORTING_LIMIT: u32 = 100;
const ERROR_RECOVERY_LOOKAHEAD_LIMIT: u32 = 256;

/// The accumulator name cel-go's macros use.
pub const ACCU_VAR: &str = "@result";
/// The accumulator name of older cel-go versions, which iteration variables may not use either.
const OLD_ACCU_VAR: &str = "__result__";

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
    fn at(offset: Option<u32>, message: impl Into<String>) -> Self {
        ParseError { message: message.into(), offset }
    }
}

/// Parse `source` into an [`Ast`], or the list of problems (sorted by position).
pub fn parse(source: &str, options: ParseOptions) -> Result<Ast, Vec<ParseError>> {
    let code_points = source.chars().count();
    if code_points > MAX_CODE_POINTS {
        return Err(too_long(code_points));
    }
    let (tokens, lex_errors) = lexer::tokenize(source);
    prescan_depth(&tokens)?;
    let mut p = Parser {
        src: source,
        toks: tokens,
        lex_errors,
        lex_reported: 0,
        fetched: 0,
        p: 0,
        follow: Vec::new(),
        recovering: false,
        last_error: None,
        attempts: 0,
        reports: 0,
        aborted: false,
        depth: 0,
        syntax: Vec::new(),
        semantic: Vec::new(),
        partial: None,
        backticks: options.backtick_identifiers,
    };
    let root = p.start();
    let mut errors = p.syntax;
    if !p.aborted {
        errors.append(&mut p.semantic);
    }
    match root {
        Ok(mut root) if errors.is_empty() => {
            let mut next = 0;
            number(&mut root, &mut next);
            Ok(Ast { root, source: Rc::from(source), node_count: next })
        }
        _ => Err(sort_by_offset(errors)),
    }
}

/// The error of an expression over the size limit (out of line: a page's first `evaluate()`
/// compiles `parse` whole).
#[cold]
#[inline(never)]
fn too_long(code_points: usize) -> Vec<ParseError> {
    vec![ParseError::at(
        None,
        format!(
            "expression code point size exceeds limit: size: {code_points}, limit {MAX_CODE_POINTS}"
        ),
    )]
}

/// `errors` stably sorted by offset (`None` first), as `sort_by_key(|e| e.offset)` would: each
/// error goes after the ones with an offset not greater than its own. The lists are short and
/// nearly in order (each error is reported as the parser reaches it), and the standard
/// library's stable sort instantiated for `ParseError` was ≈ 4.4 KB of wasm. Out of line: a
/// page's first `evaluate()` compiles `parse` whole, errors or not.
#[inline(never)]
fn sort_by_offset(errors: Vec<ParseError>) -> Vec<ParseError> {
    let mut sorted: Vec<ParseError> = Vec::with_capacity(errors.len());
    for e in errors {
        let at = sorted.partition_point(|s| s.offset <= e.offset);
        sorted.insert(at, e);
    }
    sorted
}

/// Assign dense ids in post-order: children (in [`Expr::children`] order), map entries and
/// struct fields after their key and value, then the node.
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

/// cel-go's two parse-depth limits, estimated from the tokens before the recursive descent
/// sees the input. Nesting (`(`, `[`, `{`) must stay within 250; and within each nesting level,
/// chains of binary operators, selections, member calls and indexes add to the visitor's depth
/// (cel-go counts ternary, relation, calc, select, member-call and index contexts; `&&`/`||`
/// chains are balanced and don't count). The estimate is an upper bound of cel-go's count.
fn prescan_depth(tokens: &[Token]) -> Result<(), Vec<ParseError>> {
    // Per open bracket: the chain length counted in that frame.
    let mut frames: Vec<usize> = vec![0];
    let mut chain_total = 0usize;
    for t in tokens {
        match t.kind {
            LPAREN | LBRACKET | LBRACE => {
                if t.kind == LBRACKET {
                    // An index or a list; either way it may add an index context.
                    if let Some(f) = frames.last_mut() {
                        *f += 1;
                        chain_total += 1;
                    }
                }
                frames.push(0);
                if frames.len() > MAX_RECURSION_DEPTH {
                    return Err(vec![recursion_limit()]);
                }
            }
            RPAREN | RBRACKET | RBRACE if frames.len() > 1 => {
                if let Some(f) = frames.pop() {
                    chain_total -= f;
                }
            }
            AND | OR | QUESTION | COLON | COMMA => {
                if let Some(f) = frames.last_mut() {
                    chain_total -= *f;
                    *f = 0;
                }
            }
            EQUALS..=GREATER | MINUS | PLUS | STAR | SLASH | PERCENT | DOT => {
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
    }
    Ok(())
}

fn recursion_limit() -> ParseError {
    ParseError::at(None, format!("expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"))
}

// ---------------------------------------------------------------------------------------------
// Token sets (bit `t` for token kind `t`) and the follow sets of the grammar's rule invocations

const fn bit(t: u8) -> u64 {
    1 << t
}
/// The rule may end here: what follows comes from the invoking rule.
const EPS: u64 = 1 << 63;
const RELOPS: u64 = bit(EQUALS)
    | bit(NOT_EQUALS)
    | bit(IN)
    | bit(LESS)
    | bit(LESS_EQUALS)
    | bit(GREATER_EQUALS)
    | bit(GREATER);
const CALCOPS: u64 = bit(MINUS) | bit(PLUS) | bit(STAR) | bit(SLASH) | bit(PERCENT);
const LITERALS: u64 = bit(TRUE)
    | bit(FALSE)
    | bit(NULL)
    | bit(NUM_FLOAT)
    | bit(NUM_INT)
    | bit(NUM_UINT)
    | bit(STRING)
    | bit(BYTES);
/// FIRST(primary) = FIRST(member): a literal may start with `-`.
const F_PRIMARY: u64 =
    bit(LBRACKET) | bit(LBRACE) | bit(LPAREN) | bit(DOT) | bit(MINUS) | LITERALS | bit(IDENTIFIER);
/// FIRST(expr) = FIRST(unary).
const F_EXPR: u64 = F_PRIMARY | bit(EXCLAM);
const F_FIELD: u64 = bit(QUESTION) | bit(IDENTIFIER) | bit(ESC_IDENTIFIER);
/// After a member: its postfix loop, else the end of the rule.
const MEMBER_LOOP: u64 = bit(DOT) | bit(LBRACKET) | EPS;

/// A recognition error, handled by the innermost rule (report, then resynchronise), or the end
/// of the parse (limits), which unwinds everything.
enum Fail {
    /// The current token doesn't fit; `expected` is ANTLR's expected set there.
    Mismatch {
        expected: u64,
        state: u16,
    },
    /// No alternative of a decision fits the tokens from `start` to `offending`.
    NoViable {
        start: usize,
        offending: usize,
        state: u16,
    },
    Abort,
}

type R<T> = Result<T, Fail>;

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token>,
    lex_errors: Vec<(u32, u32)>,
    /// Lexer errors reported so far: ANTLR's lexer reports them as the parser fetches tokens.
    lex_reported: usize,
    /// Tokens fetched so far (lookahead included).
    fetched: usize,
    /// The current token.
    p: usize,
    /// For each active rule invocation, the tokens that may follow it in the invoking rule
    /// (`EPS`: and whatever follows that rule): ANTLR's rule-context stack, for recovery.
    follow: Vec<u64>,
    /// ANTLR's error recovery mode: errors aren't reported until a token is matched.
    recovering: bool,
    /// Where the last recovery started (token index) and the states of the recoveries since
    /// the last match: recovering again there from one of them consumes a token first.
    last_error: Option<(usize, Vec<u16>)>,
    attempts: u32,
    reports: u32,
    aborted: bool,
    /// Nesting of the `expr` rule, against cel-go's recursion limit.
    depth: usize,
    syntax: Vec<ParseError>,
    semantic: Vec<ParseError>,
    /// What a failing rule had built (cel-go's visitor sees partial rules), for its result.
    partial: Option<Expr>,
    backticks: bool,
}

/// A node standing for what failed to parse (or a reserved identifier): never in an accepted
/// AST, since it always comes with an error.
fn error_node(at: u32) -> Expr {
    Expr { id: 0, pos: at, span: Span { start: at, end: at }, kind: ExprKind::Ident(String::new()) }
}

fn node(pos: u32, span: Span, kind: ExprKind) -> Expr {
    Expr { id: 0, pos, span, kind }
}

fn lit(pos: u32, span: Span, l: Literal) -> Expr {
    node(pos, span, ExprKind::Literal(l))
}

fn ident(pos: u32, span: Span, name: &str) -> Expr {
    node(pos, span, ExprKind::Ident(name.to_string()))
}

fn call(pos: u32, span: Span, f: &str, target: Option<Expr>, args: Vec<Expr>) -> Expr {
    node(pos, span, ExprKind::Call { function: f.to_string(), target: target.map(Box::new), args })
}

fn list(pos: u32, span: Span, elements: Vec<Expr>) -> Expr {
    node(pos, span, ExprKind::List { elements, optional_indices: vec![] })
}

fn span_of(t: Token) -> Span {
    Span { start: t.start, end: t.end }
}

impl<'s> Parser<'s> {
    // -----------------------------------------------------------------------------------------
    // Tokens and errors

    /// The token `k` ahead (1: the current one), fetching it (and reporting the lexer errors
    /// before it) the first time.
    fn tok(&mut self, k: usize) -> Token {
        let i = (self.p + k - 1).min(self.toks.len() - 1);
        if i >= self.fetched {
            self.fetched = i + 1;
            let start = self.toks[i].start;
            let end = if self.toks[i].kind == EOF { u32::MAX } else { start };
            while self.lex_reported < self.lex_errors.len()
                && self.lex_errors[self.lex_reported].0 < end
            {
                let (a, b) = self.lex_errors[self.lex_reported];
                self.lex_reported += 1;
                let text = &self.src[a as usize..b as usize];
                self.syntax_error(a, format!("token recognition error at: '{text}'"));
            }
        }
        self.toks[i]
    }

    fn la(&mut self, k: usize) -> u8 {
        self.tok(k).kind
    }

    fn consume(&mut self) {
        if self.tok(1).kind != EOF {
            self.p += 1;
        }
    }

    /// Report a syntax error (cel-go prefixes `Syntax error: `); the 101st ends the parse.
    fn syntax_error(&mut self, at: u32, msg: String) {
        if self.aborted {
            return;
        }
        if self.reports == ERROR_REPORTING_LIMIT {
            let more = format!("More than {ERROR_REPORTING_LIMIT} syntax errors");
            self.syntax.push(ParseError::at(Some(at), format!("Syntax error: {more}")));
            self.aborted = true;
            return;
        }
        self.reports += 1;
        self.syntax.push(ParseError::at(Some(at), format!("Syntax error: {msg}")));
    }

    /// An error of cel-go's visitor (not a syntax error) at `at`.
    fn error(&mut self, at: u32, msg: impl Into<String>) {
        self.semantic.push(ParseError::at(Some(at), msg));
    }

    /// A token as ANTLR quotes it in messages.
    fn display(&self, t: Token) -> String {
        if t.kind == EOF {
            return "'<EOF>'".into();
        }
        quote(&self.src[t.start as usize..t.end as usize])
    }

    /// The source text of tokens `a..=b`, as ANTLR's token stream gives it: with whitespace and
    /// comments, without what the lexer skipped as unrecognized.
    fn text(&self, a: usize, b: usize) -> String {
        let start = self.toks[a].start;
        let end = if self.toks[b].kind == EOF { self.src.len() as u32 } else { self.toks[b].end };
        let mut out = String::new();
        let mut at = start;
        for &(x, y) in self.lex_errors.iter().filter(|e| e.0 >= start && e.0 < end) {
            out.push_str(&self.src[at as usize..x as usize]);
            at = y;
        }
        out.push_str(&self.src[at.min(end) as usize..end as usize]);
        out
    }

    fn report_match(&mut self) {
        self.recovering = false;
        self.last_error = None;
    }

    /// `extraneous input 'X' expecting …` or `missing … at 'X'`, unless already recovering.
    fn report_at_current(&mut self, extraneous: bool, expected: u64) {
        if self.recovering {
            return;
        }
        self.recovering = true;
        let t = self.tok(1);
        let (tok, exp) = (self.display(t), set_display(expected));
        let msg = if extraneous {
            format!("extraneous input {tok} expecting {exp}")
        } else {
            format!("missing {exp} at {tok}")
        };
        self.syntax_error(t.start, msg);
    }

    /// cel-go stops after 30 recovery attempts.
    fn check_attempts(&mut self) -> R<()> {
        if self.aborted {
            return Err(Fail::Abort);
        }
        if self.attempts == ERROR_RECOVERY_LIMIT {
            let at = self.tok(1).start;
            let msg = format!("error recovery attempt limit exceeded: {ERROR_RECOVERY_LIMIT}");
            self.syntax_error(at, msg);
            self.aborted = true;
            return Err(Fail::Abort);
        }
        self.attempts += 1;
        Ok(())
    }

    /// What may follow `set` (a set with `EPS` when the rule may end), walking out through the
    /// invoking rules as ANTLR's `getExpectedTokens` does.
    fn in_context(&self, mut set: u64) -> u64 {
        let mut i = self.follow.len();
        while set & EPS != 0 && i > 0 {
            i -= 1;
            set = (set & !EPS) | self.follow[i];
        }
        if set & EPS != 0 {
            set = (set & !EPS) | bit(EOF);
        }
        set
    }

    /// The tokens that may follow any active rule: where recovery stops skipping.
    fn recovery_set(&self) -> u64 {
        self.follow.iter().fold(0, |a, f| a | f) & !EPS
    }

    fn consume_until(&mut self, set: u64) {
        loop {
            let t = self.la(1);
            if t == EOF || set & bit(t) != 0 {
                return;
            }
            self.consume();
        }
    }

    /// Match token `t`; on a mismatch recover as ANTLR does: drop one extra token, or assume a
    /// missing one when the current token may follow it (`after`: what may follow `t` in this
    /// rule), else fail.
    fn expect(&mut self, t: u8, after: u64, state: u16) -> R<Token> {
        if self.la(1) == t {
            self.report_match();
            let tok = self.tok(1);
            self.consume();
            return Ok(tok);
        }
        self.check_attempts()?;
        if self.la(2) == t {
            self.report_at_current(true, bit(t));
            self.consume();
            self.report_match();
            let tok = self.tok(1);
            self.consume();
            return Ok(tok);
        }
        if self.in_context(after) & bit(self.la(1)) != 0 {
            self.report_at_current(false, bit(t));
            let at = self.tok(1).start;
            return Ok(Token { kind: t, start: at, end: at });
        }
        Err(Fail::Mismatch { expected: bit(t), state })
    }

    /// Match a token known to be current (checked by a decision).
    fn take(&mut self) -> Token {
        self.report_match();
        let t = self.tok(1);
        self.consume();
        t
    }

    /// ANTLR's `sync` before a block (`loop_back`: at the end of a `+` loop's iteration): the
    /// current token must be in `set`, else drop one extra token if that helps, else fail (or,
    /// at a loop's end, skip to what may continue).
    fn sync(&mut self, set: u64, loop_back: bool, state: u16) -> R<()> {
        if self.aborted {
            return Err(Fail::Abort);
        }
        if self.recovering || set & bit(self.la(1)) != 0 {
            return Ok(());
        }
        if loop_back {
            self.report_at_current(true, set);
            let stop = set | self.recovery_set();
            self.consume_until(stop);
        } else if set & bit(self.la(2)) != 0 {
            self.report_at_current(true, set);
            self.consume();
            self.report_match();
        } else {
            return Err(Fail::Mismatch { expected: set, state });
        }
        Ok(())
    }

    /// A rule's error handler: report (unless recovering), then skip to a token that may follow
    /// an active rule. Only `Abort` goes on.
    fn recover(&mut self, f: Fail) -> R<()> {
        self.partial = None;
        let state = match f {
            Fail::Abort => return Err(Fail::Abort),
            Fail::Mismatch { state, .. } | Fail::NoViable { state, .. } => state,
        };
        if !self.recovering {
            self.recovering = true;
            let (at, msg) = match f {
                Fail::Mismatch { expected, .. } => {
                    let t = self.tok(1);
                    let msg = format!(
                        "mismatched input {} expecting {}",
                        self.display(t),
                        set_display(expected)
                    );
                    (t.start, msg)
                }
                Fail::NoViable { start, offending, .. } => {
                    let input = if self.toks[start].kind == EOF {
                        "<EOF>".to_string()
                    } else {
                        self.text(start, offending)
                    };
                    // cel-go rewrites this message for a keyword after one character (as in
                    // `a.true`), to read as its older parsers did.
                    let mut chars = input.chars();
                    chars.next();
                    let msg = match chars.as_str() {
                        k @ ("true" | "false" | "null") => {
                            format!("mismatched input '{k}' expecting IDENTIFIER")
                        }
                        _ => format!("no viable alternative at input {}", quote(&input)),
                    };
                    (self.toks[offending].start, msg)
                }
                Fail::Abort => unreachable!(),
            };
            self.syntax_error(at, msg);
        }
        self.check_attempts()?;
        // The states of recoveries since the last match accumulate, wherever they were.
        // cel-go skips at most 256 tokens in one recovery.
        let mut budget = ERROR_RECOVERY_LOOKAHEAD_LIMIT;
        let (index, states) = self.last_error.get_or_insert((usize::MAX, Vec::new()));
        if *index == self.p && states.contains(&state) {
            self.skip(&mut budget)?;
        }
        let (index, states) = self.last_error.get_or_insert((usize::MAX, Vec::new()));
        *index = self.p;
        states.push(state);
        let stop = self.recovery_set();
        while self.la(1) != EOF && stop & bit(self.la(1)) == 0 {
            self.skip(&mut budget)?;
        }
        Ok(())
    }

    /// Consume a token in a recovery that may skip `budget` more.
    fn skip(&mut self, budget: &mut u32) -> R<()> {
        if *budget == 0 && !self.aborted {
            let msg = format!(
                "error recovery token lookahead limit exceeded: {ERROR_RECOVERY_LOOKAHEAD_LIMIT}"
            );
            self.syntax.push(ParseError::at(None, msg));
            self.aborted = true;
        }
        if self.aborted {
            return Err(Fail::Abort);
        }
        *budget -= 1;
        self.consume();
        Ok(())
    }

    /// Run rule `f` with `follow` as what may follow it here; a failure inside is handled by
    /// the rule (reported and recovered) and yields an error node.
    #[inline(always)]
    fn rule(&mut self, follow: u64, f: fn(&mut Self) -> R<Expr>) -> R<Expr> {
        self.follow.push(follow);
        let at = self.tok(1).start;
        let r = f(self);
        let r = match r {
            Err(e) => {
                let partial = self.partial.take();
                self.recover(e).map(|_| partial.unwrap_or_else(|| error_node(at)))
            }
            ok => ok,
        };
        self.follow.pop();
        r
    }

    // -----------------------------------------------------------------------------------------
    // The grammar

    /// `start: expr EOF`
    fn start(&mut self) -> R<Expr> {
        let e = self.rule(bit(EOF), Self::expr)?;
        if let Err(f) = self.expect(EOF, 0, 1) {
            self.recover(f)?;
        }
        Ok(e)
    }

    /// `expr: conditionalOr ('?' conditionalOr ':' expr)?`
    fn expr(&mut self) -> R<Expr> {
        self.depth += 1;
        if self.depth > MAX_RECURSION_DEPTH {
            if !self.aborted {
                self.aborted = true;
                self.syntax.push(recursion_limit());
            }
            return Err(Fail::Abort);
        }
        let r = self.ternary();
        self.depth -= 1;
        r
    }

    fn ternary(&mut self) -> R<Expr> {
        let cond = self.binary(bit(QUESTION) | EPS)?;
        if self.la(1) != QUESTION {
            return Ok(cond);
        }
        self.branches(cond)
    }

    /// `'?' conditionalOr ':' expr` after the condition.
    #[inline(never)]
    fn branches(&mut self, cond: Expr) -> R<Expr> {
        let q = self.take();
        let then = self.binary(bit(COLON))?;
        let (other, r) = match self.expect(COLON, F_EXPR, 2) {
            Ok(_) => (self.rule(EPS, Self::expr)?, Ok(())),
            Err(f) => (error_node(q.start), Err(f)),
        };
        let span = cond.span.cover(other.span);
        let e = call(q.start, span, "_?_:_", None, vec![cond, then, other]);
        self.partial_on(e, r)
    }

    /// The binary operators, cel-go's rules `conditionalOr` (invoked with `follow`),
    /// `conditionalAnd`, `relation` and `calc` in one loop: by precedence `||` < `&&` <
    /// relations < `+ -` < `* / %`, all left-associative, `&&` and `||` chains as balanced
    /// trees. None of these rules can fail by itself, only their operands (unary, which
    /// recovers by itself).
    fn binary(&mut self, follow: u64) -> R<Expr> {
        self.follow.push(follow);
        let r = self.binary_chain();
        self.follow.pop();
        r
    }

    fn binary_chain(&mut self) -> R<Expr> {
        // Finished `&&` chains of the current `||` chain, and the `&&` terms of the current one.
        let (mut ors, mut or_ops) = (Vec::new(), Vec::new());
        let (mut ands, mut and_ops) = (Vec::new(), Vec::new());
        // Pending left operands of relation and arithmetic operators, by precedence.
        let mut pending: Vec<(Expr, Token, u8)> = Vec::new();
        loop {
            // What may follow an operand: the operators of each enclosing rule.
            let follow = bit(OR) | bit(AND) | RELOPS | CALCOPS | EPS;
            let mut e = self.rule(follow, Self::unary)?;
            let t = self.tok(1);
            let prec = match t.kind {
                STAR | SLASH | PERCENT => 4,
                PLUS | MINUS => 3,
                k if RELOPS & bit(k) != 0 => 2,
                AND => 1,
                _ => 0,
            };
            while pending.last().is_some_and(|p| p.2 >= prec) {
                e = reduce(&mut pending, e);
            }
            if prec >= 2 {
                pending.push((e, self.take(), prec));
                continue;
            }
            ands.push(e);
            if prec == 1 {
                and_ops.push(self.take().start);
                continue;
            }
            ors.push(logic(&mut ands, &mut and_ops, "_&&_"));
            if t.kind != OR {
                return Ok(logic(&mut ors, &mut or_ops, "_||_"));
            }
            or_ops.push(self.take().start);
        }
    }

    /// `unary: member | '!'+ member | '-'+ member`. An even number of `!` or `-` cancels; a
    /// `-` right before a number is the number's sign (`-1` is the literal -1).
    #[inline(never)]
    fn unary(&mut self) -> R<Expr> {
        self.sync(F_EXPR, false, 3)?;
        let t = self.tok(1);
        match t.kind {
            EXCLAM => {
                let mut n = 0;
                loop {
                    self.take();
                    n += 1;
                    self.sync(bit(EXCLAM) | F_PRIMARY, true, 4)?;
                    if self.la(1) != EXCLAM {
                        break;
                    }
                }
                let operand = self.rule(EPS, Self::member)?;
                Ok(if n % 2 == 0 { operand } else { not(t, operand) })
            }
            MINUS if !matches!(self.la(2), NUM_INT | NUM_FLOAT) => {
                if F_PRIMARY & bit(self.la(2)) == 0 {
                    return Err(Fail::NoViable { start: self.p, offending: self.p + 1, state: 5 });
                }
                let mut n = 0;
                loop {
                    self.take();
                    n += 1;
                    self.sync(bit(MINUS) | F_PRIMARY, true, 6)?;
                    // Another `-`, unless it is the sign of a number that follows.
                    match (self.la(1), self.la(2)) {
                        (MINUS, k) if F_PRIMARY & bit(k) != 0 => continue,
                        (MINUS, _) => {
                            let start = self.p;
                            return Err(Fail::NoViable { start, offending: start + 1, state: 7 });
                        }
                        (k, _) if F_PRIMARY & bit(k) != 0 => break,
                        _ => {
                            let start = self.p;
                            return Err(Fail::NoViable { start, offending: start, state: 7 });
                        }
                    }
                }
                let operand = self.rule(EPS, Self::member)?;
                Ok(if n % 2 == 0 {
                    operand
                } else {
                    let span = span_of(t).cover(operand.span);
                    call(t.start, span, "-_", None, vec![operand])
                })
            }
            k if F_PRIMARY & bit(k) != 0 => self.rule(EPS, Self::member),
            _ => Err(Fail::NoViable { start: self.p, offending: self.p, state: 8 }),
        }
    }

    /// `member: primary ('.' '?'? escapeIdent | '.' IDENTIFIER '(' exprList? ')'
    /// | '[' '?'? expr ']')*`
    fn member(&mut self) -> R<Expr> {
        let mut e = self.rule(MEMBER_LOOP, Self::primary)?;
        loop {
            e = match self.la(1) {
                LBRACKET => self.index(e)?,
                DOT => self.select_or_call(e)?,
                _ => return Ok(e),
            };
        }
    }

    /// `e '[' '?'? expr ']'`. (The steps of the member loop are functions of their own, so
    /// that the frames on the recursion path stay small.)
    #[inline(never)]
    fn index(&mut self, e: Expr) -> R<Expr> {
        let op = self.take();
        let r = self.sync(bit(QUESTION) | F_EXPR, false, 10);
        let optional = r.is_ok() && self.la(1) == QUESTION;
        if optional {
            self.take();
        }
        let (index, close) = match r {
            Ok(()) => {
                let index = self.rule(bit(RBRACKET), Self::expr)?;
                (index, self.expect(RBRACKET, MEMBER_LOOP, 11))
            }
            Err(f) => (error_node(op.start), Err(f)),
        };
        let span = e.span.cover(span_of(*close.as_ref().unwrap_or(&op)));
        let f = if optional { "_[?_]" } else { "_[_]" };
        let e = call(op.start, span, f, None, vec![e, index]);
        self.partial_on(e, close.map(|_| ()))
    }

    /// `e '.' '?'? escapeIdent` or `e '.' IDENTIFIER '(' exprList? ')'`.
    #[inline(never)]
    fn select_or_call(&mut self, e: Expr) -> R<Expr> {
        let op = self.tok(1);
        let name = self.tok(2);
        let is_call = name.kind == IDENTIFIER && self.la(3) == LPAREN;
        if !is_call && !matches!(name.kind, QUESTION | IDENTIFIER | ESC_IDENTIFIER) {
            let start = self.p;
            return self
                .partial_on(e, Err(Fail::NoViable { start, offending: start + 1, state: 12 }));
        }
        self.take();
        if is_call {
            self.take();
            let open = self.take();
            let (args, close) = self.args(MEMBER_LOOP);
            let span = e.span.cover(span_of(*close.as_ref().unwrap_or(&open)));
            let f = &self.src[name.start as usize..name.end as usize];
            let e = self.call_or_macro(open.start, span, f, Some(e), args);
            return self.partial_on(e, close.map(|_| ()));
        }
        let optional = self.la(1) == QUESTION;
        if optional {
            self.take();
        }
        let Some((field, ft)) = self.escape_ident(MEMBER_LOOP)? else {
            return Ok(error_node(op.start));
        };
        let span = e.span.cover(span_of(ft));
        Ok(if optional {
            let name = lit(op.start, span_of(op), Literal::String(field.into()));
            call(op.start, span, "_?._", None, vec![e, name])
        } else {
            node(op.start, span, ExprKind::Select { operand: Box::new(e), field, test: false })
        })
    }

    /// `'(' exprList? ')'` after the `(`: the arguments and the closing token.
    /// The arguments parsed, even when the call is incomplete: cel-go's visitor still sees the
    /// call (and expands the macro it may be).
    fn args(&mut self, after: u64) -> (Vec<Expr>, R<Token>) {
        let mut args = Vec::new();
        if let Err(f) = self.sync(F_EXPR | bit(RPAREN), false, 13) {
            return (args, Err(f));
        }
        if F_EXPR & bit(self.la(1)) != 0 {
            self.follow.push(bit(RPAREN));
            let r = self.expr_list(&mut args);
            self.follow.pop();
            if let Err(f) = r {
                return (args, Err(f));
            }
        }
        let close = self.expect(RPAREN, after, 14);
        (args, close)
    }

    /// `exprList: expr (',' expr)*`
    fn expr_list(&mut self, args: &mut Vec<Expr>) -> R<()> {
        let r = (|| {
            args.push(self.rule(bit(COMMA) | EPS, Self::expr)?);
            while self.la(1) == COMMA {
                self.take();
                args.push(self.rule(bit(COMMA) | EPS, Self::expr)?);
            }
            Ok(())
        })();
        r.or_else(|f| self.recover(f))
    }

    /// `escapeIdent: IDENTIFIER | ESC_IDENTIFIER`: the field name and its token; `None` (after
    /// an error) when backticks aren't enabled.
    fn escape_ident(&mut self, follow: u64) -> R<Option<(String, Token)>> {
        self.follow.push(follow);
        let r = self.escape_ident_inner();
        let r = r.or_else(|f| self.recover(f).map(|_| None));
        self.follow.pop();
        r
    }

    fn escape_ident_inner(&mut self) -> R<Option<(String, Token)>> {
        self.sync(bit(IDENTIFIER) | bit(ESC_IDENTIFIER), false, 15)?;
        let t = self.tok(1);
        let text = &self.src[t.start as usize..t.end as usize];
        match t.kind {
            IDENTIFIER => {
                self.take();
                Ok(Some((text.to_string(), t)))
            }
            ESC_IDENTIFIER => {
                self.take();
                if !self.backticks {
                    self.error(t.start, "unsupported syntax: '`'");
                    return Ok(None);
                }
                Ok(Some((text[1..text.len() - 1].to_string(), t)))
            }
            _ => Err(Fail::NoViable { start: self.p, offending: self.p, state: 16 }),
        }
    }

    /// `primary`: an identifier, a global call, `(expr)`, a list, a map, a message, a literal.
    #[inline(never)]
    fn primary(&mut self) -> R<Expr> {
        self.sync(F_PRIMARY, false, 20)?;
        let t = self.tok(1);
        match t.kind {
            LPAREN => self.nested(),
            LBRACKET => self.list(t),
            LBRACE => self.map(t),
            MINUS if !matches!(self.la(2), NUM_INT | NUM_FLOAT) => {
                Err(Fail::NoViable { start: self.p, offending: self.p + 1, state: 22 })
            }
            k if (LITERALS | bit(MINUS)) & bit(k) != 0 => self.rule(EPS, Self::literal),
            DOT if self.la(2) != IDENTIFIER => {
                Err(Fail::NoViable { start: self.p, offending: self.p + 1, state: 23 })
            }
            DOT | IDENTIFIER => self.ident_call_or_message(),
            _ => Err(Fail::NoViable { start: self.p, offending: self.p, state: 24 }),
        }
    }

    /// `'(' expr ')'`
    #[inline(never)]
    fn nested(&mut self) -> R<Expr> {
        self.take();
        let e = self.rule(bit(RPAREN), Self::expr)?;
        let close = self.expect(RPAREN, EPS, 21).map(|_| ());
        self.partial_on(e, close)
    }

    /// `'.'? IDENTIFIER`, `'.'? IDENTIFIER '(' exprList? ')'` or
    /// `'.'? IDENTIFIER ('.' IDENTIFIER)* '{' field_initializer_list? ','? '}'`.
    #[inline(never)]
    fn ident_call_or_message(&mut self) -> R<Expr> {
        let dot = self.la(1) == DOT;
        let first = self.tok(1);
        let k = dot as usize + 1;
        // A message needs the whole dotted name followed by `{`.
        let mut m = k + 1;
        while self.la(m) == DOT && self.la(m + 1) == IDENTIFIER {
            m += 2;
        }
        if self.la(k + 1) != LPAREN && self.la(m) == LBRACE {
            return self.message(first);
        }
        if dot {
            self.take();
        }
        let id = self.take();
        let raw = &self.src[id.start as usize..id.end as usize];
        let name = if dot { format!(".{raw}") } else { raw.to_string() };
        let reserved = is_reserved(raw);
        // cel-go reports a reserved name at the start of the identifier or call, its dot.
        if self.la(1) != LPAREN {
            if reserved {
                self.error(first.start, format!("reserved identifier: {raw}"));
                return Ok(error_node(id.start));
            }
            return Ok(ident(id.start, span_of(first).cover(span_of(id)), &name));
        }
        let open = self.take();
        // cel-go reports a reserved function name alone, without visiting the arguments.
        let semantic = self.semantic.len();
        let (args, close) = self.args(EPS);
        let span = span_of(first).cover(span_of(*close.as_ref().unwrap_or(&open)));
        if reserved {
            self.semantic.truncate(semantic);
            self.error(first.start, format!("reserved identifier: {raw}"));
            close?;
            return Ok(error_node(id.start));
        }
        let e = self.call_or_macro(open.start, span, &name, None, args);
        self.partial_on(e, close.map(|_| ()))
    }

    /// `'[' listInit? ','? ']'` with `listInit: optExpr (',' optExpr)*`.
    #[inline(never)]
    fn list(&mut self, open: Token) -> R<Expr> {
        self.take();
        let (mut elements, mut optional_indices) = (Vec::new(), Vec::new());
        let r = self.entries(RBRACKET, F_EXPR | bit(QUESTION), 30, |p| {
            let (opt, e) = p.opt_expr(bit(COMMA) | EPS)?;
            if opt {
                optional_indices.push(elements.len());
            }
            elements.push(e);
            Ok(())
        });
        let kind = ExprKind::List { elements, optional_indices };
        self.finish(open, kind, r)
    }

    /// `'{' mapInitializerList? ','? '}'` with
    /// `mapInitializerList: optExpr ':' expr (',' optExpr ':' expr)*`.
    #[inline(never)]
    fn map(&mut self, open: Token) -> R<Expr> {
        self.take();
        let mut entries = Vec::new();
        let r = self.entries(RBRACE, F_EXPR | bit(QUESTION), 40, |p| {
            let semantic = p.semantic.len();
            let (optional, key) = p.opt_expr(bit(COLON))?;
            // cel-go visits the entries that have their `:`.
            let colon =
                p.expect(COLON, F_EXPR, 41).inspect_err(|_| p.semantic.truncate(semantic))?;
            let value = p.rule(bit(COMMA) | EPS, Self::expr)?;
            entries.push(MapEntry { id: 0, pos: colon.start, key, value, optional });
            Ok(())
        });
        self.finish(open, ExprKind::Map { entries }, r)
    }

    /// The comma-separated `entry`s of a list, map or message up to `close`, each starting
    /// with a token in `first`; a trailing comma is allowed. The closing token, or the failure.
    fn entries(
        &mut self,
        close: u8,
        first: u64,
        state: u16,
        mut entry: impl FnMut(&mut Self) -> R<()>,
    ) -> R<Token> {
        self.sync(first | bit(COMMA) | bit(close), false, state)?;
        if first & bit(self.la(1)) != 0 {
            self.follow.push(bit(COMMA) | bit(close));
            let r = loop {
                if let Err(f) = entry(self) {
                    break self.recover(f).map(|_| ());
                }
                if !(self.la(1) == COMMA && first & bit(self.la(2)) != 0) {
                    break Ok(());
                }
                self.take();
            };
            self.follow.pop();
            r?;
        }
        self.sync(bit(COMMA) | bit(close), false, state + 1)?;
        if self.la(1) == COMMA {
            self.take();
        }
        self.expect(close, EPS, state + 2)
    }

    /// The node of a bracketed construct from `open`; when incomplete, still what cel-go's
    /// visitor sees, kept for the enclosing rule's result.
    fn finish(&mut self, open: Token, kind: ExprKind, close: R<Token>) -> R<Expr> {
        let end = close.as_ref().map_or(open, |t| *t);
        let e = node(open.start, span_of(open).cover(span_of(end)), kind);
        self.partial_on(e, close.map(|_| ()))
    }

    /// `e`, or `e` kept as the partial result of a rule that failed with `r`.
    fn partial_on(&mut self, e: Expr, r: R<()>) -> R<Expr> {
        match r {
            Ok(()) => Ok(e),
            Err(f) => {
                self.partial = Some(e);
                Err(f)
            }
        }
    }

    /// `optExpr: '?'? expr`
    fn opt_expr(&mut self, follow: u64) -> R<(bool, Expr)> {
        self.follow.push(follow);
        let r = (|| {
            self.sync(bit(QUESTION) | F_EXPR, false, 50)?;
            let optional = self.la(1) == QUESTION;
            if optional {
                self.take();
            }
            Ok((optional, self.rule(EPS, Self::expr)?))
        })();
        let at = self.tok(1).start;
        let r = r.or_else(|f| self.recover(f).map(|_| (false, error_node(at))));
        self.follow.pop();
        r
    }

    /// `'.'? IDENTIFIER ('.' IDENTIFIER)* '{' field_initializer_list? ','? '}'` with
    /// `field_initializer_list: optField ':' expr (',' optField ':' expr)*`.
    #[inline(never)]
    fn message(&mut self, first: Token) -> R<Expr> {
        let mut type_name = String::new();
        if self.la(1) == DOT {
            self.take();
            type_name.push('.');
        }
        loop {
            let id = self.take();
            type_name.push_str(&self.src[id.start as usize..id.end as usize]);
            if self.la(1) != DOT {
                break;
            }
            self.take();
            type_name.push('.');
        }
        let open = self.take();
        let mut fields = Vec::new();
        let r = self.entries(RBRACE, F_FIELD, 60, |p| {
            let field = p.opt_field()?;
            let colon = p.expect(COLON, F_EXPR, 63)?;
            let value = p.rule(bit(COMMA) | EPS, Self::expr)?;
            if let Some((optional, field)) = field {
                fields.push(StructField { id: 0, pos: colon.start, field, value, optional });
            }
            Ok(())
        });
        let end = r.as_ref().map_or(open, |t| *t);
        let span = span_of(first).cover(span_of(end));
        let e = node(open.start, span, ExprKind::Struct { type_name, fields });
        self.partial_on(e, r.map(|_| ()))
    }

    /// `optField: '?'? escapeIdent`
    fn opt_field(&mut self) -> R<Option<(bool, String)>> {
        self.follow.push(bit(COLON));
        let r = (|| {
            self.sync(F_FIELD, false, 64)?;
            let optional = self.la(1) == QUESTION;
            if optional {
                self.take();
            }
            Ok(self.escape_ident(EPS)?.map(|(name, _)| (optional, name)))
        })();
        let r = r.or_else(|f| self.recover(f).map(|_| None));
        self.follow.pop();
        r
    }

    /// `literal`: numbers (a `-` sign folds into ints and doubles, which then sit at the sign,
    /// as in cel-go), strings, bytes, `true`, `false`, `null`.
    #[inline(never)]
    fn literal(&mut self) -> R<Expr> {
        let sign = self.la(1) == MINUS;
        let first = self.take();
        let t = if sign { self.take() } else { first };
        let text = &self.src[t.start as usize..t.end as usize];
        let span = span_of(first).cover(span_of(t));
        let value = match t.kind {
            NUM_INT => {
                let (radix, digits) = match text.strip_prefix("0x") {
                    Some(hex) => (16, hex),
                    None => (10, text),
                };
                let signed = if sign { format!("-{digits}") } else { digits.to_string() };
                i64::from_str_radix(&signed, radix).map(Literal::Int).map_err(|_| "int")
            }
            NUM_UINT => uint_literal(text),
            NUM_FLOAT => double_literal(text, sign),
            STRING => match unescape(text, false) {
                Ok(b) => Ok(Literal::String(String::from_utf8_lossy(&b).into())),
                Err(e) => {
                    self.error(t.start, e);
                    return Ok(error_node(t.start));
                }
            },
            BYTES => match bytes_literal(text) {
                Ok(l) => Ok(l),
                Err(e) => {
                    self.error(t.start, e);
                    return Ok(error_node(t.start));
                }
            },
            TRUE => Ok(Literal::Bool(true)),
            FALSE => Ok(Literal::Bool(false)),
            _ => Ok(Literal::Null),
        };
        match value {
            Ok(l) => Ok(lit(first.start, span, l)),
            Err(kind) => Ok(self.invalid_literal(first.start, kind)),
        }
    }

    #[cold]
    #[inline(never)]
    fn invalid_literal(&mut self, at: u32, kind: &str) -> Expr {
        self.error(at, format!("invalid {kind} literal"));
        error_node(at)
    }
}

// The literal kinds the usual expressions do not have, out of line: a page's first
// `evaluate()` compiles `literal` whole (V8 compiles each wasm function on its first call).

#[inline(never)]
fn uint_literal(text: &str) -> Result<Literal, &'static str> {
    let digits = &text[..text.len() - 1];
    match digits.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => digits.parse(),
    }
    .map(Literal::Uint)
    .map_err(|_| "uint")
}

#[inline(never)]
fn double_literal(text: &str, sign: bool) -> Result<Literal, &'static str> {
    let signed = if sign { format!("-{text}") } else { text.to_string() };
    match signed.parse::<f64>() {
        Ok(d) if d.is_finite() => Ok(Literal::Double(d)),
        _ => Err("double"),
    }
}

#[inline(never)]
fn bytes_literal(text: &str) -> Result<Literal, &'static str> {
    unescape(&text[1..], true).map(|b| Literal::Bytes(b.into()))
}

fn quote(s: &str) -> String {
    let s = s.replace('\t', "\\t").replace('\n', "\\n").replace('\r', "\\r");
    format!("'{s}'")
}

fn not(op: Token, operand: Expr) -> Expr {
    let span = span_of(op).cover(operand.span);
    call(op.start, span, "!_", None, vec![operand])
}

/// cel-go's balanced tree of a `&&` or `||` chain (`terms` joined by the operators at
/// `ops`): the middle operator at the root. Takes the chain, leaving both empty.
fn logic(terms: &mut Vec<Expr>, ops: &mut Vec<u32>, f: &str) -> Expr {
    let mut terms: Vec<Option<Expr>> = terms.drain(..).map(Some).collect();
    let ops = std::mem::take(ops);
    match ops.len() {
        0 => terms.pop().flatten().unwrap_or_else(|| error_node(0)),
        n => balance(&mut terms, &ops, f, 0, n - 1),
    }
}

fn balance(terms: &mut [Option<Expr>], ops: &[u32], f: &str, lo: usize, hi: usize) -> Expr {
    let mid = (lo + hi).div_ceil(2);
    let left =
        if mid == lo { terms[mid].take() } else { Some(balance(terms, ops, f, lo, mid - 1)) };
    let right =
        if mid == hi { terms[mid + 1].take() } else { Some(balance(terms, ops, f, mid + 1, hi)) };
    let (left, right) = (left.unwrap_or(error_node(0)), right.unwrap_or(error_node(0)));
    let span = left.span.cover(right.span);
    call(ops[mid], span, f, None, vec![left, right])
}

/// `e` as the right operand of the last pending operator.
#[inline(never)]
fn reduce(pending: &mut Vec<(Expr, Token, u8)>, e: Expr) -> Expr {
    match pending.pop() {
        Some((lhs, op, _)) => {
            let span = lhs.span.cover(e.span);
            call(op.start, span, binary_function(op.kind), None, vec![lhs, e])
        }
        None => e,
    }
}

/// The function of a relation or arithmetic operator token.
fn binary_function(op: u8) -> &'static str {
    match op {
        EQUALS => "_==_",
        NOT_EQUALS => "_!=_",
        IN => "@in",
        LESS => "_<_",
        LESS_EQUALS => "_<=_",
        GREATER_EQUALS => "_>=_",
        GREATER => "_>_",
        STAR => "_*_",
        SLASH => "_/_",
        PERCENT => "_%_",
        PLUS => "_+_",
        _ => "_-_",
    }
}

/// CEL's reserved words (cel-spec "Syntax"; apiserver `escaping.go` `celReservedSymbols` and
/// `validation.go` `isCELIdentifier` use the same list): the literal and `in` tokens, then the
/// identifiers cel-go rejects as variable and function names.
pub const RESERVED_WORDS: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Identifiers cel-go rejects as variable and function names (`in`, `true`, `false` and
/// `null` are tokens of their own).
fn is_reserved(name: &str) -> bool {
    RESERVED_WORDS[4..].contains(&name)
}

/// The value of a string or bytes literal token (`bytes`: without its `b`), as cel-go's
/// `unescape`: raw literals as written, `\r\n` and `\r` read as `\n`; in strings `\x`, octal,
/// `\u` and `\U` escapes are code points, in bytes `\x` and octal are bytes and `\u`/`\U` are
/// errors. The lexer has checked the escapes' shape.
fn unescape(text: &str, bytes: bool) -> Result<Vec<u8>, &'static str> {
    let raw = text.starts_with(['r', 'R']);
    let quoted = if raw { &text[1..] } else { text };
    let q = if quoted.len() >= 6 && (quoted.starts_with("'''") || quoted.starts_with("\"\"\"")) {
        3
    } else {
        1
    };
    let body = quoted[q..quoted.len() - q].replace("\r\n", "\n").replace('\r', "\n");
    if raw || !body.contains('\\') {
        return Ok(body.into_bytes());
    }
    unescape_escapes(body.as_bytes(), bytes)
}

/// [`unescape`] of a body with escapes, out of line: the first evaluation compiles it only when
/// a literal has one (bench/README.md, "The first evaluate(), seventh round").
#[inline(never)]
fn unescape_escapes(s: &[u8], bytes: bool) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' {
            out.push(s[i]);
            i += 1;
            continue;
        }
        let c = s[i + 1];
        let simple = match c {
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            i += 2;
            continue;
        }
        let (n, radix) = match c {
            b'x' | b'X' => (2, 16),
            b'u' | b'U' if bytes => return Err("unable to unescape string"),
            b'u' => (4, 16),
            b'U' => (8, 16),
            b'0'..=b'3' => (3, 8),
            _ => {
                // \\ \' \" \` \?
                out.push(c);
                i += 2;
                continue;
            }
        };
        let digits_at = if radix == 8 { i + 1 } else { i + 2 };
        let digits = std::str::from_utf8(&s[digits_at..digits_at + n]).unwrap_or("0");
        let v = u32::from_str_radix(digits, radix).unwrap_or(0);
        i = digits_at + n;
        if bytes {
            out.push(v as u8);
        } else {
            let ch = char::from_u32(v).ok_or("invalid unicode code point")?;
            out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Macros (cel-go `parser/macro.go`; the two-variable comprehensions of `ext/comprehensions.go`,
// the optional macros of `cel/macro.go`, `sortBy` of `ext/lists.go`)

/// What a synthetic node of a standard macro's expansion covers: the call's `(` and the
/// arguments it holds.
fn syn(lp: u32, parts: &[&Expr]) -> Span {
    parts.iter().fold(Span { start: lp, end: lp + 1 }, |s, p| s.cover(p.span))
}

#[allow(clippy::too_many_arguments)]
fn comprehension(
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
    node(
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

impl Parser<'_> {
    /// The call `f(args)` (`target.f(args)` with a target), or the expansion of the macro it
    /// is. A macro with an invalid argument is an error.
    #[inline(never)]
    fn call_or_macro(
        &mut self,
        lp: u32,
        span: Span,
        f: &str,
        target: Option<Expr>,
        mut args: Vec<Expr>,
    ) -> Expr {
        let Some(target) = target else {
            if f == "has" && args.len() == 1 {
                let arg = args.remove(0);
                return match arg.kind {
                    ExprKind::Select { operand, field, test: false } => {
                        node(lp, span, ExprKind::Select { operand, field, test: true })
                    }
                    _ => {
                        self.error(arg.pos, "invalid argument to has() macro");
                        error_node(lp)
                    }
                };
            }
            return call(lp, span, f, None, args);
        };
        let expanded = match (f, args.len()) {
            ("all" | "exists" | "exists_one" | "existsOne", 2) => {
                self.quantifier(f, lp, span, target, args)
            }
            ("map", 2 | 3) | ("filter", 2) => self.map_or_filter(f, lp, span, target, args),
            ("all" | "exists" | "existsOne" | "exists_one", 3)
            | ("transformList" | "transformMap" | "transformMapEntry", 3 | 4) => {
                let names = self
                    .var_name(&args[0], "argument")
                    .and_then(|k| Some((k, self.var_name(&args[1], "argument")?)));
                match names {
                    Some((k, v)) if k == v => {
                        self.error(args[1].pos, format!("duplicate variable name: {v}"));
                        None
                    }
                    Some((k, v)) if k == ACCU_VAR || v == ACCU_VAR => {
                        let msg = "iteration variable overwrites accumulator variable";
                        self.error(args[0].pos, msg);
                        None
                    }
                    Some((k, v)) => Some(two_var(f, lp, span, target, &k, &v, args)),
                    None => None,
                }
            }
            ("optMap" | "optFlatMap", 2) => self
                .var_name(&args[0], "optMap() variable name")
                .map(|v| opt_map(f == "optFlatMap", lp, span, target, &v, args)),
            ("sortBy", 2) => self
                .var_name(&args[0], "sortBy(var, ...) variable name")
                .map(|v| sort_by(lp, span, target, &v, args)),
            _ => return call(lp, span, f, Some(target), args),
        };
        expanded.unwrap_or_else(|| error_node(lp))
    }

    /// The identifier name of a macro variable argument, or an error at it.
    fn var_name(&mut self, e: &Expr, what: &str) -> Option<String> {
        match &e.kind {
            ExprKind::Ident(n) if !n.is_empty() => Some(n.clone()),
            _ => {
                self.error(e.pos, format!("{what} must be a simple name"));
                None
            }
        }
    }

    /// The iteration variable of a standard comprehension macro, or an error at it.
    fn iter_var(&mut self, e: &Expr, not_ident: &str) -> Option<String> {
        match &e.kind {
            ExprKind::Ident(n) if n == ACCU_VAR || n == OLD_ACCU_VAR => {
                self.error(e.pos, "iteration variable overwrites accumulator variable");
                None
            }
            ExprKind::Ident(n) if !n.is_empty() => Some(n.clone()),
            _ => {
                self.error(e.pos, not_ident);
                None
            }
        }
    }

    /// `all`, `exists`, `exists_one` / `existsOne` with one variable.
    ///
    /// The expanders are out of line (here and below): inlined, they made `call_or_macro`, which
    /// every call goes through, 12 KB of wasm that the first parse of a page had to compile.
    #[inline(never)]
    fn quantifier(
        &mut self,
        f: &str,
        lp: u32,
        span: Span,
        target: Expr,
        mut args: Vec<Expr>,
    ) -> Option<Expr> {
        let v = self.iter_var(&args[0], "argument must be a simple name")?;
        let p = args.pop()?;
        let paren = syn(lp, &[]);
        let accu = || ident(lp, paren, ACCU_VAR);
        let (init, cond, step, result) = match f {
            "all" | "exists" => {
                let all = f == "all";
                let init = lit(lp, paren, Literal::Bool(all));
                let inner = if all { accu() } else { call(lp, paren, "!_", None, vec![accu()]) };
                let cond = call(lp, paren, "@not_strictly_false", None, vec![inner]);
                let op = if all { "_&&_" } else { "_||_" };
                let step = call(lp, syn(lp, &[&p]), op, None, vec![accu(), p]);
                (init, cond, step, accu())
            }
            _ => {
                let init = lit(lp, paren, Literal::Int(0));
                let cond = lit(lp, paren, Literal::Bool(true));
                let one = lit(lp, paren, Literal::Int(1));
                let inc = call(lp, paren, "_+_", None, vec![accu(), one]);
                let step = call(lp, syn(lp, &[&p]), "_?_:_", None, vec![p, inc, accu()]);
                let one = lit(lp, paren, Literal::Int(1));
                let result = call(lp, paren, "_==_", None, vec![accu(), one]);
                (init, cond, step, result)
            }
        };
        Some(comprehension(lp, span, target, &v, None, ACCU_VAR, init, cond, step, result))
    }

    /// `map(v, f)`, `map(v, p, f)`, `filter(v, p)`.
    #[inline(never)]
    fn map_or_filter(
        &mut self,
        f: &str,
        lp: u32,
        span: Span,
        target: Expr,
        mut args: Vec<Expr>,
    ) -> Option<Expr> {
        let v = self.iter_var(&args[0], "argument is not an identifier")?;
        let paren = syn(lp, &[]);
        let accu = || ident(lp, paren, ACCU_VAR);
        let (filter, element) = if f == "filter" {
            let p = args.pop()?;
            (Some(p), args.pop()?)
        } else {
            let e = args.pop()?;
            (if args.len() == 2 { args.pop() } else { None }, e)
        };
        let element = list(lp, syn(lp, &[&element]), vec![element]);
        let add_span = syn(lp, &[&element]);
        let add = call(lp, add_span, "_+_", None, vec![accu(), element]);
        let step = match filter {
            Some(p) => call(lp, syn(lp, &[&p, &add]), "_?_:_", None, vec![p, add, accu()]),
            None => add,
        };
        let init = list(lp, paren, vec![]);
        let cond = lit(lp, paren, Literal::Bool(true));
        Some(comprehension(lp, span, target, &v, None, ACCU_VAR, init, cond, step, accu()))
    }
}

/// The two-variable comprehensions. Their synthetic nodes cover the whole call.
#[inline(never)]
fn two_var(
    name: &str,
    pos: u32,
    span: Span,
    range: Expr,
    k: &str,
    v: &str,
    mut args: Vec<Expr>,
) -> Expr {
    let accu = || ident(pos, span, ACCU_VAR);
    let rest = args.split_off(2);
    let (init, cond, step, result) = match name {
        "all" | "exists" => {
            let all = name == "all";
            let init = lit(pos, span, Literal::Bool(all));
            let inner = if all { accu() } else { call(pos, span, "!_", None, vec![accu()]) };
            let cond = call(pos, span, "@not_strictly_false", None, vec![inner]);
            let op = if all { "_&&_" } else { "_||_" };
            let step = call(pos, span, op, None, rest.into_iter().fold(vec![accu()], push));
            (init, cond, step, accu())
        }
        "existsOne" | "exists_one" => {
            let init = lit(pos, span, Literal::Int(0));
            let cond = lit(pos, span, Literal::Bool(true));
            let one = lit(pos, span, Literal::Int(1));
            let inc = call(pos, span, "_+_", None, vec![accu(), one]);
            let mut step_args = rest;
            step_args.extend([inc, accu()]);
            let step = call(pos, span, "_?_:_", None, step_args);
            let one = lit(pos, span, Literal::Int(1));
            let result = call(pos, span, "_==_", None, vec![accu(), one]);
            (init, cond, step, result)
        }
        _ => {
            // transformList: accu + [expr]; transformMap: accu with k -> expr (cel-go's
            // `cel.@mapInsert`); transformMapEntry: accu merged with the entry map.
            let mut rest = rest;
            let expr = rest.pop().unwrap_or_else(|| error_node(pos));
            let filter = rest.pop();
            let init = if name == "transformList" {
                list(pos, span, vec![])
            } else {
                node(pos, span, ExprKind::Map { entries: vec![] })
            };
            let cond = lit(pos, span, Literal::Bool(true));
            let add = match name {
                "transformList" => {
                    call(pos, span, "_+_", None, vec![accu(), list(pos, span, vec![expr])])
                }
                "transformMap" => {
                    let key = ident(pos, span, k);
                    call(pos, span, "cel.@mapInsert", None, vec![accu(), key, expr])
                }
                _ => call(pos, span, "cel.@mapInsert", None, vec![accu(), expr]),
            };
            let step = match filter {
                Some(f) => call(pos, span, "_?_:_", None, vec![f, add, accu()]),
                None => add,
            };
            (init, cond, step, accu())
        }
    };
    comprehension(pos, span, range, k, Some(v), ACCU_VAR, init, cond, step, result)
}

fn push(mut v: Vec<Expr>, e: Expr) -> Vec<Expr> {
    v.push(e);
    v
}

/// `opt.optMap(v, e)` → `opt.hasValue() ? optional.of(<bind v = opt.value()> e) : optional.none()`;
/// `optFlatMap` leaves out the `optional.of`. The bind is cel-go's single-step comprehension
/// over an empty list with the variable as accumulator.
#[inline(never)]
fn opt_map(flat: bool, pos: u32, span: Span, target: Expr, v: &str, mut args: Vec<Expr>) -> Expr {
    let e = args.pop().unwrap_or_else(|| error_node(pos));
    let has = call(pos, span, "hasValue", Some(target.clone()), vec![]);
    let value = call(pos, span, "value", Some(target), vec![]);
    let bound = bind(pos, span, v, value, e);
    let some = if flat { bound } else { call(pos, span, "optional.of", None, vec![bound]) };
    let none = call(pos, span, "optional.none", None, vec![]);
    call(pos, span, "_?_:_", None, vec![has, some, none])
}

fn bind(pos: u32, span: Span, var: &str, init: Expr, body: Expr) -> Expr {
    let empty = list(pos, span, vec![]);
    let cond = lit(pos, span, Literal::Bool(false));
    let step = ident(pos, span, var);
    comprehension(pos, span, empty, "#unused", None, var, init, cond, step, body)
}

/// `l.sortBy(v, key)` → bind `@__sortBy_input__ = l` in
/// `@__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key))` (a member call, as
/// cel-go declares it).
#[inline(never)]
fn sort_by(pos: u32, span: Span, target: Expr, v: &str, mut args: Vec<Expr>) -> Expr {
    const INPUT: &str = "@__sortBy_input__";
    let key = args.pop().unwrap_or_else(|| error_node(pos));
    let input = ident(pos, span, INPUT);
    // map(v, key) as cel-go's map macro expands it.
    let range = ident(pos, span, INPUT);
    let init = list(pos, span, vec![]);
    let cond = lit(pos, span, Literal::Bool(true));
    let a = ident(pos, span, ACCU_VAR);
    let step = call(pos, span, "_+_", None, vec![a, list(pos, span, vec![key])]);
    let result = ident(pos, span, ACCU_VAR);
    let keys = comprehension(pos, span, range, v, None, ACCU_VAR, init, cond, step, result);
    let sorted = call(pos, span, "@sortByAssociatedKeys", Some(input), vec![keys]);
    bind(pos, span, INPUT, target, sorted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1-based line and column (in chars) of a byte offset, as vap-eval-cel's
    /// `diagnostic::line_column` counts them.
    fn line_column(src: &str, offset: u32) -> (u32, u32) {
        let mut end = (offset as usize).min(src.len());
        while !src.is_char_boundary(end) {
            end -= 1;
        }
        let head = &src[..end];
        let start = head.rfind('\n').map_or(0, |i| i + 1);
        let line = head.bytes().filter(|&b| b == b'\n').count() as u32 + 1;
        (line, src[start..end].chars().count() as u32 + 1)
    }

    fn text(src: &str, span: Span) -> &str {
        &src[span.start as usize..span.end as usize]
    }

    /// The errors as cel-go prints their locations: `line:column: message`, one per line.
    fn errors(src: &str, options: ParseOptions) -> String {
        match parse(src, options) {
            Ok(_) => String::new(),
            Err(errs) => errs
                .iter()
                .map(|e| match e.offset {
                    Some(o) => {
                        let (l, c) = line_column(src, o);
                        format!("{l}:{c}: {}", e.message)
                    }
                    None => format!("-1:0: {}", e.message),
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    const FIRST: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, \
                         NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

    /// The error cases of cel-go's `parser/parser_test.go` (`testCases`, field `E`) that apply
    /// to Kubernetes' parser options (optional syntax on, default limits), with cel-go's
    /// expected text; `{F}` stands for the expected set of an expression's first token.
    const CEL_GO_ERRORS: &[(&str, &str)] = &[
        ("0xFFFFFFFFFFFFFFFFF", "1:1: invalid int literal"),
        ("0xFFFFFFFFFFFFFFFFFu", "1:1: invalid uint literal"),
        ("1.99e90000009", "1:1: invalid double literal"),
        (
            "*@a | b",
            "1:1: Syntax error: extraneous input '*' expecting {F}\n\
             1:2: Syntax error: token recognition error at: '@'\n\
             1:5: Syntax error: token recognition error at: '| '\n\
             1:7: Syntax error: extraneous input 'b' expecting <EOF>",
        ),
        (
            "a | b",
            "1:3: Syntax error: token recognition error at: '| '\n\
             1:5: Syntax error: extraneous input 'b' expecting <EOF>",
        ),
        ("has(m)", "1:5: invalid argument to has() macro"),
        (
            "[].existsOne(__result__, __result__)",
            "1:14: iteration variable overwrites accumulator variable",
        ),
        ("m.map(__result__, __result__)", "1:7: iteration variable overwrites accumulator variable"),
        ("m.filter(__result__, false)", "1:10: iteration variable overwrites accumulator variable"),
        ("m.filter(a.b, false)", "1:11: argument is not an identifier"),
        (
            "{",
            "1:2: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '}', '(', '.', ',', \
             '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, \
             IDENTIFIER}",
        ),
        ("TestAllTypes(){}", "1:15: Syntax error: mismatched input '{' expecting <EOF>"),
        ("TestAllTypes{}()", "1:15: Syntax error: mismatched input '(' expecting <EOF>"),
        (
            "1 + $",
            "1:5: Syntax error: token recognition error at: '$'\n\
             1:6: Syntax error: mismatched input '<EOF>' expecting {F}",
        ),
        ("1 + 2\n3 +", "2:1: Syntax error: mismatched input '3' expecting <EOF>"),
        ("1.all(2, 3)", "1:7: argument must be a simple name"),
        (
            "1 + +",
            "1:5: Syntax error: mismatched input '+' expecting {F}\n\
             1:6: Syntax error: mismatched input '<EOF>' expecting {F}",
        ),
        ("{\"a\": 1}.\"a\"", "1:10: Syntax error: no viable alternative at input '.\"a\"'"),
        (
            "\"\\xFh\"",
            "1:1: Syntax error: token recognition error at: '\"\\xFh'\n\
             1:6: Syntax error: token recognition error at: '\"'\n\
             1:7: Syntax error: mismatched input '<EOF>' expecting {F}",
        ),
        (
            "\"\\a\\b\\f\\n\\r\\t\\v\\'\\\"\\\\\\? Illegal escape \\>\"",
            "1:1: Syntax error: token recognition error at: \
             '\"\\a\\b\\f\\n\\r\\t\\v\\'\\\"\\\\\\? Illegal escape \\>'\n\
             1:42: Syntax error: token recognition error at: '\"'\n\
             1:43: Syntax error: mismatched input '<EOF>' expecting {F}",
        ),
        (
            "      '😁' in ['😁', '😑', '😦']\n\t\t\t&& in.😁",
            "2:7: Syntax error: extraneous input 'in' expecting {F}\n\
             2:10: Syntax error: token recognition error at: '😁'\n\
             2:11: Syntax error: no viable alternative at input '.'",
        ),
        ("as", "1:1: reserved identifier: as"),
        ("break", "1:1: reserved identifier: break"),
        ("const", "1:1: reserved identifier: const"),
        ("continue", "1:1: reserved identifier: continue"),
        ("else", "1:1: reserved identifier: else"),
        ("for", "1:1: reserved identifier: for"),
        ("function", "1:1: reserved identifier: function"),
        ("if", "1:1: reserved identifier: if"),
        ("import", "1:1: reserved identifier: import"),
        (
            "in",
            "1:1: Syntax error: mismatched input 'in' expecting {F}\n\
             1:3: Syntax error: mismatched input '<EOF>' expecting {F}",
        ),
        ("let", "1:1: reserved identifier: let"),
        ("loop", "1:1: reserved identifier: loop"),
        ("package", "1:1: reserved identifier: package"),
        ("namespace", "1:1: reserved identifier: namespace"),
        ("return", "1:1: reserved identifier: return"),
        ("var", "1:1: reserved identifier: var"),
        ("void", "1:1: reserved identifier: void"),
        ("while", "1:1: reserved identifier: while"),
        (
            "[1, 2, 3].map(var, var * var)",
            "1:15: reserved identifier: var\n\
             1:15: argument is not an identifier\n\
             1:20: reserved identifier: var\n\
             1:26: reserved identifier: var",
        ),
        (
            "func{{a}}",
            "1:6: Syntax error: extraneous input '{' expecting {'}', ',', '?', IDENTIFIER, \
             ESC_IDENTIFIER}\n\
             1:8: Syntax error: mismatched input '}' expecting ':'\n\
             1:9: Syntax error: extraneous input '}' expecting <EOF>",
        ),
        (
            "msg{:a}",
            "1:5: Syntax error: extraneous input ':' expecting {'}', ',', '?', IDENTIFIER, \
             ESC_IDENTIFIER}\n\
             1:7: Syntax error: mismatched input '}' expecting ':'",
        ),
        ("{a}", "1:3: Syntax error: mismatched input '}' expecting ':'"),
        (
            "{:a}",
            "1:2: Syntax error: extraneous input ':' expecting {'[', '{', '}', '(', '.', ',', '-', \
             '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, \
             IDENTIFIER}\n\
             1:4: Syntax error: mismatched input '}' expecting ':'",
        ),
        ("ind[a{b}]", "1:8: Syntax error: mismatched input '}' expecting ':'"),
        (
            "--",
            "1:3: Syntax error: no viable alternative at input '-'\n\
             1:3: Syntax error: mismatched input '<EOF>' expecting {F}",
        ),
        (
            "?",
            "1:1: Syntax error: mismatched input '?' expecting {F}\n\
             1:2: Syntax error: mismatched input '<EOF>' expecting {F}",
        ),
        ("self.true == 1", "1:6: Syntax error: mismatched input 'true' expecting IDENTIFIER"),
        ("`b-c`", "1:1: Syntax error: mismatched input '`b-c`' expecting {F}"),
        (
            "`b-c`()",
            "1:1: Syntax error: extraneous input '`b-c`' expecting {F}\n\
             1:7: Syntax error: mismatched input ')' expecting {F}",
        ),
        (
            "a.`$b`",
            "1:3: Syntax error: token recognition error at: '`$'\n\
             1:6: Syntax error: token recognition error at: '`'",
        ),
        ("a.`b.c`()", "1:8: Syntax error: mismatched input '(' expecting <EOF>"),
        (
            "x{.",
            "1:3: Syntax error: mismatched input '.' expecting {'}', ',', '?', IDENTIFIER, \
             ESC_IDENTIFIER}",
        ),
        ("'\\udead' == '\\ufffd'", "1:1: invalid unicode code point"),
        ("foo(a,b,)", "1:9: Syntax error: mismatched input ')' expecting {F}"),
        (
            "\"\"\"hello\nworld",
            "1:3: Syntax error: token recognition error at: '\"hello\n'\n\
             2:1: Syntax error: extraneous input 'world' expecting <EOF>",
        ),
        (
            "'''hello\nworld",
            "1:3: Syntax error: token recognition error at: ''hello\n'\n\
             2:1: Syntax error: extraneous input 'world' expecting <EOF>",
        ),
        (
            "r\"\"\"hello\nworld",
            "1:4: Syntax error: token recognition error at: '\"hello\n'\n\
             2:1: Syntax error: extraneous input 'world' expecting <EOF>",
        ),
        (
            "\"hello\nworld\"",
            "1:1: Syntax error: token recognition error at: '\"hello\n'\n\
             2:6: Syntax error: token recognition error at: '\"'",
        ),
        (
            "'hello\nworld'",
            "1:1: Syntax error: token recognition error at: ''hello\n'\n\
             2:6: Syntax error: token recognition error at: '''",
        ),
        (
            "r\"hello\nworld\"",
            "1:2: Syntax error: token recognition error at: '\"hello\n'\n\
             2:1: Syntax error: extraneous input 'world' expecting <EOF>\n\
             2:6: Syntax error: token recognition error at: '\"'",
        ),
        (
            "`hello\nworld`",
            "1:1: Syntax error: token recognition error at: '`hello\n'\n\
             2:6: Syntax error: token recognition error at: '`'",
        ),
        (
            "\"hello\rworld\"",
            "1:1: Syntax error: token recognition error at: '\"hello\r'\n\
             1:13: Syntax error: token recognition error at: '\"'",
        ),
        ("1 \u{b} + 2", "1:3: Syntax error: token recognition error at: '\u{b}'"),
        ("-!x", "1:2: Syntax error: no viable alternative at input '-!'"),
        ("!-x", "1:3: Syntax error: no viable alternative at input '-x'"),
        (
            "a.in",
            "1:3: Syntax error: no viable alternative at input '.in'\n\
             1:5: Syntax error: mismatched input '<EOF>' expecting {F}",
        ),
        (
            "has(a.`$b`)",
            "1:7: Syntax error: token recognition error at: '`$'\n\
             1:10: Syntax error: token recognition error at: '`)'\n\
             1:12: Syntax error: missing ')' at '<EOF>'",
        ),
        ("(a){}", "1:4: Syntax error: mismatched input '{' expecting <EOF>"),
        ("(a.b){}", "1:6: Syntax error: mismatched input '{' expecting <EOF>"),
        ("(a).b{}", "1:6: Syntax error: mismatched input '{' expecting <EOF>"),
        ("a.`b-c`{}", "1:8: Syntax error: mismatched input '{' expecting <EOF>"),
        (
            "Msg{`$b`: 1}",
            "1:5: Syntax error: token recognition error at: '`$'\n\
             1:8: Syntax error: token recognition error at: '`:'\n\
             1:11: Syntax error: missing ':' at '1'",
        ),
    ];

    /// cel-go's cases with backtick identifiers disabled (before Kubernetes 1.37).
    const CEL_GO_NO_BACKTICKS: &[(&str, &str)] = &[
        ("a.`b-c`", "1:3: unsupported syntax: '`'"),
        ("a.`b.c`", "1:3: unsupported syntax: '`'"),
        ("a.`in`", "1:3: unsupported syntax: '`'"),
        ("a.`/foo`", "1:3: unsupported syntax: '`'"),
        ("Message{`in`: true}", "1:9: unsupported syntax: '`'"),
    ];

    #[test]
    fn cel_go_parser_error_cases() {
        let no_backticks = ParseOptions { backtick_identifiers: false };
        let cases = CEL_GO_ERRORS.iter().map(|c| (c, ParseOptions::default()));
        let mut failures = Vec::new();
        for (&(src, want), options) in
            cases.chain(CEL_GO_NO_BACKTICKS.iter().map(|c| (c, no_backticks)))
        {
            let want = want.replace("{F}", FIRST);
            let got = errors(src, options);
            if got != want {
                failures.push(format!("{src:?}\n  got:  {got:?}\n  want: {want:?}"));
            }
        }
        assert!(failures.is_empty(), "{} differ:\n{}", failures.len(), failures.join("\n"));
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
        // A negative number is one literal at its sign (cel-go's `!-42` → `-42^#2[1,1]#`); an
        // even number of `-` cancels (`- -1` → `1`).
        let ast = parse("!-42", ParseOptions::default()).unwrap();
        let ExprKind::Call { args, .. } = &ast.root.kind else { panic!() };
        assert_eq!((args[0].pos, &args[0].kind), (1, &ExprKind::Literal(Literal::Int(-42))));
        let ast = parse("- -1", ParseOptions::default()).unwrap();
        assert_eq!(ast.root.kind, ExprKind::Literal(Literal::Int(1)));
        // Positions are byte offsets: after `'é'`, `+` is at byte 5.
        let ast = parse("'é' + has(x.y)", ParseOptions::default()).unwrap();
        let ExprKind::Call { args, .. } = &ast.root.kind else { panic!() };
        assert_eq!((ast.root.pos, args[1].pos), (5, 10));
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

    #[test]
    fn nested_conditionals_count_toward_the_recursion_limit() {
        // cel-go counts each `?:` else-branch as a nested expression (its TestRecursionLimit).
        let deep = format!("{}c", "a ? b : ".repeat(250));
        assert_eq!(
            errors(&deep, ParseOptions::default()),
            "-1:0: expression recursion limit exceeded: 250"
        );
        let ok = format!("{}c", "a ? b : ".repeat(249));
        assert!(parse(&ok, ParseOptions::default()).is_ok());
    }

    #[test]
    fn recovery_stops_at_cel_go_limits() {
        // 30 recovery attempts.
        let e = parse(&"+ ".repeat(40), ParseOptions::default()).unwrap_err();
        assert_eq!(e.len(), 32);
        assert_eq!(e[31].message, "Syntax error: error recovery attempt limit exceeded: 30");
        // 100 syntax errors; the 101st says so and ends the parse.
        let e = parse(&"@".repeat(150), ParseOptions::default()).unwrap_err();
        assert_eq!(e.len(), 101);
        assert_eq!(e[100].offset, Some(100));
        assert_eq!(e[100].message, "Syntax error: More than 100 syntax errors");
        // One recovery skips at most 256 tokens.
        let nums: Vec<String> = (0..300).map(|i| i.to_string()).collect();
        let e = parse(&format!("[{}]", nums.join(" ")), ParseOptions::default()).unwrap_err();
        assert_eq!(e[0].message, "error recovery token lookahead limit exceeded: 256");
        assert_eq!(e[0].offset, None);
    }

    /// Bad input of any kind is diagnostics, never a panic, with offsets on character
    /// boundaries of the source.
    #[test]
    fn garbage_and_truncations_are_diagnostics() {
        let corpus = [
            "object.spec.template.spec.containers.all(c, c.image.startsWith('registry.k8s.io/'))",
            "has(object.metadata.labels) && 'app' in object.metadata.labels ? 1 : -2.5e3",
            "{?'k': v, 'é😁': [?a, b.?c, d[?0], `e-f`]}.transformMap(k, v, k != '', v + 1u)",
            "a.b.C{f: 1, ?g: r'''x\ny''', h: b\"\\xff\\377\"}.optMap(x, x.sortBy(y, -y))",
            "!-(1 + 2 * 3) % 4 != 0x10 && [1,2,].exists_one(i, i >= 2) || m.map(k, k, v)",
        ];
        let mut seed: u64 = 0x2545F4914F6CDD1D;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let chars: Vec<char> =
            "()[]{}.,:?!-+*/%<>=&|'\"`\\ \nabcdefxyz0129éu_😁@$".chars().collect();
        let mut inputs: Vec<String> = Vec::new();
        for src in corpus {
            for (i, _) in src.char_indices() {
                inputs.push(src[..i].to_string());
                inputs.push(src[i..].to_string());
            }
        }
        for _ in 0..3000 {
            let n = (next() % 40) as usize;
            inputs.push((0..n).map(|_| chars[(next() % chars.len() as u64) as usize]).collect());
        }
        for src in &inputs {
            if let Err(errs) = parse(src, ParseOptions::default()) {
                assert!(!errs.is_empty(), "{src:?}");
                for e in errs {
                    if let Some(o) = e.offset {
                        assert!(src.is_char_boundary(o as usize), "{src:?}: {e:?}");
                    }
                }
            }
        }
    }
}
