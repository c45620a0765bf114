//! Declarations of the CEL standard library and of the cel-go extension libraries Kubernetes
//! enables, with cel-go's function names, overload ids, signatures and declaration order (which
//! decides the order of candidate overloads in a [`Reference`](super::checker::Reference)). The
//! tables are data ([`signature`]), one row per overload.
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

use super::decls::Declarations;
use super::signature::{self, Row};

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

/// Register the standard library and the extension libraries selected by `v`.
pub fn standard(decls: &mut Declarations, v: &LibraryVersions) {
    signature::declare(decls, STANDARD);
    if let Some(version) = v.strings {
        signature::declare(decls, STRINGS_V0);
        if version >= 1 {
            signature::declare(decls, STRINGS_V1);
        }
        signature::declare(decls, STRINGS_JOIN);
        if version >= 3 {
            signature::declare(decls, STRINGS_V3);
        }
    }
    if let Some(version) = v.lists {
        signature::declare(decls, LISTS_V0);
        if version >= 1 {
            signature::declare(decls, LISTS_V1);
        }
        if version >= 2 {
            signature::declare(decls, LISTS_V2);
        }
    }
    if let Some(version) = v.optional {
        signature::declare(decls, OPTIONAL_V0);
        if version >= 2 {
            signature::declare(decls, OPTIONAL_V2);
        }
    }
    if v.sets {
        signature::declare(decls, SETS);
    }
    if v.two_var_comprehensions {
        signature::declare(decls, TWO_VAR_COMPREHENSIONS);
    }
}

