//! YAML/JSON text → `serde_json::Value` documents, keeping the byte span of every node.
//!
//! Scalars are resolved the way `kubectl` sends them to the apiserver: `sigs.k8s.io/yaml`
//! (go-yaml **v2**, YAML 1.1-ish) converts YAML to JSON, and the apiserver decodes that JSON
//! keeping integers that fit int64. Consequences we reproduce:
//! * `yes`/`no`/`on`/`off`/`y`/`n` (and their capitalised forms) are booleans, `~`/`null`/empty
//!   are null;
//! * integers: Go `ParseInt(s, 0, 64)` after removing `_` (so `0x1F`, `0o17`, `010` (octal!),
//!   `+5`, `1_000`); larger integers become doubles;
//! * floats are re-encoded by Go `encoding/json`, which prints integral values without a
//!   fraction, so YAML `1.0` and `1e3` arrive as the **integers** 1 and 1000; `.inf`/`.nan`
//!   cannot be encoded (error);
//! * quoted and block scalars are strings; `!!str` forces a string;
//! * merge keys `<<` and anchors/aliases are expanded, at most [`MAX_ALIAS_NODES`] nodes in all
//!   per document (a "billion laughs" text is an error, not an out-of-memory trap; go-yaml
//!   rejects it too, as `document contains excessive aliasing`).
//! * mappings and sequences nest at most [`MAX_DEPTH`] (255) deep, as flow collections already
//!   do in the scanner (`recursion limit exceeded`). go-yaml stops at 10,000 indentation or flow
//!   levels (`exceeded max depth of 10000`), but the converter and the pipeline recurse per
//!   level: 5,000 levels of block mappings overflowed the native stack, and in wasm a few hundred
//!   exhausted the engine's stack under `evaluate` (a trap, `Maximum call stack size exceeded`
//!   in Node at 450).
//!
//! A document whose text starts with `{` or `[` is JSON (kubectl decodes it without YAML), so
//! `1.0` stays a double there.
//!
//! Parser: `saphyr-parser` (event parser with spans; ~64 KB brotli in wasm with the converter).

use std::collections::{BTreeMap, HashMap};
use vap_eval_cel::hash::FastMap;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span as YSpan, Tag};
use serde_json::{Map, Number, Value};

use crate::diagnostic::Span;

/// How a node was written in the manifest (lets callers map offsets inside a string back to
/// the text, see [`NodePos::locate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    /// `|` block scalar.
    Literal,
    /// `>` block scalar.
    Folded,
    Mapping,
    Sequence,
    /// `*alias`: the value is a copy of the anchored node; no positions inside it.
    Alias,
}

/// Position of one node of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodePos {
    /// Byte span of the value in the whole input text (quotes and block headers included).
    pub span: Span,
    /// Byte span of the mapping key that introduced the value; `None` for list items and roots.
    pub key_span: Option<Span>,
    pub style: NodeStyle,
}

impl NodePos {
    /// Map a byte offset inside the decoded string `value` of this scalar to a byte offset in
    /// the manifest `text` (so a CEL error at column N of an expression can be shown in the
    /// manifest). Walks the source and the value together, skipping indentation, quotes,
    /// escape backslashes and line folds; returns `None` when they cannot be aligned (e.g. an
    /// escape such as `\t` precedes the offset) or the node is not a scalar.
    pub fn locate(&self, text: &str, value: &str, offset: usize) -> Option<usize> {
        let mut found = None;
        self.walk(text, value, &mut |vi, at| {
            if vi >= offset || vi == value.len() {
                found = Some(at);
            }
            found.is_none()
        });
        found
    }

    /// [`NodePos::locate`] of every character offset of `value` and of its end, in order, as
    /// far as they align: one walk over the source, where calling `locate` for each offset
    /// walks it once per offset (quadratic in a long expression: the editor's cursor mapping).
    pub fn locate_all(&self, text: &str, value: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        self.walk(text, value, &mut |vi, at| {
            out.push((vi, at));
            true
        });
        out
    }

    /// Calls `f(value offset, manifest offset)` for each character of `value` that aligns with
    /// the source, then for the end (`value.len()`) if all did, until `f` returns false.
    fn walk(&self, text: &str, value: &str, f: &mut dyn FnMut(usize, usize) -> bool) {
        if matches!(self.style, NodeStyle::Mapping | NodeStyle::Sequence | NodeStyle::Alias) {
            return;
        }
        let Some(src) = text.get(self.span.start as usize..self.span.end as usize) else {
            return;
        };
        let mut src_iter = src.char_indices().peekable();
        // One past the source character of the last value character seen (the end of the value
        // is there, not after a closing quote).
        let mut last_end = None;
        for (vi, vc) in value.char_indices() {
            let found = loop {
                let (si, sc) = match src_iter.next() {
                    Some(x) => x,
                    None => break None,
                };
                let fold = (vc == ' ' || vc == '\n') && sc == '\n';
                if sc == vc || fold {
                    break Some(si);
                }
                if !(sc.is_whitespace() || sc == '"' || sc == '\'' || sc == '\\') {
                    break None;
                }
            };
            let Some(si) = found else { return };
            if !f(vi, self.span.start as usize + si) {
                return;
            }
            let sc_len = src[si..].chars().next().map_or(1, char::len_utf8);
            last_end = Some(self.span.start as usize + si + sc_len);
        }
        f(value.len(), last_end.unwrap_or(self.span.end as usize));
    }
}

