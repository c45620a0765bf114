//! Audit: which of the objects already in a cluster would a set of policies deny?
//!
//! Objects come from a dump — `kubectl get … -o yaml|json` (a `List`), multi-document YAML,
//! JSON lines or concatenated JSON — read one document at a time by [`DumpReader`], so memory
//! does not grow with the dump. Each object is evaluated by an [`Auditor`] as a CREATE of itself
//! (or, with [`AuditOptions::update`], as an UPDATE from itself to itself) through the whole
//! pipeline, and [`Summary`] counts the outcomes per policy and binding.
//!
//! A document that does not parse is an [`ObjectReport`] with a problem, never the end of the
//! run. The policies are compiled once per [`Auditor`]; the compiled programs are not `Sync`
//! (they share `Rc`s), so a parallel caller keeps one `Auditor` per thread.

use crate::admission::policy_set::PolicySet;
use crate::admission::yaml::parse_stream;
use crate::api::{
    compile, evaluate_documents, Document, Manifests, ObjectTexts, PolicySetOptions,
    RequestDocuments,
};
use crate::diagnostic::{Diagnostic, Severity};
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::io::BufRead;

/// One document of a dump, not yet parsed.
#[derive(Clone, Debug)]
pub struct RawObject {
    pub text: String,
    pub origin: Origin,
}

/// Where a document starts: the input's name and the 1-based line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Origin {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A document the reader could not delimit (unbalanced JSON, an I/O error): reported, and
/// reading goes on at the next document where it can.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DumpProblem {
    pub origin: Origin,
    pub message: String,
}

/// Splits a dump into documents, streaming. The format is chosen by the first non-blank
/// character: `{` or `[` is JSON (one value, a `List`, JSON lines or concatenated values; the
/// elements of a top-level array and of a top-level object's `items` array are documents of
/// their own), anything else YAML (`---`-separated documents; a document with a top-level
/// `items:` block is a `List` and each item is a document).
pub struct DumpReader<R> {
    input: R,
    name: String,
    line: usize,
    format: Option<bool>,
    eof: bool,
    /// YAML: a line read ahead (the start of the next document or item).
    pending_line: Option<String>,
    /// YAML: inside a List's `items:` block, with the column of its `-` once known.
    in_items: Option<Option<usize>>,
    /// JSON: set once a document has ended on the line it started on (JSON lines): a newline
    /// inside a value then means the line is broken, and reading resumes on the next one.
    json_lines: bool,
    /// JSON: the top-level value being read, and its first line.
    split: Splitter,
    value_line: usize,
}

impl<R: BufRead> DumpReader<R> {
    pub fn new(input: R, name: impl Into<String>) -> Self {
        DumpReader {
            input,
            name: name.into(),
            line: 1,
            format: None,
            eof: false,
            pending_line: None,
            in_items: None,
            json_lines: false,
            split: Splitter::default(),
            value_line: 1,
        }
    }

    fn origin(&self, line: usize) -> Origin {
        Origin { file: self.name.clone(), line }
    }

    fn peek_byte(&mut self) -> Result<Option<u8>, String> {
        match self.input.fill_buf() {
            Ok([]) => Ok(None),
            Ok(b) => Ok(Some(b[0])),
            Err(e) => Err(e.to_string()),
        }
    }

    fn next_byte(&mut self) -> Result<Option<u8>, String> {
        let b = self.peek_byte()?;
        if let Some(b) = b {
            self.input.consume(1);
            if b == b'\n' {
                self.line += 1;
            }
        }
        Ok(b)
    }