/// cel-go `common/stdlib/standard.go`, in its declaration order.
const STANDARD: &[Row] = &[
    // Logical operators.
    ("_?_:_", "conditional", "(bool, A, A) -> A"),
    ("_&&_", "logical_and", "(bool, bool) -> bool"),
    ("_||_", "logical_or", "(bool, bool) -> bool"),
    ("!_", "logical_not", "(bool) -> bool"),
    ("@not_strictly_false", "not_strictly_false", "(bool) -> bool"),
    // Equality.
    ("_==_", "equals", "(A, A) -> bool"),
    ("_!=_", "not_equals", "(A, A) -> bool"),
    // Arithmetic.
    ("_+_", "add_bytes", "(bytes, bytes) -> bytes"),
    ("_+_", "add_double", "(double, double) -> double"),
    ("_+_", "add_duration_duration", "(duration, duration) -> duration"),
    ("_+_", "add_duration_timestamp", "(duration, timestamp) -> timestamp"),
    ("_+_", "add_timestamp_duration", "(timestamp, duration) -> timestamp"),
    ("_+_", "add_int64", "(int, int) -> int"),
    ("_+_", "add_list", "(list(A), list(A)) -> list(A)"),
    ("_+_", "add_string", "(string, string) -> string"),
    ("_+_", "add_uint64", "(uint, uint) -> uint"),
    ("_/_", "divide_double", "(double, double) -> double"),
    ("_/_", "divide_int64", "(int, int) -> int"),
    ("_/_", "divide_uint64", "(uint, uint) -> uint"),
    ("_%_", "modulo_int64", "(int, int) -> int"),
    ("_%_", "modulo_uint64", "(uint, uint) -> uint"),
    ("_*_", "multiply_double", "(double, double) -> double"),
    ("_*_", "multiply_int64", "(int, int) -> int"),
    ("_*_", "multiply_uint64", "(uint, uint) -> uint"),
    ("-_", "negate_double", "(double) -> double"),
    ("-_", "negate_int64", "(int) -> int"),
    ("_-_", "subtract_double", "(double, double) -> double"),
    ("_-_", "subtract_duration_duration", "(duration, duration) -> duration"),
    ("_-_", "subtract_int64", "(int, int) -> int"),
    ("_-_", "subtract_timestamp_duration", "(timestamp, duration) -> timestamp"),
    ("_-_", "subtract_timestamp_timestamp", "(timestamp, timestamp) -> duration"),
    ("_-_", "subtract_uint64", "(uint, uint) -> uint"),
    // Relations, in cel-go's order per operator. The cross-type ones (`less_int64_double`, …) are
    // disabled by the checker unless `CheckOptions::cross_type_numeric_comparisons`.
    ("_<_", "less_bool", "(bool, bool) -> bool"),
    ("_<_", "less_int64", "(int, int) -> bool"),
    ("_<_", "less_int64_double", "(int, double) -> bool"),
    ("_<_", "less_int64_uint64", "(int, uint) -> bool"),
    ("_<_", "less_uint64", "(uint, uint) -> bool"),
    ("_<_", "less_uint64_double", "(uint, double) -> bool"),
    ("_<_", "less_uint64_int64", "(uint, int) -> bool"),
    ("_<_", "less_double", "(double, double) -> bool"),
    ("_<_", "less_double_int64", "(double, int) -> bool"),
    ("_<_", "less_double_uint64", "(double, uint) -> bool"),
    ("_<_", "less_string", "(string, string) -> bool"),
    ("_<_", "less_bytes", "(bytes, bytes) -> bool"),
    ("_<_", "less_timestamp", "(timestamp, timestamp) -> bool"),
    ("_<_", "less_duration", "(duration, duration) -> bool"),
    ("_<=_", "less_equals_bool", "(bool, bool) -> bool"),
    ("_<=_", "less_equals_int64", "(int, int) -> bool"),
    ("_<=_", "less_equals_int64_double", "(int, double) -> bool"),
    ("_<=_", "less_equals_int64_uint64", "(int, uint) -> bool"),
    ("_<=_", "less_equals_uint64", "(uint, uint) -> bool"),
    ("_<=_", "less_equals_uint64_double", "(uint, double) -> bool"),
    ("_<=_", "less_equals_uint64_int64", "(uint, int) -> bool"),
    ("_<=_", "less_equals_double", "(double, double) -> bool"),
    ("_<=_", "less_equals_double_int64", "(double, int) -> bool"),
    ("_<=_", "less_equals_double_uint64", "(double, uint) -> bool"),
    ("_<=_", "less_equals_string", "(string, string) -> bool"),
    ("_<=_", "less_equals_bytes", "(bytes, bytes) -> bool"),
    ("_<=_", "less_equals_timestamp", "(timestamp, timestamp) -> bool"),
    ("_<=_", "less_equals_duration", "(duration, duration) -> bool"),
    ("_>_", "greater_bool", "(bool, bool) -> bool"),
    ("_>_", "greater_int64", "(int, int) -> bool"),
    ("_>_", "greater_int64_double", "(int, double) -> bool"),
    ("_>_", "greater_int64_uint64", "(int, uint) -> bool"),
    ("_>_", "greater_uint64", "(uint, uint) -> bool"),
    ("_>_", "greater_uint64_double", "(uint, double) -> bool"),
    ("_>_", "greater_uint64_int64", "(uint, int) -> bool"),
    ("_>_", "greater_double", "(double, double) -> bool"),
    ("_>_", "greater_double_int64", "(double, int) -> bool"),
    ("_>_", "greater_double_uint64", "(double, uint) -> bool"),
    ("_>_", "greater_string", "(string, string) -> bool"),
    ("_>_", "greater_bytes", "(bytes, bytes) -> bool"),
    ("_>_", "greater_timestamp", "(timestamp, timestamp) -> bool"),
    ("_>_", "greater_duration", "(duration, duration) -> bool"),
    ("_>=_", "greater_equals_bool", "(bool, bool) -> bool"),
    ("_>=_", "greater_equals_int64", "(int, int) -> bool"),
    ("_>=_", "greater_equals_int64_double", "(int, double) -> bool"),
    ("_>=_", "greater_equals_int64_uint64", "(int, uint) -> bool"),
    ("_>=_", "greater_equals_uint64", "(uint, uint) -> bool"),
    ("_>=_", "greater_equals_uint64_double", "(uint, double) -> bool"),
    ("_>=_", "greater_equals_uint64_int64", "(uint, int) -> bool"),
    ("_>=_", "greater_equals_double", "(double, double) -> bool"),
    ("_>=_", "greater_equals_double_int64", "(double, int) -> bool"),
    ("_>=_", "greater_equals_double_uint64", "(double, uint) -> bool"),
    ("_>=_", "greater_equals_string", "(string, string) -> bool"),
    ("_>=_", "greater_equals_bytes", "(bytes, bytes) -> bool"),
    ("_>=_", "greater_equals_timestamp", "(timestamp, timestamp) -> bool"),
    ("_>=_", "greater_equals_duration", "(duration, duration) -> bool"),
    // Indexing, membership and size.
    ("_[_]", "index_list", "(list(A), int) -> A"),
    ("_[_]", "index_map", "(map(A, B), A) -> B"),
    ("@in", "in_list", "(A, list(A)) -> bool"),
    ("@in", "in_map", "(A, map(A, B)) -> bool"),
    ("size", "size_bytes", "(bytes) -> int"),
    ("size", "bytes_size", "bytes.() -> int"),
    ("size", "size_list", "(list(A)) -> int"),
    ("size", "list_size", "list(A).() -> int"),
    ("size", "size_map", "(map(A, B)) -> int"),
    ("size", "map_size", "map(A, B).() -> int"),
    ("size", "size_string", "(string) -> int"),
    ("size", "string_size", "string.() -> int"),
    // Conversions.
    ("type", "type", "(A) -> type(A)"),
    ("bool", "bool_to_bool", "(bool) -> bool"),
    ("bool", "string_to_bool", "(string) -> bool"),
    ("bytes", "bytes_to_bytes", "(bytes) -> bytes"),
    ("bytes", "string_to_bytes", "(string) -> bytes"),
    ("double", "double_to_double", "(double) -> double"),
    ("double", "int64_to_double", "(int) -> double"),
    ("double", "string_to_double", "(string) -> double"),
    ("double", "uint64_to_double", "(uint) -> double"),
    ("duration", "duration_to_duration", "(duration) -> duration"),
    ("duration", "int64_to_duration", "(int) -> duration"),
    ("duration", "string_to_duration", "(string) -> duration"),
    ("dyn", "to_dyn", "(A) -> dyn"),
    ("int", "int64_to_int64", "(int) -> int"),
    ("int", "double_to_int64", "(double) -> int"),
    ("int", "duration_to_int64", "(duration) -> int"),
    ("int", "string_to_int64", "(string) -> int"),
    ("int", "timestamp_to_int64", "(timestamp) -> int"),
    ("int", "uint64_to_int64", "(uint) -> int"),
    ("string", "string_to_string", "(string) -> string"),
    ("string", "bool_to_string", "(bool) -> string"),
    ("string", "bytes_to_string", "(bytes) -> string"),
    ("string", "double_to_string", "(double) -> string"),
    ("string", "duration_to_string", "(duration) -> string"),
    ("string", "int64_to_string", "(int) -> string"),
    ("string", "timestamp_to_string", "(timestamp) -> string"),
    ("string", "uint64_to_string", "(uint) -> string"),
    ("timestamp", "timestamp_to_timestamp", "(timestamp) -> timestamp"),
    ("timestamp", "int64_to_timestamp", "(int) -> timestamp"),
    ("timestamp", "string_to_timestamp", "(string) -> timestamp"),
    ("uint", "uint64_to_uint64", "(uint) -> uint"),
    ("uint", "double_to_uint64", "(double) -> uint"),
    ("uint", "int64_to_uint64", "(int) -> uint"),
    ("uint", "string_to_uint64", "(string) -> uint"),
    // String functions.
    ("contains", "contains_string", "string.(string) -> bool"),
    ("endsWith", "ends_with_string", "string.(string) -> bool"),
    ("startsWith", "starts_with_string", "string.(string) -> bool"),
    ("matches", "matches", "(string, string) -> bool"),
    ("matches", "matches_string", "string.(string) -> bool"),
    // Timestamp and duration accessors.
    ("getFullYear", "timestamp_to_year", "timestamp.() -> int"),
    ("getFullYear", "timestamp_to_year_with_tz", "timestamp.(string) -> int"),
    ("getMonth", "timestamp_to_month", "timestamp.() -> int"),
    ("getMonth", "timestamp_to_month_with_tz", "timestamp.(string) -> int"),
    ("getDayOfYear", "timestamp_to_day_of_year", "timestamp.() -> int"),
    ("getDayOfYear", "timestamp_to_day_of_year_with_tz", "timestamp.(string) -> int"),
    ("getDayOfMonth", "timestamp_to_day_of_month", "timestamp.() -> int"),
    ("getDayOfMonth", "timestamp_to_day_of_month_with_tz", "timestamp.(string) -> int"),
    ("getDate", "timestamp_to_day_of_month_1_based", "timestamp.() -> int"),
    ("getDate", "timestamp_to_day_of_month_1_based_with_tz", "timestamp.(string) -> int"),
    ("getDayOfWeek", "timestamp_to_day_of_week", "timestamp.() -> int"),
    ("getDayOfWeek", "timestamp_to_day_of_week_with_tz", "timestamp.(string) -> int"),
    ("getHours", "timestamp_to_hours", "timestamp.() -> int"),
    ("getHours", "timestamp_to_hours_with_tz", "timestamp.(string) -> int"),
    ("getHours", "duration_to_hours", "duration.() -> int"),
    ("getMinutes", "timestamp_to_minutes", "timestamp.() -> int"),
    ("getMinutes", "timestamp_to_minutes_with_tz", "timestamp.(string) -> int"),
    ("getMinutes", "duration_to_minutes", "duration.() -> int"),
    ("getSeconds", "timestamp_to_seconds", "timestamp.() -> int"),
    ("getSeconds", "timestamp_to_seconds_tz", "timestamp.(string) -> int"),
    ("getSeconds", "duration_to_seconds", "duration.() -> int"),
    ("getMilliseconds", "timestamp_to_milliseconds", "timestamp.() -> int"),
    ("getMilliseconds", "timestamp_to_milliseconds_with_tz", "timestamp.(string) -> int"),
    ("getMilliseconds", "duration_to_milliseconds", "duration.() -> int"),
];

