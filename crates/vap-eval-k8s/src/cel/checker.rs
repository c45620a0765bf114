//! Static type checking, as cel-go's `checker` package does it (cel-go v0.29), followed by the AST
//! validators Kubernetes enables (see [`validators`](super::validators)).
//!
//! What it computes for every node: its static type and, for identifiers and calls, what the name
//! resolved to ([`Reference`]). What it reports: cel-go's type errors, with cel-go's wording and
//! at cel-go's position (`pos` of the node the error is about).
//!
//! The algorithm is cel-go's, step for step, because the error texts and the resolved overloads
//! depend on its details:
//! - overloads are tried in declaration order; each candidate's type parameters are instantiated
//!   with fresh type variables; a candidate matches when every argument type is *assignable* to
//!   its parameter type, unifying type variables on the way; the first match fixes the result
//!   type, further matches with a different result widen it to `dyn`;
//! - `dyn` and the error type are assignable both ways to everything, so an expression that
//!   failed once (type `Error`) does not produce a cascade of follow-up errors;
//! - list and map literals join their element types to the most general one (`dyn` when they
//!   disagree); the homogeneity rule is a validator run afterwards, only when checking succeeded;
//! - `null` is assignable to objects, opaque types (incl. optionals), timestamps and durations;
//! - at the end every type variable is replaced by its binding, unbound ones by `dyn`.
//!
//! Unification keeps one substitution table with an undo trail instead of cel-go's
//! copy-per-attempt, so checking stays linear in practice.

use super::ast::{Ast, Comprehension, Expr, ExprKind, Literal};
use super::decls::{Declarations, FunctionDecl, OverloadDecl};
use super::types::Type;
use super::validators;
use crate::diagnostic::Span;
use std::rc::Rc;
use vap_eval_cel::hash::FastMap;

/// Language switches that vary by Kubernetes version (spec §4.1, §4.4).
#[derive(Clone, Copy, Debug)]
pub struct CheckOptions {
    /// `<`, `<=`, `>`, `>=` between int, uint and double (`CrossTypeNumericComparisons`, 1.28+).
    /// When off, the `less_int64_double`-style overloads are disabled.
    pub cross_type_numeric_comparisons: bool,
    /// The homogeneous aggregate literal validator (`expected type 'string' but found 'dyn'`).
    pub homogeneous_literals: bool,
    /// The duration, timestamp and regex literal validators (1.29+).
    pub literal_validators: bool,
    /// Whether a `matches` pattern compiles, as the runtime's regex engine decides (RE2 syntax).
    /// `None`: regex literals are not validated. Supplied by the runtime so that compile time and
    /// run time agree on what a valid pattern is.
    pub regex_validator: Option<fn(&str) -> bool>,
}

impl Default for CheckOptions {
    /// Everything on, as in Kubernetes 1.29 and later (regex validation needs a validator).
    fn default() -> Self {
        CheckOptions {
            cross_type_numeric_comparisons: true,
            homogeneous_literals: true,
            literal_validators: true,
            regex_validator: None,
        }
    }
}

/// What an identifier, a select chain or a call resolved to.
#[derive(Clone, Debug, PartialEq)]
pub enum Reference {
    /// A variable (declared, or a comprehension variable), by its resolved name; for a qualified
    /// name written as a select chain (`a.b.c`) the whole dotted name.
    Variable(String),
    /// A function call: the overloads still possible after static resolution, in declaration
    /// order. More than one means the runtime picks by the argument values.
    Function { overloads: Vec<Rc<str>> },
    /// An identifier naming a type (`int`, `list`, `google.protobuf.Timestamp`, an object type
    /// name), used as a value: the type it names.
    Type(Type),
}

/// One type-check problem, at the node cel-go reports it for.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckIssue {
    /// cel-go's message text, e.g. `undeclared reference to 'x' (in container '')`.
    pub message: String,
    /// Byte offset cel-go locates the issue at (the node's `pos`); rendered as `line:column`.
    pub pos: u32,
    /// The whole sub-expression, for underlining.
    pub span: Span,
}

/// The result of [`check`].
#[derive(Clone, Debug)]
pub struct Checked {
    /// Static type per node id. Nodes the checker never visits (the receiver of a namespaced
    /// function call such as the `optional` in `optional.none()`, map entry ids) are `dyn`.
    pub types: Vec<Type>,
    /// Resolution per node id; `None` for nodes that are not names or calls, and for calls that
    /// failed to resolve.
    pub refs: Vec<Option<Reference>>,
    /// Problems in the order they were found (cel-go's report order). Renderers sort by
    /// position; see [`errors`](super::errors).
    pub errors: Vec<CheckIssue>,
}

