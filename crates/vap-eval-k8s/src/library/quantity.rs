//! Kubernetes `Quantity` library (since Kubernetes 1.28), type `kubernetes.Quantity`.
//!
//! Semantics of apimachinery `resource.Quantity` as the apiserver's CEL library uses them
//! (apiserver `pkg/cel/library/quantity.go`, apimachinery `pkg/api/resource/{quantity,amount,
//! math,suffix}.go`).
//!
//! ```text
//! quantity(<string>) <kubernetes.Quantity>            -> Quantity::parse
//! isQuantity(<string>) <bool>                         -> Quantity::parse(..).is_ok()
//! sign(<kubernetes.Quantity>) <int>                   -> Quantity::sign   (global function, not a member)
//! <Quantity>.isGreaterThan(<Quantity>) <bool>         -> Quantity::compare == Greater
//! <Quantity>.isLessThan(<Quantity>) <bool>            -> Quantity::compare == Less
//! <Quantity>.compareTo(<Quantity>) <int>              -> Quantity::compare_to
//! <Quantity>.add(<Quantity>|<int>) <Quantity>         -> Quantity::add / add_int
//! <Quantity>.sub(<Quantity>|<int>) <Quantity>         -> Quantity::sub / sub_int
//! <Quantity>.asInteger() <int>                        -> Quantity::as_integer
//! <Quantity>.isInteger() <bool>                       -> Quantity::is_integer
//! <Quantity>.asApproximateFloat() <double>            -> Quantity::as_approximate_float
//! <Quantity> == <Quantity>                            -> Quantity::equal (numeric value)
//! ```
//!
//! Examples (apiserver `quantity_test.go`, apimachinery `quantity_test.go`):
//!
//! ```text
//! quantity("200M") == quantity("0.2G")                 // true
//! quantity("50M").compareTo(quantity("50Mi"))          // -1
//! quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() // 20
//! quantity("50.703k").asApproximateFloat()             // 50703.0
//! quantity("9999999999999999999999999999999999999G").asInteger()
//!                                                      // error: cannot convert value to integer
//! quantity("1.5Gi").asInteger()                        // error: cannot convert value to integer (quirk below)
//! quantity("10Mo")  // error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'
//! quantity("10Mm")  // error: unable to parse quantity's suffix
//! quantity("Mi") == quantity("0")                      // true (a bare suffix parses as zero)
//! ```
//!
//! Canonical text ([`Quantity::to_string`], apimachinery `String()`): `0.5` → `500m`,
//! `1.5Gi` → `1536Mi`, `1000M` → `1G`, `1000E` → `1e21`.
//!
//! # Representation
//! apimachinery keeps a quantity either as an `int64Amount` (`value × 10^scale`) or as an
//! `inf.Dec`, and the choice is observable: `asInteger`/`isInteger` only succeed on the
//! int64 form with a non-negative scale. So `quantity("1.5Gi").isInteger()` is false and
//! `quantity("0.5").add(quantity("0.5")).isInteger()` is false even though both values are
//! whole numbers. [`Quantity`] keeps the same two forms and follows the same promotion rules.
//!
//! # Known differences
//! * Go's `Cmp` promotes its receiver to the `inf.Dec` form in place when either side is
//!   already an `inf.Dec`; a later `asInteger()` on that same CEL value then fails. We do not
//!   mutate on compare.
//! * Go would spend unbounded time and memory aligning exponents that are millions of digits
//!   apart (e.g. `quantity("1e2000000000").add(1)`); we return [`TOO_LARGE_ERROR`] instead.
//! * `mul`/`div`/`divInt` (newer apiserver releases) are not part of this module yet.

use std::cmp::Ordering;
use std::fmt;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};

/// `ErrFormatWrong`.
pub const FORMAT_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `ErrNumeric`.
pub const NUMERIC_ERROR: &str = "unable to parse numeric part of quantity";
/// `ErrSuffix`.
pub const SUFFIX_ERROR: &str = "unable to parse quantity's suffix";
/// `asInteger` on a value that has no exact int64 form.
pub const AS_INTEGER_ERROR: &str = "cannot convert value to integer";
/// Our own refusal to build numbers with more than [`MAX_ALIGN_DIGITS`] digits (Go would hang).
pub const TOO_LARGE_ERROR: &str = "quantity exponent too large to evaluate";

/// Largest power of ten we are willing to materialise when aligning two decimals.
const MAX_ALIGN_DIGITS: u64 = 100_000;

/// The three serialisation formats; the parser remembers which one the input used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `12e6`
    DecimalExponent,
    /// `12Mi` (powers of 1024)
    BinarySI,
    /// `12M` (powers of 1000)
    DecimalSI,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Amount {
    /// `value × 10^scale` (apimachinery `int64Amount`; `scale` is a base-10 exponent).
    Int { value: i64, scale: i32 },
    /// `unscaled × 10^-scale` (`inf.Dec`; `scale` counts digits after the point).
    Dec { unscaled: BigInt, scale: i64 },
}

/// A parsed `resource.Quantity`.
#[derive(Clone, Debug)]
pub struct Quantity {
    amount: Amount,
    format: Format,
    /// apimachinery keeps the input text when it is already canonical and prints it verbatim
    /// (so `+1k` prints as `+1k`); `None` means "compute the canonical form".
    text: Option<String>,
}

/// Result of apimachinery's `parseQuantityString` scanner.
struct Scanned<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