/// cel-go `ext.Strings` v0 (before `join`).
const STRINGS_V0: &[Row] = &[
    ("charAt", "string_char_at_int", "string.(int) -> string"),
    ("indexOf", "string_index_of_string", "string.(string) -> int"),
    ("indexOf", "string_index_of_string_int", "string.(string, int) -> int"),
    ("lastIndexOf", "string_last_index_of_string", "string.(string) -> int"),
    ("lastIndexOf", "string_last_index_of_string_int", "string.(string, int) -> int"),
    ("lowerAscii", "string_lower_ascii", "string.() -> string"),
    ("replace", "string_replace_string_string", "string.(string, string) -> string"),
    ("replace", "string_replace_string_string_int", "string.(string, string, int) -> string"),
    ("split", "string_split_string", "string.(string) -> list(string)"),
    ("split", "string_split_string_int", "string.(string, int) -> list(string)"),
    ("substring", "string_substring_int", "string.(int) -> string"),
    ("substring", "string_substring_int_int", "string.(int, int) -> string"),
    ("trim", "string_trim", "string.() -> string"),
    ("upperAscii", "string_upper_ascii", "string.() -> string"),
];

/// `ext.Strings` v1: `format` and `strings.quote`.
const STRINGS_V1: &[Row] = &[
    ("format", "string_format", "string.(list(dyn)) -> string"),
    ("strings.quote", "strings_quote", "(string) -> string"),
];

