//! Kubernetes `CIDR` library (since Kubernetes 1.30), type `net.CIDR`.
//!
//! Go `net/netip.Prefix` semantics behind the apiserver wrapper (`pkg/cel/library/cidr.go`).
//!
//! ```text
//! cidr(<string>) <net.CIDR>                         -> Cidr::parse
//! isCIDR(<string>) <bool>                           -> Cidr::parse(..).is_ok()
//! string(<net.CIDR>) <string>                       -> Cidr::to_string
//! <net.CIDR>.containsIP(<string>|<net.IP>) <bool>   -> contains_ip_str / contains_ip
//! <net.CIDR>.containsCIDR(<string>|<net.CIDR>) <bool> -> contains_cidr_str / contains_cidr
//! <net.CIDR>.ip() <net.IP>                          -> Cidr::ip (address as written)
//! <net.CIDR>.masked() <net.CIDR>                    -> Cidr::masked
//! <net.CIDR>.prefixLength() <int>                   -> Cidr::prefix_length
//! <net.CIDR> == <net.CIDR>                          -> derived PartialEq (unmasked address and length)
//! ```
//!
//! Examples (apiserver `cidr_test.go`, spec §8.6):
//!
//! ```text
//! cidr("192.168.0.0/")  // error: network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""
//! cidr("192.168.0.1/16")                                      // ok: host bits are allowed
//! cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.1/32")) // true
//! cidr("192.168.0.1/24").masked()                             // 192.168.0.0/24
//! cidr("192.168.0.1/24") == cidr("192.168.0.1/24").masked()   // false
//! ```
//!
//! Not pinned by an upstream test: `containsIP("<bad ip>")`. The apiserver source we read
//! passes the failed conversion on and reports `no such overload`; we return the `ip()`
//! conversion error text instead.

use std::fmt;

use super::gostr::quote;
use super::ip::{parse_addr, Ip};

const WRAP: &str = "network address parse error during conversion from string: ";

/// An address plus a prefix length (Go `netip.Prefix`); the address keeps its host bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cidr {
    ip: Ip,
    bits: u8,
}

/// `mask6(n)`: the top `n` bits of 128.
fn mask(n: u32) -> u128 {
    if n == 0 {
        0
    } else {
        u128::MAX << (128 - n)
    }
}

/// Go `netip.ParsePrefix`, with its error texts.
pub fn parse_prefix(s: &str) -> Result<Cidr, String> {
    let err = |msg: &str| format!("netip.ParsePrefix({}): {}", quote(s), msg);
    let Some(i) = s.rfind('/') else {
        return Err(err("no '/'"));
    };
    let (ip, zone) = parse_addr(&s[..i]).map_err(|e| err(&e))?;
    if ip.bit_len() == 128 && !zone.is_empty() {
        return Err(err("IPv6 zones cannot be present in a prefix"));
    }
    let bits_str = &s[i + 1..];
    let bad_bits = || err(&format!("bad bits after slash: {}", quote(bits_str)));
    let b = bits_str.as_bytes();
    if b.len() > 1 && !(b'1'..=b'9').contains(&b[0]) {
        return Err(bad_bits());
    }
    // strconv.Atoi: optional sign, decimal digits, int64 range.
    let bits: i64 = bits_str.parse().map_err(|_| bad_bits())?;
    if bits < 0 || bits > i64::from(ip.bit_len()) {
        return Err(err("prefix length out of range"));
    }
    Ok(Cidr { ip, bits: bits as u8 })
}

impl Cidr {
    /// `cidr(<string>)`: netip parse (error wrapped twice, as the apiserver does), then the
    /// IPv4-mapped rejection (wrapped once).
    pub fn parse(s: &str) -> Result<Cidr, String> {
        let c = parse_prefix(s).map_err(|e| format!("{WRAP}{WRAP}{e}"))?;
        if c.ip.is_4in6() {
            return Err(format!("{WRAP}IPv4-mapped IPv6 address {} is not allowed", quote(s)));
        }
        Ok(c)
    }

    /// `ip()`: the address as written (not masked).
    pub fn ip(self) -> Ip {
        self.ip
    }

    /// `prefixLength()`.
    pub fn prefix_length(self) -> i64 {
        i64::from(self.bits)
    }

