//! Durations and timestamps (cel-go `common/types/{duration,timestamp}.go`).
//!
//! - `duration('1h30m')` — Go `time.ParseDuration` units `h m s ms us µs ns`
//!   // error: `type conversion error from 'string' to 'google.protobuf.Duration'`
//! - `timestamp('2009-02-13T23:31:30Z')` — RFC 3339; the offset written is kept for `string()`
//! - `t.getHours()` (UTC, Kubernetes `DefaultUTCTimeZone`), `t.getHours('America/New_York')`,
//!   `t.getHours('+05:30')`
//! - `timestamp('9999-12-31T23:59:59Z') + duration('1s')` // error: timestamp overflow

use super::util::str_arg;
use super::{Ctx, Fail, Overload, Overload as O, R};
use crate::cel::value::{civil_from_unix, days_from_civil, Timestamp, Value, MAX_UNIX, MIN_UNIX};

pub(crate) const DURATION_OVERFLOW: &str = "duration overflow";
pub(crate) const TIMESTAMP_OVERFLOW: &str = "timestamp overflow";
const NANOS: i64 = 1_000_000_000;

fn ts_add(t: &Timestamp, d: i64) -> R<'static> {
    let total = (t.nanos as i64).checked_add(d.rem_euclid(NANOS));
    let secs = t.secs.checked_add(d.div_euclid(NANOS));
    let (Some(total), Some(secs)) = (total, secs) else {
        return Err(Fail::msg(TIMESTAMP_OVERFLOW));
    };
    let secs = secs + total.div_euclid(NANOS);
    let nanos = total.rem_euclid(NANOS) as u32;
    if !(MIN_UNIX..=MAX_UNIX).contains(&secs) {
        return Err(Fail::msg(TIMESTAMP_OVERFLOW));
    }
    Ok(Value::timestamp(Timestamp { secs, nanos, offset: t.offset }))
}

pub(crate) fn add<'a>(a: &Value<'a>, b: &Value<'a>) -> R<'a> {
    match (a, b) {
        (Value::Duration(x), Value::Duration(y)) => {
            x.checked_add(*y).map(Value::Duration).ok_or_else(|| Fail::msg(DURATION_OVERFLOW))
        }
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => {
            ts_add(t, *d)
        }
        _ => Err(Fail::NoMatch),
    }
}

pub(crate) fn sub<'a>(a: &Value<'a>, b: &Value<'a>) -> R<'a> {
    match (a, b) {
        (Value::Duration(x), Value::Duration(y)) => {
            x.checked_sub(*y).map(Value::Duration).ok_or_else(|| Fail::msg(DURATION_OVERFLOW))
        }
        (Value::Timestamp(t), Value::Duration(d)) => match d.checked_neg() {
            Some(n) => ts_add(t, n),
            None => Err(Fail::msg(TIMESTAMP_OVERFLOW)),
        },
        (Value::Timestamp(x), Value::Timestamp(y)) => {
            let secs = (x.secs - y.secs) as i128;
            let ns = secs * NANOS as i128 + (x.nanos as i128 - y.nanos as i128);
            i64::try_from(ns).map(Value::Duration).map_err(|_| Fail::msg(DURATION_OVERFLOW))
        }
        _ => Err(Fail::NoMatch),
    }
}