fn scan(s: &str) -> Result<Scanned<'_>, ()> {
    let b = s.as_bytes();
    let end = b.len();
    let mut out = Scanned { positive: true, value: "", num: "", denom: "", suffix: "" };
    let mut pos = 0;
    if pos < end {
        match b[0] {
            b'-' => {
                out.positive = false;
                pos += 1;
            }
            b'+' => pos += 1,
            _ => {}
        }
    }
    // Leading zeros.
    loop {
        if pos >= end {
            out.num = "0";
            out.value = "0";
            return Ok(out);
        }
        if b[pos] != b'0' {
            break;
        }
        pos += 1;
    }
    // Numerator.
    let mut i = pos;
    loop {
        if i >= end {
            out.num = &s[pos..end];
            out.value = s;
            return Ok(out);
        }
        if !b[i].is_ascii_digit() {
            out.num = &s[pos..i];
            pos = i;
            break;
        }
        i += 1;
    }
    if out.num.is_empty() {
        out.num = "0";
    }
    // Denominator.
    if pos < end && b[pos] == b'.' {
        pos += 1;
        let mut i = pos;
        loop {
            if i >= end {
                out.denom = &s[pos..end];
                out.value = s;
                return Ok(out);
            }
            if !b[i].is_ascii_digit() {
                out.denom = &s[pos..i];
                pos = i;
                break;
            }
            i += 1;
        }
    }
    out.value = &s[..pos];
    // Suffix: letters, optional sign, digits.
    let suffix_start = pos;
    let mut i = pos;
    loop {
        if i >= end {
            out.suffix = &s[suffix_start..];
            return Ok(out);
        }
        if !b"eEinumkKMGTP".contains(&b[i]) {
            pos = i;
            break;
        }
        i += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    for &c in &b[pos..] {
        if !c.is_ascii_digit() {
            return Err(());
        }
    }
    out.suffix = &s[suffix_start..];
    Ok(out)
}

/// apimachinery `quantitySuffixer.interpret`: (base, exponent, format).
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let dec = |e| Some((10, e, Format::DecimalSI));
    let bin = |e| Some((2, e, Format::BinarySI));
    match suffix {
        "" => dec(0),
        "n" => dec(-9),
        "u" => dec(-6),
        "m" => dec(-3),
        "k" => dec(3),
        "M" => dec(6),
        "G" => dec(9),
        "T" => dec(12),
        "P" => dec(15),
        "E" => dec(18),
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        s if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
            // strconv.ParseInt(s[1:], 10, 64), then a wrapping int32 conversion.
            let parsed: i64 = s[1..].parse().ok()?;
            Some((10, parsed as i32, Format::DecimalExponent))
        }
        _ => None,
    }
}

fn pow10(n: u64) -> Result<BigInt, String> {
    if n > MAX_ALIGN_DIGITS {
        return Err(TOO_LARGE_ERROR.to_string());
    }
    Ok(num_traits::pow(BigInt::from(10u8), n as usize))
}

/// `inf.Dec.Round(x, s, inf.RoundUp)`: rescale to exactly `s` digits after the point,
/// rounding away from zero.
fn dec_round_up(unscaled: &BigInt, scale: i64, to: i64) -> Result<BigInt, String> {
    if scale <= to {
        return Ok(unscaled * pow10((to - scale) as u64)?);
    }
    let (q, r) = unscaled.div_rem(&pow10((scale - to) as u64)?);
    if r.is_zero() {
        Ok(q)
    } else if unscaled.is_negative() {
        Ok(q - 1)
    } else {
        Ok(q + 1)
    }
}

/// `positiveScaleInt64`: `base × 10^scale`, `None` on overflow.
fn positive_scale_i64(base: i64, scale: i64) -> Option<i64> {
    if base == 0 {
        return Some(0);
    }
    let mut result = base;
    for _ in 0..scale {
        result = result.checked_mul(10)?;
    }
    Some(result)
}

/// `negativeScaleInt64`: divide by `10^scale`, rounding away from zero; also reports exactness.
fn negative_scale_i64(base: i64, scale: i64) -> (i64, bool) {
    if scale == 0 {
        return (base, true);
    }
    let mut value = base;
    let mut fraction = false;
    for _ in 0..scale {
        if !fraction && value % 10 != 0 {
            fraction = true;
        }
        value /= 10;
        if value == 0 {
            if fraction {
                return (if base > 0 { 1 } else { -1 }, false);
            }
            return (0, true);
        }
    }
    if fraction {
        value += if base > 0 { 1 } else { -1 };
    }
    (value, !fraction)
}

/// `removeInt64Factors`.
fn remove_i64_factors(value: i64, base: i64) -> (i64, i32) {
    let negative = value < 0;
    let mut result = if negative { value.wrapping_neg() } else { value };
    let mut times = 0;
    while result >= base && result % base == 0 {
        times += 1;
        result /= base;
    }
    (if negative { result.wrapping_neg() } else { result }, times)
}

/// `removeBigIntFactors`.
fn remove_big_factors(mut d: BigInt, factor: u32) -> (BigInt, i32) {
    let factor = BigInt::from(factor);
    let mut times = 0;
    while !d.is_zero() {
        let (q, m) = d.div_mod_floor(&factor);
        if !m.is_zero() {
            break;
        }
        times += 1;
        d = q;
    }
    (d, times)
}

/// Go `math.Pow10`, reproduced table for table so products round the same way.
fn go_pow10(n: i64) -> f64 {
    const TAB: [f64; 32] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    ];
    const POS32: [f64; 10] = [1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288];
    const NEG32: [f64; 11] =
        [1e0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320];
    if (0..=308).contains(&n) {
        let n = n as usize;
        return POS32[n / 32] * TAB[n % 32];
    }
    if (-323..=0).contains(&n) {
        let m = (-n) as usize;
        return NEG32[m / 32] / TAB[m % 32];
    }
    if n > 0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// Go `big.Float.SetInt(x).Float64()`: round to nearest even, ±Inf beyond range.
fn big_to_f64(x: &BigInt) -> f64 {
    x.to_string().parse::<f64>().unwrap_or(f64::NAN)
}

/// Number of decimal digits of |x| (x ≠ 0).
fn digit_count(x: &BigInt) -> i64 {
    x.abs().to_string().len() as i64
}

impl Amount {
    /// `(unscaled, base-10 exponent)`.
    fn parts(&self) -> (BigInt, i64) {
        match self {
            Amount::Int { value, scale } => (BigInt::from(*value), i64::from(*scale)),
            Amount::Dec { unscaled, scale } => (unscaled.clone(), -scale),
        }
    }

