//! Declarations of the CEL standard library and of the cel-go extension libraries Kubernetes
//! enables, with cel-go's function names, overload ids, signatures and declaration order (which
//! decides the order of candidate overloads in a [`Reference`](super::checker::Reference)).
//!
//! Sources: cel-go `common/stdlib/standard.go`, `common/overloads/overloads.go`, `ext/strings.go`,
//! `ext/lists.go`, `ext/sets.go`, `ext/comprehensions.go`, `cel/library.go` (optional types).
//! The full list of ids is pinned in `stdlib_overload_ids.txt` next to this file (rewritten by the
//! test with `UPDATE_EXPECT=1`), for cross-checking against the runtime's implementations.
//!
//! Not declared (not in Kubernetes): ext.Math, ext.Encoders, ext.Bindings (`cel.bind`), strings
//! v3+ (`reverse` on strings, v4 `format`), ext.Regex, ext.Protos, cel-go's network library.
//!
//! Notes on the standard library as cel-go declares it:
//! - `contains`, `startsWith`, `endsWith` are member-only; `matches` and `size` are both.
//! - The cross-type comparisons (`less_int64_double`, …) are always declared; the checker
//!   disables them unless `CheckOptions::cross_type_numeric_comparisons`.
//! - `@sortByAssociatedKeys` is a member function (`list.@sortByAssociatedKeys(keys)`).

use super::decls::{Declarations, OverloadDecl};
use super::types::Type;

/// Which extension libraries are installed, at which version (`None`: not installed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LibraryVersions {
    /// cel-go `ext.Strings`: v0 charAt…upperAscii and join; v1 adds `format` and `strings.quote`
    /// (and the format validator); v2 changes `join`'s implementation only; v3 `reverse`.
    pub strings: Option<u32>,
    /// cel-go `ext.Lists`: v0 slice; v1 flatten; v2 sort, sortBy, lists.range, reverse, distinct;
    /// v3 cost support only.
    pub lists: Option<u32>,
    /// cel-go `OptionalTypes`: v0 the type, functions and `optMap`; v1 `optFlatMap`; v2 `first`,
    /// `last`, `optional.unwrap`, `unwrapOpt`.
    pub optional: Option<u32>,
    /// cel-go `ext.Sets`.
    pub sets: bool,
    /// cel-go `ext.TwoVarComprehensions` (`cel.@mapInsert`).
    pub two_var_comprehensions: bool,
}

impl LibraryVersions {
    /// An unversioned library option: every version.
    pub const LATEST: u32 = u32::MAX;

    /// The cel-go libraries of the Kubernetes base environment for a minor version 1.`minor`
    /// (spec §4.1): strings v0 then v2 (1.29), sets (1.29), optional types latest (1.28),
    /// two-variable comprehensions (1.32), lists v3 (1.34).
    pub fn kubernetes(minor: u32) -> Self {
        LibraryVersions {
            strings: Some(if minor >= 29 { 2 } else { 0 }),
            lists: (minor >= 34).then_some(3),
            optional: (minor >= 28).then_some(Self::LATEST),
            sets: minor >= 29,
            two_var_comprehensions: minor >= 32,
        }
    }

    /// Everything this module knows, each library at its latest version.
    pub fn all() -> Self {
        LibraryVersions {
            strings: Some(2),
            lists: Some(Self::LATEST),
            optional: Some(Self::LATEST),
            sets: true,
            two_var_comprehensions: true,
        }
    }
}

struct Builder<'d> {
    decls: &'d mut Declarations,
}

impl Builder<'_> {
    #[inline(never)]
    fn global(&mut self, function: &str, id: &str, params: Vec<Type>, result: Type) {
        self.decls.add_overload(function, OverloadDecl::global(id, params, result));
    }
    #[inline(never)]
    fn member(&mut self, function: &str, id: &str, params: Vec<Type>, result: Type) {
        self.decls.add_overload(function, OverloadDecl::member(id, params, result));
    }
}

