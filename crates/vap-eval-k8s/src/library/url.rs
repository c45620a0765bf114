//! Kubernetes `URLs` library (since Kubernetes 1.0 of the CEL base environment), type
//! `kubernetes.URL`.
//!
//! Go `net/url` semantics (`ParseRequestURI`, `Parse`, `URL` accessors, `ParseQuery`) behind
//! the apiserver wrapper (`pkg/cel/library/urls.go`, `pkg/cel/url.go`).
//!
//! ```text
//! url(<string>) <kubernetes.URL>          -> Url::parse (must pass ParseRequestURI)
//! isURL(<string>) <bool>                  -> parse_request_uri(..).is_ok()
//! <URL>.getScheme() <string>              -> Url::scheme
//! <URL>.getHost() <string>                -> Url::host (IPv6 keeps brackets, includes port)
//! <URL>.getHostname() <string>            -> Url::hostname
//! <URL>.getPort() <string>                -> Url::port
//! <URL>.getEscapedPath() <string>         -> Url::escaped_path
//! <URL>.getQuery() <map<string, list<string>>> -> Url::query
//! <URL> == <URL>                          -> same Url::to_string (Go String())
//! ```
//!
//! Examples (apiserver `urls.go` docs):
//!
//! ```text
//! url('https://example.com:80/').getHost()    // 'example.com:80'
//! url('https://[::1]:80/').getHostname()      // '::1'
//! url('/path?k=v&k=w').getQuery()             // {'k': ['v', 'w']}
//! url('../relative')                          // error: URL parse error during conversion from string: parse "../relative": invalid URI for request
//! isURL('https://example.com/%zz')            // false
//! ```
//!
//! Not covered: the `GODEBUG` query-parameter count limit of recent Go releases.

use std::collections::BTreeMap;
use std::fmt;

use super::gostr::quote;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => {
            return match mode {
                Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
                Mode::QueryComponent => true,
                Mode::Fragment => false,
                Mode::Path => c == b'?',
                Mode::Host | Mode::Zone => true,
            }
        }
        _ => {}
    }
    if mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if should_escape(c, mode) {
            if c == b' ' && mode == Mode::QueryComponent {
                out.push('+');
            } else {
                out.push_str(&format!("%{c:02X}"));
            }
        } else {
            out.push(c as char);
        }
    }
    out
}

fn unhex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// Go `url.unescape`; errors are Go's `EscapeError` / `InvalidHostError` texts.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::with_capacity(b.len());
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    let rest = &s[i..];
                    let cut = rest.char_indices().nth(3).map_or(rest.len(), |(k, _)| k.min(3));
                    let frag = rest.get(..cut).unwrap_or(rest);
                    return Err(format!("invalid URL escape {}", quote(frag)));
                }
                if mode == Mode::Host && unhex(b[i + 1]) < 8 && &s[i..i + 3] != "%25" {
                    return Err(format!("invalid URL escape {}", quote(&s[i..i + 3])));
                }
                out.push(unhex(b[i + 1]) << 4 | unhex(b[i + 2]));
                i += 3;
            }
            b'+' => {
                out.push(if mode == Mode::QueryComponent { b' ' } else { b'+' });
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        quote(&(c as char).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    // Go strings may hold invalid UTF-8; we substitute U+FFFD.
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty() || (port.starts_with(':') && port[1..].bytes().all(|b| b.is_ascii_digit()))
}

fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err("missing ']' in host".to_string());
        };
        let colon_port = &host[i + 1..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", quote(colon_port)));
        }
        if let Some(z) = host[..i].find("%25") {
            let h1 = unescape(&host[..z], Mode::Host)?;
            let h2 = unescape(&host[z..i], Mode::Zone)?;
            let h3 = unescape(&host[i..], Mode::Host)?;
            return Ok(h1 + &h2 + &h3);
        }
    } else if let Some(i) = host.rfind(':') {
        let colon_port = &host[i..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", quote(colon_port)));
        }
    }
    unescape(host, Mode::Host)
}