    /// `(unscaled, inf scale)` — the `inf.Dec` view (`AsDec`).
    fn as_dec(&self) -> (BigInt, i64) {
        let (u, e) = self.parts();
        (u, -e)
    }

    fn sign(&self) -> i64 {
        match self {
            Amount::Int { value, .. } => value.signum(),
            Amount::Dec { unscaled, .. } => match unscaled.sign() {
                num_bigint::Sign::Minus => -1,
                num_bigint::Sign::NoSign => 0,
                num_bigint::Sign::Plus => 1,
            },
        }
    }

    /// Exact comparison without materialising huge powers of ten.
    fn compare(&self, other: &Amount) -> Ordering {
        let (sa, sb) = (self.sign(), other.sign());
        if sa != sb {
            return sa.cmp(&sb);
        }
        if sa == 0 {
            return Ordering::Equal;
        }
        let (ua, ea) = self.parts();
        let (ub, eb) = other.parts();
        // Position of the leading digit decides unless equal.
        let (la, lb) = (digit_count(&ua) + ea, digit_count(&ub) + eb);
        let magnitude = if la != lb {
            la.cmp(&lb)
        } else {
            // Equal leading positions: the exponent gap is at most the digit-count gap.
            let (ua, ub) = (ua.abs(), ub.abs());
            if ea >= eb {
                let shift = num_traits::pow(BigInt::from(10u8), (ea - eb) as usize);
                (ua * shift).cmp(&ub)
            } else {
                let shift = num_traits::pow(BigInt::from(10u8), (eb - ea) as usize);
                ua.cmp(&(ub * shift))
            }
        };
        if sa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// `AsScale(0)`: round up to an integer; reports exactness.
    fn as_scale0(&self) -> Result<(Amount, bool), String> {
        match self {
            Amount::Int { value, scale } => {
                if *scale >= 0 {
                    return Ok((self.clone(), true));
                }
                let (v, exact) = negative_scale_i64(*value, -i64::from(*scale));
                Ok((Amount::Int { value: v, scale: 0 }, exact))
            }
            Amount::Dec { unscaled, scale } => {
                let r = dec_round_up(unscaled, *scale, 0)?;
                let rounded = Amount::Dec { unscaled: r, scale: 0 };
                let exact = rounded.compare(self) == Ordering::Equal;
                Ok((rounded, exact))
            }
        }
    }

    /// `AsCanonicalBytes`: mantissa text and an exponent that is a multiple of 3.
    fn canonical_base10(&self) -> (String, i64) {
        if let Amount::Int { value, scale } = self {
            let (mut amount, times) = remove_i64_factors(*value, 10);
            let mut exponent = i64::from(*scale) + i64::from(times);
            let adjusted = match exponent % 3 {
                1 | -2 => amount.checked_mul(10).map(|a| (a, 1)),
                2 | -1 => amount.checked_mul(100).map(|a| (a, 2)),
                _ => Some((amount, 0)),
            };
            if let Some((a, down)) = adjusted {
                amount = a;
                exponent -= down;
                return (amount.to_string(), exponent);
            }
        }
        let (unscaled, scale) = self.as_dec();
        let (mut amount, times) = remove_big_factors(unscaled, 10);
        let mut exponent = -scale + i64::from(times);
        while exponent % 3 != 0 {
            amount *= 10;
            exponent -= 1;
        }
        (amount.to_string(), exponent)
    }

    /// `AsCanonicalBase1024Bytes`: mantissa text and a power-of-1024 exponent.
    fn canonical_base1024(&self) -> Result<(String, i32), String> {
        if let Amount::Int { value, scale } = self {
            // AsScaledInt64(0); scale is ≥ 0 here because the caller rounded first.
            if *scale >= 0 && *scale < 19 {
                if let Some(v) = positive_scale_i64(*value, i64::from(*scale)) {
                    let (amount, exp) = remove_i64_factors(v, 1024);
                    return Ok((amount.to_string(), exp));
                }
            }
        }
        let (unscaled, scale) = self.as_dec();
        let rounded = dec_round_up(&unscaled, scale, 0)?;
        let (amount, exp) = remove_big_factors(rounded, 1024);
        Ok((amount.to_string(), exp))
    }
}

fn dec_suffix(exponent: i64) -> Option<&'static str> {
    Some(match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => return None,
    })
}

fn exponent_suffix(exponent: i64) -> String {
    if exponent == 0 {
        String::new()
    } else {
        format!("e{exponent}")
    }
}

fn bin_suffix(exponent: i32) -> &'static str {
    // apimachinery has no BinarySI suffix for 2^0 or beyond Ei, and prints none.
    match exponent {
        10 => "Ki",
        20 => "Mi",
        30 => "Gi",
        40 => "Ti",
        50 => "Pi",
        60 => "Ei",
        _ => "",
    }
}

/// `inf.Dec` addition: align to the larger scale, add.
fn dec_add(a: (BigInt, i64), b: (BigInt, i64)) -> Result<Amount, String> {
    let scale = a.1.max(b.1);
    let x = a.0 * pow10((scale - a.1) as u64)?;
    let y = b.0 * pow10((scale - b.1) as u64)?;
    Ok(Amount::Dec { unscaled: x + y, scale })
}

/// `int64Amount.Add`; `None` when apimachinery falls back to `inf.Dec`.
fn int_add(a: (i64, i32), b: (i64, i32)) -> Option<(i64, i32)> {
    let ((av, ascale), (bv, bscale)) = (a, b);
    if bv == 0 {
        return Some(a);
    }
    if av == 0 {
        return Some(b);
    }
    match ascale.cmp(&bscale) {
        Ordering::Equal => Some((av.checked_add(bv)?, ascale)),
        Ordering::Greater => {
            let c = positive_scale_i64(av, i64::from(ascale) - i64::from(bscale))?;
            Some((c.checked_add(bv)?, bscale))
        }
        Ordering::Less => {
            let c = positive_scale_i64(bv, i64::from(bscale) - i64::from(ascale))?;
            Some((av.checked_add(c)?, ascale))
        }
    }
}

