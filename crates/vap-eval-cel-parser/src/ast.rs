//! The checked-and-evaluated form of a CEL expression, as [`parser`](crate::parser) builds it:
//! cel-go's node shapes (macros expanded), with dense ids, cel-go positions and full source
//! spans.
//!
//! Every node carries two locations:
//! - `pos`: the byte offset cel-go reports for the node (an operator's token, a call's `(`,
//!   a select's `.`). Error messages print this as `line:column`, as cel-go does.
//! - `span`: the half-open byte range of the whole sub-expression, for underlining.
//!
//! Both index [`Ast::source`], the expression text exactly as given to the parser.

use crate::Span;
use std::rc::Rc;

/// Dense node id: `0..Ast::node_count`. Side tables (types, overload references) are `Vec`s
/// indexed by it.
pub type NodeId = u32;

/// A parsed expression.
#[derive(Debug, Clone)]
pub struct Ast {
    pub root: Expr,
    /// The expression text the positions index.
    pub source: Rc<str>,
    /// Number of nodes; every `Expr::id` (and `MapEntry::id`) is below it.
    pub node_count: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub id: NodeId,
    /// Byte offset cel-go reports for this node.
    pub pos: u32,
    /// Byte range of the whole sub-expression.
    pub span: Span,
    pub kind: ExprKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// A (possibly qualified, for namespaced functions like `optional.none`) identifier.
    Ident(String),
    /// `operand.field`, or `has(operand.field)` when `test` is true.
    Select {
        operand: Box<Expr>,
        field: String,
        test: bool,
    },
    /// A function or operator call. Operators use cel-go's names (`_+_`, `_[_]`, `!_`, `-_`,
    /// `_?_:_`, `_&&_`, `_||_`, `@in`, `_?._`, `_[?_]`, `@not_strictly_false`); member calls
    /// (`a.f(b)`) have a `target`.
    Call {
        function: String,
        target: Option<Box<Expr>>,
        args: Vec<Expr>,
    },
    /// `[a, ?b]`: indices in `optional_indices` are optional elements.
    List {
        elements: Vec<Expr>,
        optional_indices: Vec<usize>,
    },
    Map {
        entries: Vec<MapEntry>,
    },
    /// `Type{field: value}` message construction (no protobuf types in Kubernetes; the checker
    /// reports it).
    Struct {
        type_name: String,
        fields: Vec<StructField>,
    },
    Comprehension(Box<Comprehension>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct MapEntry {
    pub id: NodeId,
    pub pos: u32,
    pub key: Expr,
    pub value: Expr,
    /// `{?key: optionalValue}`.
    pub optional: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StructField {
    pub id: NodeId,
    pub pos: u32,
    pub field: String,
    pub value: Expr,
    pub optional: bool,
}

/// A fold over a list or map, produced by macro expansion (cel-go's comprehension shape):
/// ```text
/// accu = accu_init
/// for (iter_var[, iter_var2]) in iter_range { if !loop_cond { break }; accu = loop_step }
/// return result
/// ```
/// For lists `iter_var` is the element, or the index when `iter_var2` (the element) is set;
/// for maps it is the key, and `iter_var2` the value.
#[derive(Debug, Clone, PartialEq)]
pub struct Comprehension {
    pub iter_range: Expr,
    pub iter_var: String,
    pub iter_var2: Option<String>,
    pub accu_var: String,
    pub accu_init: Expr,
    pub loop_cond: Expr,
    pub loop_step: Expr,
    pub result: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Rc<str>),
    Bytes(Rc<[u8]>),
}

impl Expr {
    /// Children in evaluation order (target before arguments).
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Literal(_) | ExprKind::Ident(_) => vec![],
            ExprKind::Select { operand, .. } => vec![operand],
            ExprKind::Call { target, args, .. } => {
                target.iter().map(|t| &**t).chain(args).collect()
            }
            ExprKind::List { elements, .. } => elements.iter().collect(),
            ExprKind::Map { entries } => entries.iter().flat_map(|e| [&e.key, &e.value]).collect(),
            ExprKind::Struct { fields, .. } => fields.iter().map(|f| &f.value).collect(),
            ExprKind::Comprehension(c) => {
                vec![&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result]
            }
        }
    }
}