    /// JSON: the next document. Tracks strings and nesting only; the document's own syntax is
    /// checked when it is parsed.
    fn next_json(&mut self) -> Option<Result<RawObject, DumpProblem>> {
        if self.split.depth == 0 {
            // Skip blanks between top-level values.
            loop {
                match self.peek_byte() {
                    Ok(Some(b)) if b.is_ascii_whitespace() || b == b',' => {
                        let _ = self.next_byte();
                    }
                    Ok(Some(_)) => break,
                    Ok(None) => return None,
                    Err(e) => {
                        self.eof = true;
                        return Some(Err(DumpProblem {
                            origin: self.origin(self.line),
                            message: e,
                        }));
                    }
                }
            }
            // A fresh splitter, keeping the buffer the last document left (its capacity).
            let mut text = std::mem::take(&mut self.split.text);
            text.clear();
            self.split = Splitter { text, ..Splitter::default() };
            self.value_line = self.line;
        }
        let start_line = self.value_line;
        loop {
            // A buffer of input at a time (a call through the reader per byte was most of the
            // reader's time): its bytes are fed until one ends something, then consumed.
            let buf = match self.input.fill_buf() {
                Ok([]) => {
                    self.eof = true;
                    return Some(Err(DumpProblem {
                        origin: self.origin(self.split.item_line.unwrap_or(start_line)),
                        message: "unexpected end of input inside a JSON value".into(),
                    }));
                }
                Ok(buf) => buf,
                Err(e) => {
                    self.eof = true;
                    let message = e.to_string();
                    return Some(Err(DumpProblem { origin: self.origin(self.line), message }));
                }
            };
            let split = &mut self.split;
            let mut used = 0;
            let mut step = Step::More;
            let mut broken_line = false;
            while used < buf.len() {
                // Inside a document, below the top level's members: a run (byte by byte below
                // is the same, slower).
                let n =
                    split.run(buf.get(used..).unwrap_or_default(), &mut self.line, self.json_lines);
                if n > 0 {
                    used += n;
                    continue;
                }
                // Inside a string, up to its next quote, backslash or newline: copied as a run.
                if split.in_string && !split.escape && !split.collecting_key {
                    let rest = buf.get(used..).unwrap_or_default();
                    let n = rest
                        .iter()
                        .position(|&c| c == b'"' || c == b'\\' || c == b'\n')
                        .unwrap_or(rest.len());
                    if n > 0 {
                        split.string_run(rest.get(..n).unwrap_or_default());
                        used += n;
                        continue;
                    }
                }
                let b = buf.get(used).copied().unwrap_or_default();
                used += 1;
                if b == b'\n' {
                    self.line += 1;
                    if self.json_lines && !split.in_string && split.depth > 0 {
                        broken_line = true;
                        break;
                    }
                }
                step = split.feed(b, self.line);
                if !matches!(step, Step::More) {
                    break;
                }
            }
            self.input.consume(used);
            if broken_line {
                self.split = Splitter::default();
                return Some(Err(DumpProblem {
                    origin: self.origin(start_line),
                    message: "unbalanced JSON value on this line (JSON lines: the rest of the line was skipped)".into(),
                }));
            }
            match step {
                Step::More => {}
                Step::Item(text, line) => {
                    return Some(Ok(RawObject { text, origin: self.origin(line) }));
                }
                Step::Done(Some(text)) => {
                    if self.line == start_line {
                        self.json_lines = true;
                    }
                    return Some(Ok(RawObject { text, origin: self.origin(start_line) }));
                }
                Step::Done(None) => return self.next_json(),
                Step::Error(message) => {
                    self.split = Splitter::default();
                    // Resynchronise at the next line.
                    let mut rest = String::new();
                    let _ = self.input.read_line(&mut rest);
                    self.line += 1;
                    return Some(Err(DumpProblem { origin: self.origin(start_line), message }));
                }
            }
        }
    }

