//! cel-go's display format for a list of parse or check issues (`common/errors.go`,
//! `common/error.go`), which the apiserver embeds in `compilation failed: ...`:
//!
//! ```text
//! ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(int, string)'
//!  | 114 + '514'
//!  | ....^
//! ```
//!
//! - line is 1-based; column is 1-based and counts code points from the line start;
//! - the caret line has one `.` per preceding code point, the wide `．` (U+FF0E) for a multi-byte
//!   one, and the caret itself is the wide `＾` (U+FF3E) under a multi-byte character; tabs in
//!   the snippet print as spaces; no snippet for lines longer than 16,384 bytes;
//! - an issue without a location prints `ERROR: <input>:-1:0: <message>` and no snippet;
//! - only the first 100 issues reported are kept, then sorted by position (stably), then
//!   `N more errors were truncated` when there were more; issues are joined with `\n`.
//!
//! Offsets given here are byte offsets into the source; lines are split on `\n` only.

use super::checker::CheckIssue;
use super::parser::ParseError;

/// cel-go's cap on reported issues.
pub const MAX_ERRORS_TO_REPORT: usize = 100;
const MAX_SNIPPET_LENGTH: usize = 16_384;
const SOURCE_NAME: &str = "<input>";

/// One issue to render: its message and byte offset (`None`: no location).
#[derive(Clone, Copy, Debug)]
pub struct IssueRef<'a> {
    pub message: &'a str,
    pub offset: Option<u32>,
}

// The positions cel-go prints (the same arithmetic as YAML diagnostics and the parser's).
pub use vap_eval_cel::diagnostic::{line_column, line_column_utf16};
use vap_eval_cel::diagnostic::{locate, Location};

/// Render issues in cel-go's format. `issues` are in report order.
pub fn render(source: &str, issues: &[IssueRef<'_>]) -> String {
    let kept = &issues[..issues.len().min(MAX_ERRORS_TO_REPORT)];
    let mut located: Vec<(Option<Location>, &str)> =
        kept.iter().map(|i| (i.offset.map(|o| locate(source, o)), i.message)).collect();
    // Sort by (line, column); no location is line -1, column -1.
    crate::sort::sort_by_key(&mut located, |(loc, _)| match loc {
        Some((line, col, _)) => (i64::from(*line), i64::from(*col)),
        None => (-1, -1),
    });
    let mut out: Vec<String> =
        located.into_iter().map(|(loc, message)| render_one(source, loc, message)).collect();
    if issues.len() > MAX_ERRORS_TO_REPORT {
        out.push(format!("{} more errors were truncated", issues.len() - MAX_ERRORS_TO_REPORT));
    }
    out.join("\n")
}

fn render_one(source: &str, loc: Option<Location>, message: &str) -> String {
    let Some((line, col, line_start)) = loc else {
        return format!("ERROR: {SOURCE_NAME}:-1:0: {message}");
    };
    let mut s = format!("ERROR: {SOURCE_NAME}:{line}:{}: {message}", col + 1);
    let rest = &source[line_start..];
    let snippet = rest.split('\n').next().unwrap_or("");
    if snippet.len() <= MAX_SNIPPET_LENGTH {
        let snippet = snippet.replace('\t', " ");
        s.push_str("\n | ");
        s.push_str(&snippet);
        s.push_str("\n | ");
        let mut chars = snippet.chars();
        for _ in 0..col {
            match chars.next() {
                Some(c) if c.len_utf8() > 1 => s.push('\u{ff0e}'),
                Some(_) => s.push('.'),
                None => break,
            }
        }
        match chars.next() {
            Some(c) if c.len_utf8() > 1 => s.push('\u{ff3e}'),
            _ => s.push('^'),
        }
    }
    s
}

/// Render type-check issues (`Checked::errors`).
pub fn render_check_issues(source: &str, issues: &[CheckIssue]) -> String {
    let refs: Vec<IssueRef<'_>> =
        issues.iter().map(|i| IssueRef { message: &i.message, offset: Some(i.pos) }).collect();
    render(source, &refs)
}

/// Render parse errors.
pub fn render_parse_errors(source: &str, errors: &[ParseError]) -> String {
    let refs: Vec<IssueRef<'_>> =
        errors.iter().map(|e| IssueRef { message: &e.message, offset: e.offset }).collect();
    render(source, &refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_code_points() {
        let src = "'é😀' + 1";
        // The `+` is at byte 9 (é is 2 bytes, 😀 is 4), code point 5.
        assert_eq!(line_column(src, 9), (1, 6));
        assert_eq!(line_column_utf16(src, 9), (1, 7));
        assert_eq!(line_column("a\nbc", 3), (2, 2));
        assert_eq!(line_column("a\nbc", 2), (2, 1));
        assert_eq!(line_column("a\nbc", 1), (1, 2));
    }

    #[test]
    fn wide_dots_and_carets() {
        let src = "'é' + x";
        let out = render(src, &[IssueRef { message: "m", offset: Some(5) }]);
        assert_eq!(out, "ERROR: <input>:1:5: m\n | 'é' + x\n | .．..^");
        let out = render("a + é", &[IssueRef { message: "m", offset: Some(4) }]);
        assert_eq!(out, "ERROR: <input>:1:5: m\n | a + é\n | ....＾");
    }

    #[test]
    fn no_location_and_truncation() {
        let out = render("x", &[IssueRef { message: "limit", offset: None }]);
        assert_eq!(out, "ERROR: <input>:-1:0: limit");
        let many: Vec<IssueRef> =
            (0..103).map(|_| IssueRef { message: "e", offset: Some(0) }).collect();
        let out = render("x", &many);
        assert_eq!(out.lines().filter(|l| l.starts_with("ERROR")).count(), 100);
        assert!(out.ends_with("\n3 more errors were truncated"));
    }

    #[test]
    fn sorted_by_position_and_tabs_are_spaces() {
        let src = "a\n\tb + c";
        let out = render(
            src,
            &[
                IssueRef { message: "second", offset: Some(7) },
                IssueRef { message: "first", offset: Some(0) },
            ],
        );
        assert_eq!(
            out,
            "ERROR: <input>:1:1: first\n | a\n | ^\nERROR: <input>:2:6: second\n |  b + c\n | .....^"
        );
    }
}