    fn masked_bits(self, bits: u32) -> u128 {
        let effective = if self.ip.bit_len() == 32 { bits + 96 } else { bits };
        self.ip.bits() & mask(effective)
    }

    /// `masked()`: host bits cleared.
    pub fn masked(self) -> Cidr {
        let addr = self.masked_bits(u32::from(self.bits));
        Cidr { ip: Ip::from_bits(addr, self.ip.bit_len() == 32), bits: self.bits }
    }

    /// `containsIP(<net.IP>)` (Go `Prefix.Contains`): other families never match.
    pub fn contains_ip(self, ip: Ip) -> bool {
        if ip.bit_len() != self.ip.bit_len() {
            return false;
        }
        let effective = u32::from(self.bits) + if ip.bit_len() == 32 { 96 } else { 0 };
        (ip.bits() ^ self.ip.bits()) & mask(effective) == 0
    }

    /// `containsIP(<string>)`.
    pub fn contains_ip_str(self, s: &str) -> Result<bool, String> {
        Ok(self.contains_ip(Ip::parse(s)?))
    }

    /// `containsCIDR(<net.CIDR>)`: same family, `other` lies in this network, and this
    /// prefix is not longer than `other`'s.
    pub fn contains_cidr(self, other: Cidr) -> bool {
        other.ip.bit_len() == self.ip.bit_len()
            && other.masked_bits(u32::from(self.bits)) == self.masked_bits(u32::from(self.bits))
            && self.bits <= other.bits
    }

    /// `containsCIDR(<string>)`: conversion errors are returned as `cidr()` reports them.
    pub fn contains_cidr_str(self, s: &str) -> Result<bool, String> {
        Ok(self.contains_cidr(Cidr::parse(s)?))
    }
}

/// Go `Prefix.String()`: `<ip>/<bits>`.
impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.ip, self.bits)
    }
}

/// Cost of `cidr(s)`, `isCIDR(s)`: ceil(0.1 × len(s)).
pub fn cidr_cost(arg_len: u64) -> u64 {
    arg_len.div_ceil(10)
}

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare the CIDR functions (apiserver `cidrLibraryDecls`) and the type identifier
/// `net.CIDR` (see [`super::ip::declare`]).
pub fn declare(d: &mut crate::cel::decls::Declarations) {
    use crate::cel::decls::ObjectTypeDecl;
    d.add_object(ObjectTypeDecl { name: super::type_name::CIDR.to_string(), fields: Vec::new() });
    crate::cel::signature::declare(d, DECLS);
}

/// The CIDR library's overloads (`cidr.go`), in its declaration order.
const DECLS: &[crate::cel::signature::Row] = &[
    ("cidr", "string_to_cidr", "(string) -> net.CIDR"),
    ("containsIP", "cidr_contains_ip_string", "net.CIDR.(string) -> bool"),
    ("containsIP", "cidr_contains_ip_ip", "net.CIDR.(net.IP) -> bool"),
    ("containsCIDR", "cidr_contains_cidr_string", "net.CIDR.(string) -> bool"),
    ("containsCIDR", "cidr_contains_cidr", "net.CIDR.(net.CIDR) -> bool"),
    ("ip", "cidr_ip", "net.CIDR.() -> net.IP"),
    ("prefixLength", "cidr_prefix_length", "net.CIDR.() -> int"),
    ("masked", "cidr_masked", "net.CIDR.() -> net.CIDR"),
    ("isCIDR", "is_cidr", "(string) -> bool"),
    ("string", "cidr_to_string", "(net.CIDR) -> string"),
];

// ---------------------------------------------------------------------------------------------
// CEL implementations

use super::bind::{self, opaque, wrap};
use super::ip::IpValue;
use crate::cel::stdlib::{Ctx, Fail, Overload, R};
use crate::cel::value::{OpaqueValue, Value};

/// A `net.CIDR` value.
#[derive(Debug)]
pub struct CidrValue(pub Cidr);

