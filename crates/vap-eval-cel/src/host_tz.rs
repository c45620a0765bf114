//! IANA time zones in wasm builds, from the host's `Intl` (browsers and Node ship the IANA
//! database through ICU), instead of bundling jiff's copy of the database into the module
//! (≈ 370 KB raw, 110 KB gzip). Native builds keep jiff (`cel::stdlib::time::iana_offset`).
//! The one place besides `src/wasm.rs` that talks to JavaScript.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
const formats = new Map();
// Created on first use, not when the module loads: the first Intl.DateTimeFormat of a page
// loads ICU's data (≈ 20 ms in a fresh Chromium renderer), and most pages never ask for a zone.
let utc = null;
function format(tz) {
  let f = formats.get(tz);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', era: 'short',
        year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
      // Intl ignores case; Go's LoadLocation (like the IANA file names) does not. A name that
      // resolves to itself only case-insensitively is not a zone name.
      const resolved = f.resolvedOptions().timeZone;
      if (resolved !== tz && resolved.toLowerCase() === tz.toLowerCase()) f = null;
    } catch {
      f = null;
    }
    if (formats.size >= 64) formats.clear();
    formats.set(tz, f);
  }
  return f;
}
// The wall clock of `date` in `f`'s zone as milliseconds of a UTC clock. Both sides of the
// difference use the same calendar, so the offset is right whatever ICU's calendar does.
function wall(f, date) {
  const o = {};
  for (const p of f.formatToParts(date)) o[p.type] = p.value;
  let year = Number(o.year);
  if (/^B/.test(o.era ?? '')) year = 1 - year;
  const t = new Date(0);
  t.setUTCFullYear(year, Number(o.month) - 1, Number(o.day));
  t.setUTCHours(Number(o.hour) % 24, Number(o.minute), Number(o.second), 0);
  return t.getTime();
}
export function vap_tz_offset(tz, secs) {
  const f = format(tz);
  if (!f) return NaN;
  const date = new Date(secs * 1000);
  utc ??= format('UTC');
  return (wall(f, date) - wall(utc, date)) / 1000;
}
"#)]
extern "C" {
    fn vap_tz_offset(tz: &str, secs: f64) -> f64;
}

/// Offset in seconds east of UTC of IANA zone `tz` at Unix second `secs`; `None` for a name
/// the host does not know. Names that are offsets (`+05`, `-0530`), which `Intl` accepts but the
/// IANA database (and so Go and jiff) does not, are unknown.
pub fn offset(tz: &str, secs: i64) -> Option<i64> {
    let first = tz.chars().next()?;
    if first == '+' || first == '-' || first.is_ascii_digit() {
        return None;
    }
    let off = vap_tz_offset(tz, secs as f64);
    off.is_finite().then_some(off as i64)
}
