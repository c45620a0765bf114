//! Evaluation of a [`Program`] against an [`Activation`].
//!
//! Errors propagate as `Err`, and the operators that may absorb them do so explicitly, as cel-go
//! does with error values: `_&&_` / `_||_` are commutative (`error && false` is `false`), the
//! ternary propagates only the condition's error, `@not_strictly_false` turns errors into `true`.
//! Cancellation (cost limit) is never absorbed.
//!
//! Cost accounting (cel-go `runtimecost.go`): constants 0; an attribute 1 plus 1 per qualifier
//! (a relative attribute — one whose root is not an identifier — also pays its operand);
//! `has()` costs only its operand (Kubernetes `PresenceTestHasCost(false)`); list literal 10,
//! map literal 30 unless folded; calls as `stdlib::cost`; `&&`, `||`, ternary and comprehensions
//! have no own cost.

use super::plan::{Call, Direct, Fold, Loc, Node, Program, Qual, QualKind, Root};
use super::{Activation, CostTracker, EvalError, COST_LIMIT_MESSAGE};
use crate::cel::stdlib::{cost, Ctx, Fail};
use crate::cel::value::{json_get, Key, List, Map, OwnedMap, Str, Value};
use std::rc::Rc;

type E = Box<EvalError>;
type R<'a> = Result<Value<'a>, E>;

const LIST_CREATE_COST: u64 = 10;
const MAP_CREATE_COST: u64 = 30;

impl Program {
    /// Evaluate once. `cost` accumulates the actual cost (it may be shared across expressions);
    /// its limit cancels evaluation with `operation cancelled: actual cost limit exceeded`.
    pub fn eval<'a>(
        &self,
        activation: &dyn Activation<'a>,
        cost: &mut CostTracker,
    ) -> Result<Value<'a>, EvalError> {
        // The variables' and the comprehensions' slots on the stack when they are few (as
        // they nearly always are): no allocation per evaluation.
        const GLOBALS: usize = 4;
        const LOCALS: usize = 6;
        let (g, l) = (self.globals.len(), self.slots as usize);
        if g <= GLOBALS && l <= LOCALS {
            let mut globals: [Option<Value<'a>>; GLOBALS] = Default::default();
            let mut locals: [Result<Value<'a>, E>; LOCALS] =
                std::array::from_fn(|_| Ok(Value::Null));
            self.run(activation, cost, &mut globals[..g], &mut locals[..l])
        } else {
            let mut globals = vec![None; g];
            let mut locals: Vec<_> = (0..l).map(|_| Ok(Value::Null)).collect();
            self.run(activation, cost, &mut globals, &mut locals)
        }
    }

    #[inline(never)]
    fn run<'a>(
        &self,
        act: &dyn Activation<'a>,
        cost: &mut CostTracker,
        globals: &mut [Option<Value<'a>>],
        locals: &mut [Result<Value<'a>, E>],
    ) -> Result<Value<'a>, EvalError> {
        let mut ev = Evaluator { prog: self, act, cost, globals, locals };
        ev.eval(&self.root).map_err(|e| *e)
    }
}

struct Evaluator<'p, 'a, 'c> {
    prog: &'p Program,
    act: &'c dyn Activation<'a>,
    cost: &'c mut CostTracker,
    globals: &'c mut [Option<Value<'a>>],
    locals: &'c mut [Result<Value<'a>, E>],
}

fn err(msg: impl Into<String>, loc: Loc) -> E {
    Box::new(EvalError { message: msg.into(), node: loc.id, span: loc.span, cancelled: false })
}

impl<'p, 'a, 'c> Evaluator<'p, 'a, 'c> {
    #[inline]
    fn charge(&mut self, c: u64, loc: Loc) -> Result<(), E> {
        if self.cost.add(c) {
            Ok(())
        } else {
            Err(self.cancelled(loc))
        }
    }

    fn cancelled(&self, loc: Loc) -> E {
        Box::new(EvalError {
            message: COST_LIMIT_MESSAGE.to_string(),
            node: loc.id,
            span: loc.span,
            cancelled: true,
        })
    }

