//! Kubernetes `IP` library (since Kubernetes 1.30), type `net.IP`.
//!
//! Go `net/netip.Addr` semantics behind the apiserver wrapper (`pkg/cel/library/ip.go`).
//!
//! ```text
//! ip(<string>) <net.IP>                  -> Ip::parse
//! isIP(<string>) <bool>                  -> Ip::parse(..).is_ok()
//! ip.isCanonical(<string>) <bool>        -> is_canonical (parse errors are errors)
//! string(<net.IP>) <string>              -> Ip::to_string (Go netip String())
//! <net.IP>.family() <int>                -> Ip::family (4 or 6)
//! <net.IP>.isUnspecified() <bool>        -> Ip::is_unspecified
//! <net.IP>.isLoopback() <bool>           -> Ip::is_loopback
//! <net.IP>.isLinkLocalMulticast() <bool> -> Ip::is_link_local_multicast
//! <net.IP>.isLinkLocalUnicast() <bool>   -> Ip::is_link_local_unicast
//! <net.IP>.isGlobalUnicast() <bool>      -> Ip::is_global_unicast
//! <net.IP> == <net.IP>                   -> derived PartialEq (same family and bits)
//! ```
//!
//! Examples (apiserver `ip_test.go`):
//!
//! ```text
//! ip("192.168.0.1.0")  // error: IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long
//! ip("2001:db8:::68")  // error: IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")
//! ip("fe80::1%eth0")   // error: IP address "fe80::1%eth0" with zone value is not allowed
//! ip("::ffff:1.2.3.4") // error: IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed
//! ip.isCanonical("2001:DB8::68")         // false
//! ip("255.255.255.255").isGlobalUnicast() // false
//! ip("192.168.0.1").isGlobalUnicast()     // true (private ranges count)
//! ```

use std::fmt;

use super::gostr::quote;

/// An IP address as Go `netip.Addr` holds it: 128 bits, IPv4 stored IPv4-mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ip {
    addr: u128,
    is4: bool,
}

const V4_MAPPED: u128 = 0xffff_0000_0000;

/// Go `parseAddrError` text.
fn addr_error(input: &str, msg: &str, at: Option<&str>) -> String {
    match at {
        Some(at) if !at.is_empty() => {
            format!("ParseAddr({}): {} (at {})", quote(input), msg, quote(at))
        }
        _ => format!("ParseAddr({}): {}", quote(input), msg),
    }
}

