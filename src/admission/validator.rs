//! `Validate`: one (policy, binding, param) evaluation, as apiserver `validating/validator.go`
//! does it (spec §1.6), with cel-go's activations and Kubernetes' cost budgets (spec §5.1).
//!
//! Order: matchConditions (budget 2.5M) → validations (budget 10M) → messageExpressions (the
//! budget left by the validations) → auditAnnotations (a fresh 10M). Each pass has its own
//! activation, so composition variables are evaluated lazily and memoised **per pass**
//! (spec §1.12), their cost charged to the pass that first read them.

use super::compile::{CompiledPolicy, CompiledVariable};
use super::decision::{
    audit_annotation_action, match_conditions_outcome, validation_decision, AuditAnnotationAction,
    AuditAnnotationOutcome, MatchConditionsOutcome, PolicyDecision, ValidationOutcome,
};
use super::trace::{AuditResult, ExprResult, ParamEvaluation, ValidationResult};
use super::types::ValidatingAdmissionPolicy;
use crate::cel::compile::Compiled;
use crate::cel::runtime::{Activation, CostTracker, DEFAULT_COST_LIMIT};
use crate::cel::value::Value;
use crate::environment::var;
use serde_json::Value as Json;
use std::cell::{Cell, OnceCell, RefCell};

/// `RuntimeCELCostBudget`: validations and messageExpressions of one evaluation.
pub const RUNTIME_CEL_COST_BUDGET: u64 = 10_000_000;
/// `RuntimeCELCostBudgetMatchConditions`.
pub const RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS: u64 = 2_500_000;
/// The error when an activation's budget runs out (`activation.go`).
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// The values one evaluation binds. `params` is `null` when the policy has a paramKind but no
/// param (and unused when it has none: `params` is then undeclared).
pub struct Bound<'a> {
    pub object: Value<'a>,
    pub old_object: Value<'a>,
    pub params: Value<'a>,
    pub request: RequestValue<'a>,
    pub namespace_object: Value<'a>,
    /// `authorizer` and `authorizer.requestResource`.
    pub authorizer: Authorizer<'a>,
    /// [`PolicySet::summary_trace`](super::policy_set::PolicySet::summary_trace): the trace
    /// keeps decisions, errors and actions only (no expression texts, values or variables).
    pub summary_trace: bool,
}

/// `request`: a value, or one made on its first read (most policies never read it, and making
/// it was ≈ 1 % of a call of the package).
pub enum RequestValue<'a> {
    Ready(Value<'a>),
    Lazy { cell: &'a OnceCell<Json>, make: &'a (dyn Fn() -> Json + 'a) },
}

impl<'a> RequestValue<'a> {
    #[inline(never)]
    fn get(&self) -> Value<'a> {
        match self {
            RequestValue::Ready(v) => v.clone(),
            RequestValue::Lazy { cell, make } => Value::from_json(cell.get_or_init(make)),
        }
    }
}

/// The pair made by [`PolicySet::authorizer`](super::policy_set::PolicySet::authorizer).
pub type AuthorizerPair = (Value<'static>, Value<'static>);

/// `authorizer` and `authorizer.requestResource`: none available, the values, or the values
/// made on their first read (most policies never read them; making them copies the user's
/// info and the request's resource).
pub enum Authorizer<'a> {
    None,
    Ready((Value<'a>, Value<'a>)),
    Lazy { cell: &'a OnceCell<AuthorizerPair>, make: &'a (dyn Fn() -> AuthorizerPair + 'a) },
}

impl<'a> Authorizer<'a> {
    /// `authorizer` (`second`: `authorizer.requestResource`).
    #[inline(never)]
    fn get(&self, second: bool) -> Option<Value<'a>> {
        let (a, r) = match self {
            Authorizer::None => return None,
            Authorizer::Ready((a, r)) => (a, r),
            Authorizer::Lazy { cell, make } => {
                let (a, r) = cell.get_or_init(make);
                (a, r)
            }
        };
        Some(if second { r.clone() } else { a.clone() })
    }
}

impl<'a> From<Option<(Value<'a>, Value<'a>)>> for Authorizer<'a> {
    fn from(v: Option<(Value<'a>, Value<'a>)>) -> Self {
        v.map_or(Authorizer::None, Authorizer::Ready)
    }
}

impl Bound<'_> {
    /// [`Bound::summary_trace`], always false in the package (see [`PolicySet::summary`]).
    ///
    /// [`PolicySet::summary`]: super::policy_set::PolicySet::summary
    fn summary(&self) -> bool {
        cfg!(not(target_arch = "wasm32")) && self.summary_trace
    }
}