    fn eval(&mut self, n: &Node) -> R<'a> {
        match n {
            // (An int or bool constant, `< 256`, `== true`, without the clone's call.)
            Node::Const(v) => Ok(match v {
                Value::Int(i) => Value::Int(*i),
                Value::Bool(b) => Value::Bool(*b),
                v => v.clone(),
            }),
            // A comprehension variable or accumulator read whole (`@result` in `all`'s step).
            Node::Attr { root: Root::Local(s), quals, loc } if quals.is_empty() => {
                self.charge(1, *loc)?;
                self.locals[*s as usize].clone()
            }
            Node::Attr { root, quals, loc } => self.attr(root, quals, *loc),
            Node::Has { root, quals, field, loc } => self.has(root, quals, field, *loc),
            Node::LazyVar { name, global, loc } => self.lazy_var(name, *global, *loc),
            Node::Call(c) => self.call(c),
            Node::And(l, r, loc) => self.logic(l, r, false, *loc),
            Node::Or(l, r, loc) => self.logic(l, r, true, *loc),
            Node::Ternary(c, t, f, loc) => match self.eval(c)? {
                Value::Bool(true) => self.eval(t),
                Value::Bool(false) => self.eval(f),
                _ => Err(err("no such overload", *loc)),
            },
            Node::NotStrictlyFalse(x) => {
                let v = self.eval(x);
                // A call: cost 1.
                self.charge(1, Loc { id: 0, span: Default::default() })?;
                match v {
                    Ok(Value::Bool(b)) => Ok(Value::Bool(b)),
                    Ok(_) => Ok(Value::Bool(true)),
                    Err(e) if e.cancelled => Err(e),
                    Err(_) => Ok(Value::Bool(true)),
                }
            }
            Node::Not(x, loc) => self.not(x, *loc),
            Node::Direct(d) => self.direct(d),
            Node::List { elems, optional, loc } => {
                let mut out = Vec::with_capacity(elems.len());
                for (i, e) in elems.iter().enumerate() {
                    let v = self.eval(e)?;
                    if optional[i] {
                        match v {
                            Value::Optional(Some(x)) => out.push((*x).clone()),
                            Value::Optional(None) => {}
                            _ => return Err(err("no such overload", *loc)),
                        }
                    } else {
                        out.push(v);
                    }
                }
                self.charge(LIST_CREATE_COST, *loc)?;
                Ok(Value::list(out))
            }
            Node::Map { entries, loc } => self.map_literal(entries, *loc),
            Node::Fold(f) => self.fold(f),
            Node::AccuAppend { accu, elems, const_list, loc } => {
                self.accu_append(*accu, elems, *const_list, *loc)
            }
            Node::AccuInsert { accu, args, loc } => self.accu_insert(*accu, args, *loc),
            Node::Error(msg, loc) => Err(err(msg.to_string(), *loc)),
            Node::InSet(x, set) => {
                let v = self.eval(x)?;
                Ok(Value::Bool(in_set(set, &v)))
            }
        }
    }

    // The node kinds below are out of line (`#[inline(never)]`, also `fold` and `has`): V8
    // compiles a wasm function whole on its first call, and an expression without map literals
    // or comprehensions should not pay for them in `eval` (bench/README.md, "The first
    // evaluate(), seventh round").

    #[inline(never)]
    fn map_literal(&mut self, entries: &[(Node, Node, bool)], loc: Loc) -> R<'a> {
        let mut m = OwnedMap::with_capacity(entries.len());
        for (k, v, opt) in entries.iter() {
            let kv = self.eval(k)?;
            let vv = self.eval(v)?;
            let key = Key::from_value(&kv)
                .ok_or_else(|| err(format!("unsupported key type: {}", kv.type_name()), loc))?;
            if has_key(&m, &key) {
                return Err(err("Failed with repeated key", loc));
            }
            if *opt {
                match vv {
                    Value::Optional(Some(x)) => {
                        m.insert(key, (*x).clone());
                    }
                    Value::Optional(None) => {}
                    _ => return Err(err("no such overload", loc)),
                }
            } else {
                m.insert(key, vv);
            }
        }
        self.charge(MAP_CREATE_COST, loc)?;
        Ok(Value::map(m))
    }

    #[inline(never)]
    fn accu_append(&mut self, accu: u32, elems: &[Node], const_list: bool, loc: Loc) -> R<'a> {
        // `@result` (1) + `[elems]` (10 unless constant) + `_+_` (1).
        let mut vals = Vec::with_capacity(elems.len());
        for e in elems.iter() {
            vals.push(self.eval(e)?);
        }
        self.charge(1 + if const_list { 0 } else { LIST_CREATE_COST } + 1, loc)?;
        let slot = accu as usize;
        let acc = std::mem::replace(&mut self.locals[slot], Ok(Value::Null))?;
        match acc {
            Value::List(List::Owned(mut rc)) => {
                Rc::make_mut(&mut rc).extend(vals);
                Ok(Value::List(List::Owned(rc)))
            }
            Value::List(l) => {
                let mut v = l.to_vec();
                v.extend(vals);
                Ok(Value::list(v))
            }
            _ => Err(err("no such overload", loc)),
        }
    }

    #[inline(never)]
    fn accu_insert(&mut self, accu: u32, args: &[Node], loc: Loc) -> R<'a> {
        let mut vals = Vec::with_capacity(args.len());
        for e in args.iter() {
            vals.push(self.eval(e)?);
        }
        self.charge(2, loc)?;
        let slot = accu as usize;
        let acc = std::mem::replace(&mut self.locals[slot], Ok(Value::Null))?;
        let mut rc = match acc {
            Value::Map(Map::Owned(rc)) => rc,
            Value::Map(m) => {
                Rc::new(m.iter().filter_map(|(k, v)| Some((Key::from_value(&k)?, v))).collect())
            }
            _ => return Err(err("no such overload", loc)),
        };
        let m = Rc::make_mut(&mut rc);
        crate::cel::stdlib::lists::map_insert(m, &vals).map_err(|f| self.fail(f, loc))?;
        Ok(Value::Map(Map::Owned(rc)))
    }

    fn fail(&self, f: Fail, loc: Loc) -> E {
        match f {
            Fail::Err(m) => err(m, loc),
            Fail::NoMatch => err("no such overload", loc),
            Fail::Cancelled => self.cancelled(loc),
        }
    }

    /// `!x` as [`Evaluator::call`] evaluates the call of `logical_not`: the operand, then the
    /// call's cost (1, also when the operand failed, unless it was cancelled), then the result
    /// (`no such overload` for an operand that is not a bool).
    fn not(&mut self, x: &Node, loc: Loc) -> R<'a> {
        let v = self.eval(x);
        if let Err(e) = &v {
            if e.cancelled {
                return v;
            }
        }
        self.charge(1, loc)?;
        match v? {
            Value::Bool(b) => Ok(Value::Bool(!b)),
            _ => Err(err("no such overload", loc)),
        }
    }

    /// `&&` (`or == false`) and `||` (`or == true`), commutative over errors.
    fn logic(&mut self, l: &Node, r: &Node, or: bool, loc: Loc) -> R<'a> {
        // A left side that is a comprehension variable holding the bool that decides nothing
        // (`@result` in `all`'s step while it is true, in `exists`'s while false): its cost,
        // then the right side's bool, error, or `no such overload`, as below.
        if let Node::Attr { root: Root::Local(s), quals, loc: aloc } = l {
            if quals.is_empty() && matches!(self.locals[*s as usize], Ok(Value::Bool(b)) if b != or)
            {
                self.charge(1, *aloc)?;
                return match self.eval(r)? {
                    Value::Bool(b) => Ok(Value::Bool(b)),
                    _ => Err(err("no such overload", loc)),
                };
            }
        }
        let lv = self.eval(l);
        match &lv {
            Ok(Value::Bool(b)) if *b == or => return Ok(Value::Bool(or)),
            Err(e) if e.cancelled => return lv,
            _ => {}
        }
        let rv = self.eval(r);
        match &rv {
            Ok(Value::Bool(b)) if *b == or => return Ok(Value::Bool(or)),
            Err(e) if e.cancelled => return rv,
            _ => {}
        }
        match (lv, rv) {
            (Ok(Value::Bool(_)), Ok(Value::Bool(_))) => Ok(Value::Bool(!or)),
            (Err(e), _) => Err(e),
            (Ok(Value::Bool(_)), Err(e)) => Err(e),
            _ => Err(err("no such overload", loc)),
        }
    }

    #[inline]
    fn global(&mut self, idx: u32, loc: Loc) -> R<'a> {
        let i = idx as usize;
        if let Some(v) = &self.globals[i] {
            return Ok(v.clone());
        }
        let name = &self.prog.globals[i];
        match self.act.resolve(name) {
            Some(v) => {
                self.globals[i] = Some(v.clone());
                Ok(v)
            }
            None => Err(err(format!("no such attribute(s): {name}"), loc)),
        }
    }

    fn root(&mut self, root: &Root, loc: Loc) -> R<'a> {
        match root {
            Root::Global(i) => {
                self.charge(1, loc)?;
                self.global(*i, loc)
            }
            Root::Local(s) => {
                self.charge(1, loc)?;
                self.locals[*s as usize].clone()
            }
            Root::Expr(n) => {
                let v = self.eval(n)?;
                if !matches!(**n, Node::LazyVar { .. }) {
                    self.charge(1, loc)?;
                }
                Ok(v)
            }
        }
    }

    fn attr(&mut self, root: &Root, quals: &[Qual], loc: Loc) -> R<'a> {
        // A variable holding a JSON object: its cost, without a copy of its value.
        let mut obj = match self.json_root(root) {
            Some(m) if !quals.is_empty() => {
                self.charge(1, loc)?;
                Value::Map(Map::Json(m))
            }
            _ => {
                let obj = self.root(root, loc)?;
                if quals.is_empty() {
                    return Ok(obj);
                }
                obj
            }
        };
        let mut rest = quals;
        // Plain field selections (`.f`) on a JSON object walk the document's references: no
        // value made and dropped per step. The same costs, results and errors as the loop below.
        if let Value::Map(Map::Json(root)) = obj {
            let mut m = Some(root);
            let mut cur = None;
            while let [q @ Qual { kind: QualKind::Field(f), optional: false, .. }, tail @ ..] = rest
            {
                self.charge(1, q.loc)?;
                let Some(j) = m.and_then(|m| json_get(m, f)) else {
                    return Err(err(format!("no such key: {f}"), q.loc));
                };
                cur = Some(j);
                m = match j {
                    serde_json::Value::Object(n) => Some(n),
                    _ => None,
                };
                rest = tail;
            }
            if let Some(j) = cur {
                obj = Value::from_json(j);
            }
        }
        let mut opt = false;
        if let Value::Optional(o) = &obj {
            match o {
                None => {
                    // cel-go still observes the qualifiers' constant costs lazily; charge them.
                    self.charge(quals.len() as u64, loc)?;
                    return Ok(Value::Optional(None));
                }
                Some(v) => {
                    let inner = (**v).clone();
                    obj = inner;
                    opt = true;
                }
            }
        }
        for q in rest {
            opt |= q.optional;
            let key = self.qual_key(q)?;
            self.charge(1, q.loc)?;
            match qualify(&obj, key.as_ref(), q) {
                Ok(Some(v)) => obj = v,
                Ok(None) => {
                    if opt {
                        return Ok(Value::Optional(None));
                    }
                    return Err(err(missing_msg(&obj, key.as_ref(), q), q.loc));
                }
                Err(m) => return Err(err(m, q.loc)),
            }
        }
        if opt {
            Ok(Value::Optional(Some(Rc::new(obj))))
        } else {
            Ok(obj)
        }
    }

    /// The JSON object a variable root holds (a global once resolved), if it holds one.
    #[inline]
    fn json_root(&self, root: &Root) -> Option<&'a serde_json::Map<String, serde_json::Value>> {
        match root {
            Root::Local(s) => match &self.locals[*s as usize] {
                Ok(Value::Map(Map::Json(m))) => Some(*m),
                _ => None,
            },
            Root::Global(i) => match &self.globals[*i as usize] {
                Some(Value::Map(Map::Json(m))) => Some(*m),
                _ => None,
            },
            Root::Expr(_) => None,
        }
    }

    fn qual_key(&mut self, q: &Qual) -> Result<Option<Value<'a>>, E> {
        Ok(match &q.kind {
            QualKind::Field(_) => None,
            QualKind::Const(v) => Some(v.clone()),
            QualKind::Dyn(n) => Some(self.eval(n)?),
        })
    }

    #[inline(never)]
    fn has(&mut self, root: &Root, quals: &[Qual], field: &str, loc: Loc) -> R<'a> {
        // `has(c.f)` on a variable that holds a JSON object: its cost (the root's 1) and the
        // test, without a copy of the variable's value.
        if let (Some(m), true) = (self.json_root(root), quals.is_empty()) {
            self.charge(1, loc)?;
            return Ok(Value::Bool(json_get(m, field).is_some()));
        }
        let obj = self.attr(root, quals, loc)?;
        let obj = match obj {
            Value::Optional(None) => return Ok(Value::Bool(false)),
            Value::Optional(Some(v)) => (*v).clone(),
            o => o,
        };
        // cel-go refQualify with a presence test: only maps have fields; anything else is
        // "not present".
        let _ = loc;
        Ok(Value::Bool(match &obj {
            Value::Map(m) => m.get_str(field).is_some(),
            _ => false,
        }))
    }

    fn lazy_var(&mut self, name: &str, global: u32, loc: Loc) -> R<'a> {
        // `variables` (1) + `.name` (1).
        self.charge(2, loc)?;
        match self.act.lazy_variable(name) {
            Some(Ok(v)) => Ok(v),
            Some(Err(m)) => Err(err(m, loc)),
            None => {
                let vars = self.global(global, loc)?;
                match &vars {
                    Value::Map(m) => {
                        m.get_str(name).ok_or_else(|| err(format!("no such key: {name}"), loc))
                    }
                    _ => Err(err(format!("no such key: {name}"), loc)),
                }
            }
        }
    }

    fn call(&mut self, c: &Call) -> R<'a> {
        // Arguments are evaluated strictly, left to right; an error stops the call (cel-go
        // returns the first error argument) but the call's cost is still observed. Up to three
        // arguments live on the stack.
        match &*c.args {
            [] => self.invoke(c, &[]),
            [a] => {
                let a = self.arg(c, a)?;
                self.invoke(c, &[a])
            }
            [a, b] => {
                let a = self.arg(c, a)?;
                let b = self.arg(c, b)?;
                self.invoke(c, &[a, b])
            }
            [a, b, d] => {
                let a = self.arg(c, a)?;
                let b = self.arg(c, b)?;
                let d = self.arg(c, d)?;
                self.invoke(c, &[a, b, d])
            }
            many => {
                let mut v = Vec::with_capacity(many.len());
                for a in many {
                    v.push(self.arg(c, a)?);
                }
                self.invoke(c, &v)
            }
        }
    }

    #[inline]
    fn arg(&mut self, c: &Call, a: &Node) -> R<'a> {
        self.arg_at(c.loc, a)
    }

    #[inline]
    fn arg_at(&mut self, loc: Loc, a: &Node) -> R<'a> {
        match self.eval(a) {
            Ok(v) => Ok(v),
            Err(e) => {
                if !e.cancelled {
                    self.charge(1, loc)?;
                }
                Err(e)
            }
        }
    }

    /// A [`Direct`] call as [`Evaluator::call`] and [`Evaluator::invoke`] evaluate it with its
    /// one overload: the arguments strictly, left to right; the cost the overload's own (1
    /// without one, or when the arguments do not match it); the cost charged before the
    /// result's error.
    fn direct(&mut self, d: &Direct) -> R<'a> {
        let a = self.arg_at(d.loc, &d.a)?;
        match &d.b {
            None => self.invoke_one(d, &[a]),
            // A constant string (`startsWith('AWS_')`, `== 'kube-system'`) borrowed from the
            // plan: no `Rc` taken and dropped per call. (A constant's evaluation costs nothing
            // and cannot fail.) The overload's result is a bool or an error.
            Some(Node::Const(Value::String(s))) if d.bool_only => {
                match self.invoke_one(d, &[a, Value::String(Str::Borrowed(s.as_str()))])? {
                    Value::Bool(b) => Ok(Value::Bool(b)),
                    _ => Err(err("no such overload", d.loc)),
                }
            }
            Some(b) => {
                let b = self.arg_at(d.loc, b)?;
                self.invoke_one(d, &[a, b])
            }
        }
    }

    fn invoke_one<'x>(&mut self, d: &Direct, args: &[Value<'x>]) -> Result<Value<'x>, E> {
        let mut ctx = Ctx { regexes: &self.prog.regexes, remaining: self.cost.remaining() };
        let result = (d.overload.imp)(&mut ctx, args);
        let opaque = d.eq && self.prog.k8s_cost && matches!(args[0], Value::Opaque(_));
        let c_cost = match (&result, d.overload.cost) {
            _ if opaque => 1,
            (Err(Fail::NoMatch), _) | (_, None) => 1,
            (r, Some(f)) => f(args, r.as_ref().ok()),
        };
        self.charge(c_cost, d.loc)?;
        result.map_err(|f| self.fail(f, d.loc))
    }

    fn invoke(&mut self, c: &Call, args: &[Value<'a>]) -> R<'a> {
        let mut ctx = Ctx { regexes: &self.prog.regexes, remaining: self.cost.remaining() };
        let mut result = Err(Fail::NoMatch);
        let mut chosen = None;
        for o in c.overloads.iter() {
            result = (o.imp)(&mut ctx, args);
            if !matches!(result, Err(Fail::NoMatch)) {
                chosen = Some(o);
                break;
            }
        }
        let ok = result.as_ref().ok();
        let id = chosen.map(|o| o.id).unwrap_or("");
        let own = chosen.and_then(|o| o.cost);
        let k8s = self.prog.k8s_cost && c.k8s_named;
        let c_cost = cost::call_cost(&c.function, id, own, k8s, args, ok);
        self.charge(c_cost, c.loc)?;
        result.map_err(|f| self.fail(f, c.loc))
    }

    #[inline(never)]
    fn fold(&mut self, f: &Fold) -> R<'a> {
        let range = self.eval(&f.range)?;
        let init = self.eval(&f.init)?;
        let accu = f.accu as usize;
        self.locals[accu] = Ok(init);
        let iter = f.iter as usize;
        let res = match &range {
            Value::List(l) => {
                let n = l.len();
                let mut i = 0;
                while i < n {
                    let Some(elem) = l.get(i) else { break };
                    match f.iter2 {
                        Some(s2) => {
                            self.locals[iter] = Ok(Value::Int(i as i64));
                            self.locals[s2 as usize] = Ok(elem);
                        }
                        None => self.locals[iter] = Ok(elem),
                    }
                    if !self.step(f)? {
                        break;
                    }
                    i += 1;
                }
                Ok(())
            }
            Value::Map(m) => {
                let entries: Vec<(Value<'a>, Value<'a>)> = m.iter().collect();
                for (k, v) in entries {
                    self.locals[iter] = Ok(k);
                    if let Some(s2) = f.iter2 {
                        self.locals[s2 as usize] = Ok(v);
                    }
                    if !self.step(f)? {
                        break;
                    }
                }
                Ok(())
            }
            other => {
                Err(err(format!("got '{}', expected iterable type", other.type_name()), f.loc))
            }
        };
        res?;
        let out = self.eval(&f.result);
        self.locals[accu] = Ok(Value::Null);
        self.locals[iter] = Ok(Value::Null);
        if let Some(s2) = f.iter2 {
            self.locals[s2 as usize] = Ok(Value::Null);
        }
        out
    }

    /// One iteration; `false` when the loop condition stops the fold.
    fn step(&mut self, f: &Fold) -> Result<bool, E> {
        let accu = &self.locals[f.accu as usize];
        // (A cancellation is never stored in the accumulator; were it, `eval` would see it.)
        let cond_accu = f.cond_accu.filter(|_| !matches!(accu, Err(e) if e.cancelled));
        match cond_accu {
            // `all`'s and `exists`'s condition as `eval` does it, read from the slot: the
            // attribute's cost 1, `!_`'s 1 (not charged when the attribute's cancelled), then
            // `@not_strictly_false`'s 1, whose cancellation is the one returned.
            Some(negated) => {
                let go = match accu {
                    Ok(Value::Bool(b)) => *b != negated,
                    _ => true,
                };
                if self.cost.add(1) && negated {
                    self.cost.add(1);
                }
                self.charge(1, Loc { id: 0, span: Default::default() })?;
                if !go {
                    return Ok(false);
                }
            }
            None => match self.eval(&f.cond) {
                Ok(Value::Bool(false)) => return Ok(false),
                Err(e) if e.cancelled => return Err(e),
                _ => {}
            },
        }
        let v = self.eval(&f.step);
        if let Err(e) = &v {
            if e.cancelled {
                return Err(v.err().unwrap_or_else(|| self.cancelled(f.loc)));
            }
        }
        self.locals[f.accu as usize] = v;
        Ok(true)
    }
}