/// The comparable element types of `sort` and `@sortByAssociatedKeys`, with cel-go's type names
/// as they appear in the overload ids.
fn comparable_types() -> [(Type, &'static str); 8] {
    [
        (Type::Int, "int"),
        (Type::Uint, "uint"),
        (Type::Double, "double"),
        (Type::Bool, "bool"),
        (Type::Duration, "google.protobuf.Duration"),
        (Type::Timestamp, "google.protobuf.Timestamp"),
        (Type::String, "string"),
        (Type::Bytes, "bytes"),
    ]
}

/// Register the standard library and the extension libraries selected by `v`.
pub fn standard(decls: &mut Declarations, v: &LibraryVersions) {
    let mut b = Builder { decls };
    standard_library(&mut b);
    if let Some(version) = v.strings {
        strings(&mut b, version);
    }
    if let Some(version) = v.lists {
        lists(&mut b, version);
    }
    if let Some(version) = v.optional {
        optional(&mut b, version);
    }
    if v.sets {
        sets(&mut b);
    }
    if v.two_var_comprehensions {
        two_var_comprehensions(&mut b);
    }
}

fn standard_library(b: &mut Builder) {
    use Type::{Bool, Bytes, Double, Duration, Dyn, Int, String, Timestamp, Uint};
    let a = || Type::param("A");
    let list_a = || Type::list(Type::param("A"));
    let map_ab = || Type::map(Type::param("A"), Type::param("B"));

    // Logical operators.
    b.global("_?_:_", "conditional", vec![Bool, a(), a()], a());
    b.global("_&&_", "logical_and", vec![Bool, Bool], Bool);
    b.global("_||_", "logical_or", vec![Bool, Bool], Bool);
    b.global("!_", "logical_not", vec![Bool], Bool);
    b.global("@not_strictly_false", "not_strictly_false", vec![Bool], Bool);

    // Equality.
    b.global("_==_", "equals", vec![a(), a()], Bool);
    b.global("_!=_", "not_equals", vec![a(), a()], Bool);

    // Arithmetic.
    b.global("_+_", "add_bytes", vec![Bytes, Bytes], Bytes);
    b.global("_+_", "add_double", vec![Double, Double], Double);
    b.global("_+_", "add_duration_duration", vec![Duration, Duration], Duration);
    b.global("_+_", "add_duration_timestamp", vec![Duration, Timestamp], Timestamp);
    b.global("_+_", "add_timestamp_duration", vec![Timestamp, Duration], Timestamp);
    b.global("_+_", "add_int64", vec![Int, Int], Int);
    b.global("_+_", "add_list", vec![list_a(), list_a()], list_a());
    b.global("_+_", "add_string", vec![String, String], String);
    b.global("_+_", "add_uint64", vec![Uint, Uint], Uint);
    b.global("_/_", "divide_double", vec![Double, Double], Double);
    b.global("_/_", "divide_int64", vec![Int, Int], Int);
    b.global("_/_", "divide_uint64", vec![Uint, Uint], Uint);
    b.global("_%_", "modulo_int64", vec![Int, Int], Int);
    b.global("_%_", "modulo_uint64", vec![Uint, Uint], Uint);
    b.global("_*_", "multiply_double", vec![Double, Double], Double);
    b.global("_*_", "multiply_int64", vec![Int, Int], Int);
    b.global("_*_", "multiply_uint64", vec![Uint, Uint], Uint);
    b.global("-_", "negate_double", vec![Double], Double);
    b.global("-_", "negate_int64", vec![Int], Int);
    b.global("_-_", "subtract_double", vec![Double, Double], Double);
    b.global("_-_", "subtract_duration_duration", vec![Duration, Duration], Duration);
    b.global("_-_", "subtract_int64", vec![Int, Int], Int);
    b.global("_-_", "subtract_timestamp_duration", vec![Timestamp, Duration], Timestamp);
    b.global("_-_", "subtract_timestamp_timestamp", vec![Timestamp, Timestamp], Duration);
    b.global("_-_", "subtract_uint64", vec![Uint, Uint], Uint);

    // Relations, in cel-go's order per operator.
    for (op, prefix) in
        [("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")]
    {
        let rows: [(&str, Type, Type); 14] = [
            ("bool", Bool, Bool),
            ("int64", Int, Int),
            ("int64_double", Int, Double),
            ("int64_uint64", Int, Uint),
            ("uint64", Uint, Uint),
            ("uint64_double", Uint, Double),
            ("uint64_int64", Uint, Int),
            ("double", Double, Double),
            ("double_int64", Double, Int),
            ("double_uint64", Double, Uint),
            ("string", String, String),
            ("bytes", Bytes, Bytes),
            ("timestamp", Timestamp, Timestamp),
            ("duration", Duration, Duration),
        ];
        for (suffix, l, r) in rows {
            b.global(op, &format!("{prefix}_{suffix}"), vec![l, r], Bool);
        }
    }

    // Indexing and membership.
    b.global("_[_]", "index_list", vec![list_a(), Int], a());
    b.global("_[_]", "index_map", vec![map_ab(), a()], Type::param("B"));
    b.global("@in", "in_list", vec![a(), list_a()], Bool);
    b.global("@in", "in_map", vec![a(), map_ab()], Bool);

    // Size.
    b.global("size", "size_bytes", vec![Bytes], Int);
    b.member("size", "bytes_size", vec![Bytes], Int);
    b.global("size", "size_list", vec![list_a()], Int);
    b.member("size", "list_size", vec![list_a()], Int);
    b.global("size", "size_map", vec![map_ab()], Int);
    b.member("size", "map_size", vec![map_ab()], Int);
    b.global("size", "size_string", vec![String], Int);
    b.member("size", "string_size", vec![String], Int);

    // Conversions.
    b.global("type", "type", vec![a()], Type::type_of(a()));
    b.global("bool", "bool_to_bool", vec![Bool], Bool);
    b.global("bool", "string_to_bool", vec![String], Bool);
    b.global("bytes", "bytes_to_bytes", vec![Bytes], Bytes);
    b.global("bytes", "string_to_bytes", vec![String], Bytes);
    b.global("double", "double_to_double", vec![Double], Double);
    b.global("double", "int64_to_double", vec![Int], Double);
    b.global("double", "string_to_double", vec![String], Double);
    b.global("double", "uint64_to_double", vec![Uint], Double);
    b.global("duration", "duration_to_duration", vec![Duration], Duration);
    b.global("duration", "int64_to_duration", vec![Int], Duration);
    b.global("duration", "string_to_duration", vec![String], Duration);
    b.global("dyn", "to_dyn", vec![a()], Dyn);
    b.global("int", "int64_to_int64", vec![Int], Int);
    b.global("int", "double_to_int64", vec![Double], Int);
    b.global("int", "duration_to_int64", vec![Duration], Int);
    b.global("int", "string_to_int64", vec![String], Int);
    b.global("int", "timestamp_to_int64", vec![Timestamp], Int);
    b.global("int", "uint64_to_int64", vec![Uint], Int);
    b.global("string", "string_to_string", vec![String], String);
    b.global("string", "bool_to_string", vec![Bool], String);
    b.global("string", "bytes_to_string", vec![Bytes], String);
    b.global("string", "double_to_string", vec![Double], String);
    b.global("string", "duration_to_string", vec![Duration], String);
    b.global("string", "int64_to_string", vec![Int], String);
    b.global("string", "timestamp_to_string", vec![Timestamp], String);
    b.global("string", "uint64_to_string", vec![Uint], String);
    b.global("timestamp", "timestamp_to_timestamp", vec![Timestamp], Timestamp);
    b.global("timestamp", "int64_to_timestamp", vec![Int], Timestamp);
    b.global("timestamp", "string_to_timestamp", vec![String], Timestamp);
    b.global("uint", "uint64_to_uint64", vec![Uint], Uint);
    b.global("uint", "double_to_uint64", vec![Double], Uint);
    b.global("uint", "int64_to_uint64", vec![Int], Uint);
    b.global("uint", "string_to_uint64", vec![String], Uint);

    // String functions.
    b.member("contains", "contains_string", vec![String, String], Bool);
    b.member("endsWith", "ends_with_string", vec![String, String], Bool);
    b.member("startsWith", "starts_with_string", vec![String, String], Bool);
    b.global("matches", "matches", vec![String, String], Bool);
    b.member("matches", "matches_string", vec![String, String], Bool);

    // Timestamp and duration accessors.
    let accessors: [(&str, &str, &str, Option<&str>); 10] = [
        ("getFullYear", "timestamp_to_year", "timestamp_to_year_with_tz", None),
        ("getMonth", "timestamp_to_month", "timestamp_to_month_with_tz", None),
        ("getDayOfYear", "timestamp_to_day_of_year", "timestamp_to_day_of_year_with_tz", None),
        ("getDayOfMonth", "timestamp_to_day_of_month", "timestamp_to_day_of_month_with_tz", None),
        (
            "getDate",
            "timestamp_to_day_of_month_1_based",
            "timestamp_to_day_of_month_1_based_with_tz",
            None,
        ),
        ("getDayOfWeek", "timestamp_to_day_of_week", "timestamp_to_day_of_week_with_tz", None),
        ("getHours", "timestamp_to_hours", "timestamp_to_hours_with_tz", Some("duration_to_hours")),
        (
            "getMinutes",
            "timestamp_to_minutes",
            "timestamp_to_minutes_with_tz",
            Some("duration_to_minutes"),
        ),
        (
            "getSeconds",
            "timestamp_to_seconds",
            "timestamp_to_seconds_tz",
            Some("duration_to_seconds"),
        ),
        (
            "getMilliseconds",
            "timestamp_to_milliseconds",
            "timestamp_to_milliseconds_with_tz",
            Some("duration_to_milliseconds"),
        ),
    ];
    for (name, plain, with_tz, duration) in accessors {
        b.member(name, plain, vec![Timestamp], Int);
        b.member(name, with_tz, vec![Timestamp, String], Int);
        if let Some(d) = duration {
            b.member(name, d, vec![Duration], Int);
        }
    }
}

fn strings(b: &mut Builder, version: u32) {
    use Type::{Dyn, Int, String};
    b.member("charAt", "string_char_at_int", vec![String, Int], String);
    b.member("indexOf", "string_index_of_string", vec![String, String], Int);
    b.member("indexOf", "string_index_of_string_int", vec![String, String, Int], Int);
    b.member("lastIndexOf", "string_last_index_of_string", vec![String, String], Int);
    b.member("lastIndexOf", "string_last_index_of_string_int", vec![String, String, Int], Int);
    b.member("lowerAscii", "string_lower_ascii", vec![String], String);
    b.member("replace", "string_replace_string_string", vec![String, String, String], String);
    b.member(
        "replace",
        "string_replace_string_string_int",
        vec![String, String, String, Int],
        String,
    );
    b.member("split", "string_split_string", vec![String, String], Type::list(String));
    b.member("split", "string_split_string_int", vec![String, String, Int], Type::list(String));
    b.member("substring", "string_substring_int", vec![String, Int], String);
    b.member("substring", "string_substring_int_int", vec![String, Int, Int], String);
    b.member("trim", "string_trim", vec![String], String);
    b.member("upperAscii", "string_upper_ascii", vec![String], String);
    if version >= 1 {
        b.member("format", "string_format", vec![String, Type::list(Dyn)], String);
        b.global("strings.quote", "strings_quote", vec![String], String);
    }
    b.member("join", "list_join", vec![Type::list(String)], String);
    b.member("join", "list_join_string", vec![Type::list(String), String], String);
    if version >= 3 {
        b.member("reverse", "string_reverse", vec![String], String);
    }
}

fn lists(b: &mut Builder, version: u32) {
    let list_t = || Type::list(Type::param("T"));
    b.member("slice", "list_slice", vec![list_t(), Type::Int, Type::Int], list_t());
    if version >= 1 {
        b.member("flatten", "list_flatten", vec![Type::list(list_t())], list_t());
        b.member(
            "flatten",
            "list_flatten_int",
            vec![Type::list(Type::Dyn), Type::Int],
            Type::list(Type::Dyn),
        );
    }
    if version >= 2 {
        for (ct, name) in comparable_types() {
            b.member(
                "sort",
                &format!("list_{name}_sort"),
                vec![Type::list(ct.clone())],
                Type::list(ct),
            );
        }
        for (ct, name) in comparable_types() {
            b.member(
                "@sortByAssociatedKeys",
                &format!("list_{name}_sortByAssociatedKeys"),
                vec![list_t(), Type::list(ct)],
                list_t(),
            );
        }
        b.global("lists.range", "lists_range", vec![Type::Int], Type::list(Type::Int));
        b.member("reverse", "list_reverse", vec![list_t()], list_t());
        b.member("distinct", "list_distinct", vec![list_t()], list_t());
    }
}

fn optional(b: &mut Builder, version: u32) {
    let v = || Type::param("V");
    let k = || Type::param("K");
    let opt_v = || Type::optional(Type::param("V"));
    let list_v = || Type::list(Type::param("V"));
    let map_kv = || Type::map(Type::param("K"), Type::param("V"));
    b.global("optional.of", "optional_of", vec![v()], opt_v());
    b.global("optional.ofNonZeroValue", "optional_ofNonZeroValue", vec![v()], opt_v());
    b.global("optional.none", "optional_none", vec![], opt_v());
    b.member("value", "optional_value", vec![opt_v()], v());
    b.member("hasValue", "optional_hasValue", vec![opt_v()], Type::Bool);
    b.member("or", "optional_or_optional", vec![opt_v(), opt_v()], opt_v());
    b.member("orValue", "optional_orValue_value", vec![opt_v(), v()], v());
    b.global("_?._", "select_optional_field", vec![Type::Dyn, Type::String], opt_v());
    b.global("_[?_]", "list_optindex_optional_int", vec![list_v(), Type::Int], opt_v());
    b.global(
        "_[?_]",
        "optional_list_optindex_optional_int",
        vec![Type::optional(list_v()), Type::Int],
        opt_v(),
    );
    b.global("_[?_]", "map_optindex_optional_value", vec![map_kv(), k()], opt_v());
    b.global(
        "_[?_]",
        "optional_map_optindex_optional_value",
        vec![Type::optional(map_kv()), k()],
        opt_v(),
    );
    b.global("_[_]", "optional_list_index_int", vec![Type::optional(list_v()), Type::Int], opt_v());
    b.global("_[_]", "optional_map_index_value", vec![Type::optional(map_kv()), k()], opt_v());
    if version >= 2 {
        b.member("last", "list_last", vec![list_v()], opt_v());
        b.member("first", "list_first", vec![list_v()], opt_v());
        b.global("optional.unwrap", "optional_unwrap", vec![Type::list(opt_v())], list_v());
        b.member("unwrapOpt", "optional_unwrapOpt", vec![Type::list(opt_v())], list_v());
    }
}

fn sets(b: &mut Builder) {
    let list_t = || Type::list(Type::param("T"));
    for (name, id) in [
        ("sets.contains", "list_sets_contains_list"),
        ("sets.equivalent", "list_sets_equivalent_list"),
        ("sets.intersects", "list_sets_intersects_list"),
    ] {
        b.global(name, id, vec![list_t(), list_t()], Type::Bool);
    }
}

fn two_var_comprehensions(b: &mut Builder) {
    let k = || Type::param("K");
    let v = || Type::param("V");
    let map_kv = || Type::map(Type::param("K"), Type::param("V"));
    b.global("cel.@mapInsert", "@mapInsert_map_key_value", vec![map_kv(), k(), v()], map_kv());
    b.global("cel.@mapInsert", "@mapInsert_map_map", vec![map_kv(), map_kv()], map_kv());
}

/// Every declared overload, one line each: `function<TAB>id<TAB>signature`, functions sorted by
/// name, overloads in declaration order. Signatures use cel-go's checker notation; member
/// overloads print as `receiver.(args) -> result`.
pub fn overload_table(decls: &Declarations) -> String {
    let names = decls.function_names();
    let mut out = String::new();
    for name in names {
        let Some(f) = decls.function(name) else {
            continue;
        };
        for o in &f.overloads {
            let params: Vec<String> =
                o.params.iter().map(super::checker::format_cel_type).collect();
            let sig = if o.member {
                let (recv, rest) =
                    params.split_first().map(|(r, t)| (r.clone(), t)).unwrap_or_default();
                format!("{recv}.({})", rest.join(", "))
            } else {
                format!("({})", params.join(", "))
            };
            out.push_str(&format!(
                "{name}\t{}\t{sig} -> {}\n",
                o.id,
                super::checker::format_cel_type(&o.result)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE_PATH: &str = "src/cel/stdlib_overload_ids.txt";

    /// The committed table of every overload id, for the runtime to cross-check. Run with
    /// `UPDATE_EXPECT=1` to rewrite it after a deliberate change.
    #[test]
    fn overload_ids_match_committed_table() {
        let mut d = Declarations::default();
        standard(&mut d, &LibraryVersions::all());
        let table = overload_table(&d);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(TABLE_PATH);
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            std::fs::write(&path, &table).expect("write table");
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == table,
            "{TABLE_PATH} is stale; rerun with UPDATE_EXPECT=1 and review the diff"
        );
    }

    #[test]
    fn overload_ids_are_unique() {
        let mut d = Declarations::default();
        standard(&mut d, &LibraryVersions::all());
        let mut seen = std::collections::HashMap::new();
        for f in d.functions.values() {
            for o in &f.overloads {
                if let Some(other) = seen.insert(o.id.clone(), f.name.clone()) {
                    panic!("{} declared by both {other} and {}", o.id, f.name);
                }
            }
        }
        assert_eq!(seen.len(), 226);
    }

    #[test]
    fn kubernetes_versions_select_libraries() {
        let has = |minor: u32, function: &str| {
            let mut d = Declarations::default();
            standard(&mut d, &LibraryVersions::kubernetes(minor));
            d.function(function).is_some()
        };
        assert!(has(28, "charAt") && !has(28, "format") && has(29, "format"));
        assert!(!has(27, "optional.of") && has(28, "optional.of") && has(28, "unwrapOpt"));
        assert!(!has(28, "sets.contains") && has(29, "sets.contains"));
        assert!(!has(31, "cel.@mapInsert") && has(32, "cel.@mapInsert"));
        assert!(!has(33, "lists.range") && has(34, "lists.range") && has(34, "slice"));
        assert!(!has(37, "math.greatest") && !has(37, "base64.encode"));
    }
}