/// One activation (cel-go's per-`ForInput` activation): what its expressions see, and its
/// memoised variables.
struct Act<'v, 'a> {
    bound: &'v Bound<'a>,
    /// `authorizer` is bound (validations, matchConditions) or not (messageExpressions,
    /// auditAnnotations: spec §4.2).
    with_authorizer: bool,
    /// `namespaceObject` is always null inside matchConditions [quirk] (spec §1.11).
    namespace_null: bool,
    variables: &'v [CompiledVariable],
    cache: RefCell<Vec<Option<Result<Value<'a>, String>>>>,
    /// Cost of the variables evaluated so far in this activation.
    variable_cost: Cell<u64>,
    /// Own cost of each variable when it was evaluated.
    variable_costs: RefCell<Vec<u64>>,
}

impl<'v, 'a> Act<'v, 'a> {
    fn new(
        bound: &'v Bound<'a>,
        variables: &'v [CompiledVariable],
        with_authorizer: bool,
        namespace_null: bool,
    ) -> Self {
        Act {
            bound,
            with_authorizer,
            namespace_null,
            variables,
            cache: RefCell::new(vec![None; variables.len()]),
            variable_cost: Cell::new(0),
            variable_costs: RefCell::new(vec![0; variables.len()]),
        }
    }
}

impl<'v, 'a> Activation<'a> for Act<'v, 'a> {
    fn resolve(&self, name: &str) -> Option<Value<'a>> {
        let b = self.bound;
        match name {
            var::OBJECT => Some(b.object.clone()),
            var::OLD_OBJECT => Some(b.old_object.clone()),
            var::PARAMS => Some(b.params.clone()),
            var::REQUEST => Some(b.request.get()),
            var::NAMESPACE_OBJECT => {
                Some(if self.namespace_null { Value::Null } else { b.namespace_object.clone() })
            }
            var::AUTHORIZER if self.with_authorizer => b.authorizer.get(false),
            var::REQUEST_RESOURCE_AUTHORIZER if self.with_authorizer => b.authorizer.get(true),
            _ => None,
        }
    }

    fn lazy_variable(&self, name: &str) -> Option<Result<Value<'a>, String>> {
        // The last definition of a name wins (spec §1.12).
        let i = self.variables.iter().rposition(|v| v.name == name)?;
        if let Some(done) = self.cache.borrow().get(i).and_then(|c| c.clone()) {
            // The empty error marks a variable being evaluated: a later definition of a name
            // that refers to the earlier one refers to itself at run time, a recursion without
            // end (no result to reproduce; whether the apiserver admits such a policy is not
            // checked here).
            return Some(match done {
                Err(e) if e.is_empty() => {
                    Err(format!("composited variable \"{name}\" refers to itself"))
                }
                done => done,
            });
        }
        if let Some(slot) = self.cache.borrow_mut().get_mut(i) {
            *slot = Some(Err(String::new()));
        }
        let v = &self.variables[i];
        let (result, cost) = match (&v.compiled.program, &v.compiled.error) {
            (Some(program), _) => {
                // A variable's program has its own per-call limit (spec §5.1).
                let mut tracker = CostTracker::new(Some(DEFAULT_COST_LIMIT));
                let r = program.eval(self, &mut tracker);
                let r = r.map_err(|e| {
                    format!("composited variable \"{}\" fails to evaluate: {}", v.name, e.message)
                });
                (r, tracker.actual_cost())
            }
            (None, e) => (
                Err(format!(
                    "composited variable \"{}\" fails to compile: {}",
                    v.name,
                    e.as_deref().unwrap_or_default()
                )),
                0,
            ),
        };
        self.variable_cost.set(self.variable_cost.get().saturating_add(cost));
        if let Some(c) = self.variable_costs.borrow_mut().get_mut(i) {
            *c = cost;
        }
        if let Some(slot) = self.cache.borrow_mut().get_mut(i) {
            *slot = Some(result.clone());
        }
        Some(result)
    }
}

