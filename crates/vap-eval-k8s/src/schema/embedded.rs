//! The built-in schema bundles compiled into native builds (feature `embed-schemas`; never in
//! wasm, where the JavaScript side registers them with [`super::register_builtin`]).

/// `(minor, bundle text)` of every generated version.
#[cfg(all(feature = "embed-schemas", not(target_arch = "wasm32")))]
const BUNDLES: [(&str, &str); 8] = [
    ("1.30", include_str!("../../../../data/schemas/1.30.json")),
    ("1.31", include_str!("../../../../data/schemas/1.31.json")),
    ("1.32", include_str!("../../../../data/schemas/1.32.json")),
    ("1.33", include_str!("../../../../data/schemas/1.33.json")),
    ("1.34", include_str!("../../../../data/schemas/1.34.json")),
    ("1.35", include_str!("../../../../data/schemas/1.35.json")),
    ("1.36", include_str!("../../../../data/schemas/1.36.json")),
    ("1.37", include_str!("../../../../data/schemas/1.37.json")),
];

/// Register the embedded bundle of `minor` unless one is registered. A no-op without
/// embedding or for a version without an embedded bundle.
pub fn ensure(minor: &str) {
    #[cfg(all(feature = "embed-schemas", not(target_arch = "wasm32")))]
    for (m, text) in BUNDLES {
        if m == minor && super::builtin(m).is_none() {
            // The embedded text is generated and checked by tests; a parse failure would
            // only leave the version without schemas.
            let _ = super::register_builtin(m, text);
        }
    }
    #[cfg(not(all(feature = "embed-schemas", not(target_arch = "wasm32"))))]
    let _ = minor;
}

/// The embedded descriptions of `minor` (hover), if embedded.
pub fn descriptions(minor: &str) -> Option<&'static str> {
    #[cfg(all(feature = "embed-schemas", not(target_arch = "wasm32")))]
    {
        let all: [(&str, &str); 8] = [
            ("1.30", include_str!("../../../../data/schemas/1.30.descriptions.json")),
            ("1.31", include_str!("../../../../data/schemas/1.31.descriptions.json")),
            ("1.32", include_str!("../../../../data/schemas/1.32.descriptions.json")),
            ("1.33", include_str!("../../../../data/schemas/1.33.descriptions.json")),
            ("1.34", include_str!("../../../../data/schemas/1.34.descriptions.json")),
            ("1.35", include_str!("../../../../data/schemas/1.35.descriptions.json")),
            ("1.36", include_str!("../../../../data/schemas/1.36.descriptions.json")),
            ("1.37", include_str!("../../../../data/schemas/1.37.descriptions.json")),
        ];
        all.iter().find(|(m, _)| *m == minor).map(|(_, t)| *t)
    }
    #[cfg(not(all(feature = "embed-schemas", not(target_arch = "wasm32"))))]
    {
        let _ = minor;
        None
    }
}
