//! The declaration table: every function (with its overloads), variable and object type an
//! environment knows. The checker resolves against it; the planner maps each overload id to its
//! implementation (see `runtime`). Libraries register into it.
//!
//! Overload ids are cel-go's (`add_int64`, `size_string`, `string_to_int64`, …) so that the
//! declarations and the implementations can be written and cross-checked independently.

use super::types::Type;
use crate::hash::FastMap;
use std::rc::Rc;

/// One signature of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct OverloadDecl {
    /// cel-go's overload id; unique within an environment.
    pub id: Rc<str>,
    /// Receiver-style (`a.f(b)`): `params[0]` is the receiver type.
    pub member: bool,
    /// Parameter types; may mention `Type::Param` type parameters.
    pub params: Vec<Type>,
    pub result: Type,
}

impl OverloadDecl {
    #[inline(never)]
    pub fn global(id: &str, params: Vec<Type>, result: Type) -> Self {
        OverloadDecl { id: Rc::from(id), member: false, params, result }
    }
    #[inline(never)]
    pub fn member(id: &str, params: Vec<Type>, result: Type) -> Self {
        OverloadDecl { id: Rc::from(id), member: true, params, result }
    }
}

/// A function: its name (`_+_`, `size`, `optional.of`, `startsWith`) and its overloads.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FunctionDecl {
    pub name: String,
    pub overloads: Vec<OverloadDecl>,
}

/// A declared object type: its fields and their types, in declaration order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ObjectTypeDecl {
    pub name: String,
    pub fields: Vec<(String, Type)>,
}

impl ObjectTypeDecl {
    pub fn field(&self, name: &str) -> Option<&Type> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }
}

/// Everything an environment declares.
///
/// A table may sit on a shared, immutable `base` (the standard library and the Kubernetes
/// libraries of one version, built once and cached): lookups fall through to it, and additions
/// only touch this layer, so declaring one expression's variables does not copy the base.
#[derive(Clone, Debug, Default)]
pub struct Declarations {
    /// Declarations this table extends; this layer's entries shadow the base's.
    pub base: Option<Rc<Declarations>>,
    pub functions: FastMap<String, FunctionDecl>,
    pub variables: FastMap<String, Type>,
    pub objects: FastMap<String, ObjectTypeDecl>,
}

impl Declarations {
    /// Add an overload to `function`, creating the function if needed. A second overload with
    /// the same id replaces the first (libraries may redefine, e.g. lists v0 → v1).
    #[inline(never)]
    pub fn add_overload(&mut self, function: &str, overload: OverloadDecl) {
        let inherited = match self.functions.contains_key(function) {
            true => None,
            false => self.base.as_ref().and_then(|b| b.function(function)).cloned(),
        };
        let f = self.functions.entry(function.to_string()).or_insert_with(|| {
            inherited.unwrap_or_else(|| FunctionDecl {
                name: function.to_string(),
                overloads: Vec::new(),
            })
        });
        if let Some(existing) = f.overloads.iter_mut().find(|o| o.id == overload.id) {
            *existing = overload;
        } else {
            f.overloads.push(overload);
        }
    }

    pub fn add_variable(&mut self, name: &str, t: Type) {
        self.variables.insert(name.to_string(), t);
    }

    pub fn add_object(&mut self, object: ObjectTypeDecl) {
        self.objects.insert(object.name.clone(), object);
    }

    /// A table layered on `base`.
    pub fn extending(base: Rc<Declarations>) -> Self {
        Declarations { base: Some(base), ..Default::default() }
    }

    pub fn function(&self, name: &str) -> Option<&FunctionDecl> {
        self.functions.get(name).or_else(|| self.base.as_ref()?.function(name))
    }

    pub fn variable(&self, name: &str) -> Option<&Type> {
        self.variables.get(name).or_else(|| self.base.as_ref()?.variable(name))
    }

    pub fn object(&self, name: &str) -> Option<&ObjectTypeDecl> {
        self.objects.get(name).or_else(|| self.base.as_ref()?.object(name))
    }

    /// The names of every declared function, this layer's and the base's, sorted.
    pub fn function_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.functions.keys().map(String::as_str).collect();
        if let Some(b) = &self.base {
            names.extend(b.function_names());
        }
        crate::sort::sort_by(&mut names, |a, b| a.cmp(b));
        names.dedup();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_fall_through_and_copy_on_extension() {
        let mut base = Declarations::default();
        base.add_overload("f", OverloadDecl::global("f_int", vec![Type::Int], Type::Int));
        base.add_variable("x", Type::Int);
        let base = Rc::new(base);
        let mut top = Declarations::extending(base.clone());
        assert!(top.function("f").is_some() && top.variable("x").is_some());
        top.add_overload("f", OverloadDecl::global("f_string", vec![Type::String], Type::String));
        top.add_overload("g", OverloadDecl::global("g", vec![], Type::Int));
        let ids: Vec<&str> = top.function("f").unwrap().overloads.iter().map(|o| &*o.id).collect();
        assert_eq!(ids, ["f_int", "f_string"]);
        assert_eq!(base.function("f").unwrap().overloads.len(), 1);
        assert_eq!(top.function_names(), ["f", "g"]);
    }
}
