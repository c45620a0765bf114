//! The admission pipeline around CEL, in the order data flows:
//!
//! 1. [`manifests`] — YAML/JSON text → positioned documents ([`yaml`]) → typed, defaulted
//!    objects ([`types`], [`defaults`]); API validation ([`validation`]) with a pluggable
//!    CEL [`validation::ExpressionCompiler`].
//! 2. [`request`] — the admission request, derived from what the user supplied, and the
//!    `request` value CEL sees; [`resources`] knows kinds, resources and scopes.
//! 3. [`matching`] — does a policy / binding select the request, and why not ([`labels`]).
//! 4. [`params`] — which param objects a binding evaluates with.
//! 5. (CEL: parse → check → plan → evaluate — elsewhere)
//! 6. [`decision`] — decisions, messages, routing through validationActions and the
//!    apiserver's output formats.
//!
//! Supporting modules: [`field`] (apimachinery `field.Error` rendering), [`names`] (name
//! validators), [`diagnostics`] (every diagnostic this pipeline emits).
//! Section numbers (§) refer to `shared/spec/vap-semantics.md`.

pub mod compile;
pub mod decision;
pub mod defaults;
pub mod diagnostics;
pub mod dispatcher;
pub mod field;
pub mod labels;
pub mod manifests;
pub mod matching;
pub mod names;
pub mod namespaces;
pub mod params;
pub mod policy_set;
pub mod request;
pub mod resources;
pub mod trace;
pub mod typechecking;
pub mod types;
pub mod validation;
pub mod validator;
pub mod yaml;
