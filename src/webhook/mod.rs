//! Admission webhooks (ValidatingWebhookConfiguration, MutatingWebhookConfiguration): which
//! webhooks kube-apiserver would call for a request, why not, and the AdmissionReview each
//! would receive. A sibling of the policy pipeline over the same shared layers (manifests,
//! request, resource catalogue, selector and rule matching, CEL compilation), as the apiserver
//! splits `webhook/predicates`, `webhook/generic` and the two dispatchers. Contract:
//! `docs/webhook-semantics.md` (sections cited as W§).
//!
//! 1. [`types`] — decoding, v1beta1 conversion and the two versions' defaults.
//! 2. [`validation`] — API validation as on create.
//! 3. [`dispatcher`] — predicates, matchConditions, dry-run refusal, the AdmissionReview.

pub mod diagnostics;
pub mod dispatcher;
pub mod types;
pub mod validation;

use crate::admission::compile::CelCompiler;
use crate::admission::dispatcher::cel_compile_diagnostics;
use crate::admission::manifests::Manifests;
use crate::diagnostic::{Diagnostic, SourceRef};
use crate::environment::{ExpressionKind, VariableScope};
use dispatcher::CompiledConfiguration;

/// The webhook configurations of a manifest set: loaded, defaulted, validated and compiled.
#[derive(Default)]
pub struct WebhookSet {
    /// Mutating configurations first, each kind sorted by name (W§2).
    pub configurations: Vec<CompiledConfiguration>,
    /// Loading, API validation and compile problems.
    pub diagnostics: Vec<Diagnostic>,
}

impl WebhookSet {
    /// Read the configurations of `manifests` (whose text is `text`). `runtime` compiles
    /// matchConditions for evaluation (StoredExpressions); `validation` for API validation
    /// (NewExpressions).
    pub fn new(
        text: &str,
        manifests: &Manifests,
        runtime: &CelCompiler,
        validation: &CelCompiler,
    ) -> WebhookSet {
        // Most manifests hold no webhook configuration: then nothing below runs (and, in the
        // wasm, is not compiled by the engine on a page's first evaluation).
        if !types::mentions_configurations(manifests) {
            return WebhookSet::default();
        }
        Self::load(text, manifests, runtime, validation)
    }

    #[inline(never)]
    fn load(
        text: &str,
        manifests: &Manifests,
        runtime: &CelCompiler,
        validation: &CelCompiler,
    ) -> WebhookSet {
        let (configs, mut diags) = types::load_configurations(manifests);
        let mut configurations = Vec::with_capacity(configs.len());
        for c in configs {
            let object = format!("{}/{}", c.kind.configuration_kind(), c.name);
            let mut cel = Vec::new();
            let mut conditions = Vec::with_capacity(c.webhooks.len());
            for (w, h) in c.webhooks.iter().enumerate() {
                let mut compiled = Vec::with_capacity(h.match_conditions.len());
                for (i, mc) in h.match_conditions.iter().enumerate() {
                    let scope = VariableScope::default();
                    let k = runtime.compile(&mc.expression, ExpressionKind::MatchCondition, &scope);
                    let path = format!("webhooks[{w}].matchConditions[{i}].expression");
                    cel.extend(cel_compile_diagnostics(
                        text, manifests, &c.source, &object, &path, &k,
                    ));
                    compiled.push(k);
                }
                conditions.push(compiled);
            }
            for e in validation::validate_configuration(&c, validation) {
                let field = format!("{object}: {}", e.field);
                // A compile error already reported with its position is not repeated.
                if cel.iter().any(|d: &Diagnostic| d.field == field) {
                    continue;
                }
                let mut d = crate::admission::diagnostics::api_validation(&e);
                d.field = field;
                if let Some((document, pos)) = manifests.locate(&c.source, e.field.as_str()) {
                    d = d.with_span(pos.span, SourceRef::Manifest { document });
                }
                diags.push(d);
            }
            diags.extend(cel);
            configurations.push(CompiledConfiguration { configuration: c, conditions });
        }
        WebhookSet { configurations, diagnostics: diags }
    }
}