    fn read_line(&mut self) -> Result<Option<String>, String> {
        if let Some(l) = self.pending_line.take() {
            self.line += 1;
            return Ok(Some(l));
        }
        let mut s = String::new();
        match self.input.read_line(&mut s) {
            Ok(0) => Ok(None),
            Ok(_) => {
                self.line += 1;
                Ok(Some(s))
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// YAML: the next document, or the next item of a `List` document.
    fn next_yaml(&mut self) -> Option<Result<RawObject, DumpProblem>> {
        loop {
            if let Some(indent) = self.in_items {
                match self.next_item(indent) {
                    Some(item) => return Some(item),
                    None => {
                        // The List's trailing keys (kind: List, metadata) are not a document.
                        self.in_items = None;
                        self.drain_document();
                        if self.eof && self.pending_line.is_none() {
                            return None;
                        }
                        continue;
                    }
                }
            }
            let mut text = String::new();
            let mut start = 0usize;
            let mut empty_list = false;
            loop {
                let line = match self.read_line() {
                    Ok(Some(l)) => l,
                    Ok(None) => {
                        self.eof = true;
                        break;
                    }
                    Err(e) => {
                        self.eof = true;
                        return Some(Err(DumpProblem {
                            origin: self.origin(self.line),
                            message: e,
                        }));
                    }
                };
                // `self.line` counts lines read: the one in hand is the previous.
                let number = self.line - 1;
                if is_document_marker(&line) {
                    if text.trim().is_empty() {
                        text.clear();
                        continue;
                    }
                    break;
                }
                let t = line.trim_end();
                if t == "items: []" {
                    // An empty List: its shell is not a document.
                    empty_list = true;
                    continue;
                }
                if t == "items:"
                    || (t.starts_with("items:") && t[6..].trim_start().starts_with('#'))
                {
                    // A List: the shell read so far (apiVersion, metadata) is dropped.
                    self.in_items = Some(None);
                    text.clear();
                    break;
                }
                if text.is_empty() {
                    start = number;
                }
                text.push_str(&line);
            }
            if self.in_items.is_some() {
                continue;
            }
            if !empty_list && !text.trim().is_empty() && !is_comment_only(&text) {
                return Some(Ok(RawObject { text, origin: self.origin(start.max(1)) }));
            }
            if self.eof && self.pending_line.is_none() {
                return None;
            }
        }
    }

    /// Inside an `items:` block: the next item, leaving the reader on the line after it. Items
    /// are the lines from a `-` at the block's indentation to the next one; the block ends at a
    /// line indented no deeper that is not an item (`None`).
    fn next_item(&mut self, indent: Option<usize>) -> Option<Result<RawObject, DumpProblem>> {
        let mut item = String::new();
        let mut start = 0usize;
        loop {
            let line = match self.read_line() {
                Ok(Some(l)) => l,
                Ok(None) => {
                    self.eof = true;
                    break;
                }
                Err(e) => {
                    self.eof = true;
                    return Some(Err(DumpProblem { origin: self.origin(self.line), message: e }));
                }
            };
            let number = self.line - 1;
            let body = line.trim_end_matches(['\n', '\r']);
            let trimmed = body.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                if !item.is_empty() {
                    item.push('\n');
                }
                continue;
            }
            let col = body.len() - trimmed.len();
            let is_dash = trimmed == "-" || trimmed.starts_with("- ");
            let block = match indent.or(self.in_items.flatten()) {
                Some(b) => b,
                None if is_dash => {
                    self.in_items = Some(Some(col));
                    col
                }
                None => {
                    self.unread(line);
                    return None;
                }
            };
            if is_dash && col == block {
                if !item.is_empty() {
                    // This line starts the next item.
                    self.unread(line);
                    return Some(Ok(RawObject { text: item, origin: self.origin(start) }));
                }
                start = number;
                // `- key: v` becomes `  key: v`, then everything is dedented by the block's width.
                let mut first = String::with_capacity(body.len());
                first.push_str(&body[..col]);
                first.push(' ');
                first.push_str(&body[col + 1..]);
                item.push_str(dedent(&first, block + 2));
                item.push('\n');
            } else if col > block && !item.is_empty() {
                item.push_str(dedent(body, block + 2));
                item.push('\n');
            } else {
                self.unread(line);
                break;
            }
        }
        if item.trim().is_empty() {
            return None;
        }
        Some(Ok(RawObject { text: item, origin: self.origin(start) }))
    }

    fn unread(&mut self, line: String) {
        self.pending_line = Some(line);
        self.line -= 1;
    }

    /// Skip to the next `---` (left for the caller) or the end.
    fn drain_document(&mut self) {
        loop {
            match self.read_line() {
                Ok(Some(l)) if is_document_marker(&l) => {
                    self.unread(l);
                    return;
                }
                Ok(Some(_)) => {}
                _ => {
                    self.eof = true;
                    return;
                }
            }
        }
    }
}

fn is_document_marker(line: &str) -> bool {
    let t = line.trim_end();
    t == "---" || t == "..." || t.starts_with("--- ") || t.starts_with("---\t")
}

fn is_comment_only(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

fn dedent(line: &str, n: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(n)..]
}

impl<R: BufRead> Iterator for DumpReader<R> {
    type Item = Result<RawObject, DumpProblem>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.eof && self.pending_line.is_none() && self.in_items.is_none() {
            return None;
        }
        let json = match self.format {
            Some(j) => j,
            None => {
                // Skip leading blank lines to find the first character.
                loop {
                    match self.peek_byte() {
                        Ok(Some(b)) if b.is_ascii_whitespace() => {
                            let _ = self.next_byte();
                        }
                        Ok(Some(b)) => {
                            self.format = Some(b == b'{' || b == b'[');
                            break;
                        }
                        Ok(None) => return None,
                        Err(e) => {
                            self.eof = true;
                            return Some(Err(DumpProblem {
                                origin: self.origin(self.line),
                                message: e,
                            }));
                        }
                    }
                }
                self.format == Some(true)
            }
        };
        if json {
            self.next_json()
        } else {
            self.next_yaml()
        }
    }
}

/// What one byte did to a [`Splitter`].
enum Step {
    More,
    /// A complete element of a top-level array or of an `items` array, and its first line.
    Item(String, usize),
    /// The top-level value ended: its text, or `None` when its elements were already emitted.
    Done(Option<String>),
    Error(String),
}

/// Byte-level JSON delimiter: strings and nesting, the key being read at depth 1, and whether
/// the elements at the current depth are documents of their own.
#[derive(Default)]
struct Splitter {
    depth: usize,
    in_string: bool,
    escape: bool,
    /// The whole top-level value (only while it is not a container of documents).
    text: Vec<u8>,
    /// The last string completed at depth 1 and whether a `:` followed it (it is a key).
    key: Vec<u8>,
    collecting_key: bool,
    after_key: bool,
    /// Depth whose elements are documents (1: a top-level array; 2: a top-level `items`).
    item_depth: Option<usize>,
    item: Vec<u8>,
    item_line: Option<usize>,
    emitted: bool,
}

/// A document's bytes as text (invalid UTF-8 replaced; no copy when valid).
fn text_of(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

impl Splitter {
    /// Bytes inside a string that are neither a quote, a backslash nor a newline, not in a key
    /// being collected and not after a backslash: what [`Splitter::feed`] does with each.
    fn string_run(&mut self, run: &[u8]) {
        if self.item_depth.is_some_and(|d| self.depth > d) {
            self.item.extend_from_slice(run);
        } else {
            self.text.extend_from_slice(run);
        }
    }

    /// The bytes at the start of `buf` that only move through strings and nesting inside a
    /// document below the top level's members (or inside an item of a List): what
    /// [`Splitter::feed`] does with each of them, for the run at once, and their count. The
    /// run stops before a byte that does more: a bracket or brace that closes back to the top
    /// level's members (or to the List's items), and, in JSON lines, a newline outside
    /// strings (`line` counts the others).
    fn run(&mut self, buf: &[u8], line: &mut usize, json_lines: bool) -> usize {
        let base = self.item_depth.unwrap_or(1);
        if self.depth <= base {
            return 0;
        }
        let (mut depth, mut in_string, mut escape) = (self.depth, self.in_string, self.escape);
        let mut n = 0;
        for &c in buf {
            if in_string {
                if c == b'\n' {
                    *line += 1;
                }
                if escape {
                    escape = false;
                } else if c == b'\\' {
                    escape = true;
                } else if c == b'"' {
                    in_string = false;
                }
            } else {
                match c {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' if depth == base + 1 => break,
                    b'}' | b']' => depth -= 1,
                    b'\n' if json_lines => break,
                    b'\n' => *line += 1,
                    _ => {}
                }
            }
            n += 1;
        }
        let bytes = buf.get(..n).unwrap_or_default();
        match self.item_depth {
            Some(_) => self.item.extend_from_slice(bytes),
            None => self.text.extend_from_slice(bytes),
        }
        (self.depth, self.in_string, self.escape) = (depth, in_string, escape);
        n
    }

    fn feed(&mut self, b: u8, line: usize) -> Step {
        let in_item = self.item_depth.is_some_and(|d| self.depth > d);
        if self.in_string {
            if in_item {
                self.item.push(b);
            } else {
                self.text.push(b);
            }
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.collecting_key {
                    self.collecting_key = false;
                }
            } else if self.collecting_key {
                self.key.push(b);
            }
            return Step::More;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.item_depth.is_none() {
                    self.key.clear();
                    self.collecting_key = true;
                    self.after_key = false;
                }
            }
            b':' if self.depth == 1 => self.after_key = true,
            b'{' | b'[' => {
                if self.depth == 0 && b == b'[' {
                    self.item_depth = Some(1);
                    self.depth = 1;
                    return Step::More;
                }
                if self.depth == 1
                    && b == b'['
                    && self.after_key
                    && self.key == b"items"
                    && self.item_depth.is_none()
                {
                    self.item_depth = Some(2);
                    self.emitted = true;
                    self.depth = 2;
                    self.text.push(b);
                    return Step::More;
                }
                if self.item_depth == Some(self.depth) {
                    self.item.clear();
                    self.item_line = Some(line);
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                if self.depth == 0 {
                    return Step::Error(format!("unexpected '{}'", b as char));
                }
                if self.item_depth == Some(self.depth) {
                    // The container of documents closes.
                    self.depth -= 1;
                    self.item_depth = None;
                    self.after_key = false;
                    if self.depth == 0 {
                        return Step::Done(None);
                    }
                    self.text.push(b);
                    return Step::More;
                }
                self.depth -= 1;
                if self.item_depth == Some(self.depth) {
                    self.item.push(b);
                    self.emitted = true;
                    let line = self.item_line.take().unwrap_or(line);
                    let cap = self.item.len();
                    let item = std::mem::replace(&mut self.item, Vec::with_capacity(cap));
                    return Step::Item(text_of(item), line);
                }
                if self.depth == 0 {
                    self.text.push(b);
                    if self.emitted {
                        return Step::Done(None);
                    }
                    let cap = self.text.len();
                    let text = std::mem::replace(&mut self.text, Vec::with_capacity(cap));
                    return Step::Done(Some(text_of(text)));
                }
            }
            b',' if self.depth == 1 => self.after_key = false,
            _ => {}
        }
        if self.item_depth.is_some_and(|d| self.depth > d) {
            self.item.push(b);
        } else if self.item_depth == Some(self.depth) {
            // Separators and blanks between documents; a scalar element is not an object.
            if !(b.is_ascii_whitespace() || b == b',') {
                return Step::Error(format!(
                    "a list element that is not an object (starts with '{}')",
                    b as char
                ));
            }
        } else if !(self.emitted && self.depth <= 1) {
            self.text.push(b);
        }
        if self.depth == 0 {
            // A top-level scalar.
            return Step::Error(format!(
                "not a JSON object or array (starts with '{}')",
                b as char
            ));
        }
        Step::More
    }
}

/// How each object is evaluated.
#[derive(Clone, Debug, Default)]
pub struct AuditOptions {
    /// Evaluate each object as an UPDATE from itself to itself instead of a CREATE.
    pub update: bool,
    /// `1.30` … `1.37`; default the newest.
    pub kubernetes_version: Option<String>,
}

/// What one (policy, binding) did with one object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingOutcome {
    pub policy: String,
    /// Empty for a policy-level configuration error.
    pub binding: String,
    pub denied: bool,
    pub warned: bool,
    pub audited: bool,
    pub error: bool,
}