/// Map from JSON path to position. Paths use `.name` for mapping keys made of
/// `[A-Za-z0-9_$@-]` and `[key]` for other keys (`metadata.labels[app.kubernetes.io/name]`),
/// `[i]` for list items, and `""` for the document root — the same strings as
/// [`super::field::FieldPath`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Positions {
    nodes: BTreeMap<String, NodePos>,
}

impl Positions {
    pub fn get(&self, path: &str) -> Option<&NodePos> {
        self.nodes.get(path)
    }
    /// The position of `path`, or of its nearest ancestor that has one.
    pub fn nearest(&self, path: &str) -> Option<&NodePos> {
        let mut p = path;
        loop {
            if let Some(n) = self.nodes.get(p) {
                return Some(n);
            }
            if p.is_empty() {
                return None;
            }
            p = parent_path(p);
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = (&String, &NodePos)> {
        self.nodes.iter()
    }
    fn insert(&mut self, path: String, pos: NodePos) {
        self.nodes.insert(path, pos);
    }
}

/// The parent of a path as rendered by [`child_path`] / [`index_path`].
pub fn parent_path(p: &str) -> &str {
    if p.ends_with(']') {
        if let Some(i) = p.rfind('[') {
            return &p[..i];
        }
    }
    match p.rfind('.') {
        Some(i) => &p[..i],
        None => "",
    }
}

/// Append a mapping key to a path.
pub fn child_path(base: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'$' | b'@'));
    match (base.is_empty(), simple) {
        (true, true) => key.to_string(),
        (false, true) => format!("{base}.{key}"),
        (_, false) => format!("{base}[{key}]"),
    }
}