/// Go `time.ParseDuration`.
pub fn parse_duration(s: &str) -> Option<i64> {
    let mut rest = s;
    let mut neg = false;
    if let Some(r) = rest.strip_prefix('-') {
        neg = true;
        rest = r;
    } else if let Some(r) = rest.strip_prefix('+') {
        rest = r;
    }
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        // integer part
        let int_len = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
        let int_part = &rest[..int_len];
        rest = &rest[int_len..];
        let mut frac_part = "";
        if let Some(r) = rest.strip_prefix('.') {
            let fl = r.bytes().take_while(|b| b.is_ascii_digit()).count();
            frac_part = &r[..fl];
            rest = &r[fl..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let mult: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let iv: u128 = if int_part.is_empty() { 0 } else { int_part.parse().ok()? };
        let mut v = iv.checked_mul(mult)?;
        if !frac_part.is_empty() {
            let mut scale: u128 = 1;
            let mut fv: u128 = 0;
            for b in frac_part.bytes().take(30) {
                fv = fv * 10 + (b - b'0') as u128;
                scale *= 10;
            }
            v += fv * mult / scale;
        }
        total = total.checked_add(v)?;
        if total > (1u128 << 63) {
            return None;
        }
    }
    if neg {
        if total > (1u128 << 63) {
            return None;
        }
        Some((total as i128).wrapping_neg() as i64)
    } else {
        if total > i64::MAX as u128 {
            return None;
        }
        Some(total as i64)
    }
}

/// Go `time.Parse(time.RFC3339, s)`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if !part.iter().all(|c| c.is_ascii_digit()) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo)
        || d < 1
        || d > days_in_month(y, mo as u32) as i64
        || h > 23
        || mi > 59
        || se > 59
    {
        return None;
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        let digits = &s[start..i];
        let mut n: u64 = 0;
        for (k, c) in digits.bytes().enumerate() {
            if k < 9 {
                n = n * 10 + (c - b'0') as u64;
            }
        }
        for _ in digits.len()..9 {
            n *= 10;
        }
        nanos = n as u32;
    }
    let offset: i32 = match b.get(i)? {
        b'Z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            if oh > 23 || om > 59 {
                return None;
            }
            let o = (oh * 3600 + om * 60) as i32;
            if *sign == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    let secs = days * 86_400 + h * 3600 + mi * 60 + se - offset as i64;
    Some(Timestamp { secs, nanos, offset })
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

fn to_duration<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Duration(d) => Ok(Value::Duration(*d)),
        Value::String(s) => parse_duration(s.as_str()).map(Value::Duration).ok_or_else(|| {
            Fail::msg("type conversion error from 'string' to 'google.protobuf.Duration'")
        }),
        Value::Int(i) => Ok(Value::Duration(*i)),
        _ => Err(Fail::NoMatch),
    }
}

fn to_timestamp<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Timestamp(t) => Ok(Value::Timestamp(t.clone())),
        Value::String(s) => match parse_rfc3339(s.as_str()) {
            Some(t) if (MIN_UNIX..=MAX_UNIX).contains(&t.secs) => Ok(Value::timestamp(t)),
            Some(_) => Err(Fail::msg(TIMESTAMP_OVERFLOW)),
            None => {
                Err(Fail::msg("type conversion error from 'string' to 'google.protobuf.Timestamp'"))
            }
        },
        Value::Int(i) => {
            if (MIN_UNIX..=MAX_UNIX).contains(i) {
                Ok(Value::timestamp(Timestamp { secs: *i, nanos: 0, offset: 0 }))
            } else {
                Err(Fail::msg(TIMESTAMP_OVERFLOW))
            }
        }
        _ => Err(Fail::NoMatch),
    }
}

/// Offset (seconds east of UTC) of time zone `tz` at instant `secs`: cel-go accepts an IANA
/// name (no `:`) or `±HH:MM`.
pub fn zone_offset(tz: &str, secs: i64) -> Result<i64, String> {
    if let Some(ind) = tz.find(':') {
        // strconv.Atoi on both halves; sign taken from the first character.
        let hr: i64 = go_atoi(&tz[..ind])?;
        let min: i64 = go_atoi(&tz[ind + 1..])?;
        let offset = if tz.starts_with('-') {
            hr.saturating_mul(60).saturating_sub(min)
        } else {
            hr.saturating_mul(60).saturating_add(min)
        };
        return Ok(offset.saturating_mul(60));
    }
    iana_offset(tz, secs)
}

fn go_atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {s:?}: invalid syntax"));
    }
    s.parse::<i64>().map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}