/// One qualification step: `Ok(Some)` found, `Ok(None)` missing, `Err` an error text.
fn qualify<'a>(
    obj: &Value<'a>,
    key: Option<&Value<'a>>,
    q: &Qual,
) -> Result<Option<Value<'a>>, String> {
    match (&q.kind, obj) {
        (QualKind::Field(f), Value::Map(m)) => Ok(m.get_str(f)),
        (QualKind::Field(_), _) => Ok(None),
        (_, Value::Map(m)) => {
            let k = key.ok_or_else(|| "no such overload".to_string())?;
            m.get(k).map_err(|_| "no such overload".to_string())
        }
        (_, Value::List(l)) => {
            let k = key.ok_or_else(|| "no such overload".to_string())?;
            let i = match k {
                Value::Int(i) => *i,
                Value::Uint(u) => {
                    i64::try_from(*u).map_err(|_| format!("unsupported index value {u} in list"))?
                }
                Value::Double(d) => {
                    crate::cel::value::double_to_i64_lossless(*d).ok_or_else(|| {
                        format!(
                            "unsupported index value {} in list",
                            crate::cel::value::format_double(*d)
                        )
                    })?
                }
                other => {
                    return Err(format!("unsupported index type '{}' in list", other.type_name()))
                }
            };
            // `as usize` would wrap an index past 2^32 on wasm32 (`[1, 2][4294967296]` was 1).
            Ok(usize::try_from(i).ok().and_then(|i| l.get(i)))
        }
        _ => Ok(None),
    }
}