/// One object's evaluation.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReport {
    pub origin: Origin,
    /// `apiVersion/kind` and identity as found in the object (empty when it did not parse).
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    /// `false`: the request would be rejected.
    pub allowed: bool,
    /// The rejection message (the apiserver's Status message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub audit_annotations: BTreeMap<String, String>,
    /// Only the (policy, binding) pairs that evaluated the object.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<BindingOutcome>,
    /// Request-level problems (the document does not parse, no kind, an unknown resource).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// The object's namespace was not in the manifests and was assumed to exist with only its
    /// `kubernetes.io/metadata.name` label.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub assumed_namespace: bool,
}

impl ObjectReport {
    /// A document that could not be read or parsed.
    pub fn broken(origin: Origin, message: impl Into<String>) -> Self {
        ObjectReport { origin, allowed: true, problems: vec![message.into()], ..Default::default() }
    }

    /// Worth listing: denied, warned, audited, errors or problems.
    pub fn is_notable(&self) -> bool {
        !self.allowed
            || !self.warnings.is_empty()
            || !self.problems.is_empty()
            || self.outcomes.iter().any(|o| o.denied || o.warned || o.audited || o.error)
    }
}

/// Evaluates objects against one compiled set of policies.
pub struct Auditor {
    set: PolicySet,
    options: AuditOptions,
    /// Namespaces assumed because an object lived in one the manifests did not supply.
    assumed: std::collections::BTreeSet<String>,
}

