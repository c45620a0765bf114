//! Kubernetes CEL extension libraries.
//!
//! One module per apiserver library (`k8s.io/apiserver/pkg/cel/library`); each opens with its
//! reference: CEL signatures, the Kubernetes version that introduced it, and examples. Every
//! fallible function returns `Result<_, String>` whose error text is exactly what the
//! apiserver prints. Each module also declares its CEL functions ([`declare`] gathers them,
//! gated by the Kubernetes version's [`Features`]) with the apiserver's overload ids.
//!
//! | Library | Since | Functions |
//! |---|---|---|
//! | [`url`] | 1.0 | `url isURL getScheme getHost getHostname getPort getEscapedPath getQuery` |
//! | [`regex`] | 1.0 | `find findAll` |
//! | [`lists`] v0 | 1.0 | `isSorted sum max min indexOf lastIndexOf` |
//! | [`lists`] v1 | 1.37 | `includes` |
//! | [`authz`] | 1.27 | `path group serviceAccount resource subresource namespace name check allowed reason errored error` |
//! | [`quantity`] | 1.28 | `quantity isQuantity sign isGreaterThan isLessThan compareTo asApproximateFloat asInteger isInteger add sub` |
//! | [`ip`], [`cidr`] | 1.30 | `ip family ip.isCanonical isUnspecified isLoopback isLinkLocalMulticast isLinkLocalUnicast isGlobalUnicast isIP string cidr containsIP containsCIDR prefixLength masked isCIDR` |
//! | [`format`] | 1.31 | `validate format.named format.<name>` |
//! | [`authz`] selectors | 1.31 | `fieldSelector labelSelector` |
//! | [`semver`] v1 | 1.33 | `semver isSemver major minor patch isGreaterThan isLessThan compareTo` |
//!
//! Not declared: `jsonpatch.escapeKey` (MutatingAdmissionPolicy only). No apiserver up to
//! v0.37.0-beta.0 (the newest source read) has quantity `mul`/`div` or a `portName` format.

pub mod authz;
pub mod cidr;
pub mod format;
pub mod gostr;
pub mod ip;
pub mod lists;
pub mod quantity;
pub mod semver;
pub mod url;

// The RE2 translation lives with the CEL engine (`matches` needs it); so does `bind`.
pub use vap_eval_cel::library::{bind, regex};

use crate::cel::decls::Declarations;
use crate::cel::stdlib::{Overload, Registry};
use crate::environment::Features;
use std::rc::Rc;

/// The CEL type names of the library types, exactly as the apiserver names them (they appear in
/// users' error messages, e.g. `found no matching overload for 'allowed' applied to
/// 'kubernetes.authorization.Authorizer.()'`). All are object types without fields
/// (apiserver `cel.ObjectType`).
pub mod type_name {
    pub const QUANTITY: &str = "kubernetes.Quantity";
    pub const URL: &str = "kubernetes.URL";
    pub const SEMVER: &str = "kubernetes.Semver";
    pub const NAMED_FORMAT: &str = "kubernetes.NamedFormat";
    /// `net.IP` and `net.CIDR` keep their pre-`kubernetes.` names, and are the only library
    /// types usable as type identifiers (`type(x) == net.CIDR`).
    pub const IP: &str = "net.IP";
    pub const CIDR: &str = "net.CIDR";
    pub const AUTHORIZER: &str = "kubernetes.authorization.Authorizer";
    pub const PATH_CHECK: &str = "kubernetes.authorization.PathCheck";
    pub const GROUP_CHECK: &str = "kubernetes.authorization.GroupCheck";
    pub const RESOURCE_CHECK: &str = "kubernetes.authorization.ResourceCheck";
    pub const DECISION: &str = "kubernetes.authorization.Decision";
}

/// Declare the Kubernetes libraries `features` enables, in the apiserver base environment's
/// order (`environment/base.go`).
pub fn declare(decls: &mut Declarations, features: &Features) {
    url::declare(decls);
    regex::declare(decls);
    lists::declare(decls, features.k8s_lists);
    if features.authz {
        authz::declare(decls);
    }
    if features.quantity {
        quantity::declare(decls);
    }
    if features.ip_cidr {
        ip::declare(decls);
        cidr::declare(decls);
    }
    if features.format {
        format::declare(decls);
    }
    if features.authz_selectors {
        authz::declare_selectors(decls);
    }
    if features.semver {
        semver::declare(decls);
    }
}

/// Every library's implementations (all versions: gating happens when checking), in
/// registration order.
pub const OVERLOADS: [&[Overload]; 10] = [
    url::OVERLOADS,
    regex::OVERLOADS,
    lists::OVERLOADS,
    authz::OVERLOADS,
    quantity::OVERLOADS,
    ip::OVERLOADS,
    cidr::OVERLOADS,
    format::OVERLOADS,
    format::CONSTRUCTORS,
    semver::OVERLOADS,
];

/// Register every library's implementations (all versions: gating happens when checking).
pub fn register(r: &mut Registry) {
    for table in OVERLOADS {
        r.add_all(table);
    }
}

/// The standard library, the cel-go extensions and the Kubernetes libraries, built once per
/// thread and shared (plans keep their own references to the overloads they use).
pub fn registry() -> Rc<Registry> {
    thread_local! {
        // Kept for the thread: not in the per-call arena.
        static REGISTRY: Rc<Registry> = vap_eval_cel::arena_switch::outside(|| {
            let mut r = Registry::standard();
            register(&mut r);
            Rc::new(r)
        });
    }
    REGISTRY.with(Rc::clone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::stdlib_decls::assert_committed_table;
    use crate::environment::{EnvironmentMode, KubeVersion};

    /// Every Kubernetes library overload of the newest version (all libraries, latest versions),
    /// pinned like the standard library's (`cel/stdlib_overload_ids.txt`): id and signature in
    /// the checker's notation.
    #[test]
    fn library_overloads_match_committed_table() {
        let mut d = Declarations::default();
        declare(
            &mut d,
            &Features::for_version(KubeVersion::NEWEST, EnvironmentMode::StoredExpressions),
        );
        assert_committed_table(&d, "src/library/overload_ids.txt");
    }
}