/// The outcome of one expression within a budgeted pass.
enum Step<'a> {
    Value(Value<'a>, u64),
    /// The decision text (`compilation error: …` or `expression '…' resulted in error: …`).
    Error(String, u64),
    /// The pass's budget is exhausted: the whole pass fails.
    OutOfBudget,
}

/// Evaluate one compiled expression, charging variables first and then the expression itself
/// against `remaining` (apiserver `activation.go`; spec §5.1).
fn run<'a>(c: &Compiled, act: &Act<'_, 'a>, remaining: &mut u64) -> Step<'a> {
    let Some(program) = &c.program else {
        return Step::Error(
            format!("compilation error: {}", c.error.as_deref().unwrap_or_default()),
            0,
        );
    };
    let before = act.variable_cost.get();
    let mut tracker = CostTracker::new(Some(DEFAULT_COST_LIMIT));
    let result = program.eval(act, &mut tracker);
    let variable_cost = act.variable_cost.get() - before;
    if variable_cost > *remaining {
        return Step::OutOfBudget;
    }
    *remaining -= variable_cost;
    let cost = tracker.actual_cost();
    if cost > *remaining {
        return Step::OutOfBudget;
    }
    *remaining -= cost;
    match result {
        Ok(v) => Step::Value(v, cost),
        Err(e) => {
            Step::Error(format!("expression '{}' resulted in error: {}", c.source, e.message), cost)
        }
    }
}

fn expr_trace(name: Option<&str>, c: &Compiled, step: &Step<'_>) -> ExprResult {
    let mut r = ExprResult {
        name: name.map(str::to_string),
        expression: String::from(&*c.source),
        evaluated: true,
        ..ExprResult::default()
    };
    match step {
        Step::Value(v, cost) => {
            r.value = Some(v.to_json());
            r.type_name = Some(v.type_name().to_string());
            r.cost = *cost;
        }
        Step::Error(e, cost) => {
            r.error = Some(e.clone());
            r.cost = *cost;
        }
        Step::OutOfBudget => r.error = Some(OUT_OF_BUDGET.to_string()),
    }
    r
}

/// What one evaluation produced.
pub struct ValidateOutput {
    /// Decisions in validation order (or one decision for the single-decision cases).
    pub decisions: Vec<PolicyDecision>,
    /// Audit annotation outcomes by key, in annotation order.
    pub audit: Vec<(String, AuditAnnotationAction)>,
    pub trace: ParamEvaluation,
}