impl Auditor {
    /// Compile `manifests` (policies, bindings, params, namespaces, CRDs, RBAC; YAML/JSON text).
    pub fn new(manifests: &str, options: AuditOptions) -> Self {
        let mut set = compile(
            &Manifests::Text(manifests.to_string()),
            &PolicySetOptions {
                kubernetes_version: options.kubernetes_version.clone(),
                ..Default::default()
            },
        );
        // The audit reads decisions and per-binding outcomes, not the explanatory trace.
        set.summary_trace = true;
        Auditor { set, options, assumed: Default::default() }
    }

    /// Loading, validation and compile problems of the manifests.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.set.diagnostics
    }

    /// The manifest text the diagnostics' spans index.
    pub fn manifest_text(&self) -> &str {
        &self.set.text
    }

    /// Parse and evaluate one document.
    pub fn audit(&mut self, raw: &RawObject) -> ObjectReport {
        // A JSON object is read as the package reads a request object
        // (`objects::read_object`: checked against its type as it is read, so that
        // normalisation skips the decoder's walk when there is nothing to decode). A text with
        // a `\u` escape goes to serde_json as before (the reader reads a lone surrogate as Go
        // does, serde_json rejects it), and so does any text the reader declines (a float, a
        // repeated key, collections nested deeper than serde_json reads, a syntax error:
        // serde_json's value or error, as before).
        let json = raw.text.trim_start().starts_with('{');
        if json && !raw.text.contains("\\u") {
            let read = crate::objects::read_object_within(&raw.text, self.set.version, SERDE_DEPTH);
            if let Some((value, decoded)) = read {
                let text = raw.text.trim();
                let text = (!self.set.summary_trace).then_some(text);
                return self.audit_parsed(raw.origin.clone(), value, text, decoded);
            }
        }
        let value = match parse_document(&raw.text) {
            Ok(v) => v,
            Err(e) => return ObjectReport::broken(raw.origin.clone(), e),
        };
        // A JSON document's text is its value's text: normalisation then reads the values as
        // given from it instead of copying the object first (as the package's JSON path does).
        // The summary trace lists no changes and never reads it: not copied then.
        let text = raw.text.trim();
        let text = (!self.set.summary_trace && text.starts_with('{')).then_some(text);
        self.audit_parsed(raw.origin.clone(), value, text, None)
    }

    /// Evaluate one parsed object.
    pub fn audit_value(&mut self, origin: Origin, object: Json) -> ObjectReport {
        self.audit_parsed(origin, object, None, None)
    }

    /// `text`: the JSON text `object` was parsed from, if any; `decoded`: what reading it
    /// found of its decoding.
    fn audit_parsed(
        &mut self,
        origin: Origin,
        object: Json,
        text: Option<&str>,
        decoded: Option<crate::objects::Decoded>,
    ) -> ObjectReport {
        let meta = object.get("metadata");
        let field = |k: &str| {
            meta.and_then(|m| m.get(k)).and_then(Json::as_str).unwrap_or_default().to_string()
        };
        let top = |k: &str| object.get(k).and_then(Json::as_str).unwrap_or_default();
        let (api_version, kind) = (top("apiVersion"), top("kind"));
        // `apiVersion/kind`, made at its size (`format!` costs more).
        let mut kind_text = String::with_capacity(api_version.len() + 1 + kind.len());
        kind_text.push_str(api_version);
        kind_text.push('/');
        kind_text.push_str(kind);
        let mut report = ObjectReport {
            origin,
            kind: kind_text,
            namespace: field("namespace"),
            name: field("name"),
            allowed: true,
            ..Default::default()
        };
        if !object.is_object() {
            report.problems.push("the document is not an object".into());
            return report;
        }
        // The whole admission chain, as `evaluate` runs it (objects as the apiserver stores
        // them, webhooks, Kyverno), on the set compiled once. A namespace the manifests do not
        // supply is assumed to exist with only its name label (missingNamespaces: assume): a
        // namespaced object in a dump lives in a namespace that exists.
        let docs = RequestDocuments {
            old_object: self.options.update.then(|| Document::Object(object.clone())),
            object: Some(Document::Object(object)),
            request: self.options.update.then(|| Document::Object(json!({"operation": "UPDATE"}))),
        };
        let texts = ObjectTexts {
            object: text.map(str::to_string),
            old_object: text.filter(|_| self.options.update).map(str::to_string),
            // The old object is a copy of the object.
            decoded: [decoded, decoded.filter(|_| self.options.update)],
        };
        let result = evaluate_documents(&self.set, docs, texts);
        if !self.assumed.contains(&report.namespace)
            && result.diagnostics.iter().any(|d| d.code == "namespace-assumed")
        {
            self.assumed.insert(report.namespace.clone());
        }
        report.assumed_namespace = self.assumed.contains(&report.namespace);
        // The request's own problems: the manifests' are the auditor's (`diagnostics`), and
        // lead a full trace's list.
        let own = match self.set.summary_trace {
            true => &result.diagnostics[..],
            false => result.diagnostics.get(self.set.diagnostics.len()..).unwrap_or_default(),
        };
        for d in own.iter().filter(|d| d.severity == Severity::Error) {
            report.problems.push(d.message.clone());
        }
        if result.request.is_none() {
            return report;
        }
        report.allowed = result.response.allowed;
        report.message = result.response.status.map(|s| s.message);
        report.warnings = result.response.warnings;
        report.audit_annotations = result.response.audit_annotations;
        for p in &result.policies {
            if p.configuration_error.is_some() {
                report.outcomes.push(BindingOutcome {
                    policy: p.name.clone(),
                    error: true,
                    ..Default::default()
                });
            }
            for b in p.bindings.iter().filter(|b| b.matched) {
                let mut o = BindingOutcome {
                    policy: p.name.clone(),
                    binding: b.name.clone(),
                    error: b.configuration_error.is_some(),
                    ..Default::default()
                };
                for e in &b.evaluations {
                    o.error |= e.error.is_some();
                    for v in &e.validations {
                        o.error |= v.decision == "error";
                        o.denied |= v.actions.iter().any(|a| a == "Deny");
                        o.warned |= v.actions.iter().any(|a| a == "Warn");
                        o.audited |= v.actions.iter().any(|a| a == "Audit");
                    }
                }
                report.outcomes.push(o);
            }
        }
        report
    }
}