#[cfg(all(feature = "tz", not(target_arch = "wasm32")))]
fn iana_offset(tz: &str, secs: i64) -> Result<i64, String> {
    if tz.is_empty() || tz == "UTC" {
        return Ok(0);
    }
    let unknown = || format!("unknown time zone {tz}");
    let zone = jiff::tz::TimeZone::get(tz).map_err(|_| unknown())?;
    // Go's LoadLocation matches zone file names exactly; jiff's lookup ignores case.
    if zone.iana_name() != Some(tz) {
        return Err(unknown());
    }
    // jiff's instants stop a day short of the CEL range (year 1 to 9999, where a positive
    // offset reaches year 10000, as Go allows); the offset at the edge is the offset there.
    let secs = secs.clamp(jiff::Timestamp::MIN.as_second(), jiff::Timestamp::MAX.as_second());
    let ts = jiff::Timestamp::from_second(secs).map_err(|e| e.to_string())?;
    Ok(zone.to_offset(ts).seconds() as i64)
}

/// wasm: the host's IANA database through `Intl` (see `crate::host_tz`).
#[cfg(all(feature = "tz", target_arch = "wasm32"))]
fn iana_offset(tz: &str, secs: i64) -> Result<i64, String> {
    if tz.is_empty() || tz == "UTC" {
        return Ok(0);
    }
    crate::host_tz::offset(tz, secs).ok_or_else(|| format!("unknown time zone {tz}"))
}

#[cfg(not(feature = "tz"))]
fn iana_offset(tz: &str, _secs: i64) -> Result<i64, String> {
    if tz.is_empty() || tz == "UTC" {
        return Ok(0);
    }
    Err(format!("unknown time zone {tz}"))
}

type Broken = (i64, u32, u32, u32, u32, u32, u32, u32);

/// Broken-down local time: (year, month 1.., day 1.., hour, min, sec, day of year 0.., weekday
/// 0=Sunday).
fn local(t: &Timestamp, tz: Option<&str>) -> Result<Broken, Fail> {
    let off = match tz {
        Some(z) => zone_offset(z, t.secs).map_err(Fail::Err)?,
        None => 0,
    };
    // Go's FixedZone accepts any offset; keep the arithmetic in range.
    let ls = t.secs.saturating_add(off.clamp(-(1 << 40), 1 << 40));
    let (y, mo, d, h, mi, s) = civil_from_unix(ls);
    let days = ls.div_euclid(86_400);
    let yday = (days - days_from_civil(y, 1, 1)) as u32;
    let wday = (days + 4).rem_euclid(7) as u32;
    Ok((y, mo, d, h, mi, s, yday, wday))
}

macro_rules! accessor {
    ($name:ident, $pat:pat => $e:expr, $dur:expr) => {
        fn $name<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
            match &a[0] {
                Value::Timestamp(t) => {
                    let tz = match a.get(1) {
                        Some(v) => Some(str_arg(v)?),
                        None => None,
                    };
                    let $pat = local(t, tz)?;
                    Ok(Value::Int($e as i64))
                }
                Value::Duration(d) if a.len() == 1 => {
                    let f: Option<fn(i64) -> i64> = $dur;
                    match f {
                        Some(f) => Ok(Value::Int(f(*d))),
                        None => Err(Fail::NoMatch),
                    }
                }
                _ => Err(Fail::NoMatch),
            }
        }
    };
}

accessor!(get_full_year, (y, ..) => y, None);
accessor!(get_month, (_, m, ..) => m - 1, None);
accessor!(get_day_of_year, (_, _, _, _, _, _, yd, _) => yd, None);
accessor!(get_day_of_month, (_, _, d, ..) => d - 1, None);
accessor!(get_date, (_, _, d, ..) => d, None);
accessor!(get_day_of_week, (_, _, _, _, _, _, _, wd) => wd, None);
accessor!(get_hours, (_, _, _, h, ..) => h, Some(|d| d / 3_600_000_000_000));
accessor!(get_minutes, (_, _, _, _, mi, ..) => mi, Some(|d| d / 60_000_000_000));
accessor!(get_seconds, (_, _, _, _, _, s, ..) => s, Some(|d| d / NANOS));

