//! The runtime: plan a checked (or unchecked) AST once, evaluate it many times.
//!
//! - [`plan`]: [`plan()`] resolves identifiers to comprehension slots or activation variables,
//!   overloads to implementations, folds constant literals, precompiles constant regexes and
//!   turns accumulator appends into in-place pushes.
//! - [`eval`]: the tree-walking evaluator, with cel-go's error absorption and cost tracking.
//!
//! Costs follow cel-go's `interpreter/runtimecost.go` with the Kubernetes estimator
//! (`apiserver/pkg/cel/library/cost.go`) and `PresenceTestHasCost(false)`.

pub mod eval;
pub mod plan;

use super::ast::NodeId;
use super::value::Value;
use crate::diagnostic::Span;
use std::rc::Rc;

pub use plan::{plan, PlanError, PlanOptions, Program};

/// cel-go's error text when the per-expression cost limit is exceeded.
pub const COST_LIMIT_MESSAGE: &str = "operation cancelled: actual cost limit exceeded";
/// Kubernetes' per-expression limit (`PerCallLimit`).
pub const DEFAULT_COST_LIMIT: u64 = 1_000_000;

/// A runtime error, at the node that raised it.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    /// cel-go's message text (`no such key: x`, `division by zero`, …).
    pub message: String,
    /// The node that raised it.
    pub node: NodeId,
    /// That node's source span.
    pub span: Span,
    /// The cost limit was exceeded: evaluation was cancelled and no operator may absorb this.
    pub cancelled: bool,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What the checker resolved a node to (cel-go `ast.ReferenceInfo`), indexed by node id.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Reference {
    /// For identifiers and select chains the checker resolved to a variable: its full name
    /// (`variables`, or a qualified name).
    pub name: Option<String>,
    /// For calls: the overload ids that may apply (one when the checker could decide).
    pub overload_ids: Vec<Rc<str>>,
    /// The identifier or select chain names a type (`net.CIDR`, `int`): `name` is the type's
    /// runtime name and the node evaluates to that type value.
    pub is_type: bool,
}

/// Where variable values come from during one evaluation.
///
/// Implementations may memoise (`variables.x` is evaluated on first read and cached, errors
/// included, spec §1.12) through interior mutability.
pub trait Activation<'a> {
    /// The value of a top-level variable (`object`, `request`, …); `None` if unbound, which is a
    /// `no such attribute(s): <name>` error when the expression reads it.
    fn resolve(&self, name: &str) -> Option<Value<'a>>;

    /// A Kubernetes composited variable, read as `variables.<name>`. `None` means "not provided
    /// here": the evaluator then selects `<name>` from `resolve("variables")`. `Some(Err(msg))`
    /// becomes an error at the reading node. The variable's own cost is the implementation's to
    /// account for (it is charged to the reader's budget, not to its expression cost).
    fn lazy_variable(&self, _name: &str) -> Option<Result<Value<'a>, String>> {
        None
    }
}

/// The simplest activation: a list of bindings.
#[derive(Default)]
pub struct Bindings<'a> {
    pub vars: Vec<(String, Value<'a>)>,
}

impl<'a> Bindings<'a> {
    pub fn new() -> Self {
        Bindings { vars: Vec::new() }
    }
    pub fn with(mut self, name: &str, v: Value<'a>) -> Self {
        self.vars.push((name.to_string(), v));
        self
    }
}

impl<'a> Activation<'a> for Bindings<'a> {
    fn resolve(&self, name: &str) -> Option<Value<'a>> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }
}

/// cel-go's runtime cost tracker: counts the actual cost of one evaluation and cancels it when
/// the limit is exceeded.
#[derive(Clone, Debug)]
pub struct CostTracker {
    /// Cost so far.
    pub cost: u64,
    /// Cancel once `cost > limit`; `None`: unlimited.
    pub limit: Option<u64>,
}

impl Default for CostTracker {
    fn default() -> Self {
        CostTracker::new(Some(DEFAULT_COST_LIMIT))
    }
}

impl CostTracker {
    pub fn new(limit: Option<u64>) -> Self {
        CostTracker { cost: 0, limit }
    }
    pub fn unlimited() -> Self {
        CostTracker::new(None)
    }
    /// The actual cost so far.
    pub fn actual_cost(&self) -> u64 {
        self.cost
    }
    /// Budget left before cancellation (`u64::MAX` when unlimited).
    pub fn remaining(&self) -> u64 {
        match self.limit {
            Some(l) => l.saturating_sub(self.cost),
            None => u64::MAX,
        }
    }
    /// Add `c`; `false` when the limit is now exceeded.
    #[inline]
    pub(crate) fn add(&mut self, c: u64) -> bool {
        self.cost = self.cost.saturating_add(c);
        match self.limit {
            Some(l) => self.cost <= l,
            None => true,
        }
    }
}