/// How deep serde_json reads nested collections (its recursion limit, 128, stops at the 128th).
const SERDE_DEPTH: usize = 127;

/// Parse one document: JSON through serde_json (fast), anything else through the YAML loader.
pub fn parse_document(text: &str) -> Result<Json, String> {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"));
    }
    let (docs, errors) = parse_stream(text);
    if let Some(e) = errors.first() {
        return Err(format!("invalid YAML: line {}, column {}: {}", e.line, e.column, e.message));
    }
    let mut values = docs.into_iter().map(|d| d.value).filter(|v| !v.is_null());
    match (values.next(), values.next()) {
        (Some(v), None) => Ok(v),
        (None, _) => Err("empty document".into()),
        (Some(_), Some(_)) => Err("more than one document".into()),
    }
}

/// Counts for one (policy, binding).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Objects the binding matched (and evaluated, or failed to configure).
    pub matched: u64,
    pub denied: u64,
    pub warned: u64,
    pub audited: u64,
    pub errors: u64,
}

/// Per-run totals and per-(policy, binding) counts.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub objects: u64,
    /// Objects the policies would reject.
    pub denied: u64,
    pub with_warnings: u64,
    /// Documents that could not be read or evaluated.
    pub problems: u64,
    /// Namespaces assumed to exist (not in the manifests).
    pub assumed_namespaces: u64,
    /// `policy` → `binding` (empty: policy-level) → counts.
    pub bindings: BTreeMap<String, BTreeMap<String, Counts>>,
}

impl Summary {
    pub fn add(&mut self, r: &ObjectReport) {
        self.objects += 1;
        self.denied += u64::from(!r.allowed);
        self.with_warnings += u64::from(!r.warnings.is_empty());
        self.problems += u64::from(!r.problems.is_empty());
        self.assumed_namespaces += u64::from(r.assumed_namespace);
        for o in &r.outcomes {
            // Counted before: one look-up per map.
            if let Some(c) = self.bindings.get_mut(&o.policy).and_then(|p| p.get_mut(&o.binding)) {
                c.add(o);
                continue;
            }
            // The names are copied only the first time they are counted.
            if !self.bindings.contains_key(&o.policy) {
                self.bindings.insert(o.policy.clone(), BTreeMap::new());
            }
            let Some(policy) = self.bindings.get_mut(&o.policy) else { continue };
            if !policy.contains_key(&o.binding) {
                policy.insert(o.binding.clone(), Counts::default());
            }
            let Some(c) = policy.get_mut(&o.binding) else { continue };
            c.add(o);
        }
    }
}