fn valid_userinfo(s: &str) -> bool {
    s.bytes().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b':'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
                    | b'@'
            )
            || c >= 0x80
    })
}

/// A parsed URL (Go `url.URL`, the fields the library reads).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Url {
    scheme: String,
    opaque: String,
    user: Option<(String, Option<String>)>,
    host: String,
    path: String,
    raw_path: String,
    omit_host: bool,
    force_query: bool,
    raw_query: String,
    fragment: String,
    raw_fragment: String,
}

fn get_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i != 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".to_string()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's internal `parse(rawURL, viaRequest)`; the error is the unwrapped message.
fn parse_inner(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_string());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_string());
    }
    let mut u = Url::default();
    if raw == "*" {
        u.path = "*".to_string();
        return Ok(u);
    }
    let (scheme, mut rest) = get_scheme(raw)?;
    u.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        u.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((r, q)) = rest.split_once('?') {
        u.raw_query = q.to_string();
        rest = r;
    }
    if !rest.starts_with('/') {
        if !u.scheme.is_empty() {
            u.opaque = rest.to_string();
            return Ok(u);
        }
        if via_request {
            return Err("invalid URI for request".to_string());
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".to_string());
        }
    }
    if (!u.scheme.is_empty() || !via_request && !rest.starts_with("///")) && rest.starts_with("//")
    {
        let mut authority = &rest[2..];
        rest = "";
        if let Some(i) = authority.find('/') {
            rest = &authority[i..];
            authority = &authority[..i];
        }
        let (user, host) = match authority.rfind('@') {
            None => (None, parse_host(authority)?),
            Some(i) => {
                let host = parse_host(&authority[i + 1..])?;
                let userinfo = &authority[..i];
                if !valid_userinfo(userinfo) {
                    return Err("net/url: invalid userinfo".to_string());
                }
                let user = match userinfo.split_once(':') {
                    None => (unescape(userinfo, Mode::UserPassword)?, None),
                    Some((n, p)) => {
                        (unescape(n, Mode::UserPassword)?, Some(unescape(p, Mode::UserPassword)?))
                    }
                };
                (Some(user), host)
            }
        };
        u.user = user;
        u.host = host;
    } else if !u.scheme.is_empty() && rest.starts_with('/') {
        u.omit_host = true;
    }
    u.path = unescape(rest, Mode::Path)?;
    u.raw_path = if escape(&u.path, Mode::Path) == rest { String::new() } else { rest.to_string() };
    Ok(u)
}

/// Go `url.ParseRequestURI`, error text as Go prints it (`parse "<raw>": <reason>`).
pub fn parse_request_uri(raw: &str) -> Result<Url, String> {
    parse_inner(raw, true).map_err(|e| format!("parse {}: {}", quote(raw), e))
}

/// Go `url.Parse` (splits off the fragment first).
pub fn parse_go(raw: &str) -> Result<Url, String> {
    let wrap = |e: String| format!("parse {}: {}", quote(raw), e);
    let (u, frag) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = parse_inner(u, false).map_err(wrap)?;
    if !frag.is_empty() {
        url.fragment = unescape(frag, Mode::Fragment).map_err(wrap)?;
        url.raw_fragment = if escape(&url.fragment, Mode::Fragment) == frag {
            String::new()
        } else {
            frag.to_string()
        };
    }
    Ok(url)
}

fn valid_encoded(s: &str, mode: Mode) -> bool {
    s.bytes().all(|c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, mode)
    })
}

/// Go `url.QueryUnescape`.
fn query_unescape(s: &str) -> Result<String, String> {
    unescape(s, Mode::QueryComponent)
}

impl Url {
    /// `url(<string>)`: `ParseRequestURI` must succeed, then the value is `url.Parse(s)`.
    pub fn parse(s: &str) -> Result<Url, String> {
        let wrap = |e: String| format!("URL parse error during conversion from string: {e}");
        parse_request_uri(s).map_err(wrap)?;
        parse_go(s).map_err(wrap)
    }

    /// `getScheme()`.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// `getHost()`.
    pub fn host(&self) -> &str {
        &self.host
    }

