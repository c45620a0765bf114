//! Kyverno's wildcards (`ext/wildcard`, over `github.com/IGLOU-EU/go-wildcard` v1.0.3, a copy of
//! minio's matcher) and the wildcard `matchLabels` of its selectors
//! (`pkg/engine/wildcards.ReplaceInSelector`). `docs/kyverno-semantics.md` §3.

use crate::admission::types::LabelSelector;
use std::collections::BTreeMap;

/// `wildcard.Match(pattern, name)`: `*` matches any run of characters (also none), `?` exactly
/// one character; everything else matches itself, case-sensitively. An empty pattern matches
/// only the empty name.
pub fn matches(pattern: &str, name: &str) -> bool {
    // Without `*` or `?` (an empty pattern too), the pattern matches only itself.
    if !contains_wildcard(pattern) {
        return pattern == name;
    }
    if pattern == "*" {
        return true;
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    // Greedy matching with one backtrack point: equivalent to the recursive matcher for `*`
    // and single-character `?`, without its exponential worst case.
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == '?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// `wildcard.ContainsWildcard`.
pub fn contains_wildcard(s: &str) -> bool {
    s.contains('*') || s.contains('?')
}

/// `ReplaceInSelector`: each `matchLabels` entry whose key or value holds a wildcard becomes
/// the first label of `labels` it matches (key and value), or, when none does, the pattern with
/// `*` and `?` replaced by `0` (which then rarely matches). Go iterates the labels in random
/// order [nondet]; we take them in key order.
pub fn replace_in_selector(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> LabelSelector {
    let mut out = selector.clone();
    out.match_labels = BTreeMap::new();
    for (k, v) in &selector.match_labels {
        if !(contains_wildcard(k) || contains_wildcard(v)) {
            out.match_labels.insert(k.clone(), v.clone());
            continue;
        }
        let found = labels.iter().find(|(k1, v1)| matches(k, k1) && matches(v, v1));
        let (k, v) = match found {
            Some((k1, v1)) => (k1.clone(), v1.clone()),
            None => (k.replace(['*', '?'], "0"), v.replace(['*', '?'], "0")),
        };
        out.match_labels.insert(k, v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // go-wildcard v1.0.3's own cases (match_test.go) as far as they concern `*` and `?`.
    #[test]
    fn star_and_question_mark() {
        let t = |p: &str, s: &str| matches(p, s);
        assert!(t("*", ""));
        assert!(t("", ""));
        assert!(!t("", "a"));
        assert!(t("nginx-*", "nginx-1"));
        assert!(t("nginx-*", "nginx-"));
        assert!(!t("nginx-*", "nginx"));
        assert!(t("?a*da*d?*", "daaadabadmanda"));
        assert!(t("da*da*da*", "daaadabadmanda"));
        assert!(!t("?", ""));
        assert!(t("a?c", "abc"));
        assert!(!t("a?c", "ac"));
        assert!(t("*-prod", "team-a-prod"));
        assert!(!t("*-prod", "team-a-production"));
        assert!(t("é?", "éü"));
        assert!(!t("Default", "default"));
    }

    // pkg/engine/wildcards/wildcards_test.go (ReplaceInSelector): a wildcard entry takes the
    // matching label; one without a match becomes the pattern with `0`s.
    #[test]
    fn wildcard_match_labels_take_the_matching_label() {
        let sel = LabelSelector {
            match_labels: [("app".to_string(), "*".to_string()), ("t?er".into(), "x".into())]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let labels: BTreeMap<String, String> =
            [("app".to_string(), "nginx".to_string())].into_iter().collect();
        let r = replace_in_selector(&sel, &labels);
        assert_eq!(r.match_labels.get("app").map(String::as_str), Some("nginx"));
        assert_eq!(r.match_labels.get("t0er").map(String::as_str), Some("x"));
    }
}