impl Checked {
    /// The type of the whole expression (cel-go's `ast.OutputType()`).
    pub fn output_type(&self, ast: &Ast) -> &Type {
        self.types.get(ast.root.id as usize).unwrap_or(&Type::Dyn)
    }
}

/// Overloads switched off when cross-type numeric comparisons are disabled.
const CROSS_TYPE_NUMERIC: [&str; 24] = [
    "less_int64_double",
    "less_int64_uint64",
    "less_uint64_double",
    "less_uint64_int64",
    "less_double_int64",
    "less_double_uint64",
    "less_equals_int64_double",
    "less_equals_int64_uint64",
    "less_equals_uint64_double",
    "less_equals_uint64_int64",
    "less_equals_double_int64",
    "less_equals_double_uint64",
    "greater_int64_double",
    "greater_int64_uint64",
    "greater_uint64_double",
    "greater_uint64_int64",
    "greater_double_int64",
    "greater_double_uint64",
    "greater_equals_int64_double",
    "greater_equals_int64_uint64",
    "greater_equals_uint64_double",
    "greater_equals_uint64_int64",
    "greater_equals_double_int64",
    "greater_equals_double_uint64",
];

/// Type-check `ast` against `decls`; when that finds no error, run the AST validators the options
/// enable. Never panics.
pub fn check(ast: &Ast, decls: &Declarations, options: &CheckOptions) -> Checked {
    let n = ast.node_count as usize;
    let mut c = Checker {
        decls,
        options,
        types: vec![None; n],
        refs: vec![None; n],
        errors: Vec::new(),
        subs: FastMap::default(),
        trail: Vec::new(),
        next_var: 0,
        scopes: Vec::new(),
    };
    c.check(&ast.root);
    let types: Vec<Type> = std::mem::take(&mut c.types)
        .into_iter()
        .map(|t| match t {
            Some(t) => c.substitute(&t, true),
            None => Type::Dyn,
        })
        .collect();
    let mut checked = Checked { types, refs: c.refs, errors: c.errors };
    if checked.errors.is_empty() {
        validators::validate(ast, decls, options, &mut checked);
    }
    checked
}

/// The expected result of an expression kind (apiserver `ReturnTypes()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectedResult {
    /// validations, matchConditions.
    Bool,
    /// messageExpression.
    String,
    /// auditAnnotations valueExpression.
    StringOrNull,
    /// variables: anything.
    Any,
}

/// The apiserver's output-type check after a successful compile: the type must be exactly one of
/// the expected types. Returns the reason text without the `compilation error: ` prefix, e.g.
/// `must evaluate to bool but got dyn`, `must evaluate to one of [string null_type] but got int`.
pub fn check_result_type(output: &Type, expected: ExpectedResult) -> Result<(), String> {
    let allowed: &[Type] = match expected {
        ExpectedResult::Any => return Ok(()),
        ExpectedResult::Bool => &[Type::Bool],
        ExpectedResult::String => &[Type::String],
        ExpectedResult::StringOrNull => &[Type::String, Type::Null],
    };
    if allowed.contains(output) {
        return Ok(());
    }
    if allowed.len() == 1 {
        Err(format!("must evaluate to {} but got {output}", allowed[0]))
    } else {
        let names: Vec<String> = allowed.iter().map(|t| t.to_string()).collect();
        Err(format!("must evaluate to one of [{}] but got {output}", names.join(" ")))
    }
}

/// A type as cel-go's checker prints it in messages (`FormatCelType`): `duration`, `timestamp`,
/// `null`, `!error!`, `list(int)`, `map(string, dyn)`, `optional_type(int)`, `type(int)`.
pub fn format_cel_type(t: &Type) -> String {
    let mut s = String::new();
    write_cel_type(&mut s, t);
    s
}

fn write_cel_type(s: &mut String, t: &Type) {
    let params = |s: &mut String, name: &str, ps: &[&Type]| {
        s.push_str(name);
        if !ps.is_empty() {
            s.push('(');
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_cel_type(s, p);
            }
            s.push(')');
        }
    };
    match t {
        Type::Dyn => s.push_str("dyn"),
        Type::Null => s.push_str("null"),
        Type::Bool => s.push_str("bool"),
        Type::Int => s.push_str("int"),
        Type::Uint => s.push_str("uint"),
        Type::Double => s.push_str("double"),
        Type::String => s.push_str("string"),
        Type::Bytes => s.push_str("bytes"),
        Type::Duration => s.push_str("duration"),
        Type::Timestamp => s.push_str("timestamp"),
        Type::Error => s.push_str("!error!"),
        Type::Param(n) => s.push_str(n),
        Type::Object(n) => s.push_str(n),
        Type::List(e) => params(s, "list", &[e]),
        Type::Map(k, v) => params(s, "map", &[k, v]),
        Type::Optional(e) => params(s, "optional_type", &[e]),
        Type::Type(e) => params(s, "type", &[e]),
        Type::Opaque(n, ps) => {
            let ps: Vec<&Type> = ps.iter().collect();
            params(s, n, &ps)
        }
    }
}

