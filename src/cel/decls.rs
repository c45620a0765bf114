//! The declaration table: every function (with its overloads), variable and object type an
//! environment knows. The checker resolves against it; the planner maps each overload id to its
//! implementation (see `runtime`). Libraries register into it.
//!
//! Overload ids are cel-go's (`add_int64`, `size_string`, `string_to_int64`, …) so that the
//! declarations and the implementations can be written and cross-checked independently.

use super::types::Type;
use std::collections::HashMap;
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
    pub fn global(id: &str, params: Vec<Type>, result: Type) -> Self {
        OverloadDecl { id: Rc::from(id), member: false, params, result }
    }
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
/// The function and object tables are shared copy-on-write: cloning a table (each expression
/// of a policy compiles against the library declarations plus its own variables) copies two
/// pointers, and only an `add_*` on a shared table copies it.
#[derive(Clone, Debug, Default)]
pub struct Declarations {
    pub functions: Rc<HashMap<String, FunctionDecl>>,
    pub variables: HashMap<String, Type>,
    pub objects: Rc<HashMap<String, ObjectTypeDecl>>,
}

impl Declarations {
    /// Add an overload to `function`, creating the function if needed. A second overload with
    /// the same id replaces the first (libraries may redefine, e.g. lists v0 → v1).
    pub fn add_overload(&mut self, function: &str, overload: OverloadDecl) {
        let f = Rc::make_mut(&mut self.functions)
            .entry(function.to_string())
            .or_insert_with(|| FunctionDecl { name: function.to_string(), overloads: Vec::new() });
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
        Rc::make_mut(&mut self.objects).insert(object.name.clone(), object);
    }

    pub fn function(&self, name: &str) -> Option<&FunctionDecl> {
        self.functions.get(name)
    }

    pub fn variable(&self, name: &str) -> Option<&Type> {
        self.variables.get(name)
    }

    pub fn object(&self, name: &str) -> Option<&ObjectTypeDecl> {
        self.objects.get(name)
    }
}
