//! A compiled set of manifests: loaded, defaulted, API-validated and compiled once, then
//! evaluated against any number of requests (what an editor extension keeps between keystrokes).

use super::compile::{CelCompiler, CompiledPolicy};
use super::manifests::{load_manifests, Manifests};
use super::request::AdmissionRequest;
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
    /// Objects are evaluated as the apiserver stores them (crate::objects); false: as given.
    pub normalize_objects: bool,
    /// What that changed in the param and namespace objects of the manifests.
    pub object_changes: Vec<crate::objects::ObjectChange>,
}

impl PolicySet {
    pub fn new(text: &str, version: KubeVersion) -> PolicySet {
        Self::with_objects(text, version, true)
    }

    /// [`PolicySet::new`]; `normalize_objects` false evaluates every object exactly as given.
    pub fn with_objects(text: &str, version: KubeVersion, normalize_objects: bool) -> PolicySet {
        let mut manifests = load_manifests(text);
        let mut object_changes = Vec::new();
        let mut object_diagnostics = Vec::new();
        if normalize_objects {
            let crds = manifests.crds.clone();
            // A Namespace is both a param candidate and a namespace object: report it once.
            let mut done: Vec<String> = Vec::new();
            let mut run = |v: &mut serde_json::Value, label: String| {
                let n = crate::objects::normalize(v, version, &crds, &label);
                if !done.contains(&label) {
                    object_changes.extend(n.changes);
                    object_diagnostics.extend(n.diagnostics);
                    done.push(label);
                }
            };
            for p in manifests.params.iter_mut() {
                let label = if p.namespace.is_empty() {
                    format!("{} {}", p.gvk.kind, p.name)
                } else {
                    format!("{} {}/{}", p.gvk.kind, p.namespace, p.name)
                };
                run(&mut p.value, label);
            }
            for (name, ns) in manifests.namespaces.iter_mut() {
                run(ns, format!("Namespace {name}"));
            }
        }
        let compiler = CelCompiler::new(version, EnvironmentMode::StoredExpressions);
        let compiled: Vec<CompiledPolicy> =
            manifests.policies.iter().map(|p| CompiledPolicy::new(&p.object, &compiler)).collect();
        let mut diagnostics = manifests.diagnostics.clone();
        diagnostics.extend(object_diagnostics);
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
        diagnostics.extend(cel);
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
            normalize_objects,
            object_changes,
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
