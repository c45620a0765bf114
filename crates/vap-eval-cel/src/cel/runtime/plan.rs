//! Planning: turn an [`Ast`] into a [`Program`] once.
//!
//! What happens here rather than at every evaluation:
//! - identifiers become comprehension slots, activation variables (cached per evaluation) or
//!   constant type values; `variables.<name>` becomes a direct lazy-variable read;
//! - select/index chains become one attribute (`object.spec.replicas`), costed like cel-go's
//!   (1 for the root, 1 per qualifier);
//! - calls get their candidate overloads (the checker's, or all overloads of the name and
//!   shape when there is no checker reference); a single candidate is called directly;
//! - literal-only lists and maps, and type conversions of constants, are folded into constants
//!   (cel-go `OptOptimize`: they cost 0), and `x in [constant list]` becomes a set lookup;
//! - constant regex patterns are compiled;
//! - `@result + [x]` and `cel.@mapInsert(@result, …)` in comprehension steps append in place.

use super::Reference;
use crate::cel::ast::{Ast, Comprehension, Expr, ExprKind, Literal, MapEntry, NodeId};
use crate::cel::stdlib::{Ctx, Fail, Overload, RegexCache, Registry};
use crate::cel::value::{Key, List, OwnedMap, Str, Value};
use crate::diagnostic::Span;
use std::rc::Rc;

/// A problem found while planning (only possible without checker references, or with
/// references that name unknown overloads).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanError {
    pub message: String,
    pub node: NodeId,
    pub span: Span,
}

/// Planner switches.
#[derive(Clone, Copy, Debug)]
pub struct PlanOptions {
    /// Use the Kubernetes cost estimator overrides (`library/cost.go`) before cel-go's defaults.
    pub k8s_cost: bool,
    /// Evaluate type conversions of constants while planning (cel-go `OptOptimize`, which the
    /// apiserver's base environment sets): `false` leaves them, and their errors, to evaluation
    /// (cel-go without it, as the cel-spec conformance suites expect).
    pub optimize: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { k8s_cost: true, optimize: true }
    }
}

/// Location of a node, for errors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Loc {
    pub id: NodeId,
    pub span: Span,
}

pub(crate) enum Root {
    /// Activation variable by index into `Program::globals`.
    Global(u32),
    /// Comprehension variable or accumulator slot.
    Local(u32),
    /// Any other operand (a relative attribute in cel-go; costs 1 on top of the operand).
    Expr(Box<Node>),
}

