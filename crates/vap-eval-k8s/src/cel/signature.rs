//! Overload declarations as data. A table row is `(function, overload id, signature)`, with the
//! signature in the checker's type notation ([`format_cel_type`](super::checker::format_cel_type)),
//! as the committed overload tables print it: `(int, int) -> int` for a global overload,
//! `string.(string) -> bool` for a member overload (receiver first).
//!
//! Why data: the standard library and the Kubernetes libraries declare ~340 overloads. Written as
//! one builder call each, they were ~35 KB of wasm code that the first check of a page or an
//! editor had to compile before it could run once; as tables they are a few KB of static data read
//! by one small loop.
//!
//! Type names: `dyn null bool int uint double string bytes duration timestamp`, `list(T)`,
//! `map(K, V)`, `optional_type(T)`, `type(T)`; a name of capital letters alone is a type parameter
//! (`A`, `V`); any other name is an object type (`kubernetes.Quantity`, `net.IP`).

use super::decls::{Declarations, OverloadDecl};
use super::types::Type;
use std::rc::Rc;

/// `(function, overload id, signature)`.
pub type Row = (&'static str, &'static str, &'static str);

/// Declare every row, in order (the order of a function's overloads is the order the checker
/// tries them in).
pub fn declare(decls: &mut Declarations, rows: &[Row]) {
    for &(function, id, signature) in rows {
        match parse(signature) {
            Some((member, params, result)) => decls
                .add_overload(function, OverloadDecl { id: Rc::from(id), member, params, result }),
            // Every table is parsed by this module's tests; a bad row never ships.
            None => debug_assert!(false, "{id}: bad signature {signature:?}"),
        }
    }
}

/// `(member, params, result)` of a signature; `None` if it is not in the notation above.
pub fn parse(signature: &str) -> Option<(bool, Vec<Type>, Type)> {
    let mut p = Parser { s: signature, at: 0 };
    let mut params = Vec::new();
    let member = !signature.starts_with('(');
    if member {
        params.push(p.ty()?);
        p.eat(".")?;
    }
    p.eat("(")?;
    if !p.rest().starts_with(')') {
        params.push(p.ty()?);
        while p.eat(", ").is_some() {
            params.push(p.ty()?);
        }
    }
    p.eat(") -> ")?;
    let result = p.ty()?;
    p.rest().is_empty().then_some((member, params, result))
}

/// A type in the notation above (`list(string)`, `kubernetes.UserInfo`); `None` if it is not.
pub fn parse_type(text: &str) -> Option<Type> {
    let mut p = Parser { s: text, at: 0 };
    let t = p.ty()?;
    p.rest().is_empty().then_some(t)
}

struct Parser<'s> {
    s: &'s str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.at..]
    }

    fn eat(&mut self, token: &str) -> Option<()> {
        self.rest().starts_with(token).then(|| self.at += token.len())
    }

    /// A name: letters, digits, `_`, and dots between name characters (so the receiver
    /// `kubernetes.Quantity.(…)` ends before its `.(`).
    fn name(&mut self) -> &str {
        let bytes = self.rest().as_bytes();
        let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let mut n = 0;
        while n < bytes.len()
            && (is_name(bytes[n])
                || (bytes[n] == b'.' && n > 0 && bytes.get(n + 1).is_some_and(|&b| is_name(b))))
        {
            n += 1;
        }
        let name = &self.s[self.at..self.at + n];
        self.at += n;
        name
    }

    fn ty(&mut self) -> Option<Type> {
        let name = self.name();
        let one = |p: &mut Self| -> Option<Type> {
            p.eat("(")?;
            let t = p.ty()?;
            p.eat(")")?;
            Some(t)
        };
        Some(match name {
            "" => return None,
            "dyn" => Type::Dyn,
            "null" => Type::Null,
            "bool" => Type::Bool,
            "int" => Type::Int,
            "uint" => Type::Uint,
            "double" => Type::Double,
            "string" => Type::String,
            "bytes" => Type::Bytes,
            "duration" => Type::Duration,
            "timestamp" => Type::Timestamp,
            "list" => Type::list(one(self)?),
            "optional_type" => Type::optional(one(self)?),
            "type" => Type::type_of(one(self)?),
            "map" => {
                self.eat("(")?;
                let k = self.ty()?;
                self.eat(", ")?;
                let v = self.ty()?;
                self.eat(")")?;
                Type::map(k, v)
            }
            _ if name.bytes().all(|b| b.is_ascii_uppercase()) => Type::param(name),
            _ => Type::object(name),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::checker::format_cel_type;

    /// The signature as the committed tables print it.
    fn print(member: bool, params: &[Type], result: &Type) -> String {
        let ps: Vec<String> = params.iter().map(format_cel_type).collect();
        let args = if member { ps[1..].join(", ") } else { ps.join(", ") };
        let recv = if member { format!("{}.", ps[0]) } else { String::new() };
        format!("{recv}({args}) -> {}", format_cel_type(result))
    }

    #[test]
    fn parses_what_the_checker_prints() {
        for sig in [
            "(int, int) -> int",
            "() -> optional_type(V)",
            "string.() -> int",
            "string.(string, int) -> list(string)",
            "list(A).(A) -> int",
            "(A, map(A, B)) -> bool",
            "(optional_type(map(K, V)), K) -> optional_type(V)",
            "(A) -> type(A)",
            "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
            "net.CIDR.(net.IP) -> bool",
            "(list(optional_type(V))) -> list(V)",
            "dyn.(dyn) -> bool",
            "(null, bytes, uint, double, duration, timestamp) -> bool",
        ] {
            let (member, params, result) = parse(sig).unwrap_or_else(|| panic!("{sig}"));
            assert_eq!(print(member, &params, &result), sig);
        }
        let (_, params, result) = parse("kubernetes.Quantity.(int) -> A").unwrap();
        assert_eq!(params, vec![Type::object("kubernetes.Quantity"), Type::Int]);
        assert_eq!(result, Type::param("A"));
    }

    #[test]
    fn rejects_anything_else() {
        for sig in [
            "",
            "(int, int)",
            "(int,int) -> int",
            "(int) -> ",
            "(int) -> int trailing",
            "list(int.() -> int",
            "map(int) -> int",
            "(int, ) -> int",
            ".(int) -> int",
        ] {
            assert!(parse(sig).is_none(), "{sig:?} parsed");
        }
    }
}