impl Quantity {
    /// apimachinery `ParseQuantity`, with its exact error texts.
    pub fn parse(s: &str) -> Result<Quantity, String> {
        if s.is_empty() {
            return Err(FORMAT_ERROR.to_string());
        }
        if s == "0" {
            return Ok(Quantity {
                amount: Amount::Int { value: 0, scale: 0 },
                format: Format::DecimalSI,
                text: Some("0".to_string()),
            });
        }
        let sc = scan(s).map_err(|()| FORMAT_ERROR.to_string())?;
        let (base, exponent, format) = interpret(sc.suffix).ok_or(SUFFIX_ERROR)?;
        let digits = (sc.num.len() + sc.denom.len()) as i64;
        let (mut scale, precision, mantissa): (i32, i64, i64) = match format {
            Format::DecimalExponent | Format::DecimalSI => (exponent, 19 - digits, 1),
            Format::BinarySI if sc.denom.is_empty() => {
                // float32(exponent)*3/10 is exact for 10..60.
                (0, 15 - sc.num.len() as i64 - i64::from(exponent * 3 / 10) - 1, 1 << exponent)
            }
            Format::BinarySI => (0, -1, 1),
        };
        if precision >= 0 {
            scale = scale.wrapping_sub(sc.denom.len() as i32);
            if scale >= -9 {
                let shifted = format!("{}{}", sc.num, sc.denom);
                let value: i64 = shifted.parse().map_err(|_| NUMERIC_ERROR.to_string())?;
                if let Some(mut result) = value.checked_mul(mantissa) {
                    if !sc.positive {
                        result = -result;
                    }
                    let canonical_input = match format {
                        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
                        _ => {
                            scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
                        }
                    };
                    return Ok(Quantity {
                        amount: Amount::Int { value: result, scale },
                        format,
                        text: canonical_input.then(|| s.to_string()),
                    });
                }
            }
        }

        // inf.Dec path.
        let unsigned = sc.value.trim_start_matches(['+', '-']);
        let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let all_digits = format!("{int_part}{frac_part}");
        if all_digits.is_empty() {
            return Err(NUMERIC_ERROR.to_string());
        }
        let mut unscaled: BigInt = all_digits.parse().map_err(|_| NUMERIC_ERROR.to_string())?;
        let mut dec_scale = frac_part.len() as i64;
        if base == 10 {
            dec_scale -= i64::from(exponent);
        } else {
            unscaled <<= exponent as usize;
        }
        let mut format = format;
        if !unscaled.is_zero() {
            unscaled = dec_round_up(&unscaled, dec_scale, 9)?;
            dec_scale = 9;
        }
        let mut amount = Amount::Dec { unscaled, scale: dec_scale };
        if format == Format::BinarySI {
            let max = Amount::Int { value: i64::MAX, scale: 0 };
            if amount.compare(&max) == Ordering::Greater {
                amount = Amount::Dec { unscaled: BigInt::from(i64::MAX), scale: 0 };
            }
            let one = Amount::Int { value: 1, scale: 0 };
            if amount.compare(&one) == Ordering::Less && amount.sign() > 0 {
                format = Format::DecimalSI;
            }
        }
        if !sc.positive {
            if let Amount::Dec { unscaled, .. } = &mut amount {
                *unscaled = -std::mem::take(unscaled);
            }
        }
        Ok(Quantity { amount, format, text: None })
    }

    /// `resource.NewQuantity(v, DecimalExponent)` — how the CEL library lifts an `int` operand.
    pub fn from_int(value: i64) -> Quantity {
        Quantity {
            amount: Amount::Int { value, scale: 0 },
            format: Format::DecimalExponent,
            text: None,
        }
    }

    /// The format remembered from parsing (or inherited by arithmetic).
    pub fn format(&self) -> Format {
        self.format
    }

    /// `q.Sign()`: −1, 0 or 1.
    pub fn sign(&self) -> i64 {
        self.amount.sign()
    }

    fn is_zero(&self) -> bool {
        self.sign() == 0
    }

    /// `q.Cmp(y)`, exact.
    pub fn compare(&self, other: &Quantity) -> Ordering {
        self.amount.compare(&other.amount)
    }

    /// `compareTo`: −1, 0 or 1.
    pub fn compare_to(&self, other: &Quantity) -> i64 {
        match self.compare(other) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }

    /// CEL `==`: equal numeric value, whatever the format.
    pub fn equal(&self, other: &Quantity) -> bool {
        self.compare(other) == Ordering::Equal
    }

    /// `q.AsInt64()`: only the int64 form with an exactly representable value succeeds.
    fn as_i64(&self) -> Option<i64> {
        match &self.amount {
            Amount::Int { value, scale } if *scale >= 0 => {
                positive_scale_i64(*value, i64::from(*scale))
            }
            _ => None,
        }
    }

    /// `asInteger()`.
    pub fn as_integer(&self) -> Result<i64, String> {
        self.as_i64().ok_or_else(|| AS_INTEGER_ERROR.to_string())
    }

    /// `isInteger()`: whether `asInteger()` succeeds.
    pub fn is_integer(&self) -> bool {
        self.as_i64().is_some()
    }

    /// `asApproximateFloat()` (Go `AsApproximateFloat64`): ±Inf beyond the float64 range.
    pub fn as_approximate_float(&self) -> f64 {
        let (base, exponent) = match &self.amount {
            Amount::Int { value, scale } => (*value as f64, i64::from(*scale)),
            Amount::Dec { unscaled, scale } => (big_to_f64(unscaled), -scale),
        };
        if exponent == 0 {
            base
        } else {
            base * go_pow10(exponent)
        }
    }