impl Counts {
    fn add(&mut self, o: &BindingOutcome) {
        self.matched += 1;
        self.denied += u64::from(o.denied);
        self.warned += u64::from(o.warned);
        self.audited += u64::from(o.audited);
        self.errors += u64::from(o.error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Result<(String, usize), String>> {
        DumpReader::new(text.as_bytes(), "dump")
            .map(|r| match r {
                Ok(o) => {
                    let v = parse_document(&o.text).map_err(|e| format!("{}: {e}", o.origin))?;
                    let name = v["metadata"]["name"].as_str().unwrap_or("?").to_string();
                    Ok((name, o.origin.line))
                }
                Err(p) => Err(format!("{}: {}", p.origin, p.message)),
            })
            .collect()
    }

    fn names(text: &str) -> Vec<String> {
        read(text)
            .into_iter()
            .map(|r| match r {
                Ok((n, l)) => format!("{n}@{l}"),
                Err(e) => format!("ERR {e}"),
            })
            .collect()
    }

    #[test]
    fn kubectl_yaml_list_items_are_documents() {
        let dump = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n    labels:\n      x: \"1\"\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        assert_eq!(names(dump), ["a@3", "b@9"]);
    }

    #[test]
    fn multi_document_yaml_and_lists_mix() {
        let dump = "# pods\nkind: Pod\nmetadata: {name: a}\n---\nkind: List\nitems:\n  - kind: Pod\n    metadata: {name: b}\n  - kind: Pod\n    metadata: {name: c}\n---\n---\nkind: Pod\nmetadata: {name: d}\n";
        assert_eq!(names(dump), ["a@1", "b@7", "c@9", "d@13"]);
        let empty = "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n---\nkind: Pod\nmetadata: {name: a}\n";
        assert_eq!(names(empty), ["a@7"]);
    }

    #[test]
    fn a_broken_yaml_document_is_one_problem() {
        let dump = "kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: [\n---\nkind: Pod\nmetadata: {name: c}\n";
        let got = names(dump);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0], "a@1");
        assert!(got[1].starts_with("ERR dump:4: invalid YAML"), "{got:?}");
        assert_eq!(got[2], "c@7");
    }