/// `ext.Strings` v0's `join`, declared after v1's functions as cel-go does.
const STRINGS_JOIN: &[Row] = &[
    ("join", "list_join", "list(string).() -> string"),
    ("join", "list_join_string", "list(string).(string) -> string"),
];

/// `ext.Strings` v3.
const STRINGS_V3: &[Row] = &[("reverse", "string_reverse", "string.() -> string")];

/// cel-go `ext.Lists` v0.
const LISTS_V0: &[Row] = &[("slice", "list_slice", "list(T).(int, int) -> list(T)")];

/// `ext.Lists` v1.
const LISTS_V1: &[Row] = &[
    ("flatten", "list_flatten", "list(list(T)).() -> list(T)"),
    ("flatten", "list_flatten_int", "list(dyn).(int) -> list(dyn)"),
];

/// `ext.Lists` v2. `sort` and `@sortByAssociatedKeys` take the comparable element types, with
/// cel-go's type names in the ids; `@sortByAssociatedKeys` is a member function.
const LISTS_V2: &[Row] = &[
    ("sort", "list_int_sort", "list(int).() -> list(int)"),
    ("sort", "list_uint_sort", "list(uint).() -> list(uint)"),
    ("sort", "list_double_sort", "list(double).() -> list(double)"),
    ("sort", "list_bool_sort", "list(bool).() -> list(bool)"),
    ("sort", "list_google.protobuf.Duration_sort", "list(duration).() -> list(duration)"),
    ("sort", "list_google.protobuf.Timestamp_sort", "list(timestamp).() -> list(timestamp)"),
    ("sort", "list_string_sort", "list(string).() -> list(string)"),
    ("sort", "list_bytes_sort", "list(bytes).() -> list(bytes)"),
    ("@sortByAssociatedKeys", "list_int_sortByAssociatedKeys", "list(T).(list(int)) -> list(T)"),
    ("@sortByAssociatedKeys", "list_uint_sortByAssociatedKeys", "list(T).(list(uint)) -> list(T)"),
    (
        "@sortByAssociatedKeys",
        "list_double_sortByAssociatedKeys",
        "list(T).(list(double)) -> list(T)",
    ),
    ("@sortByAssociatedKeys", "list_bool_sortByAssociatedKeys", "list(T).(list(bool)) -> list(T)"),
    (
        "@sortByAssociatedKeys",
        "list_google.protobuf.Duration_sortByAssociatedKeys",
        "list(T).(list(duration)) -> list(T)",
    ),
    (
        "@sortByAssociatedKeys",
        "list_google.protobuf.Timestamp_sortByAssociatedKeys",
        "list(T).(list(timestamp)) -> list(T)",
    ),
    (
        "@sortByAssociatedKeys",
        "list_string_sortByAssociatedKeys",
        "list(T).(list(string)) -> list(T)",
    ),
    (
        "@sortByAssociatedKeys",
        "list_bytes_sortByAssociatedKeys",
        "list(T).(list(bytes)) -> list(T)",
    ),
    ("lists.range", "lists_range", "(int) -> list(int)"),
    ("reverse", "list_reverse", "list(T).() -> list(T)"),
    ("distinct", "list_distinct", "list(T).() -> list(T)"),
];