    fn split_host_port(&self) -> (&str, &str) {
        let mut host = self.host.as_str();
        let mut port = "";
        if let Some(c) = host.rfind(':') {
            if valid_optional_port(&host[c..]) {
                port = &host[c + 1..];
                host = &host[..c];
            }
        }
        if host.starts_with('[') && host.ends_with(']') && host.len() >= 2 {
            host = &host[1..host.len() - 1];
        }
        (host, port)
    }

    /// `getHostname()`: host without port or IPv6 brackets.
    pub fn hostname(&self) -> &str {
        self.split_host_port().0
    }

    /// `getPort()`: `""` when absent.
    pub fn port(&self) -> &str {
        self.split_host_port().1
    }

    /// `getEscapedPath()` (Go `EscapedPath()`).
    pub fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path, Mode::Path)
            && unescape(&self.raw_path, Mode::Path).as_deref() == Ok(self.path.as_str())
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".to_string();
        }
        escape(&self.path, Mode::Path)
    }

    fn escaped_fragment(&self) -> String {
        if !self.raw_fragment.is_empty()
            && valid_encoded(&self.raw_fragment, Mode::Fragment)
            && unescape(&self.raw_fragment, Mode::Fragment).as_deref() == Ok(self.fragment.as_str())
        {
            return self.raw_fragment.clone();
        }
        escape(&self.fragment, Mode::Fragment)
    }

    /// `getQuery()` (Go `Query()`): pairs with `;` and undecodable pairs are dropped; keys are
    /// sorted here (a CEL map has no order).
    pub fn query(&self) -> BTreeMap<String, Vec<String>> {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pair in self.raw_query.split('&') {
            if pair.contains(';') || pair.is_empty() {
                continue;
            }
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(k), Ok(v)) = (query_unescape(k), query_unescape(v)) else {
                continue;
            };
            m.entry(k).or_default().push(v);
        }
        m
    }
}

/// Go `URL.String()`; CEL equality compares these.
impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = String::new();
        if !self.scheme.is_empty() {
            buf.push_str(&self.scheme);
            buf.push(':');
        }
        if !self.opaque.is_empty() {
            buf.push_str(&self.opaque);
        } else {
            let has_authority =
                !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some();
            if has_authority && !(self.omit_host && self.host.is_empty() && self.user.is_none()) {
                {
                    if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                        buf.push_str("//");
                    }
                    if let Some((name, pass)) = &self.user {
                        buf.push_str(&escape(name, Mode::UserPassword));
                        if let Some(p) = pass {
                            buf.push(':');
                            buf.push_str(&escape(p, Mode::UserPassword));
                        }
                        buf.push('@');
                    }
                    buf.push_str(&escape(&self.host, Mode::Host));
                }
            }
            let path = self.escaped_path();
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                buf.push('/');
            }
            if buf.is_empty() && path.split('/').next().unwrap_or("").contains(':') {
                buf.push_str("./");
            }
            buf.push_str(&path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            buf.push('?');
            buf.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            buf.push('#');
            buf.push_str(&self.escaped_fragment());
        }
        f.write_str(&buf)
    }
}

/// CEL `==` on URLs.
pub fn equal(a: &Url, b: &Url) -> bool {
    a.to_string() == b.to_string()
}

/// Cost of `url(s)`, `isURL(s)`: ceil(0.1 × len(s)).
pub fn url_cost(arg_len: u64) -> u64 {
    arg_len.div_ceil(10)
}

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare `url`, `isURL` and the `kubernetes.URL` accessors (apiserver `urlLibraryDecls`).
pub fn declare(d: &mut crate::cel::decls::Declarations) {
    crate::cel::signature::declare(d, DECLS);
}