    #[test]
    fn json_list_lines_and_arrays() {
        let list = "{\n \"apiVersion\": \"v1\",\n \"items\": [\n  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}},\n  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"b}\"}}\n ],\n \"kind\": \"List\"\n}\n";
        assert_eq!(names(list), ["a@4", "b}@5"]);
        let lines = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}\n{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}\n";
        assert_eq!(names(lines), ["a@1", "b@2"]);
        let empty = "{\"apiVersion\": \"v1\", \"items\": [], \"kind\": \"List\"}\n{\"metadata\":{\"name\":\"a\"}}";
        assert_eq!(names(empty), ["a@2"]);
        let array = "[{\"metadata\":{\"name\":\"a\"}}, {\"metadata\":{\"name\":\"b\"}}]";
        assert_eq!(names(array), ["a@1", "b@1"]);
        let single = "{\"kind\":\"Pod\",\n\"metadata\":{\"name\":\"a\"}}";
        assert_eq!(names(single), ["a@1"]);
    }

    #[test]
    fn a_broken_json_line_is_skipped_and_reading_goes_on() {
        let lines = "{\"metadata\":{\"name\":\"a\"}}\n{\"metadata\":{\"name\":\"b\"\n{\"metadata\":{\"name\":\"c\"}}\n{\"metadata\": }\n{\"metadata\":{\"name\":\"e\"}}\n";
        let got = names(lines);
        assert_eq!(got[0], "a@1");
        assert!(got[1].starts_with("ERR dump:2: unbalanced"), "{got:?}");
        assert_eq!(got[2], "c@3");
        assert!(got[3].starts_with("ERR dump:4: invalid JSON"), "{got:?}");
        assert_eq!(got[4], "e@5");
        assert_eq!(got.len(), 5);
        // Truncated at the end.
        let got = names("{\"metadata\":{\"name\":\"a\"}}\n{\"a\": [");
        assert_eq!(got[0], "a@1");
        assert!(got[1].contains("unexpected end of input"), "{got:?}");
    }

    const POLICY: &str = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: replicas}\nspec:\n  failurePolicy: Fail\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}\n  validations:\n  - expression: object.spec.replicas <= 3\n    message: too many\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: replicas-warn}\nspec:\n  policyName: replicas\n  validationActions: [Warn, Audit]\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: replicas-deny}\nspec:\n  policyName: replicas\n  validationActions: [Deny]\n  matchResources:\n    namespaceSelector: {matchLabels: {env: prod}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {env: prod}}\n";

    fn deployment(ns: &str, name: &str, replicas: i64) -> Json {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns}, "spec": {"replicas": replicas}})
    }

    #[test]
    fn objects_are_evaluated_and_counted_per_binding() {
        let mut auditor = Auditor::new(POLICY, AuditOptions::default());
        assert!(
            auditor.diagnostics().iter().all(|d| d.severity != Severity::Error),
            "{:?}",
            auditor.diagnostics()
        );
        let mut summary = Summary::default();
        let reports: Vec<ObjectReport> = [
            deployment("prod", "big", 5),
            deployment("dev", "big", 5),
            deployment("prod", "small", 1),
        ]
        .into_iter()
        .map(|o| auditor.audit_value(Origin::default(), o))
        .collect();
        for r in &reports {
            summary.add(r);
        }
        assert!(!reports[0].allowed);
        assert!(reports[0].message.as_deref().unwrap_or("").contains("too many"));
        assert!(reports[1].allowed && reports[1].assumed_namespace);
        assert_eq!(reports[1].warnings.len(), 1);
        assert!(!reports[2].is_notable());
        assert_eq!(summary.objects, 3);
        assert_eq!(summary.denied, 1);
        assert_eq!(summary.assumed_namespaces, 1);
        let deny = &summary.bindings["replicas"]["replicas-deny"];
        assert_eq!((deny.matched, deny.denied, deny.warned), (2, 1, 0));
        let warn = &summary.bindings["replicas"]["replicas-warn"];
        assert_eq!((warn.matched, warn.denied, warn.warned, warn.audited), (3, 0, 2, 2));
    }

    #[test]
    fn update_of_itself_and_broken_objects() {
        let mut auditor = Auditor::new(POLICY, AuditOptions { update: true, ..Default::default() });
        let r = auditor.audit_value(Origin::default(), deployment("prod", "big", 5));
        assert!(!r.allowed);
        let r = auditor.audit(&RawObject { text: "kind: [".into(), origin: Origin::default() });
        assert!(r.allowed && r.problems[0].starts_with("invalid YAML"), "{r:?}");
        let r = auditor.audit(&RawObject { text: "- 1".into(), origin: Origin::default() });
        assert_eq!(r.problems, ["the document is not an object"]);
    }

    /// A problem of the manifests (here a validation that does not compile) is the auditor's,
    /// reported once (`Auditor::diagnostics`), not a problem of every object it evaluates; the
    /// denial it causes under `failurePolicy: Fail` is the object's.
    #[test]
    fn manifest_problems_are_not_every_objects() {
        let policy =
            POLICY.replace("object.spec.replicas <= 3", "object.spec.replicas <= undeclared()");
        assert_ne!(policy, POLICY);
        let mut auditor = Auditor::new(&policy, AuditOptions::default());
        assert!(
            auditor.diagnostics().iter().any(|d| d.severity == Severity::Error),
            "{:?}",
            auditor.diagnostics()
        );
        let r = auditor.audit_value(Origin::default(), deployment("prod", "big", 5));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert!(r.message.as_deref().unwrap_or("").contains("compilation error"), "{r:?}");
    }

    /// The summary trace the audit evaluates with (`PolicySet::summary_trace`) decides exactly
    /// as the full trace `evaluate` builds: every example object of the playground (failing and
    /// passing), as a CREATE and as an UPDATE of itself, against all the examples' policies
    /// (ValidatingAdmissionPolicies, webhooks, Kyverno), gives the same report both ways.
    #[test]
    fn the_summary_trace_decides_as_the_full_trace() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("www/examples");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("www/examples")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        files.sort();
        let is_object = |p: &std::path::Path| {
            let n = p.to_string_lossy();
            [".object.yaml", ".passing.yaml", ".failing.yaml"].iter().any(|s| n.ends_with(s))
        };
        let read = |p: &std::path::Path| std::fs::read_to_string(p).expect("example");
        let policies: Vec<String> = files
            .iter()
            .filter(|p| !is_object(p) && !p.to_string_lossy().ends_with("request.yaml"))
            .map(|p| read(p))
            .collect();
        let policies = policies.join("\n---\n");
        let (mut denied, mut allowed, mut matched) = (0, 0, 0);
        for update in [false, true] {
            let options = AuditOptions { update, ..AuditOptions::default() };
            let mut summary = Auditor::new(&policies, options.clone());
            let mut full = Auditor::new(&policies, options);
            full.set.summary_trace = false;
            assert!(summary.set.summary_trace);
            for p in files.iter().filter(|p| is_object(p)) {
                let raw = RawObject { text: read(p), origin: Origin::default() };
                let a = summary.audit(&raw);
                let b = full.audit(&raw);
                assert_eq!(
                    serde_json::to_value(&a).ok(),
                    serde_json::to_value(&b).ok(),
                    "{} (update: {update})",
                    p.display()
                );
                matched += usize::from(!a.outcomes.is_empty());
                denied += usize::from(!a.allowed);
                allowed += usize::from(a.allowed);
            }
        }
        // Both outcomes occur, and most objects match a policy and binding.
        assert!(
            denied >= 10 && allowed >= 4 && matched >= 20,
            "denied {denied}, allowed {allowed}, matched {matched}"
        );
    }
}
