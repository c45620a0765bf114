//! Editor intelligence from the same schemas as type checking: `complete` and `hover` at a
//! position inside a CEL expression — one in the manifests, or a standalone one.
//!
//! Completion parses the expression with the word at the cursor replaced by a placeholder
//! identifier (or, when that does not parse, the text up to the cursor with its brackets
//! closed), checks it against the typed environment, and offers what fits where the
//! placeholder landed: after `x.` the fields of `x`'s type, the keys `x` has in the supplied
//! object, the methods and macros that accept it; elsewhere the variables in scope, the global
//! functions and macros. Hover reports the checked type of the smallest sub-expression at the
//! position and, for a field, its schema description. Rules: docs/typechecking-semantics.md §6.

use crate::admission::compile::CelCompiler;
use crate::admission::manifests::load_manifests;
use crate::admission::typechecking::{typed_envs, with_types, SchemaSources};
use crate::api::{
    standalone_object_types, utf16_position, Document, EvaluateInput, ExpressionOptions,
};
use crate::cel::ast::{Ast, Expr, ExprKind, Literal};
use crate::cel::checker::{self, format_cel_type, CheckOptions, Checked, Reference};
use crate::cel::decls::Declarations;
use crate::cel::parser::{self, ParseOptions};
use crate::cel::types::Type;
use crate::environment::{
    base_declarations, declare_admission_variables, EnvironmentMode, ExpressionKind, KubeVersion,
    VariableScope,
};
use crate::schema::{self, DeclTypes};
use serde::Serialize;
use serde_json::{Map, Value as Json};

/// Where the position of `complete` and `hover` is: in the manifests of an `evaluate` input
/// (inside one of its policies' expressions; `object` gives map keys, `schemas` and CRDs type
/// it), or in one standalone expression with `evaluateExpression`'s variables and options
/// (`kind`, `objectKind`, `objectSchema`, `schemas`; `variables.object` gives map keys).
pub enum Source<'a> {
    Manifests(&'a EvaluateInput),
    Expression {
        expression: &'a str,
        variables: &'a Map<String, Json>,
        options: &'a ExpressionOptions,
    },
}

/// One completion.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct CompletionItem {
    pub label: String,
    /// `variable`, `field`, `key`, `method`, `function` or `macro`.
    pub kind: &'static str,
    /// The field's CEL type, or the function's signatures (one per line).
    pub detail: String,
    /// The field's schema description; empty when unknown.
    pub documentation: String,
}

/// Output of `complete`: the items, and the range (UTF-16 offsets in the text the position
/// indexes) they replace — the word at the position.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct CompletionResult {
    pub from: u32,
    pub to: u32,
    pub items: Vec<CompletionItem>,
}

/// Output of `hover`; `type` is absent when the position is not inside a checked expression.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct HoverResult {
    /// The checked CEL type of the sub-expression (`int`, `list(Deployment.spec.template…)`).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// The field's schema description, or the called function's signatures; may be empty.
    pub documentation: String,
    /// The sub-expression's range (UTF-16 offsets in the text the position indexes).
    pub from: u32,
    pub to: u32,
}

/// An expression located for the editor, with everything to check it.
struct Located {
    expression: String,
    /// Byte offset of the position inside `expression`.
    cursor: usize,
    /// Maps an expression byte offset to a UTF-16 offset in the outer text.
    outer: Box<dyn Fn(usize) -> u32>,
    decls: Declarations,
    types: Vec<DeclTypes>,
    version: KubeVersion,
    /// The object whose keys are offered.
    object: Option<Json>,
}

const PLACEHOLDER: &str = "__vap_eval_complete__";

fn version_of(v: Option<&str>) -> KubeVersion {
    v.and_then(|v| KubeVersion::parse(v).ok()).unwrap_or_default()
}

fn expression_kind(s: Option<&str>) -> ExpressionKind {
    match s {
        Some("messageExpression") => ExpressionKind::MessageExpression,
        Some("matchCondition") => ExpressionKind::MatchCondition,
        Some("auditAnnotation") => ExpressionKind::AuditAnnotation,
        Some("variable") => ExpressionKind::Variable,
        _ => ExpressionKind::Validation,
    }
}

