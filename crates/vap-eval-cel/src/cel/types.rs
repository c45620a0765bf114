//! CEL static types, as the checker sees them.
//!
//! Names print the way cel-go prints them in its error messages
//! (`list(int)`, `map(string, dyn)`, `optional_type(int)`, `null_type`,
//! `google.protobuf.Timestamp`), because those strings are what users search for.

use std::fmt;
use std::rc::Rc;

/// A CEL type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `dyn`: any value; checks are deferred to runtime.
    Dyn,
    /// `null_type`.
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    /// `google.protobuf.Duration`.
    Duration,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `list(T)`.
    List(Rc<Type>),
    /// `map(K, V)`.
    Map(Rc<Type>, Rc<Type>),
    /// `optional_type(T)`.
    Optional(Rc<Type>),
    /// `type(T)`: the type of a type value (`type(int)` is the type of `int`).
    /// `Type(Dyn)` is the type of an unknown type value.
    Type(Rc<Type>),
    /// A type parameter of an overload signature (`A`, `B`, `K`, `V`), only inside declarations
    /// and during overload resolution.
    Param(Rc<str>),
    /// An opaque type with optional type parameters. (The Kubernetes library types —
    /// `kubernetes.Quantity`, `net.IP`, `kubernetes.authorization.Authorizer`, … — are
    /// [`Type::Object`]s without fields, as the apiserver declares them with `cel.ObjectType`.)
    Opaque(Rc<str>, Vec<Type>),
    /// A declared object type whose fields the environment knows
    /// (`kubernetes.AdmissionRequest`, `kubernetes.Namespace`, `kubernetes.variables`, and
    /// object types built from OpenAPI schemas), or a Kubernetes library type (no fields).
    /// Looked up by name in the environment.
    Object(Rc<str>),
    /// The type of an expression that failed to check; absorbs further errors.
    Error,
}

impl Type {
    #[inline(never)]
    pub fn list(elem: Type) -> Type {
        Type::List(Rc::new(elem))
    }
    #[inline(never)]
    pub fn map(key: Type, value: Type) -> Type {
        Type::Map(Rc::new(key), Rc::new(value))
    }
    pub fn optional(inner: Type) -> Type {
        Type::Optional(Rc::new(inner))
    }
    pub fn type_of(t: Type) -> Type {
        Type::Type(Rc::new(t))
    }
    #[inline(never)]
    pub fn param(name: &str) -> Type {
        Type::Param(Rc::from(name))
    }
    pub fn opaque(name: &str) -> Type {
        Type::Opaque(Rc::from(name), Vec::new())
    }
    pub fn object(name: &str) -> Type {
        Type::Object(Rc::from(name))
    }
    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Error)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => f.write_str("dyn"),
            Type::Null => f.write_str("null_type"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Duration => f.write_str("google.protobuf.Duration"),
            Type::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Type::List(e) => write!(f, "list({e})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Optional(t) => write!(f, "optional_type({t})"),
            Type::Type(t) => write!(f, "type({t})"),
            Type::Param(n) => f.write_str(n),
            Type::Opaque(n, params) => {
                f.write_str(n)?;
                if !params.is_empty() {
                    f.write_str("(")?;
                    for (i, p) in params.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{p}")?;
                    }
                    f.write_str(")")?;
                }
                Ok(())
            }
            Type::Object(n) => f.write_str(n),
            Type::Error => f.write_str("*error*"),
        }
    }
}
