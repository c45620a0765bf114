//! A compiled set of manifests: loaded, defaulted, API-validated and compiled once, then
//! evaluated against any number of requests (what an editor extension keeps between keystrokes).

use super::compile::{CelCompiler, CompiledPolicy};
use super::manifests::{load_manifests, Manifests};
use super::request::AdmissionRequest;
use super::typechecking::{check_policy, PolicyTypeCheck, SchemaSources};
use crate::cel::value::Value;
use crate::diagnostic::Diagnostic;
use crate::environment::{EnvironmentMode, KubeVersion};
use crate::library::authz::{
    authorizer_value, request_resource_value, Rbac, RequestResource, UserInfo,
};
use std::rc::Rc;

/// Manifests ready to evaluate.
pub struct PolicySet {
    /// The manifest text every manifest diagnostic's span indexes.
    pub text: String,
    pub manifests: Manifests,
    pub version: KubeVersion,
    /// The StoredExpressions compiler evaluation uses.
    pub compiler: CelCompiler,
    /// `compiled[i]` belongs to `manifests.policies[i]`.
    pub compiled: Vec<CompiledPolicy>,
    /// Loading, API validation and compile problems (request-independent).
    pub diagnostics: Vec<Diagnostic>,
    /// The RBAC objects supplied with the manifests, for the offline authorizer; `None` when
    /// there are none (every check is then a NoOpinion decision).
    pub rbac: Option<Rc<Rbac>>,
    /// `type_checks[i]` is the type checking of `manifests.policies[i]` (its status warnings).
    pub type_checks: Vec<PolicyTypeCheck>,
}

impl PolicySet {
    pub fn new(text: &str, version: KubeVersion) -> PolicySet {
        Self::build(text, version, Some(&serde_json::Map::new()))
    }

    /// Like [`PolicySet::new`], type checking with the input's `schemas`
    /// (`"<apiVersion>/<Kind>"` → OpenAPI v3 schema) before the CRDs and built-in schemas.
    /// `None` skips type checking altogether (tests use it to show that type checking never
    /// changes a decision).
    pub fn build(
        text: &str,
        version: KubeVersion,
        schemas: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> PolicySet {
        let manifests = load_manifests(text);
        let compiler = CelCompiler::new(version, EnvironmentMode::StoredExpressions);
        let compiled: Vec<CompiledPolicy> =
            manifests.policies.iter().map(|p| CompiledPolicy::new(&p.object, &compiler)).collect();
        let mut diagnostics = manifests.diagnostics.clone();
        let mut cel = Vec::new();
        for (p, c) in manifests.policies.iter().zip(&compiled) {
            cel.extend(super::dispatcher::compile_diagnostics(text, &manifests, p, c));
        }
        // API validation compiles new expressions with the NewExpressions environment (spec §7.4).
        // Expressions that fail at evaluation too are reported once, with positions, by `cel`;
        // what remains are the version-gate rejections and the non-CEL rules.
        let validation = CelCompiler::new(version, EnvironmentMode::NewExpressions);
        for d in manifests.validate(&validation) {
            let duplicate = cel.iter().any(|c| c.field == d.field);
            if !duplicate {
                diagnostics.push(d);
            }
        }
        // Type checking against the matched kinds' schemas (warnings; evaluation unaffected).
        let no_schemas = serde_json::Map::new();
        let sources = SchemaSources {
            user: schemas.unwrap_or(&no_schemas),
            crds: &manifests.crds,
            builtin: schemas.and_then(|_| SchemaSources::builtin_for(version)),
        };
        let type_checks: Vec<PolicyTypeCheck> = manifests
            .policies
            .iter()
            .filter(|_| schemas.is_some())
            .map(|p| {
                let prefix = format!("ValidatingAdmissionPolicy/{}: ", p.object.metadata.name);
                let failed = |path: &str| {
                    cel.iter().any(|d| d.field.strip_prefix(prefix.as_str()) == Some(path))
                };
                check_policy(text, &manifests, p, &sources, version, &failed)
            })
            .collect();
        diagnostics.extend(cel);
        for t in &type_checks {
            diagnostics.extend(t.diagnostics.iter().cloned());
        }
        let rbac = if manifests.rbac.is_empty() {
            None
        } else {
            match Rbac::from_objects(&manifests.rbac) {
                Ok(r) => Some(Rc::new(r)),
                Err(e) => {
                    diagnostics.push(Diagnostic::error("rbac-invalid", e));
                    None
                }
            }
        };
        PolicySet {
            text: text.to_string(),
            manifests,
            version,
            compiler,
            compiled,
            diagnostics,
            rbac,
            type_checks,
        }
    }

    /// The `authorizer` and `authorizer.requestResource` values for `request`: the request's
    /// user, answered by the supplied RBAC objects (spec §4.2).
    pub fn authorizer(&self, request: &AdmissionRequest) -> (Value<'static>, Value<'static>) {
        let u = &request.user_info;
        let user = UserInfo {
            name: u.username.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        };
        let resource = RequestResource {
            group: request.request_resource.group.clone(),
            resource: request.request_resource.resource.clone(),
            subresource: request.request_sub_resource.clone(),
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        (
            authorizer_value(self.rbac.clone(), user.clone()),
            request_resource_value(self.rbac.clone(), user, &resource),
        )
    }
}