/// cel-go `OptionalTypes` v0 (and v1: `optFlatMap` is a macro).
const OPTIONAL_V0: &[Row] = &[
    ("optional.of", "optional_of", "(V) -> optional_type(V)"),
    ("optional.ofNonZeroValue", "optional_ofNonZeroValue", "(V) -> optional_type(V)"),
    ("optional.none", "optional_none", "() -> optional_type(V)"),
    ("value", "optional_value", "optional_type(V).() -> V"),
    ("hasValue", "optional_hasValue", "optional_type(V).() -> bool"),
    ("or", "optional_or_optional", "optional_type(V).(optional_type(V)) -> optional_type(V)"),
    ("orValue", "optional_orValue_value", "optional_type(V).(V) -> V"),
    ("_?._", "select_optional_field", "(dyn, string) -> optional_type(V)"),
    ("_[?_]", "list_optindex_optional_int", "(list(V), int) -> optional_type(V)"),
    (
        "_[?_]",
        "optional_list_optindex_optional_int",
        "(optional_type(list(V)), int) -> optional_type(V)",
    ),
    ("_[?_]", "map_optindex_optional_value", "(map(K, V), K) -> optional_type(V)"),
    (
        "_[?_]",
        "optional_map_optindex_optional_value",
        "(optional_type(map(K, V)), K) -> optional_type(V)",
    ),
    ("_[_]", "optional_list_index_int", "(optional_type(list(V)), int) -> optional_type(V)"),
    ("_[_]", "optional_map_index_value", "(optional_type(map(K, V)), K) -> optional_type(V)"),
];

/// `OptionalTypes` v2.
const OPTIONAL_V2: &[Row] = &[
    ("last", "list_last", "list(V).() -> optional_type(V)"),
    ("first", "list_first", "list(V).() -> optional_type(V)"),
    ("optional.unwrap", "optional_unwrap", "(list(optional_type(V))) -> list(V)"),
    ("unwrapOpt", "optional_unwrapOpt", "list(optional_type(V)).() -> list(V)"),
];

/// cel-go `ext.Sets`.
const SETS: &[Row] = &[
    ("sets.contains", "list_sets_contains_list", "(list(T), list(T)) -> bool"),
    ("sets.equivalent", "list_sets_equivalent_list", "(list(T), list(T)) -> bool"),
    ("sets.intersects", "list_sets_intersects_list", "(list(T), list(T)) -> bool"),
];

/// cel-go `ext.TwoVarComprehensions`.
const TWO_VAR_COMPREHENSIONS: &[Row] = &[
    ("cel.@mapInsert", "@mapInsert_map_key_value", "(map(K, V), K, V) -> map(K, V)"),
    ("cel.@mapInsert", "@mapInsert_map_map", "(map(K, V), map(K, V)) -> map(K, V)"),
];

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

/// Test support: `decls`' [`overload_table`] must equal the committed file `path` (relative to
/// the crate); `UPDATE_EXPECT=1` rewrites the file instead, after a deliberate change.
#[cfg(test)]
pub(crate) fn assert_committed_table(decls: &Declarations, path: &str) {
    let table = overload_table(decls);
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&file, &table).expect("write table");
        return;
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(committed == table, "{path} is stale; rerun with UPDATE_EXPECT=1 and review the diff");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed table of every overload id, for the runtime to cross-check.
    #[test]
    fn overload_ids_match_committed_table() {
        let mut d = Declarations::default();
        standard(&mut d, &LibraryVersions::all());
        assert_committed_table(&d, "src/cel/stdlib_overload_ids.txt");
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