/// Append a list index to a path.
pub fn index_path(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// One parsed document.
#[derive(Clone, Debug, PartialEq)]
pub struct RawDocument {
    /// 0-based index of the `---`-separated document in the input.
    pub index: usize,
    /// `Value::Null` for an empty document.
    pub value: Value,
    pub positions: Positions,
    /// Byte span of the whole document text.
    pub span: Span,
}

/// A syntax or conversion problem in one document.
#[derive(Clone, Debug, PartialEq)]
pub struct YamlError {
    pub document: usize,
    pub message: String,
    /// Byte span in the input text.
    pub span: Span,
    /// 1-based line and column (in characters).
    pub line: usize,
    pub column: usize,
    /// Path of the node the error is about, when known.
    pub path: String,
}

/// Split `text` into `---`-separated documents and parse each on its own, so that a syntax
/// error in one document does not hide the others. Documents that are empty (or comments only)
/// yield no [`RawDocument`] but keep their index.
pub fn parse_stream(text: &str) -> (Vec<RawDocument>, Vec<YamlError>) {
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    let chunks = split_documents(text);
    let json_mode = text.trim_start_matches('\u{feff}').trim_start().starts_with(['{', '[']);
    for (index, (start, end)) in chunks.into_iter().enumerate() {
        let chunk = &text[start..end];
        if is_blank_document(chunk) {
            continue;
        }
        let mut conv = Converter::new(text, start, chunk, index, json_mode);
        match conv.run() {
            Ok(Some(value)) => docs.push(RawDocument {
                index,
                value,
                positions: std::mem::take(&mut conv.positions),
                span: Span::new(start, end),
            }),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        errors.append(&mut conv.soft_errors);
    }
    (docs, errors)
}

/// The value of `text` when it is one strict JSON object whose every number is an int64 and
/// whose objects have no repeated key, read in one pass without positions (crates/vap-eval-json);
/// `None` otherwise.
///
/// This is the request objects' fast path: for such a text [`parse_stream`] (which also records
/// the position of every node, several times slower) gives exactly this value, so callers use it
/// first and fall back to [`parse_stream`] for everything else — YAML, a syntax error (reported
/// with its position), a repeated key (an error there; a JSON decoder would keep the last),
/// numbers with a fraction or an exponent or beyond int64 (the YAML scalar resolution decides
/// how a long mantissa rounds, and `-0` is a double), and nesting deeper than [`MAX_DEPTH`] (an
/// error there). Whitespace is JSON's: a tab between tokens is JSON (kubectl reads it) but the
/// positions loader reports it as YAML. Surrogate escapes are read as kubectl's JSON decoder
/// reads them, where the YAML scanner rejects them: a pair is one character, a lone one U+FFFD.
pub fn parse_json_object(text: &str) -> Option<Value> {
    parse_json_object_with(text, None)
}

/// [`parse_json_object`], telling `schema` what it reads ([`vap_eval_json::read_with`]).
pub fn parse_json_object_with(
    text: &str,
    schema: Option<&mut dyn vap_eval_json::Schema>,
) -> Option<Value> {
    parse_json_object_within(text, MAX_DEPTH, schema)
}

/// [`parse_json_object_with`], `None` for collections nested deeper than `max_depth`.
pub fn parse_json_object_within(
    text: &str,
    max_depth: usize,
    schema: Option<&mut dyn vap_eval_json::Schema>,
) -> Option<Value> {
    if !text.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{') {
        return None;
    }
    vap_eval_json::read_with(text, max_depth, schema)
}

/// The value at `path` in `text`, a text [`parse_json_object`] accepted, read without parsing
/// the rest: the members and elements before it are skipped over, and only the value found is
/// parsed. What [`crate::objects`] needs to report a change's value as given, instead of
/// copying the whole parsed object before normalising it. `None` when the path does not exist
/// (as a lookup in the parsed value: a key of an object, an index of a list).
pub fn json_value_at(text: &str, path: &[crate::objects::Seg]) -> Option<Value> {
    use crate::objects::Seg;
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    for seg in path {
        match (seg, b.get(i)?) {
            (Seg::Key(k), b'{') => {
                i = skip_ws(b, i + 1);
                loop {
                    if *b.get(i)? != b'"' {
                        return None; // `}`: not there
                    }
                    let end = skip_string(b, i)?;
                    let raw = text.get(i..end)?;
                    let found = match raw.get(1..raw.len() - 1) {
                        Some(plain) if !plain.contains('\\') => plain == k,
                        _ => vap_eval_json::read(raw, MAX_DEPTH)?.as_str() == Some(k.as_str()),
                    };
                    // `:` and the value.
                    i = skip_ws(b, skip_ws(b, end) + 1);
                    if found {
                        break;
                    }
                    i = skip_ws(b, skip_value(b, i)?);
                    if *b.get(i)? == b',' {
                        i = skip_ws(b, i + 1);
                    }
                }
            }
            (Seg::Index(n), b'[') => {
                i = skip_ws(b, i + 1);
                if *b.get(i)? == b']' {
                    return None;
                }
                for _ in 0..*n {
                    i = skip_ws(b, skip_value(b, i)?);
                    if *b.get(i)? != b',' {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                }
            }
            _ => return None,
        }
    }
    let end = skip_value(b, i)?;
    vap_eval_json::read(text.get(i..end)?, MAX_DEPTH)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (its opening quote).
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The end of the JSON value starting at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let (mut j, mut depth) = (i, 0usize);
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while !matches!(
                b.get(j),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Byte ranges of the documents: a line starting with `---` (followed by a blank or the end of
/// the line) starts a new document. Text before the first separator is document 0 only if it
/// is not blank.
fn split_documents(text: &str) -> Vec<(usize, usize)> {
    let mut starts = vec![0usize];
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end_matches(['\n', '\r']);
        if l.starts_with("---") && (l.len() == 3 || l[3..].starts_with([' ', '\t'])) && offset > 0 {
            starts.push(offset);
        }
        offset += line.len();
    }
    let mut out = Vec::new();
    for (i, s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(text.len());
        out.push((*s, e));
    }
    if out.len() > 1 && is_blank_document(&text[out[0].0..out[0].1]) {
        out.remove(0);
    }
    out
}

fn is_blank_document(chunk: &str) -> bool {
    chunk.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---" || t == "..." || t.starts_with('%')
    })
}

type ParseStep<T> = Result<T, YamlError>;

/// How many nodes alias expansion may add to one document.
pub const MAX_ALIAS_NODES: usize = 1_000_000;

/// How deep mappings and sequences may nest in one document: as deep as flow collections may
/// (saphyr's flow level is a `u8`).
pub const MAX_DEPTH: usize = 255;

struct Converter<'a> {
    full: &'a str,
    base: usize,
    chunk: &'a str,
    /// Byte offset (within `chunk`) of every char index, plus one past the end.
    char_bytes: Vec<usize>,
    document: usize,
    json_mode: bool,
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Anchored values with their node counts.
    anchors: HashMap<usize, (Value, usize)>,
    /// Nodes converted so far (aliases count the nodes they expand to).
    nodes: usize,
    /// Nodes added by alias expansion so far.
    alias_nodes: usize,
    /// Mappings and sequences open around the node being converted.
    depth: usize,
    positions: Positions,
    soft_errors: Vec<YamlError>,
}

impl<'a> Converter<'a> {
    fn new(full: &'a str, base: usize, chunk: &'a str, document: usize, json_mode: bool) -> Self {
        let mut char_bytes: Vec<usize> = chunk.char_indices().map(|(i, _)| i).collect();
        char_bytes.push(chunk.len());
        Converter {
            full,
            base,
            chunk,
            char_bytes,
            document,
            json_mode,
            parser: Parser::new_from_str(chunk),
            anchors: HashMap::new(),
            nodes: 0,
            alias_nodes: 0,
            depth: 0,
            positions: Positions::default(),
            soft_errors: Vec::new(),
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        let i = char_index.min(self.char_bytes.len().saturating_sub(1));
        self.base + self.char_bytes.get(i).copied().unwrap_or(self.chunk.len())
    }

    fn span(&self, s: &YSpan) -> Span {
        Span::new(self.byte(s.start.index()), self.byte(s.end.index()))
    }

    fn error_at(&self, span: Span, message: String, path: &str) -> YamlError {
        let (line, column) = line_col(self.full, span.start as usize);
        YamlError { document: self.document, message, span, line, column, path: path.to_string() }
    }

    #[cold]
    #[inline(never)]
    fn scan_error(&self, e: &ScanError) -> YamlError {
        let b = self.byte(e.marker().index());
        self.error_at(Span::new(b, b), format!("yaml: {}", e.info()), "")
    }

    fn next(&mut self) -> ParseStep<(Event<'a>, YSpan)> {
        match self.parser.next_event() {
            Some(Ok(ev)) => Ok(ev),
            Some(Err(e)) => Err(self.scan_error(&e)),
            None => Err(self.unexpected_end()),
        }
    }

    #[cold]
    #[inline(never)]
    fn unexpected_end(&self) -> YamlError {
        let end = self.base + self.chunk.len();
        self.error_at(Span::new(end, end), "yaml: unexpected end of input".into(), "")
    }

    /// Parse the chunk: exactly one document expected (a second one is reported and ignored).
    fn run(&mut self) -> ParseStep<Option<Value>> {
        let mut result: Option<Value> = None;
        loop {
            let (ev, span) = self.next()?;
            match ev {
                Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
                Event::StreamEnd => break,
                Event::DocumentStart(_) => {
                    let (ev, span) = self.next()?;
                    if matches!(ev, Event::DocumentEnd) {
                        continue;
                    }
                    let v = self.node(ev, span, "", None)?;
                    if result.is_none() {
                        result = Some(v);
                    } else {
                        let sp = self.span(&span);
                        self.soft_errors.push(
                            self.error_at(
                                sp,
                                "yaml: a second document without a `---` separator line is ignored"
                                    .into(),
                                "",
                            ),
                        );
                    }
                }
                _ => {
                    let sp = self.span(&span);
                    return Err(self.error_at(sp, "yaml: unexpected event".into(), ""));
                }
            }
        }
        Ok(result)
    }

    fn node(
        &mut self,
        ev: Event<'a>,
        span: YSpan,
        path: &str,
        key_span: Option<Span>,
    ) -> ParseStep<Value> {
        let sp = self.span(&span);
        let first_node = self.nodes;
        self.nodes += 1;
        let opens = matches!(ev, Event::SequenceStart(..) | Event::MappingStart(..));
        if opens {
            if self.depth == MAX_DEPTH {
                let message = format!("yaml: exceeded max depth of {MAX_DEPTH}");
                return Err(self.error_at(sp, message, path));
            }
            self.depth += 1;
        }
        let v = self.node_value(ev, sp, path, key_span, first_node);
        if opens {
            self.depth -= 1;
        }
        v
    }

    fn node_value(
        &mut self,
        ev: Event<'a>,
        sp: Span,
        path: &str,
        key_span: Option<Span>,
        first_node: usize,
    ) -> ParseStep<Value> {
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let node_style = match style {
                    ScalarStyle::Plain => NodeStyle::Plain,
                    ScalarStyle::SingleQuoted => NodeStyle::SingleQuoted,
                    ScalarStyle::DoubleQuoted => NodeStyle::DoubleQuoted,
                    ScalarStyle::Literal => NodeStyle::Literal,
                    ScalarStyle::Folded => NodeStyle::Folded,
                };
                self.positions
                    .insert(path.to_string(), NodePos { span: sp, key_span, style: node_style });
                let v = self.scalar(&text, style, tag.as_deref(), sp, path)?;
                if anchor > 0 {
                    self.anchor(anchor, &v, 1);
                }
                Ok(v)
            }
            Event::Alias(id) => self.alias(id, sp, path, key_span),
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                let end;
                loop {
                    let (ev, s) = self.next()?;
                    if matches!(ev, Event::SequenceEnd) {
                        end = self.span(&s);
                        break;
                    }
                    let p = index_path(path, items.len());
                    items.push(self.node(ev, s, &p, None)?);
                }
                self.positions.insert(
                    path.to_string(),
                    NodePos { span: sp.cover(end), key_span, style: NodeStyle::Sequence },
                );
                let v = Value::Array(items);
                if anchor > 0 {
                    self.anchor(anchor, &v, self.nodes - first_node);
                }
                Ok(v)
            }
            Event::MappingStart(anchor, _) => {
                let v = self.mapping(sp, path, key_span)?;
                if anchor > 0 {
                    self.anchor(anchor, &v, self.nodes - first_node);
                }
                Ok(v)
            }
            _ => Err(self.error_at(sp, "yaml: unexpected event".into(), path)),
        }
    }

    // Anchors, aliases, merge keys, complex and duplicate keys out of line (most manifests have
    // none): V8 compiles a function whole on its first call, so code inlined into
    // `node_value` costs a page's first `evaluate()`.

    /// Remember the value of anchor `anchor` (`nodes` nodes).
    #[cold]
    #[inline(never)]
    fn anchor(&mut self, anchor: usize, v: &Value, nodes: usize) {
        self.anchors.insert(anchor, (v.clone(), nodes));
    }

    /// The value of alias `id`.
    #[cold]
    #[inline(never)]
    fn alias(
        &mut self,
        id: usize,
        sp: Span,
        path: &str,
        key_span: Option<Span>,
    ) -> ParseStep<Value> {
        self.positions
            .insert(path.to_string(), NodePos { span: sp, key_span, style: NodeStyle::Alias });
        match self.anchors.get(&id) {
            Some((_, n)) if self.alias_nodes + n > MAX_ALIAS_NODES => {
                Err(self.error_at(sp, "yaml: document contains excessive aliasing".into(), path))
            }
            Some((v, n)) => {
                self.alias_nodes += n;
                self.nodes += n - 1;
                Ok(v.clone())
            }
            None => Err(self.error_at(sp, "yaml: unknown anchor referenced".into(), path)),
        }
    }

    /// A merge key's value (`<<`): a mapping or a list of mappings, into `merged`.
    #[cold]
    #[inline(never)]
    fn merge_key(
        &mut self,
        ksp: Span,
        path: &str,
        merged: &mut Vec<Map<String, Value>>,
    ) -> ParseStep<()> {
        let (vev, vs) = self.next()?;
        let v = self.node(vev, vs, &child_path(path, "<<"), Some(ksp))?;
        match v {
            Value::Object(m) => merged.push(m),
            Value::Array(items) => {
                for it in items {
                    if let Value::Object(m) = it {
                        merged.push(m);
                    }
                }
            }
            _ => {
                return Err(self.error_at(
                    ksp,
                    "yaml: map merge requires map or sequence of maps as the value".into(),
                    path,
                ))
            }
        }
        Ok(())
    }

    /// A complex key (event `key`): the key node and its value skipped, reported.
    #[cold]
    #[inline(never)]
    fn complex_key(&mut self, key: Event<'a>, ks: YSpan, ksp: Span, path: &str) -> ParseStep<()> {
        let _ = self.node(key, ks, &child_path(path, "?"), None)?;
        let (vev, vs) = self.next()?;
        let _ = self.node(vev, vs, &child_path(path, "?"), None)?;
        self.soft_errors.push(self.error_at(
            ksp,
            "yaml: only scalar mapping keys are supported (JSON objects have string keys)".into(),
            path,
        ));
        Ok(())
    }

    /// A key already set in its map (first at byte `first`), reported at `ksp`.
    #[cold]
    #[inline(never)]
    fn duplicate_key(&mut self, key: &str, first: usize, ksp: Span, p: &str) {
        let (line, _) = line_col(self.full, ksp.start as usize);
        let (first, _) = line_col(self.full, first);
        self.soft_errors.push(self.error_at(
            ksp,
            format!("yaml: unmarshal errors:\n  line {line}: key {} already set in map (first at line {first})", super::field::go_quote(key)),
            p,
        ));
    }

    /// The values of the merge keys' maps not set in `map`.
    #[cold]
    #[inline(never)]
    fn merge(map: &mut Map<String, Value>, merged: Vec<Map<String, Value>>) {
        for m in merged {
            for (k, v) in m {
                if !map.contains_key(&k) {
                    map.insert(k, v);
                }
            }
        }
    }

    fn mapping(&mut self, start: Span, path: &str, key_span: Option<Span>) -> ParseStep<Value> {
        let mut map = Map::new();
        let mut merged: Vec<Map<String, Value>> = Vec::new();
        let mut key_lines: FastMap<String, usize> = FastMap::default();
        let end;
        loop {
            let (kev, ks) = self.next()?;
            let ksp = self.span(&ks);
            let key = match kev {
                Event::MappingEnd => {
                    end = ksp;
                    break;
                }
                Event::Scalar(text, style, _, tag) => {
                    if style == ScalarStyle::Plain && text == "<<" && tag.is_none() {
                        // Merge key: value is a mapping or a list of mappings.
                        self.merge_key(ksp, path, &mut merged)?;
                        continue;
                    }
                    let kv = self.scalar(&text, style, tag.as_deref(), ksp, path)?;
                    key_string(&kv)
                }
                other => {
                    // Complex keys: skip the key node and its value; report.
                    self.complex_key(other, ks, ksp, path)?;
                    continue;
                }
            };
            let (vev, vs) = self.next()?;
            let p = child_path(path, &key);
            let v = self.node(vev, vs, &p, Some(ksp))?;
            // Lines are counted only for the message: counting them for every key made loading
            // quadratic in the document's length.
            if let Some(&first) = key_lines.get(&key) {
                self.duplicate_key(&key, first, ksp, &p);
                continue;
            }
            key_lines.insert(key.clone(), ksp.start as usize);
            map.insert(key, v);
        }
        if !merged.is_empty() {
            Self::merge(&mut map, merged);
        }
        self.positions.insert(
            path.to_string(),
            NodePos { span: start.cover(end), key_span, style: NodeStyle::Mapping },
        );
        Ok(Value::Object(map))
    }

    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        tag: Option<&Tag>,
        span: Span,
        path: &str,
    ) -> ParseStep<Value> {
        let core_tag = tag.and_then(|t| {
            if t.is_yaml_core_schema() || t.handle == "!!" {
                Some(t.suffix.as_str())
            } else {
                None
            }
        });
        match core_tag {
            Some("str") | Some("binary") | Some("timestamp") => {
                return Ok(Value::String(text.to_string()))
            }
            Some("int") | Some("float") | Some("bool") | Some("null") => {}
            _ => {
                if style != ScalarStyle::Plain {
                    return Ok(Value::String(text.to_string()));
                }
            }
        }
        if self.json_mode {
            return Ok(resolve_json_scalar(text));
        }
        match resolve_yaml_scalar(text) {
            Ok(v) => Ok(v),
            Err(msg) => Err(self.error_at(span, msg, path)),
        }
    }
}