pub(crate) enum QualKind {
    Field(Rc<str>),
    Const(Value<'static>),
    Dyn(Box<Node>),
}

pub(crate) struct Qual {
    pub kind: QualKind,
    /// `.?f` / `[?k]`.
    pub optional: bool,
    pub loc: Loc,
}

pub(crate) struct Call {
    pub function: Rc<str>,
    /// Candidate overloads, tried in order at runtime.
    pub overloads: Box<[&'static Overload]>,
    pub args: Box<[Node]>,
    pub loc: Loc,
    /// The Kubernetes estimator knows this function name (decided once, at plan time).
    pub k8s_named: bool,
}

/// A call of one or two arguments with one candidate overload, which the Kubernetes
/// estimator does not price by name: [`Call`] without the overload loop and the cost lookup.
pub(crate) struct Direct {
    pub overload: &'static Overload,
    pub a: Node,
    pub b: Option<Node>,
    /// `_==_`, which the Kubernetes estimator prices at 1 on a library type's value.
    pub eq: bool,
    /// The overload returns only a bool or an error (`_==_`, `_!=_`, `startsWith`, `endsWith`,
    /// `contains`, `matches`): a constant string `b` is passed borrowed, not cloned.
    pub bool_only: bool,
    pub loc: Loc,
}

pub(crate) struct Fold {
    pub range: Node,
    pub iter: u32,
    pub iter2: Option<u32>,
    pub accu: u32,
    pub init: Node,
    pub cond: Node,
    /// `cond` is `@not_strictly_false(@result)` (`all`: `Some(false)`) or
    /// `@not_strictly_false(!@result)` (`exists`: `Some(true)`), read from the slot.
    pub cond_accu: Option<bool>,
    pub step: Node,
    pub result: Node,
    pub loc: Loc,
}

pub(crate) enum Node {
    Const(Value<'static>),
    Attr {
        root: Root,
        quals: Box<[Qual]>,
        loc: Loc,
    },
    /// `has(root.quals….field)`.
    Has {
        root: Root,
        quals: Box<[Qual]>,
        field: Rc<str>,
        loc: Loc,
    },
    /// `variables.<name>` with a lazy-variable hook; falls back to selecting from `variables`.
    LazyVar {
        name: Rc<str>,
        global: u32,
        loc: Loc,
    },
    Call(Box<Call>),
    And(Box<Node>, Box<Node>, Loc),
    Or(Box<Node>, Box<Node>, Loc),
    Ternary(Box<Node>, Box<Node>, Box<Node>, Loc),
    NotStrictlyFalse(Box<Node>),
    /// `!x` with its one overload, `logical_not`: the call without the overload dispatch.
    Not(Box<Node>, Loc),
    /// A call with one overload (`size`, `_<_` on ints, `startsWith`): see [`Direct`].
    Direct(Box<Direct>),
    List {
        elems: Box<[Node]>,
        optional: Box<[bool]>,
        loc: Loc,
    },
    Map {
        entries: Box<[(Node, Node, bool)]>,
        loc: Loc,
    },
    Fold(Box<Fold>),
    /// `accu + [elems]` in a comprehension step: pushes in place.
    AccuAppend {
        accu: u32,
        elems: Box<[Node]>,
        /// Whether the `[elems]` literal would be a constant (cost 0 instead of 10).
        const_list: bool,
        loc: Loc,
    },
    /// `cel.@mapInsert(accu, k, v)` / `cel.@mapInsert(accu, entries)`: inserts in place.
    AccuInsert {
        accu: u32,
        args: Box<[Node]>,
        loc: Loc,
    },
    /// A node that fails when evaluated (e.g. a struct literal, which Kubernetes has no types for).
    Error(Rc<str>, Loc),
    /// `x in [constant list of bools, numbers and strings]` as cel-go's set lookup
    /// (`Planner::set_membership`): no cost of its own.
    InSet(Box<Node>, Rc<Vec<Value<'static>>>),
}

/// A planned expression. Evaluate with [`Program::eval`].
pub struct Program {
    pub(crate) root: Node,
    pub(crate) globals: Vec<Rc<str>>,
    pub(crate) slots: u32,
    pub(crate) regexes: RegexCache,
    pub(crate) k8s_cost: bool,
    pub(crate) source: Rc<str>,
}

impl Program {
    /// The expression text the spans index.
    pub fn source(&self) -> &str {
        &self.source
    }
}

const TYPE_NAMES: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
    "optional_type",
];

/// Plan `ast`. `refs` are the checker's references indexed by node id; without them,
/// identifiers are activation variables and calls dispatch on runtime argument types.
pub fn plan(
    ast: &Ast,
    refs: Option<&[Option<Reference>]>,
    registry: &Registry,
    options: PlanOptions,
) -> Result<Program, PlanError> {
    let mut p = Planner {
        refs,
        registry,
        scopes: Vec::new(),
        globals: Vec::new(),
        slots: 0,
        regexes: RegexCache::default(),
        optimize: options.optimize,
    };
    let root = p.plan(&ast.root)?;
    Ok(Program {
        root,
        globals: p.globals,
        slots: p.slots,
        regexes: p.regexes,
        k8s_cost: options.k8s_cost,
        source: ast.source.clone(),
    })
}

struct Planner<'r> {
    refs: Option<&'r [Option<Reference>]>,
    registry: &'r Registry,
    scopes: Vec<(String, u32)>,
    globals: Vec<Rc<str>>,
    slots: u32,
    regexes: RegexCache,
    optimize: bool,
}

fn loc(e: &Expr) -> Loc {
    Loc { id: e.id, span: e.span }
}

impl Planner<'_> {
    fn reference(&self, id: NodeId) -> Option<&Reference> {
        self.refs?.get(id as usize)?.as_ref()
    }

