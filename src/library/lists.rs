//! Kubernetes `Lists` library: version 0 in every Kubernetes release (until 1.37), version 1
//! (adds `includes`) since Kubernetes 1.37 (apiserver `pkg/cel/library/lists.go`).
//!
//! ```text
//! <list<T>>.isSorted() <bool>        T ∈ int, uint, double, bool, duration, timestamp, string, bytes
//! <list<T>>.sum() <T>                T ∈ int, uint, double, duration; empty list → typed zero
//! <list<T>>.min() <T>, .max() <T>    T comparable; empty list → error; ties keep the first
//! <list<A>>.indexOf(<A>) <int>       first index by CEL equality, -1 if absent
//! <list<A>>.lastIndexOf(<A>) <int>   last index, -1 if absent
//! <dyn>.includes(<dyn>) <bool>       (v1, 1.37) list: some element equals the argument;
//!                                    any other receiver: receiver == argument
//! ```
//!
//! Examples (apiserver `lists.go` docs, `lists_test.go`):
//!
//! ```text
//! [1, 2, 3].isSorted()                    // true
//! ['a', 'b', 'b', 'c'].isSorted()         // true
//! [2.0, 1.0].isSorted()                   // false
//! [1, 3].sum()                            // 4
//! [duration('1m'), duration('1s')].sum()  // duration('61s')
//! [1, 3].min()                            // 1
//! [].min()                                // error: min called on empty list
//! [1, 2, 2, 3].indexOf(2)                 // 1
//! ['a', 'b', 'b', 'c'].lastIndexOf('b')   // 2
//! [1, 2, 3].includes(2)                   // true
//! 'model-a'.includes('model-a')           // true
//! ```
//!
//! Cost (apiserver `cost.go`): every function costs the traversal of its receiver (1 per
//! scalar element, `floor(0.1 × bytes)` per string element).

use crate::cel::decls::{Declarations, OverloadDecl as O};
use crate::cel::types::Type;

/// Element types of `isSorted`, `min`, `max`, with the names used in the overload ids.
pub const COMPARABLE: [(&str, Type); 8] = [
    ("int", Type::Int),
    ("uint", Type::Uint),
    ("double", Type::Double),
    ("bool", Type::Bool),
    ("duration", Type::Duration),
    ("timestamp", Type::Timestamp),
    ("string", Type::String),
    ("bytes", Type::Bytes),
];

/// Element types of `sum`.
pub const SUMMABLE: [(&str, Type); 4] = [
    ("int", Type::Int),
    ("uint", Type::Uint),
    ("double", Type::Double),
    ("duration", Type::Duration),
];

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare the lists library at `version` (0: isSorted, sum, max, min, indexOf, lastIndexOf;
/// 1: adds includes).
pub fn declare(d: &mut Declarations, version: u32) {
    for (name, t) in COMPARABLE {
        let id = format!("list_{name}_is_sorted_bool");
        d.add_overload("isSorted", O::member(&id, vec![Type::list(t)], Type::Bool));
    }
    for (name, t) in SUMMABLE {
        let id = format!("list_{name}_sum_{name}");
        d.add_overload("sum", O::member(&id, vec![Type::list(t.clone())], t));
    }
    for function in ["max", "min"] {
        for (name, t) in COMPARABLE {
            let id = format!("list_{name}_{function}_{name}");
            d.add_overload(function, O::member(&id, vec![Type::list(t.clone())], t));
        }
    }
    let a = || Type::param("A");
    d.add_overload(
        "indexOf",
        O::member("list_a_index_of_int", vec![Type::list(a()), a()], Type::Int),
    );
    d.add_overload(
        "lastIndexOf",
        O::member("list_a_last_index_of_int", vec![Type::list(a()), a()], Type::Int),
    );
    if version >= 1 {
        d.add_overload(
            "includes",
            O::member("list_includes_dyn_dyn", vec![Type::Dyn, Type::Dyn], Type::Bool),
        );
    }
}