fn parse_v4_fields(input: &str, off: usize, end: usize) -> Result<[u8; 4], String> {
    let s = &input.as_bytes()[off..end];
    let at = |i: usize| input.get(off + i..end).unwrap_or("");
    let (mut fields, mut val, mut pos, mut dig_len) = ([0u8; 4], 0u32, 0usize, 0);
    for (i, &c) in s.iter().enumerate() {
        if c.is_ascii_digit() {
            if dig_len == 1 && val == 0 {
                return Err(addr_error(input, "IPv4 field has octet with leading zero", None));
            }
            val = val * 10 + u32::from(c - b'0');
            dig_len += 1;
            if val > 255 {
                return Err(addr_error(input, "IPv4 field has value >255", None));
            }
        } else if c == b'.' {
            if i == 0 || i == s.len() - 1 || s[i - 1] == b'.' {
                return Err(addr_error(
                    input,
                    "IPv4 field must have at least one digit",
                    Some(at(i)),
                ));
            }
            if pos == 3 {
                return Err(addr_error(input, "IPv4 address too long", None));
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            dig_len = 0;
        } else {
            return Err(addr_error(input, "unexpected character", Some(at(i))));
        }
    }
    if pos < 3 {
        return Err(addr_error(input, "IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(fields)
}

fn parse_v6(input: &str) -> Result<(Ip, String), String> {
    let (mut s, zone) = match input.find('%') {
        Some(i) => {
            let zone = &input[i + 1..];
            if zone.is_empty() {
                return Err(addr_error(input, "zone must be a non-empty string", None));
            }
            (&input[..i], zone)
        }
        None => (input, ""),
    };
    let s_end = s.len(); // end of the address part within `input`
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok((Ip { addr: 0, is4: false }, zone.to_string()));
        }
    }
    let mut i = 0;
    while i < 16 {
        let b = s.as_bytes();
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < b.len() {
            let c = b[off];
            let digit = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => break,
            };
            acc = (acc << 4) + u32::from(digit);
            if off > 3 {
                return Err(addr_error(input, "each group must have 4 or less digits", Some(s)));
            }
            if acc > 0xffff {
                return Err(addr_error(input, "IPv6 field has value >=2^16", Some(s)));
            }
            off += 1;
        }
        if off == 0 {
            return Err(addr_error(
                input,
                "each colon-separated field must have at least one digit",
                Some(s),
            ));
        }
        if off < b.len() && b[off] == b'.' {
            if ellipsis.is_none() && i != 12 {
                return Err(addr_error(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    Some(s),
                ));
            }
            if i + 4 > 16 {
                return Err(addr_error(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    Some(s),
                ));
            }
            let fields = parse_v4_fields(input, s_end - s.len(), s_end)?;
            ip[i..i + 4].copy_from_slice(&fields);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(addr_error(input, "unexpected character, want colon", Some(s)));
        } else if s.len() == 1 {
            return Err(addr_error(input, "colon must be followed by more characters", Some(s)));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(addr_error(input, "multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(addr_error(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(e) = ellipsis else {
            return Err(addr_error(input, "address string too short", None));
        };
        let n = 16 - i;
        for j in (e..i).rev() {
            ip[j + n] = ip[j];
        }
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(addr_error(input, "the :: must expand to at least one field of zeros", None));
    }
    Ok((Ip { addr: u128::from_be_bytes(ip), is4: false }, zone.to_string()))
}

/// Go `netip.ParseAddr`: the address and its zone (`""` when none), or Go's error text.
pub fn parse_addr(s: &str) -> Result<(Ip, String), String> {
    for &c in s.as_bytes() {
        match c {
            b'.' => {
                let f = parse_v4_fields(s, 0, s.len())?;
                return Ok((Ip::from_v4(f), String::new()));
            }
            b':' => return parse_v6(s),
            b'%' => return Err(addr_error(s, "missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(addr_error(s, "unable to parse IP", None))
}

impl Ip {
    fn from_v4(f: [u8; 4]) -> Ip {
        Ip { addr: V4_MAPPED | u128::from(u32::from_be_bytes(f)), is4: true }
    }

    /// `ip(<string>)`: netip parse, then the Kubernetes rejections (zones, IPv4-mapped).
    pub fn parse(s: &str) -> Result<Ip, String> {
        let (ip, zone) = parse_addr(s).map_err(|e| {
            format!("IP Address {} parse error during conversion from string: {}", quote(s), e)
        })?;
        if !zone.is_empty() {
            return Err(format!("IP address {} with zone value is not allowed", quote(s)));
        }
        if ip.is_4in6() {
            return Err(format!("IPv4-mapped IPv6 address {} is not allowed", quote(s)));
        }
        Ok(ip)
    }

    pub(crate) fn bits(self) -> u128 {
        self.addr
    }

    pub(crate) fn from_bits(addr: u128, is4: bool) -> Ip {
        Ip { addr, is4 }
    }

    /// `BitLen()`: 32 or 128.
    pub fn bit_len(self) -> u32 {
        if self.is4 {
            32
        } else {
            128
        }
    }

    /// `Is4In6()`.
    pub fn is_4in6(self) -> bool {
        !self.is4 && self.addr >> 32 == 0xffff
    }

    fn unmap(self) -> Ip {
        if self.is_4in6() {
            Ip { addr: self.addr, is4: true }
        } else {
            self
        }
    }

    fn v4(self, i: u32) -> u8 {
        (self.addr >> ((3 - i) * 8)) as u8
    }

    fn v6u16(self, i: u32) -> u16 {
        (self.addr >> ((7 - i) * 16)) as u16
    }

    /// `family()`: 4 or 6.
    pub fn family(self) -> i64 {
        if self.is4 {
            4
        } else {
            6
        }
    }

    /// `isUnspecified()`: `0.0.0.0` or `::`.
    pub fn is_unspecified(self) -> bool {
        if self.is4 {
            self.addr == V4_MAPPED
        } else {
            self.addr == 0
        }
    }

    /// `isLoopback()`: 127.0.0.0/8 or `::1`.
    pub fn is_loopback(self) -> bool {
        let ip = self.unmap();
        if ip.is4 {
            ip.v4(0) == 127
        } else {
            ip.addr == 1
        }
    }

    fn is_multicast(self) -> bool {
        let ip = self.unmap();
        if ip.is4 {
            ip.v4(0) & 0xf0 == 0xe0
        } else {
            ip.addr >> 120 == 0xff
        }
    }

    /// `isLinkLocalMulticast()`: 224.0.0.0/24 or ff02::/16 (any flags nibble).
    pub fn is_link_local_multicast(self) -> bool {
        let ip = self.unmap();
        if ip.is4 {
            ip.v4(0) == 224 && ip.v4(1) == 0 && ip.v4(2) == 0
        } else {
            ip.v6u16(0) & 0xff0f == 0xff02
        }
    }

    /// `isLinkLocalUnicast()`: 169.254.0.0/16 or fe80::/10.
    pub fn is_link_local_unicast(self) -> bool {
        let ip = self.unmap();
        if ip.is4 {
            ip.v4(0) == 169 && ip.v4(1) == 254
        } else {
            ip.v6u16(0) & 0xffc0 == 0xfe80
        }
    }

    /// `isGlobalUnicast()`: Go semantics (private ranges count; broadcast does not).
    pub fn is_global_unicast(self) -> bool {
        let ip = self.unmap();
        if ip.is4 && (ip.addr == V4_MAPPED || ip.addr == V4_MAPPED | 0xffff_ffff) {
            return false;
        }
        (ip.is4 || ip.addr != 0)
            && !ip.is_loopback()
            && !ip.is_multicast()
            && !ip.is_link_local_unicast()
    }

    fn fmt_v4(self, out: &mut String) {
        let [a, b, c, d] = (self.addr as u32).to_be_bytes();
        out.push_str(&format!("{a}.{b}.{c}.{d}"));
    }
}

/// Go `netip.Addr.String()`: dotted quad, RFC 5952 IPv6, or `::ffff:a.b.c.d`.
impl fmt::Display for Ip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        if self.is4 {
            self.fmt_v4(&mut out);
        } else if self.is_4in6() {
            out.push_str("::ffff:");
            self.fmt_v4(&mut out);
        } else {
            // Longest run (≥ 2) of zero groups, first one wins.
            let (mut zs, mut ze) = (255u32, 255u32);
            for i in 0..8 {
                let mut j = i;
                while j < 8 && self.v6u16(j) == 0 {
                    j += 1;
                }
                let l = j - i;
                if l >= 2 && (zs == 255 || l > ze - zs) {
                    zs = i;
                    ze = j;
                }
            }
            let mut i = 0;
            while i < 8 {
                if i == zs {
                    out.push_str("::");
                    i = ze;
                    if i >= 8 {
                        break;
                    }
                } else if i > 0 {
                    out.push(':');
                }
                out.push_str(&format!("{:x}", self.v6u16(i)));
                i += 1;
            }
        }
        f.write_str(&out)
    }
}

/// `ip.isCanonical(<string>)`: parses (errors propagate), then compares with `String()`.
pub fn is_canonical(s: &str) -> Result<bool, String> {
    Ok(Ip::parse(s)?.to_string() == s)
}

/// Cost of `ip(s)`, `isIP(s)`: ceil(0.1 × len(s)).
pub fn ip_cost(arg_len: u64) -> u64 {
    arg_len.div_ceil(10)
}

/// Cost of `ip.isCanonical(s)`: ceil(0.2 × len(s)).
pub fn is_canonical_cost(arg_len: u64) -> u64 {
    (arg_len * 2).div_ceil(10)
}

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare the IP functions (apiserver `ipLibraryDecls`) and the type identifier `net.IP`
/// (the apiserver declares it as a variable of type `type(net.IP)`; we declare it as a type
/// name, which checks and evaluates the same).
pub fn declare(d: &mut crate::cel::decls::Declarations) {
    use crate::cel::decls::ObjectTypeDecl;
    d.add_object(ObjectTypeDecl { name: super::type_name::IP.to_string(), fields: Vec::new() });
    crate::cel::signature::declare(d, DECLS);
}

/// The IP library's overloads (`ip.go`), in its declaration order.
const DECLS: &[crate::cel::signature::Row] = &[
    ("ip", "string_to_ip", "(string) -> net.IP"),
    ("family", "ip_family", "net.IP.() -> int"),
    ("ip.isCanonical", "ip_is_canonical", "(string) -> bool"),
    ("isUnspecified", "ip_is_unspecified", "net.IP.() -> bool"),
    ("isLoopback", "ip_is_loopback", "net.IP.() -> bool"),
    ("isLinkLocalMulticast", "ip_is_link_local_multicast", "net.IP.() -> bool"),
    ("isLinkLocalUnicast", "ip_is_link_local_unicast", "net.IP.() -> bool"),
    ("isGlobalUnicast", "ip_is_global_unicast", "net.IP.() -> bool"),
    ("isIP", "is_ip", "(string) -> bool"),
    ("string", "ip_to_string", "(net.IP) -> string"),
];

// ---------------------------------------------------------------------------------------------
// CEL implementations

use super::bind::{self, opaque, wrap};
use crate::cel::stdlib::{Ctx, Overload, R};
use crate::cel::value::{OpaqueValue, Value};

/// A `net.IP` value.
#[derive(Debug)]
pub struct IpValue(pub Ip);

impl OpaqueValue for IpValue {
    fn type_name(&self) -> &str {
        super::type_name::IP
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<IpValue>().is_some_and(|o| self.0 == o.0)
    }
    fn display(&self) -> String {
        self.0.to_string()
    }
    /// apiserver `IP.Size`: address bytes (4 or 16), used by the cost model.
    fn size(&self) -> Option<u64> {
        Some(u64::from(self.0.bit_len()).div_ceil(8))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn ip_arg<'v>(v: &'v Value<'_>) -> Result<&'v Ip, crate::cel::stdlib::Fail> {
    opaque::<IpValue>(v).map(|v| &v.0)
}
fn ip_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ip::parse(bind::string(&a[0])?).map(|ip| wrap(IpValue(ip))).or_else(bind::err)
}
fn is_ip<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(Ip::parse(bind::string(&a[0])?).is_ok()))
}
fn ip_is_canonical<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    is_canonical(bind::string(&a[0])?).map(Value::Bool).or_else(bind::err)
}
fn ip_to_string<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::string(ip_arg(&a[0])?.to_string()))
}
fn family<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(ip_arg(&a[0])?.family()))
}
fn predicate<'a>(a: &[Value<'a>], f: fn(Ip) -> bool) -> R<'a> {
    Ok(Value::Bool(f(*ip_arg(&a[0])?)))
}
fn is_unspecified<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    predicate(a, Ip::is_unspecified)
}
fn is_loopback<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    predicate(a, Ip::is_loopback)
}
fn is_link_local_multicast<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    predicate(a, Ip::is_link_local_multicast)
}
fn is_link_local_unicast<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    predicate(a, Ip::is_link_local_unicast)
}
fn is_global_unicast<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    predicate(a, Ip::is_global_unicast)
}