/// 1-based line and column (columns count characters) of a byte offset.
pub fn line_col(text: &str, byte: usize) -> (usize, usize) {
    let (line, column) = crate::diagnostic::line_column(text, byte.min(u32::MAX as usize) as u32);
    (line as usize, column as usize)
}

fn key_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// A plain scalar in a JSON document.
fn resolve_json_scalar(text: &str) -> Value {
    match text {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        "null" => return Value::Null,
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return Value::Number(i.into());
    }
    let numeric = text.bytes().next().is_some_and(|b| b == b'-' || b.is_ascii_digit());
    if numeric {
        if let Ok(f) = text.parse::<f64>() {
            if let Some(n) = Number::from_f64(f) {
                return Value::Number(n);
            }
        }
    }
    Value::String(text.to_string())
}

/// A plain scalar in a YAML document, resolved as go-yaml v2 + JSON round trip (module doc).
pub fn resolve_yaml_scalar(text: &str) -> Result<Value, String> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Ok(Value::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Ok(Value::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        ".nan" | ".NaN" | ".NAN" => return Err("json: unsupported value: NaN".into()),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Err("json: unsupported value: +Inf".into())
        }
        "-.inf" | "-.Inf" | "-.INF" => return Err("json: unsupported value: -Inf".into()),
        _ => {}
    }
    let first = text.as_bytes()[0];
    if first.is_ascii_digit() || first == b'+' || first == b'-' {
        let plain: String = text.chars().filter(|&c| c != '_').collect();
        if let Some(i) = go_parse_int(&plain) {
            return Ok(Value::Number(i.into()));
        }
        return Ok(not_int(text, &plain));
    }
    if first == b'.' {
        return Ok(dot_scalar(text));
    }
    Ok(Value::String(text.to_string()))
}