/// The byte offset of UTF-16 offset `pos` in `text` (clamped to the text).
fn byte_of_utf16(text: &str, pos: u32) -> usize {
    let mut units = 0u32;
    for (i, c) in text.char_indices() {
        if units >= pos {
            return i;
        }
        units += c.len_utf16() as u32;
    }
    text.len()
}

fn locate(source: &Source<'_>, position: u32) -> Option<Located> {
    let (version_text, object_doc) = match source {
        Source::Manifests(i) => (i.kubernetes_version.as_deref(), i.object.clone()),
        Source::Expression { variables, options, .. } => (
            options.kubernetes_version.as_deref(),
            variables.get("object").map(|v| match v {
                Json::String(t) => Document::Text(t.clone()),
                v => Document::Object(v.clone()),
            }),
        ),
    };
    let version = version_of(version_text);
    let compiler = CelCompiler::new(version, EnvironmentMode::StoredExpressions);
    let object = object_doc.and_then(|d| d.parse("object").ok().flatten());
    let input = match source {
        Source::Manifests(input) => *input,
        Source::Expression { expression, variables, options } => {
            let kind = expression_kind(options.kind.as_deref());
            let types = standalone_object_types(
                version,
                options.object_kind.as_deref(),
                options.object_schema.as_ref(),
                options.schemas.as_ref(),
            );
            let layer = with_types(
                base_declarations(compiler.features()),
                &types.iter().collect::<Vec<_>>(),
            );
            let mut decls = Declarations::extending(layer);
            let scope = VariableScope {
                has_params: true,
                object_type: types.as_ref().and_then(|t| t.root.clone()),
                ..VariableScope::default()
            };
            declare_admission_variables(&mut decls, kind, &scope);
            for name in variables.keys() {
                if decls.variable(name).is_none() {
                    decls.add_variable(name, Type::Dyn);
                }
            }
            let text = expression.to_string();
            return Some(Located {
                cursor: byte_of_utf16(expression, position),
                expression: expression.to_string(),
                outer: Box::new(move |b| utf16_position(&text, b as u32).0),
                decls,
                types: types.into_iter().collect(),
                version,
                object,
            });
        }
    };
    let user = crate::api::schemas_map(input.schemas.as_ref(), &mut Vec::new());
    let user = &user;
    let text = input.manifests.to_text();
    let cursor = byte_of_utf16(&text, position);
    let manifests = load_manifests(&text);
    let catalog = manifests.catalog();
    let sources =
        SchemaSources { user, crds: &manifests.crds, builtin: SchemaSources::builtin_for(version) };
    for policy in &manifests.policies {
        let spec = &policy.object.spec;
        let mut exprs: Vec<(String, &str, ExpressionKind)> = Vec::new();
        for (i, v) in spec.variables.iter().enumerate() {
            exprs.push((
                format!("spec.variables[{i}].expression"),
                &v.expression,
                ExpressionKind::Variable,
            ));
        }
        for (i, m) in spec.match_conditions.iter().enumerate() {
            exprs.push((
                format!("spec.matchConditions[{i}].expression"),
                &m.expression,
                ExpressionKind::MatchCondition,
            ));
        }
        for (i, v) in spec.validations.iter().enumerate() {
            exprs.push((
                format!("spec.validations[{i}].expression"),
                &v.expression,
                ExpressionKind::Validation,
            ));
            exprs.push((
                format!("spec.validations[{i}].messageExpression"),
                &v.message_expression,
                ExpressionKind::MessageExpression,
            ));
        }
        for (i, a) in spec.audit_annotations.iter().enumerate() {
            exprs.push((
                format!("spec.auditAnnotations[{i}].valueExpression"),
                &a.value_expression,
                ExpressionKind::AuditAnnotation,
            ));
        }
        for (index, (path, expression, kind)) in exprs.iter().enumerate() {
            let Some((_, pos)) = manifests.locate(&policy.source, path) else { continue };
            if cursor < pos.span.start as usize || cursor > pos.span.end as usize {
                continue;
            }
            // The expression offset whose character sits at (or last before) the cursor.
            let mut at = None;
            for (i, b) in pos.locate_all(&text, expression) {
                if b > cursor {
                    break;
                }
                at = Some(i);
            }
            let Some(at) = at else { continue };
            // An empty or trailing position: after the last character.
            let at = if at + 1 >= expression.len() && cursor > pos.span.start as usize {
                let last = pos.locate(&text, expression, at).unwrap_or(0);
                if cursor > last {
                    expression
                        .len()
                        .min(at + expression[at..].chars().next().map_or(0, char::len_utf8))
                } else {
                    at
                }
            } else {
                at
            };
            let envs = typed_envs(&policy.object, &catalog, &sources, &compiler);
            let env = envs.first();
            // Variables declared before this expression, typed in order.
            let has_params = spec.param_kind.is_some();
            let mut scope = match env {
                Some(e) => VariableScope { has_params: e.scope.has_params, ..e.scope.clone() },
                None => {
                    VariableScope { has_params, variables: Some(Vec::new()), ..Default::default() }
                }
            };
            let base = match env {
                Some(e) => e.decls.clone(),
                None => base_declarations(compiler.features()),
            };
            let var_count =
                if *kind == ExpressionKind::Variable { index } else { spec.variables.len() };
            for v in spec.variables.iter().take(var_count) {
                let mut d = Declarations::extending(base.clone());
                declare_admission_variables(&mut d, ExpressionKind::Variable, &scope);
                let c = compiler.compile_in(
                    &v.expression,
                    ExpressionKind::Variable,
                    &d,
                    checker::ExpectedResult::Any,
                );
                let t = if c.error.is_some() { Type::Dyn } else { c.output_type };
                if let Some(vars) = scope.variables.as_mut() {
                    vars.retain(|(n, _)| n != &v.name);
                    vars.push((v.name.clone(), t));
                }
            }
            let mut decls = Declarations::extending(base);
            declare_admission_variables(&mut decls, *kind, &scope);
            let types: Vec<DeclTypes> = env
                .map(|e| e.types.iter().chain(e.params.iter()).cloned().collect())
                .unwrap_or_default();
            let text2 = text.clone();
            let expr_owned = expression.to_string();
            let node = pos;
            let outer = move |b: usize| {
                let t = node.locate(&text2, &expr_owned, b).unwrap_or(node.span.end as usize);
                utf16_position(&text2, t as u32).0
            };
            return Some(Located {
                expression: expression.to_string(),
                cursor: at,
                outer: Box::new(outer),
                decls,
                types,
                version,
                object,
            });
        }
    }
    None
}