    /// `add(<Quantity>)` (Go `Quantity.Add` on a copy of the receiver).
    pub fn add(&self, y: &Quantity) -> Result<Quantity, String> {
        let mut q = self.clone();
        q.text = None;
        match (&q.amount, &y.amount) {
            (Amount::Int { value: av, scale: asc }, Amount::Int { value: bv, scale: bsc }) => {
                if *av == 0 {
                    q.format = y.format;
                }
                if let Some((value, scale)) = int_add((*av, *asc), (*bv, *bsc)) {
                    q.amount = Amount::Int { value, scale };
                    return Ok(q);
                }
            }
            _ => {
                if q.is_zero() {
                    q.format = y.format;
                }
            }
        }
        q.amount = dec_add(q.amount.as_dec(), y.amount.as_dec())?;
        Ok(q)
    }

    /// `add(<int>)`.
    pub fn add_int(&self, y: i64) -> Result<Quantity, String> {
        self.add(&Quantity::from_int(y))
    }

    /// `sub(<Quantity>)` (Go `Quantity.Sub` on a copy of the receiver).
    pub fn sub(&self, y: &Quantity) -> Result<Quantity, String> {
        let mut q = self.clone();
        q.text = None;
        if q.is_zero() {
            q.format = y.format;
        }
        if let (Amount::Int { value: av, scale: asc }, Amount::Int { value: bv, scale: bsc }) =
            (&q.amount, &y.amount)
        {
            let ((av, asc), (bv, bsc)) = ((*av, *asc), (*bv, *bsc));
            if av == 0 && bv == i64::MIN {
                q.amount = y.amount.clone();
                return Ok(q.negated());
            }
            // int64Amount.Sub: a most-negative subtrahend goes to inf.Dec when alignable.
            let alignable = asc != i32::MIN
                && bsc != i32::MIN
                && (i64::from(asc) - i64::from(bsc)).abs() <= i64::from(i32::MAX);
            if !(bv == i64::MIN && alignable) {
                if let Some((value, scale)) = int_add((av, asc), (bv.wrapping_neg(), bsc)) {
                    q.amount = Amount::Int { value, scale };
                    return Ok(q);
                }
            }
        }
        let (yu, ys) = y.amount.as_dec();
        q.amount = dec_add(q.amount.as_dec(), (-yu, ys))?;
        Ok(q)
    }

    /// `sub(<int>)`.
    pub fn sub_int(&self, y: i64) -> Result<Quantity, String> {
        self.sub(&Quantity::from_int(y))
    }

    /// Go `Quantity.RoundUp(scale)`: at least `10^scale` units, rounding away from zero; an
    /// integer amount already that coarse keeps its text, anything else is printed anew.
    pub fn round_up(&self, scale: i32) -> Result<Quantity, String> {
        let amount = match &self.amount {
            Amount::Int { scale: s, .. } if *s >= scale => return Ok(self.clone()),
            Amount::Int { value, scale: s } => {
                let value = negative_scale_i64(*value, i64::from(scale) - i64::from(*s)).0;
                Amount::Int { value, scale }
            }
            Amount::Dec { unscaled, scale: s } => {
                let to = -i64::from(scale);
                Amount::Dec { unscaled: dec_round_up(unscaled, *s, to)?, scale: to }
            }
        };
        Ok(Quantity { amount, format: self.format, text: None })
    }

    /// Go `Quantity.Neg`.
    fn negated(mut self) -> Quantity {
        self.text = None;
        self.amount = match self.amount {
            Amount::Int { value, scale } if value != i64::MIN || scale == i32::MIN => {
                Amount::Int { value: value.wrapping_neg(), scale }
            }
            other => {
                let (u, s) = other.as_dec();
                Amount::Dec { unscaled: -u, scale: s }
            }
        };
        self
    }