/// `(int, string)` or, for a member call, `string.(int)`: the argument list of a no-matching-
/// overload message.
fn format_call_signature(args: &[Type], member: bool) -> String {
    let mut s = String::new();
    let mut rest = args;
    if member {
        if let Some((first, tail)) = args.split_first() {
            write_cel_type(&mut s, first);
            s.push('.');
            rest = tail;
        }
    }
    s.push('(');
    for (i, a) in rest.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write_cel_type(&mut s, a);
    }
    s.push(')');
    s
}

/// The built-in type identifiers (cel-go's standard type declarations), by name.
fn builtin_type_ident(name: &str) -> Option<Type> {
    Some(match name {
        "bool" => Type::Bool,
        "bytes" => Type::Bytes,
        "double" => Type::Double,
        "google.protobuf.Duration" => Type::Duration,
        "int" => Type::Int,
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "null_type" => Type::Null,
        "string" => Type::String,
        "google.protobuf.Timestamp" => Type::Timestamp,
        "type" => Type::type_of(Type::Dyn),
        "uint" => Type::Uint,
        _ => return None,
    })
}

fn is_dyn_or_error(t: &Type) -> bool {
    matches!(t, Type::Dyn | Type::Error)
}

/// cel-go's legacy nullability: `null` is assignable to these.
fn is_nullable(t: &Type) -> bool {
    matches!(
        t,
        Type::Null
            | Type::Opaque(..)
            | Type::Optional(_)
            | Type::Object(_)
            | Type::Duration
            | Type::Timestamp
    )
}

fn contains_param(t: &Type) -> bool {
    match t {
        Type::Param(_) => true,
        Type::List(e) | Type::Optional(e) | Type::Type(e) => contains_param(e),
        Type::Map(k, v) => contains_param(k) || contains_param(v),
        Type::Opaque(_, ps) => ps.iter().any(contains_param),
        _ => false,
    }
}

/// cel-go's `isEqualOrLessSpecific`: `t1` is `t2` or matches it through `dyn`.
fn is_equal_or_less_specific(t1: &Type, t2: &Type) -> bool {
    if matches!(t1, Type::Dyn | Type::Param(_)) {
        return true;
    }
    if matches!(t2, Type::Dyn | Type::Param(_)) {
        return false;
    }
    match (t1, t2) {
        (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => {
            n1 == n2
                && p1.len() == p2.len()
                && p1.iter().zip(p2).all(|(a, b)| is_equal_or_less_specific(a, b))
        }
        (Type::Optional(a), Type::Optional(b)) | (Type::List(a), Type::List(b)) => {
            is_equal_or_less_specific(a, b)
        }
        (Type::Map(k1, v1), Type::Map(k2, v2)) => {
            is_equal_or_less_specific(k1, k2) && is_equal_or_less_specific(v1, v2)
        }
        (Type::Type(_), Type::Type(_)) => true,
        _ => t1 == t2,
    }
}

/// cel-go's `mostGeneral` for two types known to unify.
fn most_general<'t>(t1: &'t Type, t2: &'t Type) -> &'t Type {
    if is_equal_or_less_specific(t1, t2) {
        t1
    } else {
        t2
    }
}

/// Replace the type parameters of a declaration with the given fresh variables.
fn instantiate(t: &Type, vars: &[(Rc<str>, Type)]) -> Type {
    match t {
        Type::Param(n) => {
            vars.iter().find(|(p, _)| p == n).map(|(_, v)| v.clone()).unwrap_or_else(|| t.clone())
        }
        Type::List(e) => Type::list(instantiate(e, vars)),
        Type::Map(k, v) => Type::map(instantiate(k, vars), instantiate(v, vars)),
        Type::Optional(e) => Type::optional(instantiate(e, vars)),
        Type::Type(e) => Type::type_of(instantiate(e, vars)),
        Type::Opaque(n, ps) => {
            Type::Opaque(n.clone(), ps.iter().map(|p| instantiate(p, vars)).collect())
        }
        _ => t.clone(),
    }
}

fn collect_params(t: &Type, out: &mut Vec<Rc<str>>) {
    match t {
        Type::Param(n) if !out.contains(n) => out.push(n.clone()),
        Type::List(e) | Type::Optional(e) | Type::Type(e) => collect_params(e, out),
        Type::Map(k, v) => {
            collect_params(k, out);
            collect_params(v, out);
        }
        Type::Opaque(_, ps) => ps.iter().for_each(|p| collect_params(p, out)),
        _ => {}
    }
}

/// The dotted name a select chain spells (`a.b.c`), if it is one (cel-go
/// `containers.ToQualifiedName`). Presence tests are never names.
fn qualified_name(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n.clone()),
        ExprKind::Select { operand, field, test: false } => {
            let mut q = qualified_name(operand)?;
            q.push('.');
            q.push_str(field);
            Some(q)
        }
        _ => None,
    }
}