fn get_milliseconds<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    match &a[0] {
        Value::Timestamp(t) => {
            if let Some(v) = a.get(1) {
                str_arg(v)?;
            }
            Ok(Value::Int((t.nanos / 1_000_000) as i64))
        }
        // cel-go: d.Milliseconds() — total milliseconds.
        Value::Duration(d) if a.len() == 1 => Ok(Value::Int(d / 1_000_000)),
        _ => Err(Fail::NoMatch),
    }
}

/// Conversions and the timestamp and duration accessors (cel-go ids), in registration order.
pub(crate) static OVERLOADS: &[Overload] = &[
    O::global("duration", "duration_to_duration", 1, to_duration),
    O::global("duration", "string_to_duration", 1, to_duration),
    O::global("duration", "int64_to_duration", 1, to_duration),
    O::global("timestamp", "timestamp_to_timestamp", 1, to_timestamp),
    O::global("timestamp", "string_to_timestamp", 1, to_timestamp),
    O::global("timestamp", "int64_to_timestamp", 1, to_timestamp),
    O::member("getFullYear", "timestamp_to_year", 1, get_full_year),
    O::member("getFullYear", "timestamp_to_year_with_tz", 2, get_full_year),
    O::member("getMonth", "timestamp_to_month", 1, get_month),
    O::member("getMonth", "timestamp_to_month_with_tz", 2, get_month),
    O::member("getDayOfYear", "timestamp_to_day_of_year", 1, get_day_of_year),
    O::member("getDayOfYear", "timestamp_to_day_of_year_with_tz", 2, get_day_of_year),
    O::member("getDayOfMonth", "timestamp_to_day_of_month", 1, get_day_of_month),
    O::member("getDayOfMonth", "timestamp_to_day_of_month_with_tz", 2, get_day_of_month),
    O::member("getDate", "timestamp_to_day_of_month_1_based", 1, get_date),
    O::member("getDate", "timestamp_to_day_of_month_1_based_with_tz", 2, get_date),
    O::member("getDayOfWeek", "timestamp_to_day_of_week", 1, get_day_of_week),
    O::member("getDayOfWeek", "timestamp_to_day_of_week_with_tz", 2, get_day_of_week),
    O::member("getHours", "timestamp_to_hours", 1, get_hours),
    O::member("getHours", "timestamp_to_hours_with_tz", 2, get_hours),
    O::member("getHours", "duration_to_hours", 1, get_hours),
    O::member("getMinutes", "timestamp_to_minutes", 1, get_minutes),
    O::member("getMinutes", "timestamp_to_minutes_with_tz", 2, get_minutes),
    O::member("getMinutes", "duration_to_minutes", 1, get_minutes),
    O::member("getSeconds", "timestamp_to_seconds", 1, get_seconds),
    O::member("getSeconds", "timestamp_to_seconds_tz", 2, get_seconds), // sic: cel-go's id has no "_with"
    O::member("getSeconds", "duration_to_seconds", 1, get_seconds),
    O::member("getMilliseconds", "timestamp_to_milliseconds", 1, get_milliseconds),
    O::member("getMilliseconds", "timestamp_to_milliseconds_with_tz", 2, get_milliseconds),
    O::member("getMilliseconds", "duration_to_milliseconds", 1, get_milliseconds),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_parse_duration() {
        assert_eq!(parse_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_duration("-2ms"), Some(-2_000_000));
        assert_eq!(parse_duration("300µs"), Some(300_000));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("1"), None);
        assert_eq!(parse_duration(""), None);
        assert_eq!(parse_duration("1d"), None);
        assert_eq!(parse_duration("2562047h47m16.854775807s"), Some(i64::MAX));
        assert_eq!(parse_duration("2562048h"), None);
    }

    #[test]
    fn rfc3339() {
        let t = parse_rfc3339("2009-02-13T23:31:30Z").unwrap();
        assert_eq!(t.secs, 1_234_567_890);
        let t = parse_rfc3339("2009-02-14T00:31:30.25+01:00").unwrap();
        assert_eq!((t.secs, t.nanos, t.offset), (1_234_567_890, 250_000_000, 3600));
        assert!(parse_rfc3339("2009-02-30T00:00:00Z").is_none());
        assert!(parse_rfc3339("2009-02-13 23:31:30Z").is_none());
    }
}