impl OpaqueValue for CidrValue {
    fn type_name(&self) -> &str {
        super::type_name::CIDR
    }
    /// Exact address and prefix length (`netip.Prefix` `==`): unmasked ≠ masked.
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<CidrValue>().is_some_and(|o| self.0 == o.0)
    }
    fn display(&self) -> String {
        self.0.to_string()
    }
    /// apiserver `CIDR.Size`: prefix length in bytes, rounded up (cost model).
    fn size(&self) -> Option<u64> {
        Some((self.0.prefix_length() as u64).div_ceil(8))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn cidr_arg(v: &Value<'_>) -> Result<Cidr, Fail> {
    opaque::<CidrValue>(v).map(|v| v.0)
}
/// `cidr()` and its error text (the prefix appears twice, spec §4.5).
fn parse_cidr(s: &str) -> Result<Cidr, String> {
    Cidr::parse(s)
}
fn cidr_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    parse_cidr(bind::string(&a[0])?).map(|c| wrap(CidrValue(c))).or_else(bind::err)
}
fn is_cidr<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(Cidr::parse(bind::string(&a[0])?).is_ok()))
}
fn cidr_to_string<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::string(cidr_arg(&a[0])?.to_string()))
}
/// apiserver `cidrContainsIPString` converts with `ip()` and passes a failed conversion on to
/// `cidrContainsIP`, which answers `no such overload` for a non-IP argument.
fn contains_ip_string<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let c = cidr_arg(&a[0])?;
    match Ip::parse(bind::string(&a[1])?) {
        Ok(ip) => Ok(Value::Bool(c.contains_ip(ip))),
        Err(_) => Err(Fail::msg("no such overload")),
    }
}
fn contains_ip<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let c = cidr_arg(&a[0])?;
    Ok(Value::Bool(c.contains_ip(opaque::<IpValue>(&a[1])?.0)))
}
/// apiserver `cidrContainsCIDRString`: a failed `cidr()` conversion is returned as is.
fn contains_cidr_string<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let c = cidr_arg(&a[0])?;
    parse_cidr(bind::string(&a[1])?).map(|o| Value::Bool(c.contains_cidr(o))).or_else(bind::err)
}
fn contains_cidr<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(cidr_arg(&a[0])?.contains_cidr(cidr_arg(&a[1])?)))
}
fn cidr_ip<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(wrap(IpValue(cidr_arg(&a[0])?.ip())))
}
fn prefix_length<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(cidr_arg(&a[0])?.prefix_length()))
}
fn masked<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(wrap(CidrValue(cidr_arg(&a[0])?.masked())))
}