struct Checker<'a> {
    decls: &'a Declarations,
    options: &'a CheckOptions,
    types: Vec<Option<Type>>,
    refs: Vec<Option<Reference>>,
    errors: Vec<CheckIssue>,
    /// Type variable bindings.
    subs: FastMap<Rc<str>, Type>,
    /// Undo log of `subs`: (variable, previous binding).
    trail: Vec<(Rc<str>, Option<Type>)>,
    next_var: u32,
    /// Comprehension variables, innermost last.
    scopes: Vec<(String, Type)>,
}

impl<'a> Checker<'a> {
    // -----------------------------------------------------------------------------------------
    // Bookkeeping

    fn set_type(&mut self, e: &Expr, t: Type) {
        if let Some(slot) = self.types.get_mut(e.id as usize) {
            *slot = Some(t);
        }
    }

    fn get_type(&self, e: &Expr) -> Type {
        self.types.get(e.id as usize).and_then(|t| t.clone()).unwrap_or(Type::Error)
    }

    fn set_ref(&mut self, e: &Expr, r: Reference) {
        if let Some(slot) = self.refs.get_mut(e.id as usize) {
            *slot = Some(r);
        }
    }

    fn error(&mut self, e: &Expr, message: String) {
        self.error_at(e.pos, e.span, message);
    }

    fn error_at(&mut self, pos: u32, span: Span, message: String) {
        self.errors.push(CheckIssue { message, pos, span });
    }

    fn undeclared(&mut self, e: &Expr, name: &str) {
        self.error(e, format!("undeclared reference to '{name}' (in container '')"));
    }

    fn type_mismatch(&mut self, e: &Expr, expected: &Type, actual: &Type) {
        self.error(
            e,
            format!(
                "expected type '{}' but found '{}'",
                format_cel_type(expected),
                format_cel_type(actual)
            ),
        );
    }

    fn new_type_var(&mut self) -> Type {
        let t = Type::Param(Rc::from(format!("_var{}", self.next_var)));
        self.next_var += 1;
        t
    }

    // -----------------------------------------------------------------------------------------
    // Unification (cel-go checker/types.go)

    fn find_sub(&self, t: &Type) -> Option<&Type> {
        match t {
            Type::Param(n) => self.subs.get(n),
            _ => None,
        }
    }

    fn add_sub(&mut self, param: &Type, t: Type) {
        if let Type::Param(n) = param {
            let old = self.subs.insert(n.clone(), t);
            self.trail.push((n.clone(), old));
        }
    }