    /// The name the checker resolved an identifier or select node to, and whether it names a
    /// type.
    fn resolved(&self, id: NodeId) -> Option<(String, bool)> {
        let r = self.reference(id)?;
        r.name.clone().map(|n| (n, r.is_type))
    }

    fn local(&self, name: &str) -> Option<u32> {
        self.scopes.iter().rev().find(|(n, _)| n == name).map(|(_, s)| *s)
    }

    fn global(&mut self, name: &str) -> u32 {
        if let Some(i) = self.globals.iter().position(|g| &**g == name) {
            return i as u32;
        }
        self.globals.push(Rc::from(name));
        (self.globals.len() - 1) as u32
    }

    fn new_slot(&mut self) -> u32 {
        self.slots += 1;
        self.slots - 1
    }

    fn plan(&mut self, e: &Expr) -> Result<Node, PlanError> {
        Ok(match &e.kind {
            ExprKind::Literal(l) => Node::Const(literal(l)),
            ExprKind::Ident(_) | ExprKind::Select { .. } => self.plan_attr(e)?,
            ExprKind::Call { function, target, args } => {
                self.plan_call(e, function, target.as_deref(), args)?
            }
            ExprKind::List { elements, optional_indices } => {
                self.plan_list(e, elements, optional_indices)?
            }
            ExprKind::Map { entries } => self.plan_map(e, entries)?,
            ExprKind::Struct { type_name, .. } => {
                Node::Error(Rc::from(format!("unknown type: {type_name}").as_str()), loc(e))
            }
            ExprKind::Comprehension(c) => self.plan_comprehension(e, c)?,
        })
    }

    // List, map and comprehension planning out of line: the first evaluation compiles them only
    // when an expression has one (bench/README.md, "The first evaluate(), seventh round").

    #[inline(never)]
    fn plan_list(
        &mut self,
        e: &Expr,
        elements: &[Expr],
        optional_indices: &[usize],
    ) -> Result<Node, PlanError> {
        Ok({
            let elems = elements.iter().map(|x| self.plan(x)).collect::<Result<Vec<_>, _>>()?;
            let optional: Vec<bool> =
                (0..elems.len()).map(|i| optional_indices.contains(&i)).collect();
            if optional_indices.is_empty() && elems.iter().all(|n| matches!(n, Node::Const(_))) {
                let vals = elems
                    .into_iter()
                    .map(|n| match n {
                        Node::Const(v) => v,
                        _ => Value::Null,
                    })
                    .collect();
                Node::Const(Value::list(vals))
            } else {
                Node::List { elems: elems.into(), optional: optional.into(), loc: loc(e) }
            }
        })
    }

    #[inline(never)]
    fn plan_map(&mut self, e: &Expr, entries: &[MapEntry]) -> Result<Node, PlanError> {
        Ok({
            let mut planned = Vec::with_capacity(entries.len());
            for en in entries {
                planned.push((self.plan(&en.key)?, self.plan(&en.value)?, en.optional));
            }
            let all_const = planned
                .iter()
                .all(|(k, v, o)| !o && matches!(k, Node::Const(_)) && matches!(v, Node::Const(_)));
            if all_const {
                let mut m = OwnedMap::new();
                let mut ok = true;
                for (k, v, _) in &planned {
                    if let (Node::Const(k), Node::Const(v)) = (k, v) {
                        match Key::from_value(k) {
                            // A repeated key is a runtime error: leave it to the evaluator.
                            Some(key) if !super::eval::has_key(&m, &key) => {
                                m.insert(key, v.clone());
                            }
                            _ => ok = false,
                        }
                    }
                }
                if ok {
                    return Ok(Node::Const(Value::map(m)));
                }
            }
            Node::Map { entries: planned.into(), loc: loc(e) }
        })
    }