/// The URL library's overloads (`urls.go`), in its declaration order.
const DECLS: &[crate::cel::signature::Row] = &[
    ("url", "string_to_url", "(string) -> kubernetes.URL"),
    ("getScheme", "url_get_scheme", "kubernetes.URL.() -> string"),
    ("getHost", "url_get_host", "kubernetes.URL.() -> string"),
    ("getHostname", "url_get_hostname", "kubernetes.URL.() -> string"),
    ("getPort", "url_get_port", "kubernetes.URL.() -> string"),
    ("getEscapedPath", "url_get_escaped_path", "kubernetes.URL.() -> string"),
    ("getQuery", "url_get_query", "kubernetes.URL.() -> map(string, list(string))"),
    ("isURL", "is_url_string", "(string) -> bool"),
];

// ---------------------------------------------------------------------------------------------
// CEL implementations

use super::bind::{self, opaque, wrap};
use crate::cel::stdlib::{Overload, R};
use crate::cel::value::{Key, OpaqueValue, OwnedMap, Str, Value};

/// A `kubernetes.URL` value.
#[derive(Debug)]
pub struct UrlValue(pub Url);

impl OpaqueValue for UrlValue {
    fn type_name(&self) -> &str {
        super::type_name::URL
    }
    /// apiserver `URL.Equal`: same `String()`.
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<UrlValue>().is_some_and(|o| equal(&self.0, &o.0))
    }
    fn display(&self) -> String {
        self.0.to_string()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn cel_url_of<'a>(_: &mut crate::cel::stdlib::Ctx, a: &[Value<'a>]) -> R<'a> {
    Url::parse(bind::string(&a[0])?).map(|u| wrap(UrlValue(u))).or_else(bind::err)
}
fn cel_is_url<'a>(_: &mut crate::cel::stdlib::Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(parse_request_uri(bind::string(&a[0])?).is_ok()))
}
fn accessor<'a>(a: &[Value<'a>], f: fn(&Url) -> String) -> R<'a> {
    Ok(Value::string(f(&opaque::<UrlValue>(&a[0])?.0)))
}
fn cel_get_scheme<'a>(_: &mut crate::cel::stdlib::Ctx, a: &[Value<'a>]) -> R<'a> {
    accessor(a, |u| u.scheme().to_string())
}
fn cel_get_host<'a>(_: &mut crate::cel::stdlib::Ctx, a: &[Value<'a>]) -> R<'a> {
    accessor(a, |u| u.host().to_string())
}
fn cel_get_hostname<'a>(_: &mut crate::cel::stdlib::Ctx, a: &[Value<'a>]) -> R<'a> {
    accessor(a, |u| u.hostname().to_string())
}
fn cel_get_port<'a>(_: &mut crate::cel::stdlib::Ctx, a: &[Value<'a>]) -> R<'a> {
    accessor(a, |u| u.port().to_string())
}
fn cel_get_escaped_path<'a>(_: &mut crate::cel::stdlib::Ctx, a: &[Value<'a>]) -> R<'a> {
    accessor(a, Url::escaped_path)
}
/// Go `url.Query()`; keys in sorted order (Go map order is random).
fn cel_get_query<'a>(_: &mut crate::cel::stdlib::Ctx, a: &[Value<'a>]) -> R<'a> {
    let u = opaque::<UrlValue>(&a[0])?;
    let mut m = OwnedMap::new();
    for (k, vs) in u.0.query() {
        let list = vs.into_iter().map(Value::string).collect();
        m.insert(Key::String(Str::Owned(k.into())), Value::list(list));
    }
    Ok(Value::map(m))
}