/// A plain scalar starting with a digit or a sign that is not an int: a uint, a float, a binary
/// int or a string (out of line, as [`dot_scalar`]: the usual manifests' numbers are ints, and
/// a page's first `evaluate()` compiles what is inlined into the functions it calls).
#[inline(never)]
fn not_int(text: &str, plain: &str) -> Value {
    if go_parse_uint(plain).is_some() {
        // Go prints the uint64; the apiserver cannot fit it in int64 and decodes a float64.
        if let Ok(f) = plain.trim_start_matches('+').parse::<f64>() {
            return float_after_json(f);
        }
    }
    if is_yaml_style_float(plain) {
        if let Ok(f) = plain.parse::<f64>() {
            return float_after_json(f);
        }
    }
    if let Some(rest) = plain.strip_prefix("0b") {
        if let Ok(i) = i64::from_str_radix(rest, 2) {
            return Value::Number(i.into());
        }
    } else if let Some(rest) = plain.strip_prefix("-0b") {
        if let Ok(i) = i64::from_str_radix(rest, 2) {
            return Value::Number((-i).into());
        }
    }
    Value::String(text.to_string())
}

/// A plain scalar starting with `.`: a finite float, or a string.
#[cold]
#[inline(never)]
fn dot_scalar(text: &str) -> Value {
    if let Ok(f) = text.parse::<f64>() {
        if f.is_finite() {
            return float_after_json(f);
        }
    }
    Value::String(text.to_string())
}