fn parse(source: &str) -> Option<Ast> {
    parser::parse(source, ParseOptions { backtick_identifiers: true }).ok()
}

fn check(ast: &Ast, decls: &Declarations) -> Checked {
    checker::check(ast, decls, &CheckOptions::default())
}

/// The text with its unclosed brackets closed (outside string literals).
fn close_brackets(s: &str) -> String {
    let mut stack = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' => stack.push(')'),
            '[' => stack.push(']'),
            '{' => stack.push('}'),
            ')' | ']' | '}' => {
                stack.pop();
            }
            _ => {}
        }
    }
    let mut out = s.to_string();
    if let Some(q) = quote {
        out.push(q);
    }
    out.extend(stack.iter().rev());
    out
}

fn find<'a>(e: &'a Expr, pred: &dyn Fn(&Expr) -> bool, path: &mut Vec<&'a Expr>) -> bool {
    path.push(e);
    if pred(e) {
        return true;
    }
    for c in e.children() {
        if find(c, pred, path) {
            return true;
        }
    }
    path.pop();
    false
}

fn type_at(checked: &Checked, e: &Expr) -> Type {
    checked.types.get(e.id as usize).cloned().unwrap_or(Type::Dyn)
}

/// The `(root variable, keys)` of a select/index chain (`object.metadata.labels`).
fn json_path(e: &Expr) -> Option<(String, Vec<String>)> {
    match &e.kind {
        ExprKind::Ident(n) => Some((n.clone(), Vec::new())),
        ExprKind::Select { operand, field, test: false } => {
            let (root, mut keys) = json_path(operand)?;
            keys.push(field.clone());
            Some((root, keys))
        }
        ExprKind::Call { function, target: None, args } if function == "_[_]" => {
            let (root, mut keys) = json_path(args.first()?)?;
            match &args.get(1)?.kind {
                ExprKind::Literal(Literal::String(s)) => keys.push(s.to_string()),
                _ => return None,
            }
            Some((root, keys))
        }
        _ => None,
    }
}