    #[inline(never)]
    fn plan_comprehension(&mut self, e: &Expr, c: &Comprehension) -> Result<Node, PlanError> {
        Ok({
            let range = self.plan(&c.iter_range)?;
            let accu = self.new_slot();
            let init = self.plan(&c.accu_init)?;
            let iter = self.new_slot();
            let iter2 = c.iter_var2.as_ref().map(|_| self.new_slot());
            let mark = self.scopes.len();
            self.scopes.push((c.accu_var.clone(), accu));
            self.scopes.push((c.iter_var.clone(), iter));
            if let (Some(v2), Some(s2)) = (&c.iter_var2, iter2) {
                self.scopes.push((v2.clone(), s2));
            }
            let cond = self.plan(&c.loop_cond)?;
            let is_accu = |n: &Node| matches!(n, Node::Attr { root: Root::Local(s), quals, .. } if *s == accu && quals.is_empty());
            let cond_accu = match &cond {
                Node::NotStrictlyFalse(x) => match &**x {
                    x if is_accu(x) => Some(false),
                    Node::Not(y, _) if is_accu(y) => Some(true),
                    _ => None,
                },
                _ => None,
            };
            let step = self.plan_step(&c.loop_step, &c.accu_var, accu)?;
            // The result sees only the accumulator (cel-go scopes the iteration variables
            // to the loop).
            self.scopes.truncate(mark);
            self.scopes.push((c.accu_var.clone(), accu));
            let result = self.plan(&c.result)?;
            self.scopes.truncate(mark);
            Node::Fold(Box::new(Fold {
                range,
                iter,
                iter2,
                accu,
                init,
                cond,
                cond_accu,
                step,
                result,
                loc: loc(e),
            }))
        })
    }

    /// A comprehension step, recognising in-place accumulator updates.
    fn plan_step(&mut self, e: &Expr, accu_var: &str, accu: u32) -> Result<Node, PlanError> {
        let is_accu = |x: &Expr| matches!(&x.kind, ExprKind::Ident(n) if n == accu_var);
        if let ExprKind::Call { function, target: None, args } = &e.kind {
            if function == "_+_" && args.len() == 2 && is_accu(&args[0]) {
                if let ExprKind::List { elements, optional_indices } = &args[1].kind {
                    if optional_indices.is_empty() {
                        let elems =
                            elements.iter().map(|x| self.plan(x)).collect::<Result<Vec<_>, _>>()?;
                        let const_list = elems.iter().all(|n| matches!(n, Node::Const(_)));
                        return Ok(Node::AccuAppend {
                            accu,
                            elems: elems.into(),
                            const_list,
                            loc: loc(e),
                        });
                    }
                }
            }
            if function == "cel.@mapInsert"
                && (args.len() == 2 || args.len() == 3)
                && is_accu(&args[0])
            {
                let rest = args[1..].iter().map(|x| self.plan(x)).collect::<Result<Vec<_>, _>>()?;
                return Ok(Node::AccuInsert { accu, args: rest.into(), loc: loc(e) });
            }
            if function == "_?_:_" && args.len() == 3 {
                let c = self.plan(&args[0])?;
                let t = self.plan_step(&args[1], accu_var, accu)?;
                let f = self.plan_step(&args[2], accu_var, accu)?;
                return Ok(Node::Ternary(Box::new(c), Box::new(t), Box::new(f), loc(e)));
            }
        }
        self.plan(e)
    }