    /// `q.String()`: the canonical text (`CanonicalizeBytes`), or the input when apimachinery
    /// kept it.
    pub fn canonical(&self) -> String {
        if let Some(t) = &self.text {
            return t.clone();
        }
        if self.is_zero() {
            return "0".to_string();
        }
        let mut format = self.format;
        let mut rounded = None;
        if format == Format::BinarySI {
            let lo = Amount::Int { value: -1024, scale: 0 };
            let hi = Amount::Int { value: 1024, scale: 0 };
            if self.amount.compare(&lo) == Ordering::Greater
                && self.amount.compare(&hi) == Ordering::Less
            {
                format = Format::DecimalSI;
            } else {
                match self.amount.as_scale0() {
                    Ok((r, true)) => rounded = Some(r),
                    _ => format = Format::DecimalSI,
                }
            }
        }
        match (format, rounded) {
            (Format::BinarySI, Some(r)) => match r.canonical_base1024() {
                Ok((number, exponent)) => number + bin_suffix(exponent.saturating_mul(10)),
                Err(e) => e,
            },
            _ => {
                let (number, exponent) = self.amount.canonical_base10();
                let suffix = match format {
                    Format::DecimalSI => dec_suffix(exponent)
                        .map(str::to_string)
                        .unwrap_or_else(|| exponent_suffix(exponent)),
                    _ => exponent_suffix(exponent),
                };
                number + &suffix
            }
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

/// Runtime cost of `quantity(s)` / `isQuantity(s)`: ceil(0.1 × len(s)) (apiserver `cost.go`).
pub fn quantity_cost(arg_len: u64) -> u64 {
    arg_len.div_ceil(10)
}

/// Test helper: the internal form, for pinning apimachinery's representation choices.
#[cfg(test)]
fn form(q: &Quantity) -> String {
    match &q.amount {
        Amount::Int { value, scale } => format!("int({value},{scale})"),
        Amount::Dec { unscaled, scale } => format!("dec({unscaled},{scale})"),
    }
}

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare the quantity functions (apiserver `quantityLibraryDecls`). `sign` is a *global*
/// function: `sign(q)` type-checks, the documented `q.sign()` does not (spec §4.5).
pub fn declare(d: &mut crate::cel::decls::Declarations) {
    crate::cel::signature::declare(d, DECLS);
}

/// The quantity library's overloads (`quantity.go`), in its declaration order.
const DECLS: &[crate::cel::signature::Row] = &[
    ("quantity", "string_to_quantity", "(string) -> kubernetes.Quantity"),
    ("isQuantity", "is_quantity_string", "(string) -> bool"),
    ("sign", "quantity_sign", "(kubernetes.Quantity) -> int"),
    (
        "isGreaterThan",
        "quantity_is_greater_than",
        "kubernetes.Quantity.(kubernetes.Quantity) -> bool",
    ),
    ("isLessThan", "quantity_is_less_than", "kubernetes.Quantity.(kubernetes.Quantity) -> bool"),
    ("compareTo", "quantity_compare_to", "kubernetes.Quantity.(kubernetes.Quantity) -> int"),
    ("asApproximateFloat", "quantity_get_float", "kubernetes.Quantity.() -> double"),
    ("asInteger", "quantity_get_int", "kubernetes.Quantity.() -> int"),
    ("isInteger", "quantity_is_integer", "kubernetes.Quantity.() -> bool"),
    ("add", "quantity_add", "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity"),
    ("add", "quantity_add_int", "kubernetes.Quantity.(int) -> kubernetes.Quantity"),
    ("sub", "quantity_sub", "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity"),
    ("sub", "quantity_sub_int", "kubernetes.Quantity.(int) -> kubernetes.Quantity"),
];

// ---------------------------------------------------------------------------------------------
// CEL implementations

use super::bind::{self, opaque, wrap};
use crate::cel::stdlib::{Ctx, Fail, Overload, R};
use crate::cel::value::{OpaqueValue, Value};

/// A `kubernetes.Quantity` value.
///
/// `from_arithmetic` records the apiserver's representation quirk (spec §4.5): `add`/`sub`
/// return a *pointer* to the Go wrapper, and the wrapper's `Equal` only accepts the value form on
/// its right. So `q.add(1) == quantity('2')` works but `quantity('2') == q.add(1)` is
/// `no such overload`.
#[derive(Debug)]
pub struct QuantityValue {
    pub q: Quantity,
    pub from_arithmetic: bool,
}

impl QuantityValue {
    pub fn new(q: Quantity) -> Self {
        QuantityValue { q, from_arithmetic: false }
    }
}

impl OpaqueValue for QuantityValue {
    fn type_name(&self) -> &str {
        super::type_name::QUANTITY
    }
    /// Numeric equality (`Quantity.Equal`).
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<QuantityValue>().is_some_and(|o| self.q.equal(&o.q))
    }
    fn equal_to(&self, other: &Value<'_>) -> Result<bool, String> {
        match other {
            Value::Opaque(o) => match o.as_any().downcast_ref::<QuantityValue>() {
                Some(o) if !o.from_arithmetic => Ok(self.q.equal(&o.q)),
                _ => Err("no such overload".into()),
            },
            _ => Err("no such overload".into()),
        }
    }
    fn display(&self) -> String {
        self.q.to_string()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn q<'v>(v: &'v Value<'_>) -> Result<&'v Quantity, Fail> {
    opaque::<QuantityValue>(v).map(|v| &v.q)
}
fn arith<'a>(r: Result<Quantity, String>) -> R<'a> {
    r.map(|q| wrap(QuantityValue { q, from_arithmetic: true })).or_else(bind::err)
}

fn quantity_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Quantity::parse(bind::string(&a[0])?).map(|q| wrap(QuantityValue::new(q))).or_else(bind::err)
}
fn is_quantity<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(Quantity::parse(bind::string(&a[0])?).is_ok()))
}
fn sign<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(q(&a[0])?.sign()))
}
fn is_greater_than<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(q(&a[0])?.compare(q(&a[1])?) == std::cmp::Ordering::Greater))
}
fn is_less_than<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(q(&a[0])?.compare(q(&a[1])?) == std::cmp::Ordering::Less))
}
fn compare_to<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(q(&a[0])?.compare_to(q(&a[1])?)))
}
fn as_approximate_float<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Double(q(&a[0])?.as_approximate_float()))
}
fn as_integer<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    q(&a[0])?.as_integer().map(Value::Int).or_else(bind::err)
}
fn is_integer<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(q(&a[0])?.is_integer()))
}
fn add<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    arith(q(&a[0])?.add(q(&a[1])?))
}
fn add_int<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    arith(q(&a[0])?.add_int(bind::int(&a[1])?))
}
fn sub<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    arith(q(&a[0])?.sub(q(&a[1])?))
}
fn sub_int<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    arith(q(&a[0])?.sub_int(bind::int(&a[1])?))
}