/// Whether a receiver of type `t` may be passed where `param` is declared (loosely: type
/// parameters and `dyn` accept anything; otherwise the same type constructor).
fn may_apply(param: &Type, t: &Type) -> bool {
    match (param, t) {
        (Type::Param(_) | Type::Dyn, _) | (_, Type::Dyn) => true,
        (Type::List(_), Type::List(_)) | (Type::Map(..), Type::Map(..)) => true,
        (Type::Optional(_), Type::Optional(_)) => true,
        (Type::Opaque(a, _), Type::Opaque(b, _)) => a == b,
        (a, b) => a == b,
    }
}

fn signature(name: &str, o: &crate::cel::decls::OverloadDecl) -> String {
    let fmt = |ts: &[Type]| ts.iter().map(format_cel_type).collect::<Vec<_>>().join(", ");
    match (o.member, o.params.split_first()) {
        (true, Some((recv, rest))) => {
            format!(
                "{}.{name}({}) -> {}",
                format_cel_type(recv),
                fmt(rest),
                format_cel_type(&o.result)
            )
        }
        _ => format!("{name}({}) -> {}", fmt(&o.params), format_cel_type(&o.result)),
    }
}

fn is_operator(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('@') || name.starts_with('!') || name.starts_with('-')
}

const LIST_MACROS: [(&str, &str); 5] = [
    ("all", "all(x, predicate) -> bool"),
    ("exists", "exists(x, predicate) -> bool"),
    ("exists_one", "exists_one(x, predicate) -> bool"),
    ("map", "map(x, transform) / map(x, filter, transform) -> list"),
    ("filter", "filter(x, predicate) -> list"),
];

/// The description of field `field` of object type `type_name`, from the schema itself or the
/// built-in descriptions of `version` (or the newest older version that has them).
fn field_doc(types: &[DeclTypes], type_name: &str, field: &str, version: KubeVersion) -> String {
    for t in types {
        if let Some(d) = t.doc(type_name, field) {
            return d.to_string();
        }
        let Some((def, path)) = t.origin(type_name) else { continue };
        if def.is_empty() {
            continue;
        }
        let prop = if path.is_empty() { field.to_string() } else { format!("{path}.{field}") };
        let own = version.to_string();
        let minor: u32 = own.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(0);
        for m in (30..=minor).rev() {
            if let Some(d) = schema::description(&format!("1.{m}"), def, &prop) {
                return d;
            }
        }
    }
    String::new()
}

/// Inside the string of an index (`object.metadata.labels['app.kubernetes.io/|`): the keys the
/// supplied object has there, any spelling (a `.` selection only offers identifier keys).
fn complete_index_key(loc: &Located, cursor: usize) -> Option<CompletionResult> {
    let src = &loc.expression;
    let before = &src[..cursor];
    let quote_at = before.rfind(['\'', '"'])?;
    let quote = before[quote_at..].chars().next()?;
    let head = before[..quote_at].trim_end();
    let chain = head.strip_suffix('[')?;
    let typed = &before[quote_at + 1..];
    if typed.contains(quote) {
        return None;
    }
    // The select chain before `[`: identifiers and dots, from the left of `chain`'s tail.
    let tail_start = chain
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        .last()
        .map_or(chain.len(), |(i, _)| i);
    let mut parts = chain[tail_start..].split('.');
    let root = parts.next()?;
    if root != "object" && root != "oldObject" {
        return None;
    }
    let mut v = loc.object.as_ref()?;
    for k in parts {
        v = v.get(k)?;
    }
    let end = src[cursor..].find(quote).map_or(cursor, |i| cursor + i);
    let mut out = CompletionResult {
        from: (loc.outer)(quote_at + 1),
        to: (loc.outer)(end),
        items: Vec::new(),
    };
    for (k, val) in v.as_object()? {
        if k.starts_with(typed) {
            let detail = if val.is_string() { "string" } else { "value" };
            out.items.push(CompletionItem {
                label: k.clone(),
                kind: "key",
                detail: detail.to_string(),
                documentation: String::new(),
            });
        }
    }
    Some(out)
}