    /// Identifiers, select chains and index chains → one attribute.
    fn plan_attr(&mut self, e: &Expr) -> Result<Node, PlanError> {
        // Collect the chain from the outside in.
        let mut quals_rev: Vec<Qual> = Vec::new();
        let mut cur = e;
        let mut test_field: Option<Rc<str>> = None;
        loop {
            match &cur.kind {
                ExprKind::Select { operand, field, test } => {
                    // The checker resolved this select chain as a whole (a qualified variable
                    // such as `authorizer.requestResource`, or a type name such as `net.CIDR`).
                    if !*test && self.resolved(cur.id).is_some() {
                        break;
                    }
                    if *test {
                        if cur.id != e.id {
                            break;
                        }
                        test_field = Some(Rc::from(field.as_str()));
                    } else {
                        // `variables.<name>` → lazy variable.
                        if let ExprKind::Ident(n) = &operand.kind {
                            if n == "variables" && self.local(n).is_none() {
                                let global = self.global(n);
                                let node = Node::LazyVar {
                                    name: Rc::from(field.as_str()),
                                    global,
                                    loc: loc(cur),
                                };
                                return Ok(self.finish_attr(
                                    Root::Expr(Box::new(node)),
                                    quals_rev,
                                    test_field,
                                    e,
                                    true,
                                ));
                            }
                        }
                        quals_rev.push(Qual {
                            kind: QualKind::Field(Rc::from(field.as_str())),
                            optional: false,
                            loc: loc(cur),
                        });
                    }
                    cur = operand;
                }
                ExprKind::Call { function, target: None, args }
                    if is_index_fn(function) && args.len() == 2 =>
                {
                    let optional = function != "_[_]";
                    let kind = if function == "_?._" {
                        match &args[1].kind {
                            ExprKind::Literal(Literal::String(s)) => {
                                QualKind::Field(Rc::from(&**s))
                            }
                            _ => QualKind::Dyn(Box::new(self.plan(&args[1])?)),
                        }
                    } else {
                        match self.plan(&args[1])? {
                            Node::Const(v) => QualKind::Const(v),
                            n => QualKind::Dyn(Box::new(n)),
                        }
                    };
                    quals_rev.push(Qual { kind, optional, loc: loc(cur) });
                    cur = &args[0];
                }
                _ => break,
            }
        }
        let resolved = match &cur.kind {
            ExprKind::Ident(name) if self.local(name).is_some() => None,
            ExprKind::Ident(_) | ExprKind::Select { .. } => self.resolved(cur.id),
            _ => None,
        };
        if let Some((name, true)) = &resolved {
            if quals_rev.is_empty() && test_field.is_none() {
                return Ok(Node::Const(Value::type_value(name)));
            }
        }
        let root = match &cur.kind {
            ExprKind::Select { .. } if resolved.is_some() => {
                let name = resolved.map(|(n, _)| n).unwrap_or_default();
                Root::Global(self.global(&name))
            }
            ExprKind::Ident(name) => {
                if let Some(slot) = self.local(name) {
                    Root::Local(slot)
                } else {
                    let refname = self.reference(cur.id).and_then(|r| r.name.clone());
                    let name = refname.unwrap_or_else(|| name.clone());
                    if TYPE_NAMES.contains(&name.as_str())
                        && quals_rev.is_empty()
                        && test_field.is_none()
                    {
                        return Ok(Node::Const(Value::type_value(&name)));
                    }
                    Root::Global(self.global(&name))
                }
            }
            _ => Root::Expr(Box::new(self.plan(cur)?)),
        };
        Ok(self.finish_attr(root, quals_rev, test_field, e, false))
    }

    fn finish_attr(
        &mut self,
        root: Root,
        mut quals_rev: Vec<Qual>,
        test_field: Option<Rc<str>>,
        e: &Expr,
        lazy: bool,
    ) -> Node {
        quals_rev.reverse();
        let quals: Box<[Qual]> = quals_rev.into();
        if let Some(field) = test_field {
            return Node::Has { root, quals, field, loc: loc(e) };
        }
        if lazy && quals.is_empty() {
            if let Root::Expr(n) = root {
                return *n;
            }
        }
        Node::Attr { root, quals, loc: loc(e) }
    }