fn missing_msg(obj: &Value<'_>, key: Option<&Value<'_>>, q: &Qual) -> String {
    match (&q.kind, obj) {
        (QualKind::Field(f), _) => format!("no such key: {f}"),
        (_, Value::List(_)) => {
            format!("index out of bounds: {}", key.map(|k| k.error_string()).unwrap_or_default())
        }
        (_, Value::Map(_)) => {
            format!("no such key: {}", key.map(|k| k.error_string()).unwrap_or_default())
        }
        _ => "no such overload".to_string(),
    }
}

/// Whether `m` already has `key`, with CEL's numeric key equality (`0` and `0u` are one key).
pub(crate) fn has_key(m: &OwnedMap<'_>, key: &Key<'_>) -> bool {
    m.contains_key(key)
        || match *key {
            Key::Int(i) => u64::try_from(i).is_ok_and(|u| m.contains_key(&Key::Uint(u))),
            Key::Uint(u) => i64::try_from(u).is_ok_and(|i| m.contains_key(&Key::Int(i))),
            _ => false,
        }
}

/// Whether cel-go's set for a constant list holds `v` (`maybeOptimizeSetMembership`): the set's
/// keys are the elements and, for a number, each conversion of it to the other numeric types
/// that succeeds (a double's only when lossless: integral, in range); `v` is found when a key
/// has its type and value (Go's map equality: `NaN` never, `-0.0` as `0.0`). So an int or uint
/// is not found against a double it only rounds to (`9007199254740993 in [9007199254740992.0]`
/// is false, where CEL's `==` is true). A left side of another type is not found (in Go, one it
/// cannot hash, as bytes, panics).
#[inline(never)]
fn in_set(set: &[Value<'_>], v: &Value<'_>) -> bool {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    set.iter().any(|e| match (v, e) {
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::Uint(a), Value::Uint(b)) => a == b,
        (Value::Double(a), Value::Double(b)) => a == b,
        // Int to uint fails below 0, uint to int above `i64::MAX`.
        (Value::Int(i), Value::Uint(u)) | (Value::Uint(u), Value::Int(i)) => {
            *i as u64 == *u && *i >= 0
        }
        // Ints and uints become doubles, rounded.
        (Value::Double(d), Value::Int(i)) => *i as f64 == *d,
        (Value::Double(d), Value::Uint(u)) => *u as f64 == *d,
        // A double becomes an int in (-2^63, 2^63), a uint in [0, 2^64), when integral.
        (Value::Int(i), Value::Double(d)) => {
            *d > -TWO_63 && *d < TWO_63 && d.trunc() == *d && *d as i64 == *i
        }
        (Value::Uint(u), Value::Double(d)) => {
            *d >= 0.0 && *d < 2.0 * TWO_63 && d.trunc() == *d && *d as u64 == *u
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use crate::cel::parser::{parse, ParseOptions};
    use crate::cel::runtime::{plan, Bindings, CostTracker, PlanOptions};
    use crate::cel::stdlib::Registry;
    use crate::cel::value::{Key, Str, Value};
    use serde_json::Value as Json;

    /// The same data as values built during evaluation (owned maps and lists): attribute
    /// reads on it take the qualifier loop, never the walk on a JSON document.
    fn owned(j: &Json) -> Value<'static> {
        match j {
            Json::Object(m) => Value::map(
                m.iter()
                    .map(|(k, v)| (Key::String(Str::Owned(k.as_str().into())), owned(v)))
                    .collect(),
            ),
            Json::Array(a) => Value::list(a.iter().map(owned).collect()),
            Json::String(s) => Value::string(s.as_str()),
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
            },
        }
    }

    fn run(p: &crate::cel::runtime::Program, object: Value<'_>, limit: Option<u64>) -> String {
        let act = Bindings::new().with("object", object);
        let mut cost = CostTracker::new(limit);
        match p.eval(&act, &mut cost) {
            Ok(v) => format!("{v:?} cost {}", cost.actual_cost()),
            Err(e) => format!("{} at {} ({}) cost {}", e.message, e.node, e.cancelled, cost.cost),
        }
    }

    /// Field chains on a JSON object (walked on the document's references) evaluate as on the
    /// same data held as values: results, errors, their nodes and costs, at every cost limit.
    #[test]
    fn json_field_walk_as_values() {
        let object: Json = serde_json::from_str(
            r#"{"spec": {"replicas": 3, "template": {"spec": {"containers": [
                {"name": "a", "image": "x/a", "ports": [{"containerPort": 80}],
                 "resources": {"limits": {"memory": "1Gi"}}},
                {"name": "b", "image": "x/b", "env": [{"name": "K", "value": "v"}]}]}},
                "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9,
                "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16,
                "last": {"x": null}},
              "metadata": {"name": "n", "labels": {"app": "web"}}}"#,
        )
        .unwrap();
        let reg = Registry::standard();
        for expr in [
            "object.spec.replicas",
            "object.spec.last.x",
            "object.spec.k16 + object.spec.k9",
            "object.spec.template.spec.containers[0].name",
            "object.spec.template.spec.containers[1].env[0].value",
            "object.spec.missing",
            "object.spec.missing.deeper",
            "object.nope.spec",
            "object.spec.replicas.foo",
            "object.spec.template.spec.containers.foo",
            "object.metadata.labels['app']",
            "object.metadata.labels.app.size()",
            "object.metadata['labels'].app",
            "object.?metadata.labels.app",
            "object.metadata.?labels.app",
            "object.metadata.?nope.app",
            "has(object.spec.template.spec)",
            "has(object.spec.nope.x)",
            "has(object.spec.replicas.x)",
            "object.spec.template.spec.containers.all(c, c.name.size() > 0 && has(c.image))",
            "object.spec.template.spec.containers.map(c, c.resources.limits.memory)",
            "object.spec.template.spec.containers.exists(c, c.ports[0].containerPort == 80)",
            "object.spec.template.spec.containers.all(c, !has(c.env) || c.env.all(e, e.value != ''))",
            "[object][0].spec.replicas",
            "[object.spec][0].template.spec.containers[0].image",
        ] {
            let ast = parse(expr, ParseOptions::default()).unwrap();
            let p = plan(&ast, None, &reg, PlanOptions::default()).unwrap();
            let full = run(&p, owned(&object), None);
            assert_eq!(run(&p, Value::from_json(&object), None), full, "{expr}");
            let total = full.rsplit(' ').next().and_then(|c| c.parse::<u64>().ok()).unwrap();
            for limit in 0..=total + 1 {
                let want = run(&p, owned(&object), Some(limit));
                assert_eq!(run(&p, Value::from_json(&object), Some(limit)), want, "{expr} {limit}");
            }
        }
    }
}