/// Completions at UTF-16 offset `position` (see the module doc). Never fails: an input that
/// does not locate an expression gives no items.
pub fn complete(source: &Source<'_>, position: u32) -> CompletionResult {
    let Some(loc) = locate(source, position) else {
        return CompletionResult { from: position, to: position, items: Vec::new() };
    };
    let src = &loc.expression;
    let cursor = loc.cursor.min(src.len());
    if let Some(r) = complete_index_key(&loc, cursor) {
        return r;
    }
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let start = src[..cursor]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(cursor, |(i, _)| i);
    let end = src[cursor..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(src.len(), |(i, _)| cursor + i);
    let prefix = &src[start..cursor];
    let mut out =
        CompletionResult { from: (loc.outer)(start), to: (loc.outer)(end), items: Vec::new() };
    let candidates = [
        format!("{}{PLACEHOLDER}{}", &src[..start], &src[end..]),
        close_brackets(&format!("{}{PLACEHOLDER}", &src[..start])),
    ];
    let Some(ast) = candidates.iter().find_map(|c| parse(c)) else { return out };
    let checked = check(&ast, &loc.decls);
    let mut path = Vec::new();
    let found = find(
        &ast.root,
        &|e| match &e.kind {
            ExprKind::Ident(n) => n == PLACEHOLDER,
            ExprKind::Select { field, .. } => field == PLACEHOLDER,
            _ => false,
        },
        &mut path,
    );
    if !found {
        return out;
    }
    let Some(node) = path.last() else { return out };
    let mut items: Vec<CompletionItem> = Vec::new();
    // One item per label, the first pushed winning: a schema field (typed, described) before
    // the same key of the supplied object, a field or key before a like-named method.
    let mut push = |label: String, kind: &'static str, detail: String, documentation: String| {
        if label.to_ascii_lowercase().starts_with(&prefix.to_ascii_lowercase())
            && !items.iter().any(|i| i.label == label)
        {
            items.push(CompletionItem { label, kind, detail, documentation });
        }
    };
    match &node.kind {
        ExprKind::Select { operand, .. } => {
            let t = type_at(&checked, operand);
            let t = match t {
                Type::Optional(inner) => (*inner).clone(),
                t => t,
            };
            if let Type::Object(name) = &t {
                if let Some(o) = loc.decls.object(name) {
                    for (f, ft) in &o.fields {
                        push(
                            f.clone(),
                            "field",
                            format_cel_type(ft),
                            field_doc(&loc.types, name, f, loc.version),
                        );
                    }
                }
            }
            // Keys the supplied object has at this path.
            if let (Some(obj), Some((root, keys))) = (&loc.object, json_path(operand)) {
                if root == "object" || root == "oldObject" {
                    let mut v = obj;
                    let mut ok = true;
                    for k in &keys {
                        match v.get(k) {
                            Some(next) => v = next,
                            None => {
                                ok = false;
                                break;
                            }
                        }
                    }
                    if let (true, Some(m)) = (ok, v.as_object()) {
                        for (k, val) in m {
                            if crate::schema::escape(k).as_deref() == Some(k.as_str()) {
                                let detail = match val {
                                    Json::Null => "null",
                                    Json::Bool(_) => "bool",
                                    Json::Number(_) => "number",
                                    Json::String(_) => "string",
                                    Json::Array(_) => "list",
                                    Json::Object(_) => "map",
                                };
                                push(k.clone(), "key", detail.to_string(), String::new());
                            }
                        }
                    }
                }
            }
            if matches!(t, Type::List(_) | Type::Map(..) | Type::Dyn) {
                for (m, sig) in LIST_MACROS {
                    push(m.to_string(), "macro", sig.to_string(), String::new());
                }
            }
            for name in loc.decls.function_names() {
                if is_operator(name) {
                    continue;
                }
                let Some(f) = loc.decls.function(name) else { continue };
                let sigs: Vec<String> = f
                    .overloads
                    .iter()
                    .filter(|o| o.member && o.params.first().is_some_and(|p| may_apply(p, &t)))
                    .map(|o| signature(name, o))
                    .collect();
                if !sigs.is_empty() {
                    push(name.to_string(), "method", sigs.join("\n"), String::new());
                }
            }
        }
        _ => {
            // Comprehension variables in scope, then the declared variables.
            for e in path.iter() {
                if let ExprKind::Comprehension(c) = &e.kind {
                    if !c.iter_var.starts_with('@') {
                        let t = match type_at(&checked, &c.iter_range) {
                            Type::List(e) => (*e).clone(),
                            Type::Map(k, _) => (*k).clone(),
                            _ => Type::Dyn,
                        };
                        push(c.iter_var.clone(), "variable", format_cel_type(&t), String::new());
                    }
                }
            }
            let mut vars: Vec<(&String, &Type)> = loc.decls.variables.iter().collect();
            vap_eval_cel::sort::sort_by(&mut vars, |a, b| a.0.cmp(b.0));
            for (n, t) in vars {
                if !n.contains('.') {
                    push(n.clone(), "variable", format_cel_type(t), String::new());
                }
            }
            push("has".into(), "macro", "has(x.field) -> bool".into(), String::new());
            for name in loc.decls.function_names() {
                if is_operator(name) {
                    continue;
                }
                let Some(f) = loc.decls.function(name) else { continue };
                let sigs: Vec<String> =
                    f.overloads.iter().filter(|o| !o.member).map(|o| signature(name, o)).collect();
                if !sigs.is_empty() {
                    push(name.to_string(), "function", sigs.join("\n"), String::new());
                }
            }
        }
    }
    out.items = items;
    out
}