    fn rollback(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let Some((n, old)) = self.trail.pop() else {
                break;
            };
            match old {
                Some(o) => {
                    self.subs.insert(n, o);
                }
                None => {
                    self.subs.remove(&n);
                }
            }
        }
    }

    /// Whether `t1` is assignable to `t2`; binds type variables when it is, leaves the bindings
    /// untouched when it is not.
    fn is_assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        let mark = self.trail.len();
        if self.assignable(t1, t2) {
            true
        } else {
            self.rollback(mark);
            false
        }
    }

    fn is_assignable_list(&mut self, l1: &[Type], l2: &[Type]) -> bool {
        let mark = self.trail.len();
        if self.assignable_list(l1, l2) {
            true
        } else {
            self.rollback(mark);
            false
        }
    }

    fn assignable_list(&mut self, l1: &[Type], l2: &[Type]) -> bool {
        l1.len() == l2.len() && l1.iter().zip(l2).all(|(a, b)| self.assignable(a, b))
    }

    fn assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        if matches!(t2, Type::Param(_)) {
            let (valid, has_sub) = self.valid_substitution(t1, t2);
            if valid {
                return true;
            }
            if has_sub {
                return false;
            }
        }
        if matches!(t1, Type::Param(_)) {
            return self.valid_substitution(t2, t1).0;
        }
        if is_dyn_or_error(t1) || is_dyn_or_error(t2) {
            return true;
        }
        if *t1 == Type::Null {
            return is_nullable(t2);
        }
        if *t2 == Type::Null {
            return is_nullable(t1);
        }
        match (t1, t2) {
            (Type::Type(_), _) => matches!(t2, Type::Type(_)),
            (Type::List(a), Type::List(b)) | (Type::Optional(a), Type::Optional(b)) => {
                self.assignable(a, b)
            }
            (Type::Map(k1, v1), Type::Map(k2, v2)) => {
                self.assignable(k1, k2) && self.assignable(v1, v2)
            }
            (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => {
                n1 == n2 && self.assignable_list(p1, p2)
            }
            _ => t1 == t2,
        }
    }

    /// cel-go's `isValidTypeSubstitution`: whether `t2` (a type variable) can stand for `t1`,
    /// and whether it already had a binding.
    fn valid_substitution(&mut self, t1: &Type, t2: &Type) -> (bool, bool) {
        if t1 == t2 {
            return (true, true);
        }
        if let Some(sub) = self.find_sub(t2).cloned() {
            if *t1 == sub {
                return (true, true);
            }
            if self.assignable(t1, &sub) {
                let general = most_general(t1, &sub).clone();
                if self.not_referenced_in(t2, &general) {
                    self.add_sub(t2, general);
                }
                return (true, true);
            }
            return (false, true);
        }
        if self.not_referenced_in(t2, t1) {
            self.add_sub(t2, t1.clone());
            return (true, false);
        }
        (false, false)
    }

    /// The occurs check.
    fn not_referenced_in(&self, t: &Type, within: &Type) -> bool {
        if t == within {
            return false;
        }
        match within {
            Type::Param(_) => match self.find_sub(within) {
                Some(sub) => self.not_referenced_in(t, sub),
                None => true,
            },
            Type::List(e) | Type::Optional(e) | Type::Type(e) => self.not_referenced_in(t, e),
            Type::Map(k, v) => self.not_referenced_in(t, k) && self.not_referenced_in(t, v),
            Type::Opaque(_, ps) => ps.iter().all(|p| self.not_referenced_in(t, p)),
            _ => true,
        }
    }

    /// Replace bound type variables by their bindings; unbound ones by `dyn` if `to_dyn`.
    fn substitute(&self, t: &Type, to_dyn: bool) -> Type {
        if !contains_param(t) {
            return t.clone();
        }
        self.subst(t, to_dyn, 0)
    }

    fn subst(&self, t: &Type, to_dyn: bool, depth: u32) -> Type {
        if depth > 512 {
            // Unreachable with the occurs check; a bound instead of a stack overflow.
            return Type::Dyn;
        }
        let d = depth + 1;
        match t {
            Type::Param(n) => match self.subs.get(n) {
                Some(s) => self.subst(s, to_dyn, d),
                None if to_dyn => Type::Dyn,
                None => t.clone(),
            },
            Type::List(e) => Type::list(self.subst(e, to_dyn, d)),
            Type::Map(k, v) => Type::map(self.subst(k, to_dyn, d), self.subst(v, to_dyn, d)),
            Type::Optional(e) => Type::optional(self.subst(e, to_dyn, d)),
            Type::Type(e) => Type::type_of(self.subst(e, to_dyn, d)),
            Type::Opaque(n, ps) => {
                Type::Opaque(n.clone(), ps.iter().map(|p| self.subst(p, to_dyn, d)).collect())
            }
            _ => t.clone(),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Names

    /// Resolve an identifier: comprehension variables (innermost first), declared variables,
    /// built-in type names, declared object type names, `optional_type` with the optional
    /// library.
    fn lookup_ident(&self, name: &str) -> Option<(Type, Reference)> {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Some((t.clone(), Reference::Variable(name.to_string())));
        }
        if let Some(t) = self.decls.variable(name) {
            return Some((t.clone(), Reference::Variable(name.to_string())));
        }
        let named = if let Some(t) = builtin_type_ident(name) {
            Some(t)
        } else if self.decls.object(name).is_some() {
            Some(Type::object(name))
        } else if name == "optional_type" && self.decls.function("optional.none").is_some() {
            Some(Type::optional(Type::Dyn))
        } else {
            None
        };
        named.map(|t| (Type::type_of(t.clone()), Reference::Type(t)))
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    /// List, map, struct and comprehension checking are out of line (`#[inline(never)]`): the
    /// first evaluation compiles them only when an expression has one (bench/README.md, "The
    /// first evaluate(), seventh round").
    fn check(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Literal(l) => {
                let t = match l {
                    Literal::Null => Type::Null,
                    Literal::Bool(_) => Type::Bool,
                    Literal::Int(_) => Type::Int,
                    Literal::Uint(_) => Type::Uint,
                    Literal::Double(_) => Type::Double,
                    Literal::String(_) => Type::String,
                    Literal::Bytes(_) => Type::Bytes,
                };
                self.set_type(e, t);
            }
            ExprKind::Ident(name) => self.check_ident(e, name),
            ExprKind::Select { operand, field, test } => {
                self.check_select(e, operand, field, *test)
            }
            ExprKind::Call { function, target, args } => {
                self.check_call(e, function, target.as_deref(), args)
            }
            ExprKind::List { elements, optional_indices } => {
                self.check_list(e, elements, optional_indices)
            }
            ExprKind::Map { entries } => self.check_map(e, entries),
            ExprKind::Struct { type_name, fields } => self.check_struct(e, type_name, fields),
            ExprKind::Comprehension(c) => self.check_comprehension(e, c),
        }
    }

    fn check_ident(&mut self, e: &Expr, name: &str) {
        match self.lookup_ident(name) {
            Some((t, r)) => {
                self.set_type(e, t);
                self.set_ref(e, r);
            }
            None => {
                self.set_type(e, Type::Error);
                self.undeclared(e, name);
            }
        }
    }

    fn check_select(&mut self, e: &Expr, operand: &Expr, field: &str, test: bool) {
        // A select chain may spell a qualified variable name.
        if !test {
            if let Some(q) = qualified_name(e) {
                if let Some((t, r)) = self.lookup_ident(&q) {
                    self.set_type(e, t);
                    self.set_ref(e, r);
                    return;
                }
            }
        }
        let mut t = self.check_select_field(e, operand, field, false);
        if test {
            t = Type::Bool;
        }
        let t = self.substitute(&t, false);
        self.set_type(e, t);
    }

    /// The type of `operand.field` (`optional` for `.?field`, or when the operand is optional).
    fn check_select_field(
        &mut self,
        e: &Expr,
        operand: &Expr,
        field: &str,
        optional: bool,
    ) -> Type {
        self.check(operand);
        let operand_type = self.substitute(&self.get_type(operand), false);
        let (target, is_opt) = match &operand_type {
            Type::Optional(inner) => ((**inner).clone(), true),
            t => (t.clone(), false),
        };
        let result = match &target {
            Type::Map(_, v) => (**v).clone(),
            Type::Object(name) => {
                let found = self.decls.object(name).and_then(|o| o.field(field)).cloned();
                match found {
                    Some(ft) => ft,
                    None => {
                        self.error(e, format!("undefined field '{field}'"));
                        Type::Error
                    }
                }
            }
            Type::Param(_) => {
                self.is_assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            t => {
                if !is_dyn_or_error(t) {
                    self.error(
                        e,
                        format!("type '{}' does not support field selection", format_cel_type(t)),
                    );
                }
                Type::Dyn
            }
        };
        if is_opt || optional {
            Type::optional(result)
        } else {
            result
        }
    }

    fn check_opt_select(&mut self, e: &Expr, args: &[Expr]) {
        let field = match args {
            [_, f] => match &f.kind {
                ExprKind::Literal(Literal::String(s)) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        };
        let (Some(field), Some(operand)) = (field, args.first()) else {
            self.error(
                e,
                format!(
                    "unsupported optional field selection: incorrect signature. argument count: {}",
                    args.len()
                ),
            );
            self.set_type(e, Type::Error);
            return;
        };
        let t = self.check_select_field(e, operand, &field, true);
        let t = self.substitute(&t, false);
        self.set_type(e, t);
        // The field name literal is part of the call; type it for completeness.
        if let Some(f) = args.get(1) {
            self.set_type(f, Type::String);
        }
        self.set_ref(e, Reference::Function { overloads: vec![Rc::from("select_optional_field")] });
    }

    fn check_call(&mut self, e: &Expr, function: &str, target: Option<&Expr>, args: &[Expr]) {
        if function == "_?._" && target.is_none() {
            self.check_opt_select(e, args);
            return;
        }
        // The sortBy macro's helper is a member function in cel-go; our parser writes it as a
        // global call with the receiver first.
        if function == "@sortByAssociatedKeys" && target.is_none() && args.len() == 2 {
            self.check(&args[1]);
            self.check(&args[0]);
            self.resolve_by_name(e, function, Some(&args[0]), &args[1..]);
            return;
        }
        for a in args {
            self.check(a);
        }
        let Some(target) = target else {
            self.resolve_by_name(e, function, None, args);
            return;
        };
        // `a.b.f(x)` is either the namespaced function `a.b.f` or the member function `f` on
        // `a.b`, never both.
        if let Some(prefix) = qualified_name(target) {
            let qualified = format!("{prefix}.{function}");
            if let Some(f) = self.decls.function(&qualified) {
                self.resolve_or_error(e, f, None, args);
                return;
            }
        }
        self.check(target);
        self.resolve_by_name(e, function, Some(target), args);
    }

    fn resolve_by_name(&mut self, e: &Expr, function: &str, target: Option<&Expr>, args: &[Expr]) {
        match self.decls.function(function) {
            Some(f) => self.resolve_or_error(e, f, target, args),
            None => {
                self.set_type(e, Type::Error);
                self.undeclared(e, function);
            }
        }
    }

    fn resolve_or_error(
        &mut self,
        e: &Expr,
        f: &FunctionDecl,
        target: Option<&Expr>,
        args: &[Expr],
    ) {
        match self.resolve_overload(e, f, target, args) {
            Some((t, overloads)) => {
                self.set_type(e, t);
                self.set_ref(e, Reference::Function { overloads });
            }
            None => self.set_type(e, Type::Error),
        }
    }

    fn overload_disabled(&self, o: &OverloadDecl) -> bool {
        !self.options.cross_type_numeric_comparisons && CROSS_TYPE_NUMERIC.contains(&&*o.id)
    }

    fn resolve_overload(
        &mut self,
        call: &Expr,
        f: &FunctionDecl,
        target: Option<&Expr>,
        args: &[Expr],
    ) -> Option<(Type, Vec<Rc<str>>)> {
        let mut arg_types: Vec<Type> = Vec::with_capacity(args.len() + 1);
        if let Some(t) = target {
            arg_types.push(self.get_type(t));
        }
        arg_types.extend(args.iter().map(|a| self.get_type(a)));

        let mut result: Option<Type> = None;
        let mut ids: Vec<Rc<str>> = Vec::new();
        for o in &f.overloads {
            if self.overload_disabled(o) || o.member != target.is_some() {
                continue;
            }
            if f.name == "_&&_" || f.name == "_||_" {
                return self.logical(o, args, &arg_types);
            }
            let mut names = Vec::new();
            for p in &o.params {
                collect_params(p, &mut names);
            }
            collect_params(&o.result, &mut names);
            let (params, result_type) = if names.is_empty() {
                (o.params.clone(), o.result.clone())
            } else {
                let vars: Vec<(Rc<str>, Type)> =
                    names.into_iter().map(|n| (n, self.new_type_var())).collect();
                (
                    o.params.iter().map(|p| instantiate(p, &vars)).collect(),
                    instantiate(&o.result, &vars),
                )
            };
            if self.is_assignable_list(&arg_types, &params) {
                ids.push(o.id.clone());
                let r = self.substitute(&result_type, false);
                result = Some(match result {
                    None => r,
                    Some(prev) if prev == Type::Dyn || prev == r => prev,
                    Some(_) => Type::Dyn,
                });
            }
        }
        match result {
            Some(t) => Some((t, ids)),
            None => {
                self.no_matching_overload(call, f, target.is_some(), &arg_types);
                None
            }
        }
    }

    /// Logical operators: every argument must be a bool; no overload message. (Out of line, as
    /// the error below: a page's first `evaluate()` compiles `resolve_overload` whole.)
    #[inline(never)]
    fn logical(
        &mut self,
        o: &OverloadDecl,
        args: &[Expr],
        arg_types: &[Type],
    ) -> Option<(Type, Vec<Rc<str>>)> {
        let mut failed = false;
        for (a, at) in args.iter().zip(arg_types) {
            if !self.is_assignable(at, &Type::Bool) {
                self.type_mismatch(a, &Type::Bool, at);
                failed = true;
            }
        }
        if failed {
            return None;
        }
        Some((Type::Bool, vec![o.id.clone()]))
    }

    #[cold]
    #[inline(never)]
    fn no_matching_overload(
        &mut self,
        call: &Expr,
        f: &FunctionDecl,
        member: bool,
        arg_types: &[Type],
    ) {
        let shown: Vec<Type> = arg_types.iter().map(|t| self.substitute(t, true)).collect();
        self.error(
            call,
            format!(
                "found no matching overload for '{}' applied to '{}'",
                f.name,
                format_call_signature(&shown, member)
            ),
        );
    }

    /// The most general of the element types seen so far and `current` (`dyn` when they
    /// disagree; the homogeneity validator reports that later).
    fn join_types(&mut self, previous: Option<Type>, current: Type) -> Type {
        match previous {
            None => current,
            Some(prev) => {
                if self.is_assignable(&prev, &current) {
                    most_general(&prev, &current).clone()
                } else {
                    Type::Dyn
                }
            }
        }
    }

    /// An optional element or entry value `[?x]`, `{?k: x}`: the type inside the optional.
    fn unwrap_optional_entry(&mut self, value: &Expr) -> Type {
        match self.get_type(value) {
            Type::Optional(inner) => (*inner).clone(),
            t => {
                if t != Type::Dyn {
                    self.type_mismatch(value, &Type::optional(t.clone()), &t);
                }
                t
            }
        }
    }

    #[inline(never)]
    fn check_list(&mut self, e: &Expr, elements: &[Expr], optional_indices: &[usize]) {
        let mut elem: Option<Type> = None;
        for (i, el) in elements.iter().enumerate() {
            self.check(el);
            let t = if optional_indices.contains(&i) {
                self.unwrap_optional_entry(el)
            } else {
                self.get_type(el)
            };
            elem = Some(self.join_types(elem, t));
        }
        let elem = match elem {
            Some(t) => t,
            None => self.new_type_var(),
        };
        self.set_type(e, Type::list(elem));
    }

    #[inline(never)]
    fn check_map(&mut self, e: &Expr, entries: &[super::ast::MapEntry]) {
        let mut key: Option<Type> = None;
        let mut value: Option<Type> = None;
        for entry in entries {
            self.check(&entry.key);
            let kt = self.get_type(&entry.key);
            key = Some(self.join_types(key, kt));
            self.check(&entry.value);
            let vt = if entry.optional {
                self.unwrap_optional_entry(&entry.value)
            } else {
                self.get_type(&entry.value)
            };
            value = Some(self.join_types(value, vt));
        }
        let (k, v) = match (key, value) {
            (Some(k), Some(v)) => (k, v),
            _ => (self.new_type_var(), self.new_type_var()),
        };
        self.set_type(e, Type::map(k, v));
    }

    #[inline(never)]
    fn check_struct(&mut self, e: &Expr, type_name: &str, fields: &[super::ast::StructField]) {
        let Some((ident_type, _)) = self.lookup_ident(type_name) else {
            self.undeclared(e, type_name);
            self.set_type(e, Type::Error);
            // cel-go stops here: the field values are not checked.
            return;
        };
        self.set_ref(e, Reference::Variable(type_name.to_string()));
        let mut result = Type::Error;
        match &ident_type {
            Type::Error => {}
            Type::Type(inner) => {
                if let Type::Object(_) = &**inner {
                    result = (**inner).clone();
                } else {
                    self.error(e, format!("'{}' is not a message type", format_cel_type(inner)));
                }
            }
            other => {
                self.error(e, format!("'{}' is not a type", format_cel_type(other)));
            }
        }
        self.set_type(e, result.clone());
        for f in fields {
            self.check(&f.value);
            let mut field_type = Type::Error;
            if let Type::Object(name) = &result {
                match self.decls.object(name).and_then(|o| o.field(&f.field)) {
                    Some(t) => field_type = t.clone(),
                    None => {
                        let span = Span::new(f.pos as usize, f.value.span.end as usize);
                        self.error_at(f.pos, span, format!("undefined field '{}'", f.field));
                    }
                }
            }
            let value_type = if f.optional {
                self.unwrap_optional_entry(&f.value)
            } else {
                self.get_type(&f.value)
            };
            if !self.is_assignable(&field_type, &value_type) {
                let span = Span::new(f.pos as usize, f.value.span.end as usize);
                self.error_at(
                    f.pos,
                    span,
                    format!(
                        "expected type of field '{}' is '{}' but provided type is '{}'",
                        f.field,
                        format_cel_type(&field_type),
                        format_cel_type(&value_type)
                    ),
                );
            }
        }
    }

    #[inline(never)]
    fn check_comprehension(&mut self, e: &Expr, c: &Comprehension) {
        self.check(&c.iter_range);
        self.check(&c.accu_init);
        let range = self.substitute(&self.get_type(&c.iter_range), false);
        let accu = self.get_type(&c.accu_init);
        let two = c.iter_var2.is_some();
        let (var1, var2) = match &range {
            Type::List(elem) => {
                if two {
                    (Type::Int, (**elem).clone())
                } else {
                    ((**elem).clone(), Type::Dyn)
                }
            }
            Type::Map(k, v) => ((**k).clone(), (**v).clone()),
            Type::Dyn | Type::Error | Type::Param(_) => {
                self.is_assignable(&Type::Dyn, &range);
                (Type::Dyn, Type::Dyn)
            }
            other => {
                let msg = format!(
                    "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                    format_cel_type(other)
                );
                self.error(&c.iter_range, msg);
                (Type::Error, Type::Error)
            }
        };
        let depth = self.scopes.len();
        self.scopes.push((c.accu_var.clone(), accu.clone()));
        self.scopes.push((c.iter_var.clone(), var1));
        if let Some(v2) = &c.iter_var2 {
            self.scopes.push((v2.clone(), var2));
        }
        self.check(&c.loop_cond);
        self.assert_type(&c.loop_cond, &Type::Bool);
        self.check(&c.loop_step);
        self.assert_type(&c.loop_step, &accu);
        self.scopes.truncate(depth + 1);
        self.check(&c.result);
        self.scopes.truncate(depth);
        let t = self.substitute(&self.get_type(&c.result), false);
        self.set_type(e, t);
    }

    fn assert_type(&mut self, e: &Expr, t: &Type) {
        let actual = self.get_type(e);
        if !self.is_assignable(t, &actual) {
            self.type_mismatch(e, t, &actual);
        }
    }
}

#[cfg(test)]
#[path = "checker_tests.rs"]
mod tests;