/// Spec §1.6 for one param.
pub fn validate(
    policy: &ValidatingAdmissionPolicy,
    compiled: &CompiledPolicy,
    bound: &Bound<'_>,
) -> ValidateOutput {
    let fp = policy.spec.failure_policy.as_deref();
    let mut trace = ParamEvaluation { matched: true, ..ParamEvaluation::default() };
    let single = |trace: ParamEvaluation, message: String| ValidateOutput {
        decisions: vec![PolicyDecision::error(fp, message.clone())],
        audit: Vec::new(),
        trace: ParamEvaluation { error: Some(message), ..trace },
    };

    // 2. matchConditions.
    if !compiled.match_conditions.is_empty() {
        let act = Act::new(bound, &compiled.variables, true, true);
        let mut remaining = RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS;
        let mut results = Vec::with_capacity(compiled.match_conditions.len());
        let mut whole_error = None;
        for (name, c) in &compiled.match_conditions {
            let step = run(c, &act, &mut remaining);
            if !bound.summary() {
                trace.match_conditions.push(expr_trace(Some(name), c, &step));
            }
            match step {
                Step::Value(Value::Bool(b), _) => results.push(Ok(b)),
                Step::Value(other, _) => results.push(Err(format!(
                    "expression '{}' resulted in error: no such overload: match condition evaluated to {}",
                    c.source,
                    other.type_name()
                ))),
                Step::Error(e, _) => results.push(Err(e)),
                Step::OutOfBudget => {
                    whole_error = Some(OUT_OF_BUDGET);
                    break;
                }
            }
        }
        trace.cost.match_conditions = RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS - remaining;
        match match_conditions_outcome(fp, &results, whole_error) {
            MatchConditionsOutcome::Match => {}
            MatchConditionsOutcome::NoMatch { .. } => {
                trace.matched = false;
                return ValidateOutput { decisions: Vec::new(), audit: Vec::new(), trace };
            }
            MatchConditionsOutcome::Error { message } => return single(trace, message),
        }
    }

    // 3. Validations, one activation with the authorizer.
    let act = Act::new(bound, &compiled.variables, true, false);
    let mut remaining = RUNTIME_CEL_COST_BUDGET;
    let mut outcomes = Vec::with_capacity(compiled.validations.len());
    trace.validations.reserve_exact(compiled.validations.len());
    // The summary trace's expressions: one empty text for all (an `Rc` allocates).
    let no_text: std::rc::Rc<str> = std::rc::Rc::default();
    for (i, v) in compiled.validations.iter().enumerate() {
        let step = run(&v.expression, &act, &mut remaining);
        let mut r = ValidationResult {
            index: i,
            expression: if bound.summary() { no_text.clone() } else { v.expression.source.clone() },
            cost: 0,
            ..ValidationResult::default()
        };
        match step {
            Step::Value(Value::Bool(b), cost) => {
                r.result = Some(b);
                r.cost = cost;
                outcomes.push(ValidationOutcome::Value(b));
            }
            Step::Value(_, cost) => {
                // Only `true` admits (spec §1.6 step 5c).
                r.cost = cost;
                outcomes.push(ValidationOutcome::Value(false));
            }
            Step::Error(e, cost) => {
                r.error = Some(e.clone());
                r.cost = cost;
                outcomes.push(ValidationOutcome::Error(e));
            }
            Step::OutOfBudget => {
                trace.validations.push(r);
                trace.cost.validations = RUNTIME_CEL_COST_BUDGET - remaining;
                if !bound.summary() {
                    trace.variables = variable_trace(&act);
                }
                return single(trace, OUT_OF_BUDGET.to_string());
            }
        }
        trace.validations.push(r);
    }
    trace.cost.validations = RUNTIME_CEL_COST_BUDGET - remaining;
    if !bound.summary() {
        trace.variables = variable_trace(&act);
    }

    // 4. messageExpressions: a new activation without the authorizer, the remaining budget.
    let spent = remaining;
    // (Natively made only when there is a messageExpression: the activation allocates its
    // variables' caches. Always in the package: smaller.)
    let with_messages = cfg!(target_arch = "wasm32")
        || compiled.validations.iter().any(|v| v.message_expression.is_some());
    let act = with_messages.then(|| Act::new(bound, &compiled.variables, false, false));
    let mut messages: Vec<Option<String>> = vec![None; compiled.validations.len()];
    let mut message_failure: Option<&str> = None;
    for (i, v) in compiled.validations.iter().enumerate() {
        let (Some(me), Some(act)) = (&v.message_expression, &act) else { continue };
        let step = run(me, act, &mut remaining);
        if let Some(r) = trace.validations.get_mut(i).filter(|_| !bound.summary()) {
            r.message_expression = Some(expr_trace(None, me, &step));
        }
        match step {
            Step::Value(Value::String(s), _) => messages[i] = Some(s.as_str().to_string()),
            Step::Value(..) | Step::Error(..) => {}
            Step::OutOfBudget => {
                message_failure = Some(OUT_OF_BUDGET);
                break;
            }
        }
    }
    trace.cost.message_expressions = spent - remaining;

    // 5. One decision per validation.
    let mut decisions = Vec::with_capacity(outcomes.len());
    for (i, outcome) in outcomes.iter().enumerate() {
        let d = validation_decision(
            fp,
            outcome,
            message_failure,
            &policy.spec.validations[i],
            messages[i].as_deref(),
        );
        if let Some(r) = trace.validations.get_mut(i) {
            r.decision = decision_name(&d);
            if d.evaluation != super::decision::PolicyDecisionEvaluation::Admit {
                r.message = Some(d.message.clone());
                if !d.reason.is_empty() {
                    r.reason = Some(d.reason.clone());
                }
            }
        }
        decisions.push(d);
    }

    // 6. auditAnnotations: a new activation, a fresh budget; authorizer declared but unbound.
    let act = (cfg!(target_arch = "wasm32") || !compiled.audit_annotations.is_empty())
        .then(|| Act::new(bound, &compiled.variables, false, false));
    let mut remaining = RUNTIME_CEL_COST_BUDGET;
    let mut audit = Vec::with_capacity(compiled.audit_annotations.len());
    for (key, c) in &compiled.audit_annotations {
        let Some(act) = &act else { break };
        let step = run(c, act, &mut remaining);
        let mut r = AuditResult {
            key: key.clone(),
            value_expression: if bound.summary() {
                String::new()
            } else {
                String::from(&*c.source)
            },
            ..AuditResult::default()
        };
        let outcome = match &step {
            Step::Value(v, cost) => {
                r.cost = *cost;
                (AuditAnnotationOutcome::Value(v.to_json()), v.type_name().to_string())
            }
            Step::Error(e, cost) => {
                r.cost = *cost;
                (AuditAnnotationOutcome::Error(e.clone()), String::new())
            }
            Step::OutOfBudget => {
                trace.audit_annotations.push(r);
                trace.cost.audit_annotations = RUNTIME_CEL_COST_BUDGET - remaining;
                return single(trace, OUT_OF_BUDGET.to_string());
            }
        };
        let action = audit_annotation_action(fp, &c.source, &outcome.0, &outcome.1);
        match &action {
            AuditAnnotationAction::Publish(v) => {
                r.value = Some(v.clone());
                r.published = true;
            }
            AuditAnnotationAction::Error(e) => r.error = Some(e.clone()),
            AuditAnnotationAction::Exclude => {
                if let AuditAnnotationOutcome::Error(e) = &outcome.0 {
                    r.error = Some(e.clone());
                }
            }
        }
        trace.audit_annotations.push(r);
        audit.push((key.clone(), action));
    }
    trace.cost.audit_annotations = RUNTIME_CEL_COST_BUDGET - remaining;
    ValidateOutput { decisions, audit, trace }
}

fn decision_name(d: &PolicyDecision) -> &'static str {
    use super::decision::PolicyDecisionEvaluation as E;
    match d.evaluation {
        E::Admit => "admit",
        E::Deny => "deny",
        E::Error => "error",
    }
}

/// The variables an activation evaluated, in declaration order.
fn variable_trace(act: &Act<'_, '_>) -> Vec<ExprResult> {
    let cache = act.cache.borrow();
    let costs = act.variable_costs.borrow();
    act.variables
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut r = ExprResult {
                name: Some(v.name.clone()),
                expression: String::from(&*v.compiled.source),
                ..ExprResult::default()
            };
            match cache.get(i).and_then(|c| c.as_ref()) {
                Some(Ok(value)) => {
                    r.evaluated = true;
                    r.value = Some(value.to_json());
                    r.type_name = Some(value.type_name().to_string());
                    r.cost = costs.get(i).copied().unwrap_or(0);
                }
                Some(Err(e)) => {
                    r.evaluated = true;
                    r.error = Some(e.clone());
                    r.cost = costs.get(i).copied().unwrap_or(0);
                }
                None => {}
            }
            r
        })
        .collect()
}