/// The checked type (and description) of the sub-expression at UTF-16 offset `position`.
pub fn hover(source: &Source<'_>, position: u32) -> HoverResult {
    let mut out = HoverResult { from: position, to: position, ..Default::default() };
    let Some(loc) = locate(source, position) else { return out };
    let Some(ast) = parse(&loc.expression) else { return out };
    let checked = check(&ast, &loc.decls);
    let cursor = loc.cursor as u32;
    // The smallest node whose span holds the cursor.
    let mut best: Option<&Expr> = None;
    let mut stack = vec![&ast.root];
    while let Some(e) = stack.pop() {
        let (s, en) = (e.span.start, e.span.end);
        let holds = s <= cursor && cursor < en.max(s + 1);
        if holds && best.is_none_or(|b| (en - s) <= (b.span.end - b.span.start)) {
            best = Some(e);
        }
        stack.extend(e.children());
    }
    let Some(e) = best else { return out };
    out.type_name = Some(format_cel_type(&type_at(&checked, e)));
    out.from = (loc.outer)(e.span.start as usize);
    out.to = (loc.outer)(e.span.end as usize);
    match &e.kind {
        ExprKind::Select { operand, field, .. } => {
            if let Type::Object(name) = type_at(&checked, operand) {
                out.documentation = field_doc(&loc.types, &name, field, loc.version);
            }
        }
        ExprKind::Call { function, .. } => {
            if let (Some(Some(Reference::Function { overloads })), Some(f)) =
                (checked.refs.get(e.id as usize), loc.decls.function(function))
            {
                out.documentation = f
                    .overloads
                    .iter()
                    .filter(|o| overloads.contains(&o.id))
                    .map(|o| signature(function, o))
                    .collect::<Vec<_>>()
                    .join("\n");
            }
        }
        _ => {}
    }
    out
}
