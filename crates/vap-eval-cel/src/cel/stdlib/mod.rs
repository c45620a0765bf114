//! Function implementations, keyed by cel-go overload id.
//!
//! Every overload is an [`Overload`]: its cel-go id, function name, shape (member or global,
//! arity), implementation and runtime cost. The planner picks the candidates of a call (the
//! checker's overload ids, or all overloads of the name and shape) and the evaluator tries them
//! in order: an implementation returns [`Fail::NoMatch`] when the runtime argument types are not
//! its own, so dynamic dispatch is "first implementation that accepts the arguments".
//!
//! Every library (the Kubernetes ones included) lists its overloads as a `static` table, added to
//! a [`Registry`] in order.
//!
//! Files: [`core`] (cel-spec standard library), [`time`] (durations, timestamps, time zones),
//! [`strings`] (cel-go ext strings v2 + `strings.quote`), [`format`] (the pre-spec v1
//! `string.format`), [`lists`] (ext lists v3, sets, two-variable comprehension helpers),
//! [`optional`] (cel-go optional library), [`cost`] (the Kubernetes cost estimator).

pub mod core;
pub mod cost;
pub mod format;
pub mod lists;
pub mod optional;
pub mod strings;
pub mod time;

use super::value::Value;
use crate::hash::FastMap;
use crate::library::regex::Regex;
use std::cell::RefCell;
use std::rc::Rc;

/// Why a call produced no value.
#[derive(Debug, Clone, PartialEq)]
pub enum Fail {
    /// The runtime arguments are not this overload's types: try the next candidate.
    NoMatch,
    /// A CEL error with cel-go's message.
    Err(String),
    /// The cost limit was exceeded inside the call (e.g. `lists.range(1000000000)`).
    Cancelled,
}

impl Fail {
    pub fn msg(m: impl Into<String>) -> Fail {
        Fail::Err(m.into())
    }
}

pub type R<'a> = Result<Value<'a>, Fail>;

/// What an implementation may use besides its arguments.
pub struct Ctx<'p> {
    pub regexes: &'p RegexCache,
    /// Cost budget left before cancellation; implementations that would allocate in proportion
    /// to an argument check it first.
    pub remaining: u64,
}

pub type ImplFn = for<'a> fn(&mut Ctx<'_>, &[Value<'a>]) -> R<'a>;
/// Runtime cost of one call from its arguments (receiver first) and result (`None` on error).
pub type CostFn = for<'a> fn(&[Value<'a>], Option<&Value<'a>>) -> u64;

/// One overload of a function. The libraries list theirs as `static` tables (built with
/// [`Overload::global`] and [`Overload::member`]): data, not code that V8 has to compile on a
/// page's first evaluation (bench/README.md, "The first evaluate(), seventh round").
pub struct Overload {
    /// cel-go's overload id.
    pub id: &'static str,
    /// Function name (`_+_`, `size`, `optional.of`).
    pub function: &'static str,
    /// Receiver-style: `args[0]` is the receiver.
    pub member: bool,
    /// Number of arguments including the receiver.
    pub arity: usize,
    pub imp: ImplFn,
    /// `None`: cost 1. The standard library's overloads that cel-go's `costCall` prices by id
    /// carry those costs here (`cost.rs`); the Kubernetes estimator, by name, comes first.
    pub cost: Option<CostFn>,
}

impl Overload {
    /// A global overload without a cost of its own.
    pub const fn global(
        function: &'static str,
        id: &'static str,
        arity: usize,
        imp: ImplFn,
    ) -> Overload {
        Overload { id, function, member: false, arity, imp, cost: None }
    }

    /// A member overload (arity includes the receiver) without a cost of its own.
    pub const fn member(
        function: &'static str,
        id: &'static str,
        arity: usize,
        imp: ImplFn,
    ) -> Overload {
        Overload { id, function, member: true, arity, imp, cost: None }
    }

    /// The same overload priced by its own cost function.
    pub const fn with_cost(self, cost: CostFn) -> Overload {
        Overload { cost: Some(cost), ..self }
    }
}

impl std::fmt::Debug for Overload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Overload({})", self.id)
    }
}

/// Every implementation an environment has.
#[derive(Default)]
pub struct Registry {
    by_id: FastMap<&'static str, &'static Overload>,
    by_name: FastMap<&'static str, Vec<&'static Overload>>,
}

impl Registry {
    /// The standard library plus every cel-go extension Kubernetes enables.
    pub fn standard() -> Registry {
        let mut r = Registry::default();
        for table in [
            core::OVERLOADS,
            time::OVERLOADS,
            strings::OVERLOADS,
            format::OVERLOADS,
            lists::OVERLOADS,
            optional::OVERLOADS,
        ] {
            r.add_all(table);
        }
        r
    }

    /// Add (or replace, by id) an overload.
    pub fn add(&mut self, o: &'static Overload) {
        if let Some(old) = self.by_id.insert(o.id, o) {
            if let Some(v) = self.by_name.get_mut(old.function) {
                v.retain(|x| x.id != old.id);
            }
        }
        self.by_name.entry(o.function).or_default().push(o);
    }

    /// Add (or replace, by id) every overload of a table, in its order.
    pub fn add_all(&mut self, table: &'static [Overload]) {
        for o in table {
            self.add(o);
        }
    }

    pub fn by_id(&self, id: &str) -> Option<&'static Overload> {
        self.by_id.get(id).copied()
    }

    /// All overloads of `function` with this shape, in registration order.
    pub fn candidates(&self, function: &str, member: bool, arity: usize) -> Vec<&'static Overload> {
        self.by_name
            .get(function)
            .map(|v| v.iter().filter(|o| o.member == member && o.arity == arity).copied().collect())
            .unwrap_or_default()
    }

    /// Every overload id, sorted (for the cross-check against the declarations).
    pub fn ids(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.by_id.keys().copied().collect();
        crate::sort::sort_by(&mut v, |a, b| a.cmp(b));
        v
    }
}

/// Compiled regexes by pattern; constant patterns are compiled at plan time.
#[derive(Default)]
pub struct RegexCache {
    map: RefCell<FastMap<String, Result<Rc<Regex>, String>>>,
}

impl RegexCache {
    /// The compiled pattern, or cel-go's error text for an invalid one.
    pub fn compile(&self, pattern: &str) -> Result<Rc<Regex>, String> {
        if let Some(r) = self.map.borrow().get(pattern) {
            return r.clone();
        }
        let r = compile_re2(pattern);
        let mut m = self.map.borrow_mut();
        if m.len() > 256 {
            m.clear();
        }
        m.insert(pattern.to_string(), r.clone());
        r
    }
}

/// Compile with Go RE2 semantics (the pattern translated for the `regex` crate) and Go's error
/// text, shared with the Kubernetes regex library.
fn compile_re2(pattern: &str) -> Result<Rc<Regex>, String> {
    crate::library::regex::compile_go(pattern).map(Rc::new)
}

/// Helpers shared by the library files.
pub(crate) mod util {
    use super::Fail;
    use crate::cel::value::{Str, Value};

    #[inline]
    pub fn str_arg<'v>(v: &'v Value<'_>) -> Result<&'v str, Fail> {
        match v {
            Value::String(s) => Ok(s.as_str()),
            _ => Err(Fail::NoMatch),
        }
    }
    #[inline]
    pub fn int_arg(v: &Value<'_>) -> Result<i64, Fail> {
        match v {
            Value::Int(i) => Ok(*i),
            _ => Err(Fail::NoMatch),
        }
    }
    pub fn owned<'a>(s: String) -> Value<'a> {
        Value::String(Str::Owned(s.into()))
    }
}