/// The URL library's implementations (costs: apiserver estimator, by name).
pub static OVERLOADS: &[Overload] = &[
    Overload::global("url", "string_to_url", 1, cel_url_of),
    Overload::member("getScheme", "url_get_scheme", 1, cel_get_scheme),
    Overload::member("getHost", "url_get_host", 1, cel_get_host),
    Overload::member("getHostname", "url_get_hostname", 1, cel_get_hostname),
    Overload::member("getPort", "url_get_port", 1, cel_get_port),
    Overload::member("getEscapedPath", "url_get_escaped_path", 1, cel_get_escaped_path),
    Overload::member("getQuery", "url_get_query", 1, cel_get_query),
    Overload::global("isURL", "is_url_string", 1, cel_is_url),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    // apiserver pkg/cel/library/urls.go doc examples (and urls_test via library_test.go)
    #[test]
    fn library_examples() {
        assert_eq!(url("https://example.com/path").scheme(), "https");
        assert_eq!(url("/path").scheme(), "");
        assert_eq!(url("https://example.com/").host(), "example.com");
        assert_eq!(url("https://example.com:80/").host(), "example.com:80");
        assert_eq!(url("https://[::1]:80/").host(), "[::1]:80");
        assert_eq!(url("https://[::1]/").host(), "[::1]");
        assert_eq!(url("/path").host(), "");
        assert_eq!(url("https://example.com:80/").hostname(), "example.com");
        assert_eq!(url("https://[::1]:80/").hostname(), "::1");
        assert_eq!(url("https://example.com:80/").port(), "80");
        assert_eq!(url("https://example.com/").port(), "");
        assert_eq!(url("https://example.com/path").escaped_path(), "/path");
        assert_eq!(
            url("https://example.com/path with spaces/").escaped_path(),
            "/path%20with%20spaces/"
        );
        assert_eq!(url("https://example.com/%2F").escaped_path(), "/%2F");
        let q = url("https://example.com/path?k1=a&k2=b&k2=c").query();
        assert_eq!(q["k1"], ["a"]);
        assert_eq!(q["k2"], ["b", "c"]);
        assert_eq!(
            url("https://example.com/path?key with spaces=value with spaces").query()
                ["key with spaces"],
            ["value with spaces"]
        );
        assert!(url("https://example.com/path?").query().is_empty());
        assert!(
            parse_request_uri("https://user:pass@example.com:80/path?query=val#fragment").is_ok()
        );
        assert!(parse_request_uri("/absolute-path").is_ok());
        assert!(parse_request_uri("https://a:b:c/").is_err());
        assert!(parse_request_uri("../relative-path").is_err());
    }

    // Go net/url url_test.go (error texts, query decoding, String())
    #[test]
    fn go_texts() {
        assert_eq!(
            Url::parse("../relative").unwrap_err(),
            r#"URL parse error during conversion from string: parse "../relative": invalid URI for request"#
        );
        assert_eq!(parse_request_uri("").unwrap_err(), r#"parse "": empty url"#);
        assert_eq!(
            parse_request_uri(":foo").unwrap_err(),
            r#"parse ":foo": missing protocol scheme"#
        );
        assert_eq!(
            parse_request_uri("http://example.com/%zz").unwrap_err(),
            r#"parse "http://example.com/%zz": invalid URL escape "%zz""#
        );
        assert_eq!(
            parse_request_uri("http://[::1/").unwrap_err(),
            r#"parse "http://[::1/": missing ']' in host"#
        );
        assert_eq!(
            parse_request_uri("http://host:port/").unwrap_err(),
            r#"parse "http://host:port/": invalid port ":port" after host"#
        );
        assert_eq!(
            parse_request_uri("http://a b.com/").unwrap_err(),
            r#"parse "http://a b.com/": invalid character " " in host name"#
        );
        assert_eq!(
            parse_request_uri("http://x/\n").unwrap_err(),
            "parse \"http://x/\\n\": net/url: invalid control character in URL"
        );
        let q = url("/p?a=1&b=2;c=3&d=%zz&e=x+y&&f").query();
        assert_eq!(q.get("a").map(Vec::as_slice), Some(&["1".to_string()][..]));
        assert!(!q.contains_key("b") && !q.contains_key("d"));
        assert_eq!(q["e"], ["x y"]);
        assert_eq!(q["f"], [""]);
        assert_eq!(
            url("HTTP://Example.com/a b?x#frag").to_string(),
            "http://Example.com/a%20b?x#frag"
        );
        assert_eq!(url("mailto:user@example.com").to_string(), "mailto:user@example.com");
        assert!(equal(&url("https://example.com/a%20b"), &url("https://example.com/a b")));
        assert!(!equal(&url("https://example.com/a"), &url("https://example.com/b")));
        assert_eq!(url_cost(20), 2);
    }
}