/// Go `encoding/json` prints integral floats below 1e21 without fraction or exponent, and the
/// apiserver then decodes them as int64 when they fit.
fn float_after_json(f: f64) -> Value {
    // (Integral values of 2^63 and above print as digits too, but then do not fit int64.)
    if f.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        return Value::Number((f as i64).into());
    }
    Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go `strconv.ParseUint(s, 0, 64)` digits part (after sign handling by callers).
fn go_parse_unsigned_base0(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(r) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (r, 16)
    } else if let Some(r) = s.strip_prefix("0o").or_else(|| s.strip_prefix("0O")) {
        (r, 8)
    } else if let Some(r) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (r, 2)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Go `strconv.ParseInt(s, 0, 64)`.
fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let u = go_parse_unsigned_base0(rest)?;
    if neg {
        if u <= (i64::MAX as u64) + 1 {
            Some((u as i128).wrapping_neg() as i64)
        } else {
            None
        }
    } else if u <= i64::MAX as u64 {
        Some(u as i64)
    } else {
        None
    }
}

/// Go `strconv.ParseUint(s, 0, 64)` (no sign allowed).
fn go_parse_uint(s: &str) -> Option<u64> {
    if s.starts_with(['+', '-']) {
        return None;
    }
    go_parse_unsigned_base0(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `json_value_at` reads what a lookup in the parsed value finds, at every path of a
    /// document (escaped keys and strings, brackets inside strings, nested lists, JSON's
    /// whitespace), and nothing where the parsed value has nothing.
    #[test]
    fn json_value_at_agrees_with_the_parsed_value() {
        use crate::objects::Seg;
        let text = "{ \"a\" : {\"x\":[1, [2,{\"k\":\"v]}\"}], {\"y\":null}],\"b\\\"q\":\"s\\\"}{\"},\t\r\n\"e\":{},\"l\":[],\"n\":-12,\"t\":true,\"é\":\"\\u00e9\"}";
        let value = parse_json_object(text).expect("plain JSON");
        fn paths(v: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
            out.push(at.clone());
            match v {
                Value::Object(m) => {
                    for (k, x) in m {
                        at.push(Seg::Key(k.clone()));
                        paths(x, at, out);
                        at.pop();
                    }
                    at.push(Seg::Key("missing".into()));
                    out.push(at.clone());
                    at.pop();
                }
                Value::Array(a) => {
                    for (i, x) in a.iter().enumerate() {
                        at.push(Seg::Index(i));
                        paths(x, at, out);
                        at.pop();
                    }
                    at.push(Seg::Index(a.len()));
                    out.push(at.clone());
                    at.pop();
                }
                _ => {
                    at.push(Seg::Key("x".into()));
                    out.push(at.clone());
                    at.pop();
                    at.push(Seg::Index(0));
                    out.push(at.clone());
                    at.pop();
                }
            }
        }
        let mut all = Vec::new();
        paths(&value, &mut Vec::new(), &mut all);
        assert!(all.len() > 20, "{} paths", all.len());
        for path in &all {
            let mut want = Some(&value);
            for s in path {
                want = match (s, want) {
                    (Seg::Key(k), Some(Value::Object(m))) => m.get(k),
                    (Seg::Index(i), Some(Value::Array(a))) => a.get(*i),
                    _ => None,
                };
            }
            assert_eq!(json_value_at(text, path).as_ref(), want, "{path:?}");
        }
        let escaped = [Seg::Key("a".into()), Seg::Key("b\"q".into())];
        assert_eq!(json_value_at(text, &escaped), Some(json!("s\"}{")));
    }

    #[test]
    fn yaml11_scalars_as_kubectl_sends_them() {
        let r = |s: &str| resolve_yaml_scalar(s).unwrap();
        assert_eq!(r("yes"), json!(true));
        assert_eq!(r("Off"), json!(false));
        assert_eq!(r("y"), json!(true));
        assert_eq!(r("~"), json!(null));
        assert_eq!(r("010"), json!(8));
        assert_eq!(r("0x1F"), json!(31));
        assert_eq!(r("1_000"), json!(1000));
        assert_eq!(r("+5"), json!(5));
        assert_eq!(r("1.0"), json!(1));
        assert_eq!(r("1e3"), json!(1000));
        assert_eq!(r("1.5"), json!(1.5));
        assert_eq!(r(".5"), json!(0.5));
        assert_eq!(r("09"), json!(9));
        assert_eq!(r("9223372036854775808"), json!(9223372036854775808.0));
        assert_eq!(r("1.2.3"), json!("1.2.3"));
        assert_eq!(r("2024-01-01"), json!("2024-01-01"));
        assert!(resolve_yaml_scalar(".nan").is_err());
    }

    #[test]
    fn positions_and_documents() {
        let text = "a: 1\n---\nkind: X\nspec:\n  list:\n  - expression: \"x == 1\"\n  - |\n    foo\n---\n# empty\n---\nbad: [\n---\nb: yes\n";
        let (docs, errs) = parse_stream(text);
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[0].index, 0);
        assert_eq!(docs[1].index, 1);
        assert_eq!(docs[2].index, 4);
        assert_eq!(docs[2].value, json!({"b": true}));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].document, 3);
        let p = docs[1].positions.get("spec.list[0].expression").unwrap();
        assert_eq!(&text[p.span.start as usize..p.span.end as usize], "\"x == 1\"");
        assert_eq!(p.style, NodeStyle::DoubleQuoted);
        let k = p.key_span.unwrap();
        assert_eq!(&text[k.start as usize..k.end as usize], "expression");
        assert_eq!(docs[1].value["spec"]["list"][1], json!("foo\n"));
    }

    #[test]
    fn locate_offsets_inside_scalars() {
        let text = "a: |\n  x ==\n    1\nb: 'it''s é'\nc: >-\n  f\n  g\nd: \"q\\\"z\"\n";
        let (docs, _) = parse_stream(text);
        let d = &docs[0];
        let at = |path: &str, off: usize| {
            let v = d.value[path].as_str().unwrap();
            let p = d.positions.get(path).unwrap();
            p.locate(text, v, off).map(|b| &text[b..b + 1])
        };
        assert_eq!(d.value["a"], json!("x ==\n  1\n"));
        assert_eq!(at("a", 7), Some("1"));
        assert_eq!(at("b", 3), Some("s"));
        assert_eq!(at("c", 2), Some("g"));
        assert_eq!(at("d", 2), Some("z"));
        // The end of a quoted value is before its closing quote.
        let end = |path: &str| {
            let v = d.value[path].as_str().unwrap();
            let p = d.positions.get(path).unwrap();
            p.locate(text, v, v.len()).map(|b| &text[b - 2..b])
        };
        assert_eq!(end("b"), Some("é"));
        assert_eq!(end("d"), Some("\"z"));
    }

    #[test]
    fn nesting_deeper_than_max_depth_is_an_error_not_a_stack_overflow() {
        // 5,000 levels of block mappings overflowed the stack (native fuzzer; in wasm a trap).
        // A debug build's frames are the largest (~14 KB a level): 32 MiB of stack, where a test
        // thread has 2 MiB.
        let run = || {
            let mappings =
                |n: usize| (0..n).map(|i| format!("{}a:\n", " ".repeat(i))).collect::<String>();
            let sequences =
                |n: usize| (0..n).map(|i| format!("{}- \n", " ".repeat(i))).collect::<String>();
            for text in [mappings(MAX_DEPTH + 1), sequences(MAX_DEPTH + 1)] {
                let (docs, errs) = parse_stream(&text);
                assert!(docs.is_empty());
                assert_eq!(errs.len(), 1, "{errs:?}");
                assert_eq!(errs[0].message, "yaml: exceeded max depth of 255");
                // At the collection that opens level 256: line 256, after its indentation.
                assert_eq!((errs[0].line, errs[0].column), (MAX_DEPTH + 1, MAX_DEPTH + 1));
            }
            // MAX_DEPTH levels still load, block or flow.
            let (docs, errs) = parse_stream(&mappings(MAX_DEPTH));
            assert!(errs.is_empty() && docs.len() == 1, "{errs:?}");
            let flow = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
            let (docs, errs) = parse_stream(&flow);
            assert!(errs.is_empty() && docs.len() == 1, "{errs:?}");
            // Block levels count with flow ones.
            let (_, errs) = parse_stream(&format!("a:\n  b: {flow}"));
            assert_eq!(errs[0].message, "yaml: exceeded max depth of 255");
        };
        std::thread::Builder::new().stack_size(32 << 20).spawn(run).unwrap().join().unwrap();
    }

    #[test]
    fn locate_all_is_locate_at_every_offset() {
        let text = "a: |\n  x ==\n    1\nb: 'it''s é'\nc: >-\n  f\n  g\nd: \"q\\\"z\\tw\"\ne: \"\"\nf: {}\n";
        let (docs, _) = parse_stream(text);
        let d = &docs[0];
        for path in ["a", "b", "c", "d", "e", "f"] {
            let p = d.positions.get(path).unwrap();
            let v = d.value[path].as_str().unwrap_or("");
            let all = p.locate_all(text, v);
            let mut offsets: Vec<usize> = v.char_indices().map(|(i, _)| i).collect();
            offsets.push(v.len());
            for (n, i) in offsets.iter().enumerate() {
                assert_eq!(all.get(n).map(|x| x.1), p.locate(text, v, *i), "{path} at {i}");
                assert!(all.get(n).is_none_or(|x| x.0 == *i));
            }
        }
    }

    #[test]
    fn json_documents_keep_doubles() {
        let (docs, errs) = parse_stream("{\"a\": 1.0, \"b\": 2, \"c\": \"yes\", \"d\": 1e400}");
        assert!(errs.is_empty());
        assert_eq!(docs[0].value["a"], json!(1.0));
        assert_eq!(docs[0].value["b"], json!(2));
        assert_eq!(docs[0].value["c"], json!("yes"));
    }

    #[test]
    fn plain_json_objects_take_the_fast_path_with_the_same_value() {
        let same = |text: &str| {
            let fast = parse_json_object(text);
            let (docs, errs) = parse_stream(text);
            assert!(errs.is_empty(), "{text}: {errs:?}");
            assert_eq!(fast.as_ref(), Some(&docs[0].value), "{text}");
        };
        same("{}");
        same(" \n{\"a\": 1, \"b\": [true, null, -5, {\"c\": \"x\"}], \"d\": {}}\n");
        // Escapes, and ':' and '"' inside strings and keys.
        same(r#"{"k:\"q\"": "a:b \" \\ \/ \n \t \u00e9", "e": "é😀"}"#);
        // One difference, where the fast path is kubectl's: JSON spells a character outside the
        // BMP as a surrogate pair, which Go's JSON decoder joins and the YAML scanner rejects.
        assert_eq!(parse_json_object(r#"{"e": "\ud83d\ude00"}"#), Some(json!({"e": "😀"})));
        assert!(!parse_stream(r#"{"e": "\ud83d\ude00"}"#).1.is_empty());
        // And a surrogate escape that is not half of a pair is U+FFFD there (Go's decoder).
        assert_eq!(parse_json_object(r#"{"e": "a\ud800"}"#), Some(json!({"e": "a\u{fffd}"})));
        assert!(!parse_stream(r#"{"e": "a\ud800"}"#).1.is_empty());
        same(r#"{"max": 9223372036854775807, "min": -9223372036854775808}"#);
        // The positions loader decides: floats, int64 overflow, -0, repeated keys, not JSON,
        // not an object, a syntax error.
        for text in [
            r#"{"a": 1.5}"#,
            r#"{"a": 1.0}"#,
            r#"{"a": 1e3}"#,
            r#"{"a": 9223372036854775808}"#,
            r#"{"a": -0}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": {"b": 1, "b": 1}}"#,
            "a: 1",
            "# c\n{\"a\": 1}",
            "[1, 2]",
            "{\"a\": [}",
            "{\"a\": \"x}",
            "{a: 1}",
            "\u{feff}{\"a\": 1}",
        ] {
            assert_eq!(parse_json_object(text), None, "{text}");
        }
    }

    #[test]
    fn anchors_merge_and_duplicates() {
        let (docs, errs) =
            parse_stream("base: &b {x: 1}\nm:\n  <<: *b\n  w: 2\n  y: 3\nz: 1\nz: 2\n");
        // go-yaml v2 resolves the key `y` as the boolean true.
        assert_eq!(docs[0].value["m"], json!({"w": 2, "true": 3, "x": 1}));
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].message.contains("line 7: key \"z\" already set in map (first at line 6)"),
            "{}",
            errs[0].message
        );
    }

    #[test]
    fn alias_expansion_is_bounded() {
        // "Billion laughs": 10^9 scalars once expanded.
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let (docs, errs) = parse_stream(&text);
        assert!(docs.is_empty());
        assert_eq!(errs[0].message, "yaml: document contains excessive aliasing");
        // Well below the limit, aliases still expand.
        let (docs, errs) = parse_stream("a: &a [1, 2]\nb: [*a, *a]\n");
        assert!(errs.is_empty());
        assert_eq!(docs[0].value["b"], json!([[1, 2], [1, 2]]));
    }
}