    fn plan_call(
        &mut self,
        e: &Expr,
        function: &str,
        target: Option<&Expr>,
        args: &[Expr],
    ) -> Result<Node, PlanError> {
        let l = loc(e);
        if target.is_none() {
            match (function, args.len()) {
                ("_&&_", 2) => {
                    return Ok(Node::And(
                        Box::new(self.plan(&args[0])?),
                        Box::new(self.plan(&args[1])?),
                        l,
                    ))
                }
                ("_||_", 2) => {
                    return Ok(Node::Or(
                        Box::new(self.plan(&args[0])?),
                        Box::new(self.plan(&args[1])?),
                        l,
                    ))
                }
                ("_?_:_", 3) => {
                    return Ok(Node::Ternary(
                        Box::new(self.plan(&args[0])?),
                        Box::new(self.plan(&args[1])?),
                        Box::new(self.plan(&args[2])?),
                        l,
                    ))
                }
                ("@not_strictly_false", 1) => {
                    return Ok(Node::NotStrictlyFalse(Box::new(self.plan(&args[0])?)))
                }
                ("_[_]", 2) | ("_[?_]", 2) | ("_?._", 2) => return self.plan_attr(e),
                _ => {}
            }
        }
        // Namespaced functions (`optional.of`, `lists.range`, `strings.quote`, `sets.contains`)
        // parse as member calls on an identifier: resolve them as globals, as cel-go's checker
        // does, when the identifier is not a comprehension variable.
        if let Some(ExprKind::Ident(ns)) = target.map(|t| &t.kind) {
            if self.local(ns).is_none() {
                let qualified = format!("{ns}.{function}");
                let from_refs = self
                    .reference(e.id)
                    .and_then(|r| r.overload_ids.first())
                    .and_then(|id| self.registry.by_id(id))
                    .is_some_and(|o| !o.member);
                if from_refs || !self.registry.candidates(&qualified, false, args.len()).is_empty()
                {
                    return self.plan_call(e, &qualified, None, args);
                }
            }
        }
        let member = target.is_some();
        let arity = args.len() + member as usize;
        let mut planned = Vec::with_capacity(arity);
        if let Some(t) = target {
            planned.push(self.plan(t)?);
        }
        for a in args {
            planned.push(self.plan(a)?);
        }
        if self.optimize && function == "@in" {
            if let Some(n) = self.set_membership(e.id, &mut planned) {
                return Ok(n);
            }
        }
        // Candidates: the checker's overloads, else every overload of this name and shape.
        let mut overloads: Vec<&'static Overload> = Vec::new();
        if let Some(r) = self.reference(e.id) {
            for id in &r.overload_ids {
                match self.registry.by_id(id) {
                    Some(o) => overloads.push(o),
                    None => return Err(no_implementation(e, id, function)),
                }
            }
        }
        if overloads.is_empty() {
            overloads = self.registry.candidates(function, member, arity);
        }
        if overloads.is_empty() && !member {
            // Macro expansions may call a member overload in global form
            // (`@sortByAssociatedKeys(list, keys)`); the argument layout is the same.
            overloads = self.registry.candidates(function, true, arity);
        }
        // A type conversion of a constant is evaluated now (`fold_conversion`).
        if let ([Node::Const(arg)], None, true) =
            (&planned[..], target, self.optimize && is_conversion(function))
        {
            return self.fold_conversion(e, arg, &overloads);
        }
        // `!x`, the commonest call in validations' conditions (`!has(…)`, `!x.startsWith(…)`).
        // (The Kubernetes estimator has no cost of its own for it.)
        if let ([o], 1, None) = (&overloads[..], planned.len(), target) {
            if o.id == "logical_not" {
                if let Some(x) = planned.pop() {
                    return Ok(Node::Not(Box::new(x), l));
                }
            }
        }
        // No implementation at all (only possible unchecked): like cel-go's planner, the call
        // still evaluates its arguments and then fails with `no such overload`, an error that
        // `||`/`&&` may absorb (cel-spec `basic/functions/unbound_is_runtime_error`).
        // Precompile constant regexes of `matches` / `find` / `findAll`.
        if matches!(function, "matches" | "find" | "findAll") && planned.len() >= 2 {
            if let Node::Const(Value::String(p)) = &planned[1] {
                let _ = self.regexes.compile(p.as_str());
            }
        }
        // One candidate overload (the checker's, mostly): no loop, its own cost or 1.
        let k8s_named = crate::cel::stdlib::cost::k8s_names(function);
        // (`_==_` too: the estimator prices it, at 1, only when its left operand is a library
        // type's value.)
        let eq = function == "_==_";
        // Candidates that share one implementation (`size` or `_<_` on `dyn` operands) are
        // one: the loop would call it once (a `no such overload` from it is one from all) and
        // charge the first candidate's cost.
        let one = match &overloads[..] {
            [o, rest @ ..] if rest.iter().all(|r| r.imp as usize == o.imp as usize) => Some(*o),
            _ => None,
        };
        if let (Some(o), false, 1 | 2) = (one, k8s_named && !eq, planned.len()) {
            let b = if planned.len() == 2 { planned.pop() } else { None };
            if let Some(a) = planned.pop() {
                let bool_only = matches!(
                    o.id,
                    "equals"
                        | "not_equals"
                        | "starts_with_string"
                        | "ends_with_string"
                        | "contains_string"
                        | "matches"
                        | "matches_string"
                );
                let d = Direct { overload: o, a, b, eq, bool_only, loc: l };
                return Ok(Node::Direct(Box::new(d)));
            }
        }
        Ok(Node::Call(Box::new(Call {
            function: Rc::from(function),
            overloads: overloads.into(),
            args: planned.into(),
            loc: l,
            k8s_named,
        })))
    }
}

/// A checked reference to an overload the registry does not have. Out of line: a cold path
/// (its `format!`) that every first `plan_call` would otherwise compile.
#[cold]
#[inline(never)]
fn no_implementation(e: &Expr, id: &str, function: &str) -> PlanError {
    PlanError {
        message: format!("no implementation for overload '{id}' of '{function}'"),
        node: e.id,
        span: e.span,
    }
}

impl Planner<'_> {
    /// A type conversion of a constant, evaluated when the program is created (cel-go
    /// `OptOptimize`, `maybeOptimizeConstUnary`): it costs nothing at evaluation, and its error
    /// fails the program's creation. Out of line: most calls are not such conversions, and the
    /// first `plan_call` of a page would otherwise compile it.
    #[inline(never)]
    fn fold_conversion(
        &self,
        e: &Expr,
        arg: &Value<'static>,
        overloads: &[&'static Overload],
    ) -> Result<Node, PlanError> {
        let mut ctx = Ctx { regexes: &self.regexes, remaining: u64::MAX };
        let mut result = Err(Fail::NoMatch);
        for o in overloads {
            result = (o.imp)(&mut ctx, std::slice::from_ref(arg));
            if !matches!(result, Err(Fail::NoMatch)) {
                break;
            }
        }
        match result {
            Ok(v) => Ok(Node::Const(v)),
            Err(f) => Err(PlanError {
                message: match f {
                    Fail::Err(m) => m,
                    _ => "no such overload".into(),
                },
                node: e.id,
                span: e.span,
            }),
        }
    }
}

impl Planner<'_> {
    /// cel-go `OptOptimize`'s `maybeOptimizeSetMembership` (`interpreter/decorators.go`, the
    /// same from v0.17.8, Kubernetes 1.30, to v0.27.0, 1.37): a call of the `in_list` overload
    /// alone whose list is a constant. An empty list makes it the constant `false`, its left
    /// side never evaluated; a list of bools, numbers and strings (`types.IsPrimitiveType`, not
    /// bytes) a set lookup, which the cost tracker does not charge (it is no call).
    #[inline(never)]
    fn set_membership(&self, id: NodeId, planned: &mut Vec<Node>) -> Option<Node> {
        let r = self.reference(id)?;
        if !matches!(&r.overload_ids[..], [o] if &**o == "in_list") {
            return None;
        }
        let [_, Node::Const(Value::List(List::Owned(l)))] = &planned[..] else {
            return None;
        };
        if l.is_empty() {
            return Some(Node::Const(Value::Bool(false)));
        }
        let primitive = |v: &Value| {
            matches!(
                v,
                Value::Bool(_)
                    | Value::Int(_)
                    | Value::Uint(_)
                    | Value::Double(_)
                    | Value::String(_)
            )
        };
        if !l.iter().all(primitive) {
            return None;
        }
        let set = l.clone();
        Some(Node::InSet(Box::new(planned.swap_remove(0)), set))
    }
}

/// cel-go `overloads.IsTypeConversionFunction`.
fn is_conversion(f: &str) -> bool {
    matches!(
        f,
        "bool"
            | "bytes"
            | "double"
            | "duration"
            | "dyn"
            | "int"
            | "string"
            | "timestamp"
            | "type"
            | "uint"
    )
}

fn is_index_fn(f: &str) -> bool {
    matches!(f, "_[_]" | "_[?_]" | "_?._")
}

fn literal(l: &Literal) -> Value<'static> {
    match l {
        Literal::Null => Value::Null,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Int(i) => Value::Int(*i),
        Literal::Uint(u) => Value::Uint(*u),
        Literal::Double(d) => Value::Double(*d),
        Literal::String(s) => Value::String(Str::Owned(s.clone())),
        Literal::Bytes(b) => Value::Bytes(b.clone()),
    }
}