/// The IP implementations (costs: apiserver estimator, by name; `string(ip)` 1).
pub static OVERLOADS: &[Overload] = &[
    Overload::global("ip", "string_to_ip", 1, ip_of),
    Overload::member("family", "ip_family", 1, family),
    Overload::global("ip.isCanonical", "ip_is_canonical", 1, ip_is_canonical),
    Overload::member("isUnspecified", "ip_is_unspecified", 1, is_unspecified),
    Overload::member("isLoopback", "ip_is_loopback", 1, is_loopback),
    Overload::member(
        "isLinkLocalMulticast",
        "ip_is_link_local_multicast",
        1,
        is_link_local_multicast,
    ),
    Overload::member("isLinkLocalUnicast", "ip_is_link_local_unicast", 1, is_link_local_unicast),
    Overload::member("isGlobalUnicast", "ip_is_global_unicast", 1, is_global_unicast),
    Overload::global("isIP", "is_ip", 1, is_ip),
    Overload::global("string", "ip_to_string", 1, ip_to_string),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Ip {
        Ip::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    // apiserver pkg/cel/library/ip_test.go TestIP
    #[test]
    fn cel_library_cases() {
        assert_eq!(ip("192.168.0.1").to_string(), "192.168.0.1");
        assert_eq!(
            Ip::parse("192.168.0.1.0").unwrap_err(),
            r#"IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long"#
        );
        assert_eq!(is_canonical("127.0.0.1"), Ok(true));
        assert_eq!(
            is_canonical("127.0.0.1.0").unwrap_err(),
            r#"IP Address "127.0.0.1.0" parse error during conversion from string: ParseAddr("127.0.0.1.0"): IPv4 address too long"#
        );
        assert_eq!(ip("192.168.0.1").family(), 4);
        assert!(ip("0.0.0.0").is_unspecified());
        assert!(!ip("127.0.0.1").is_unspecified());
        assert!(ip("127.0.0.1").is_loopback());
        assert!(!ip("1.2.3.4").is_loopback());
        assert!(ip("224.0.0.1").is_link_local_multicast());
        assert!(!ip("224.0.1.1").is_link_local_multicast());
        assert!(ip("169.254.169.254").is_link_local_unicast());
        assert!(!ip("192.168.0.1").is_link_local_unicast());
        assert!(ip("192.168.0.1").is_global_unicast());
        assert!(!ip("255.255.255.255").is_global_unicast());
        assert_eq!(
            Ip::parse("2001:db8:::68").unwrap_err(),
            r#"IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")"#
        );
        assert_eq!(is_canonical("2001:db8::68"), Ok(true));
        assert_eq!(is_canonical("2001:DB8::68"), Ok(false));
        assert_eq!(ip("2001:db8::68").family(), 6);
        assert!(ip("::").is_unspecified());
        assert!(!ip("::1").is_unspecified());
        assert!(ip("::1").is_loopback());
        assert!(!ip("2001:db8::abcd").is_loopback());
        assert!(ip("ff02::1").is_link_local_multicast());
        assert!(!ip("fd00::1").is_link_local_multicast());
        assert!(ip("fe80::1").is_link_local_unicast());
        assert!(!ip("fd80::1").is_link_local_unicast());
        assert!(ip("2001:db8::abcd").is_global_unicast());
        assert!(!ip("ff00::1").is_global_unicast());
    }

    // apiserver library/ip.go doc examples and the Kubernetes wrapper rejections
    #[test]
    fn wrapper_rejections() {
        assert!(Ip::parse("127.0.0.256").is_err());
        assert!(Ip::parse(":::1").is_err());
        assert_eq!(
            Ip::parse("fe80::1%eth0").unwrap_err(),
            r#"IP address "fe80::1%eth0" with zone value is not allowed"#
        );
        assert_eq!(
            Ip::parse("::ffff:1.2.3.4").unwrap_err(),
            r#"IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed"#
        );
        assert_eq!(is_canonical("2001:db8::0:0:0:abcd"), Ok(false));
        assert_eq!(is_canonical("2001:db8::abcd"), Ok(true));
    }

    // Go net/netip netip_test.go TestParseAddr (error texts; subset)
    #[test]
    fn netip_errors() {
        let table = [
            ("", r#"ParseAddr(""): unable to parse IP"#),
            ("%eth0", r#"ParseAddr("%eth0"): missing IPv6 address"#),
            ("1.2.3", r#"ParseAddr("1.2.3"): IPv4 address too short"#),
            ("01.2.3.4", r#"ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero"#),
            ("1.2.3.256", r#"ParseAddr("1.2.3.256"): IPv4 field has value >255"#),
            (
                "1..2.3",
                r#"ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")"#,
            ),
            ("1.2.3.4x", r#"ParseAddr("1.2.3.4x"): unexpected character (at "x")"#),
            ("fe80::1%", r#"ParseAddr("fe80::1%"): zone must be a non-empty string"#),
            (
                "12345::",
                r#"ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")"#,
            ),
            ("1:2", r#"ParseAddr("1:2"): address string too short"#),
            (
                "1:2:3:4:5:6:7:8:9",
                r#"ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")"#,
            ),
            ("1::2::3", r#"ParseAddr("1::2::3"): multiple :: in address (at ":3")"#),
            ("1:", r#"ParseAddr("1:"): colon must be followed by more characters (at ":")"#),
            (
                "1:2:3:4:5:6:7::8",
                r#"ParseAddr("1:2:3:4:5:6:7::8"): the :: must expand to at least one field of zeros"#,
            ),
            (
                "1:2:3:4:5:6:1.2.3.4:5",
                r#"ParseAddr("1:2:3:4:5:6:1.2.3.4:5"): unexpected character (at ":5")"#,
            ),
            ("::1.2.3", r#"ParseAddr("::1.2.3"): IPv4 address too short"#),
            (
                "1:1.2.3.4",
                r#"ParseAddr("1:1.2.3.4"): embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")"#,
            ),
            ("1:2x", r#"ParseAddr("1:2x"): unexpected character, want colon (at "x")"#),
        ];
        for (input, want) in table {
            assert_eq!(parse_addr(input).unwrap_err(), want, "{input}");
        }
    }

    // Go net/netip String() (RFC 5952) cases
    #[test]
    fn canonical_text() {
        let table = [
            ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("2001:db8:0:1:0:0:0:1", "2001:db8:0:1::1"),
            ("0:0:0:0:0:0:0:0", "::"),
            ("1:0:0:0:0:0:0:0", "1::"),
            ("2001:db8::0:1", "2001:db8::1"),
            ("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"),
            ("::1.2.3.4", "::102:304"),
        ];
        for (input, want) in table {
            assert_eq!(ip(input).to_string(), want, "{input}");
        }
        let (mapped, _) = parse_addr("::ffff:1.2.3.4").unwrap();
        assert_eq!(mapped.to_string(), "::ffff:1.2.3.4");
        assert_eq!(ip("1.2.3.4"), ip("1.2.3.4"));
        assert_ne!(ip("::102:304"), ip("1.2.3.4"));
    }
}