/// The CIDR library's implementations (costs: apiserver estimator, by name).
pub static OVERLOADS: &[Overload] = &[
    Overload::global("cidr", "string_to_cidr", 1, cidr_of),
    Overload::member("containsIP", "cidr_contains_ip_string", 2, contains_ip_string),
    Overload::member("containsIP", "cidr_contains_ip_ip", 2, contains_ip),
    Overload::member("containsCIDR", "cidr_contains_cidr_string", 2, contains_cidr_string),
    Overload::member("containsCIDR", "cidr_contains_cidr", 2, contains_cidr),
    Overload::member("ip", "cidr_ip", 1, cidr_ip),
    Overload::member("prefixLength", "cidr_prefix_length", 1, prefix_length),
    Overload::member("masked", "cidr_masked", 1, masked),
    Overload::global("isCIDR", "is_cidr", 1, is_cidr),
    Overload::global("string", "cidr_to_string", 1, cidr_to_string),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn cidr(s: &str) -> Cidr {
        Cidr::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn ip(s: &str) -> Ip {
        Ip::parse(s).unwrap()
    }

    // apiserver pkg/cel/library/cidr_test.go TestCIDR
    #[test]
    fn cel_library_cases() {
        assert_eq!(cidr("192.168.0.0/24").to_string(), "192.168.0.0/24");
        assert_eq!(
            Cidr::parse("192.168.0.0/").unwrap_err(),
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: """#
        );
        assert!(cidr("192.168.0.0/24").contains_ip(ip("192.168.0.1")));
        assert!(!cidr("192.168.0.0/24").contains_ip(ip("192.168.1.1")));
        assert_eq!(cidr("192.168.0.0/24").contains_ip_str("192.168.0.1"), Ok(true));
        assert_eq!(cidr("192.168.0.0/24").contains_ip_str("192.168.1.1"), Ok(false));
        assert!(cidr("192.168.0.0/24").contains_cidr(cidr("192.168.0.0/25")));
        assert!(!cidr("192.168.0.0/24").contains_cidr(cidr("192.168.0.0/23")));
        assert_eq!(cidr("192.168.0.0/24").contains_cidr_str("192.168.0.0/25"), Ok(true));
        assert_eq!(cidr("192.168.0.0/24").contains_cidr_str("192.168.0.0/23"), Ok(false));
        assert_eq!(cidr("192.168.0.0/24").ip(), ip("192.168.0.0"));
        assert_eq!(cidr("192.168.0.0/24").masked(), cidr("192.168.0.0/24"));
        assert_eq!(cidr("192.168.0.1/24").masked(), cidr("192.168.0.0/24"));
        assert_eq!(cidr("192.168.0.0/24").prefix_length(), 24);
        assert_eq!(
            Cidr::parse("2001:db8::/").unwrap_err(),
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after slash: """#
        );
        assert!(cidr("2001:db8::/32").contains_ip(ip("2001:db8::1")));
        assert!(!cidr("2001:db8::/32").contains_ip(ip("2001:dc8::1")));
        assert!(cidr("2001:db8::/32").contains_cidr(cidr("2001:db8::/33")));
        assert!(!cidr("2001:db8::/32").contains_cidr(cidr("2001:db8::/31")));
        assert_eq!(cidr("2001:db8::/32").ip(), ip("2001:db8::"));
        assert_eq!(cidr("2001:db8:1::/32").masked(), cidr("2001:db8::/32"));
        assert_eq!(cidr("2001:db8::/32").prefix_length(), 32);
    }

    // spec §8.6 and apiserver library/cidr.go doc examples
    #[test]
    fn doc_examples() {
        assert!(cidr("192.168.0.0/24").contains_cidr(cidr("192.168.0.1/32")));
        assert!(cidr("192.168.0.0/16").contains_cidr(cidr("192.168.10.0/24")));
        assert!(!cidr("192.168.1.0/24").contains_cidr(cidr("192.168.2.0/24")));
        assert_ne!(cidr("192.168.0.1/24"), cidr("192.168.0.1/24").masked());
        assert_eq!(cidr("192.168.0.1/24").ip().to_string(), "192.168.0.1");
        assert_eq!(cidr("::1/128").ip().family(), 6);
        assert_eq!(cidr("::1/128").prefix_length(), 128);
        assert!(Cidr::parse("192.168.0.1/16").is_ok());
        assert!(!cidr("10.0.0.0/8").contains_ip(ip("::1")));
        assert!(!cidr("0.0.0.0/0").contains_cidr(cidr("::/0")));
        assert!(cidr("0.0.0.0/0").contains_ip(ip("1.2.3.4")));
    }

    // Go net/netip ParsePrefix error texts and the Kubernetes wrapper
    #[test]
    fn errors() {
        let table = [
            ("192.168.0.0", r#"netip.ParsePrefix("192.168.0.0"): no '/'"#),
            (
                "192.168.0.0/33",
                r#"netip.ParsePrefix("192.168.0.0/33"): prefix length out of range"#,
            ),
            ("::1/129", r#"netip.ParsePrefix("::1/129"): prefix length out of range"#),
            ("1.2.3.4/08", r#"netip.ParsePrefix("1.2.3.4/08"): bad bits after slash: "08""#),
            ("1.2.3.4/+8", r#"netip.ParsePrefix("1.2.3.4/+8"): bad bits after slash: "+8""#),
            ("1.2.3.4/x", r#"netip.ParsePrefix("1.2.3.4/x"): bad bits after slash: "x""#),
            (
                "fe80::1%eth0/64",
                r#"netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix"#,
            ),
            (
                "1.2.3/8",
                r#"netip.ParsePrefix("1.2.3/8"): ParseAddr("1.2.3"): IPv4 address too short"#,
            ),
        ];
        for (input, want) in table {
            assert_eq!(parse_prefix(input).unwrap_err(), want, "{input}");
        }
        assert_eq!(
            Cidr::parse("::ffff:1.2.3.4/120").unwrap_err(),
            r#"network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" is not allowed"#
        );
        assert_eq!(parse_prefix("1.2.3.4/0").unwrap().to_string(), "1.2.3.4/0");
    }
}