/// The quantity library's implementations (costs: apiserver estimator, by name).
pub static OVERLOADS: &[Overload] = &[
    Overload::global("quantity", "string_to_quantity", 1, quantity_of),
    Overload::global("isQuantity", "is_quantity_string", 1, is_quantity),
    Overload::global("sign", "quantity_sign", 1, sign),
    Overload::member("isGreaterThan", "quantity_is_greater_than", 2, is_greater_than),
    Overload::member("isLessThan", "quantity_is_less_than", 2, is_less_than),
    Overload::member("compareTo", "quantity_compare_to", 2, compare_to),
    Overload::member("asApproximateFloat", "quantity_get_float", 1, as_approximate_float),
    Overload::member("asInteger", "quantity_get_int", 1, as_integer),
    Overload::member("isInteger", "quantity_is_integer", 1, is_integer),
    Overload::member("add", "quantity_add", 2, add),
    Overload::member("add", "quantity_add_int", 2, add_int),
    Overload::member("sub", "quantity_sub", 2, sub),
    Overload::member("sub", "quantity_sub_int", 2, sub_int),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    // apiserver pkg/cel/library/quantity_test.go TestQuantity
    #[test]
    fn cel_library_cases() {
        assert_eq!(Quantity::parse("10Mo").unwrap_err(), FORMAT_ERROR);
        assert_eq!(Quantity::parse("10Mm").unwrap_err(), SUFFIX_ERROR);
        for (s, ok) in
            [("20", true), ("20M", true), ("20Mi", true), ("20Mo", false), ("10Mm", false)]
        {
            assert_eq!(Quantity::parse(s).is_ok(), ok, "{s}");
        }
        assert!(q("200M").equal(&q("200M")));
        assert!(q("200M").equal(&q("0.2G")) && q("0.2G").equal(&q("200M")));
        assert!(q("2M").equal(&q("0.002G")) && q("2000k").equal(&q("2M")));
        assert!(!q("200M").equal(&q("0.3G")));
        assert_eq!(q("50M").compare(&q("50Mi")), Ordering::Less);
        assert_eq!(q("50M").compare(&q("100M")), Ordering::Less);
        assert_eq!(q("50Mi").compare(&q("50M")), Ordering::Greater);
        assert_eq!(q("150Mi").compare(&q("100Mi")), Ordering::Greater);
        assert_eq!(q("200M").compare_to(&q("0.2G")), 0);
        assert_eq!(q("50M").compare_to(&q("50Mi")), -1);
        assert_eq!(q("50Mi").compare_to(&q("50M")), 1);
        assert!(q("50k").add(&q("20")).unwrap().equal(&q("50.02k")));
        assert!(q("50k").add_int(20).unwrap().compare(&q("50020")) != Ordering::Less);
        assert!(q("50k").sub(&q("20")).unwrap().equal(&q("49.98k")));
        assert!(q("50k").sub_int(20).unwrap().equal(&q("49980")));
        let chain = q("50k").add_int(20).unwrap().sub(&q("100k")).unwrap();
        assert_eq!(chain.as_integer(), Ok(-49980));
        assert_eq!(chain.sub_int(-50000).unwrap().as_integer(), Ok(20));
        assert_eq!(q("50k").as_integer(), Ok(50000));
        let huge = q("9999999999999999999999999999999999999G");
        assert_eq!(huge.as_integer().unwrap_err(), AS_INTEGER_ERROR);
        assert!(!huge.is_integer());
        assert!(q("50").is_integer());
        assert_eq!(q("50.703k").as_approximate_float(), 50703.0);
        // Spec §4.5 quirk: a bare suffix parses as zero.
        assert!(q("Mi").equal(&q("0")));
    }

    // apimachinery quantity_test.go TestQuantityParse (value and format), TestParseQuantityString
    #[test]
    fn parse_values_and_formats() {
        use Format::*;
        let table: &[(&str, &str, Format)] = &[
            ("0", "0", DecimalSI),
            ("0n", "0", DecimalSI),
            ("0Ki", "0", BinarySI),
            ("1", "1", DecimalSI),
            ("1Ki", "1024", BinarySI),
            ("7Mi", "7340032", BinarySI),
            ("3Ei", "3458764513820540928", BinarySI),
            ("5n", "0.000000005", DecimalSI),
            ("50k", "50000", DecimalSI),
            ("1E", "1000000000000000000", DecimalSI),
            ("1E-3", "0.001", DecimalExponent),
            ("1e3", "1000", DecimalExponent),
            ("100.035k", "100035", DecimalSI),
            ("0.0005k", "0.5", DecimalSI),
            ("0.5e-1", "0.05", DecimalExponent),
            ("1.3E+6", "1300000", DecimalExponent),
            ("6.987654321G", "6987654321", DecimalSI),
            ("1.01E", "1010000000000000000", DecimalSI),
            ("3.001n", "0.000000004", DecimalSI),
            ("1.1E-9", "0.000000002", DecimalExponent),
            ("0.0000000001", "0.000000001", DecimalSI),
            ("0.5e-9", "0.000000001", DecimalExponent),
            ("0.9n", "0.000000001", DecimalSI),
            ("0.00000012345", "0.000000124", DecimalSI),
            ("9Ei", "9223372036854775807", BinarySI),
            ("9223372036854775807Ki", "9223372036854775807", BinarySI),
            ("12E", "12000000000000000000", DecimalSI),
            ("100.035Ki", "102435.84", BinarySI),
            ("0.5Mi", "524288", BinarySI),
            ("0.025Ti", "27487790694.4", BinarySI),
            ("0.000000000001Ki", "0.000000002", DecimalSI),
            (".001", "0.001", DecimalSI),
            ("1.", "1", DecimalSI),
            ("1.G", "1000000000", DecimalSI),
            (".", "0", DecimalSI),
        ];
        for &(input, value, format) in table {
            let got = q(input);
            let want = decimal(value);
            assert!(got.equal(&want), "{input}: {} vs {value}", form(&got));
            assert_eq!(got.format(), format, "{input}");
            let neg = q(&format!("-{input}"));
            assert_eq!(neg.compare(&want.clone().negated()), Ordering::Equal, "-{input}");
            assert!(q(&format!("+{input}")).equal(&want), "+{input}");
        }
        for bad in [
            "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1",
            "1 ", "",
        ] {
            assert!(Quantity::parse(bad).is_err(), "{bad}");
        }
    }

    /// Builds a decimal-exponent quantity from plain decimal text, for comparisons.
    fn decimal(s: &str) -> Quantity {
        let (i, f) = s.split_once('.').unwrap_or((s, ""));
        let unscaled: BigInt = format!("{i}{f}").parse().unwrap();
        Quantity {
            amount: Amount::Dec { unscaled, scale: f.len() as i64 },
            format: Format::DecimalExponent,
            text: None,
        }
    }

    // Representation choices observable through asInteger/isInteger.
    #[test]
    fn representation() {
        assert_eq!(form(&q("50k")), "int(50,3)");
        assert_eq!(form(&q("0.5")), "int(5,-1)");
        assert!(!q("1.5Gi").is_integer());
        assert!(!q("0.5").add(&q("0.5")).unwrap().is_integer());
        assert_eq!(q("1k").as_integer(), Ok(1000));
        assert_eq!(q("1Gi").as_integer(), Ok(1 << 30));
        assert_eq!(
            Quantity::parse("9999999999999999999").unwrap_err(),
            NUMERIC_ERROR,
            "19 digits take the int64 path and overflow ParseInt"
        );
        assert!(q("99999999999999999999").is_ok_big());
    }

    impl Quantity {
        fn is_ok_big(&self) -> bool {
            matches!(self.amount, Amount::Dec { .. })
        }
    }

    // apimachinery quantity_test.go TestQuantityString (via parse of the alternate form),
    // TestQuantityParseEmit, and the package doc examples.
    #[test]
    fn canonical_strings() {
        let table = [
            ("1024Mi", "1Gi"),
            ("307200Ki", "300Mi"),
            ("1025024Mi", "1001Gi"),
            ("1024Gi", "1Ti"),
            ("5000m", "5"),
            ("1000M", "1G"),
            ("0.001T", "1G"),
            ("1000u", "1m"),
            ("1.08", "1080m"),
            ("1080000000n", "1080m"),
            ("1000E", "1e21"),
            ("5000E", "5e21"),
            ("1000000E", "1e24"),
            (".001e12", "1e9"),
            ("0.001e0", "1e-3"),
            ("1000e-12", "1e-9"),
            ("00", "0"),
            ("1Ki", "1Ki"),
            ("1Gi", "1Gi"),
            (".001Ki", "1024m"),
            (".000001Ki", "1024u"),
            (".000000001Ki", "1024n"),
            (".000000000001Ki", "2n"),
            ("0.5", "500m"),
            ("1.5", "1500m"),
            ("1.5Gi", "1536Mi"),
            ("80e-3", "80e-3"),
            ("300e6", "300e6"),
            ("+1k", "+1k"),
        ];
        for (input, want) in table {
            assert_eq!(q(input).canonical(), want, "{input}");
            if input != "+1k" && input != "00" {
                let neg = q(&format!("-{input}"));
                if neg.sign() != 0 {
                    assert_eq!(neg.canonical(), format!("-{want}"), "-{input}");
                }
            }
        }
        // Arithmetic results are re-canonicalised.
        assert_eq!(q("1Gi").add(&q("0")).unwrap().canonical(), "1Gi");
        assert_eq!(q("0").add(&q("100m")).unwrap().canonical(), "100m");
        assert_eq!(q("0").sub(&q("1Gi")).unwrap().canonical(), "-1Gi");
    }

    // apimachinery quantity_test.go TestQuantityAsApproximateFloat64, TestStringQuantityAsApproximateFloat64
    #[test]
    fn approximate_float() {
        assert_eq!(q("2Ki").as_approximate_float(), 2048.0);
        assert_eq!(q("1.1Ki").as_approximate_float(), 1126.4);
        assert_eq!(q("1Mi").as_approximate_float(), 1.048576e06);
        assert_eq!(q("2Gi").as_approximate_float(), 2.147483648e09);
        assert_eq!(q("12E").as_approximate_float(), 1.2e19);
        assert_eq!(q("9Ei").as_approximate_float(), i64::MAX as f64);
        assert_eq!(q("12e500").as_approximate_float(), f64::INFINITY);
        assert_eq!(q("-12e500").as_approximate_float(), f64::NEG_INFINITY);
        assert_eq!(q("7340032e-1").as_approximate_float(), 7340032.0 * go_pow10(-1));
    }

    // apimachinery quantity_test.go TestQuantityCmp, TestQuantityCmpInt64AndDec (subset)
    #[test]
    fn compare() {
        assert_eq!(q("0").compare(&q("0")), Ordering::Equal);
        assert_eq!(q("100m").compare(&q("50m")), Ordering::Greater);
        assert_eq!(q("50m").compare(&q("100m")), Ordering::Less);
        assert_eq!(q("10000T").compare(&q("100Gi")), Ordering::Greater);
        assert_eq!(q("9223372036854775807").compare(&q("0.1")), Ordering::Greater);
        assert_eq!(q("1e2000000000").compare(&q("1")), Ordering::Greater);
        assert_eq!(q("-1e2000000000").compare(&q("1")), Ordering::Less);
    }

    // apimachinery Quantity.RoundUp (int64Amount.AsScale / infDecAmount.AsScale with
    // inf.RoundUp): away from zero; what core/v1 SetDefaults_ResourceList calls with -3.
    #[test]
    fn round_up() {
        let r = |s: &str, scale| q(s).round_up(scale).map(|x| x.canonical());
        for (s, scale, want) in [
            ("9.01", -3, "9010m"),
            ("9.01", -2, "9010m"),
            ("9.01", -1, "9100m"),
            ("9.01", 0, "10"),
            ("9.01", 1, "10"),
            ("-9.01", -1, "-9100m"),
            ("-9.01", 1, "-10"),
            ("0.0001", -3, "1m"),
            ("1n", -3, "1m"),
            ("1.0000001", -3, "1001m"),
            ("1e-7", -3, "1e-3"),
            ("0.1234567891234", -3, "124m"),
            ("100m", -3, "100m"),
            ("+1k", -3, "+1k"),
            ("1.5Gi", -3, "1536Mi"),
        ] {
            assert_eq!(r(s, scale).as_deref(), Ok(want), "{s} at {scale}");
        }
        // Coarser than milli already: kept, however large (no power of ten is built).
        assert_eq!(r("1e2000000000", -3).as_deref(), Ok("100e1999999998"));
    }

    #[test]
    fn sign_and_huge_exponents_do_not_hang() {
        assert_eq!(q("-1k").sign(), -1);
        assert_eq!(q("0Gi").sign(), 0);
        assert_eq!(q("1e2000000000").add_int(1).unwrap_err(), TOO_LARGE_ERROR);
        assert!(!q("1e2000000000").is_integer());
        assert_eq!(quantity_cost(11), 2);
    }
}
