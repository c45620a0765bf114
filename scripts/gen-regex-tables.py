#!/usr/bin/env python3
"""Generate crates/vap-eval-regex/src/tables.rs: the Unicode data of Go regexps.

`\\p{..}` classes and `(?i)` case folding in `matches`, `find` and `findAll`
(crates/vap-eval-regex/src/unicode.rs) use these tables instead of regex-syntax's
`unicode-gencat`, `unicode-script` and `unicode-case` data, which the package's wasm carried as
sorted `(char, char)` pairs, alias tables of string pointers and a case-folding table of slices
(54 KB of its gzipped size). The facts are the same: this script reads them from the regex-syntax
release in Cargo.lock (its `src/unicode_tables/*.rs`, in cargo's registry: run `cargo fetch`
first), checks that the compact form decodes to exactly the same sets, and writes:

  GC_IDS, GC_LENS,   the code points 0..=0x10FFFF as runs: an id byte per run in *_IDS, its
  SC_IDS, SC_LENS    length as a varint in *_LENS (two streams: gzip packs them 0.6 KB smaller
                     than interleaved); the id of a general category leaf (GC_LEAVES of them,
                     then one id for the surrogates, which regex-syntax leaves out) or of a
                     script (one extra id: no script).
  GC_GROUPS          per aggregate category (Letter, Mark, ...), the bit mask of its leaves.
  GC_NAMES, SC_NAMES the normalized aliases (UAX44-LM3, as regex-syntax normalizes) of each id:
                     ids separated by ';', aliases by ','. Gencat ids: the leaves, then the
                     aggregates in GC_GROUPS' order.
  SCX                per script: the code points its Script_Extensions adds to and removes from its
                     Script set, as <varint count> then <varint gap> <varint length-1> ranges.
  FOLD               simple case folding: for every code point with a fold orbit, sorted,
                     <varint delta from the previous> <zigzag varint delta to the next member of
                     its orbit> (the orbit is a cycle; its largest member points to its smallest).

Usage: python3 scripts/gen-regex-tables.py [--check]
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates/vap-eval-regex/src/tables.rs")
N = 0x110000


def regex_syntax_dir():
    lock = open(os.path.join(ROOT, "Cargo.lock")).read()
    version = re.search(r'name = "regex-syntax"\nversion = "([^"]+)"', lock).group(1)
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = glob.glob(os.path.join(home, "registry/src/*/regex-syntax-%s/src/unicode_tables" % version))
    if not found:
        sys.exit("regex-syntax %s not in cargo's registry: run `cargo fetch`" % version)
    return version, found[0]


VERSION, SRC = regex_syntax_dir()
CH = r"'(\\u\{[0-9a-fA-F]+\}|\\'|\\\\|\\0|\\t|\\n|\\r|[^'])'"
ESC = {"\\'": 39, "\\\\": 92, "\\0": 0, "\\t": 9, "\\n": 10, "\\r": 13}


def ch(s):
    if s.startswith("\\u{"):
        return int(s[3:-1], 16)
    return ESC[s] if s.startswith("\\") else ord(s)


def read(name):
    return open(os.path.join(SRC, name), encoding="utf-8").read()


def tables(fname):
    text = read(fname)
    by = re.search(r"BY_NAME[^=]*= &\[(.*?)\];", text, re.S).group(1)
    out = {}
    for name, const in re.findall(r'\("([^"]+)", ([A-Z0-9_]+)\)', by):
        body = re.search(r"pub const %s: [^=]*=\s*&\[(.*?)\];" % const, text, re.S).group(1)
        out[name] = [(ch(a), ch(b)) for a, b in re.findall(r"\(%s, %s\)" % (CH, CH), body)]
    return out


def property_values():
    text = read("property_values.rs")
    out = {}
    for m in re.finditer(r'\(\s*"([A-Za-z_]+)",\s*&\[(.*?)\],\s*\)', text, re.S):
        out[m.group(1)] = re.findall(r'\("([^"]*)", "([^"]*)"\)', m.group(2))
    return out


SURROGATES = set(range(0xD800, 0xE000))


def points(ranges):
    """The code points of ranges. A range may span the surrogates (regex-syntax's Other does); a
    regex class cannot hold them (they are not chars), so they are left out."""
    s = set()
    for a, b in ranges:
        s.update(range(a, b + 1))
    return s - SURROGATES


def to_ranges(s):
    out = []
    for c in sorted(s):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [tuple(r) for r in out]


def varint(n):
    assert n >= 0
    out = []
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return out


def runs(tab, keys):
    """Code points as (length, id) runs; id len(keys) for those in no table."""
    arr = [len(keys)] * N
    for i, k in enumerate(keys):
        for a, b in tab[k]:
            for c in sorted(points([(a, b)])):
                assert arr[c] == len(keys), "%s overlaps at U+%04X" % (k, c)
                arr[c] = i
    out, start = [], 0
    for c in range(1, N + 1):
        if c == N or arr[c] != arr[start]:
            out.append((c - start, arr[start]))
            start = c
    ids, lens = [], []
    for length, i in out:
        ids.append(i)
        lens += varint(length)
    return ids, lens


def decode_runs(enc):
    """id -> set of code points (for the self-check)."""
    ids, lens = enc
    sets, i, cp = {}, 0, 0
    for ident in ids:
        length, shift = 0, 0
        while True:
            b = lens[i]
            i += 1
            length |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        sets.setdefault(ident, set()).update(range(cp, cp + length))
        cp += length
    assert cp == N and i == len(lens)
    return sets


def main():
    gc = tables("general_category.rs")
    sc = tables("script.rs")
    scx = tables("script_extension.rs")
    pv = property_values()

    # General categories: the leaves partition the code points (but the surrogates); an aggregate
    # is the union of the leaves inside it.
    gc_sets = {k: points(v) for k, v in gc.items()}
    aggregates = [k for k in sorted(gc) if any(gc_sets[j] < gc_sets[k] for j in gc if j != k)]
    leaves = [k for k in sorted(gc) if k not in aggregates]
    gc_runs = runs(gc, leaves)
    decoded = decode_runs(gc_runs)
    assert decoded[len(leaves)] == SURROGATES, "only the surrogates lie outside"
    groups = []
    for k in aggregates:
        # Other's table spans the surrogates (D7FC-F8FF): its mask holds their id too, so that
        # the ranges come out the same, not only the code points.
        raw = set().union(*(set(range(a, b + 1)) for a, b in gc[k]))
        mask = sum(1 << i for i in range(len(leaves) + 1) if decoded.get(i, set()) <= raw)
        got = set().union(*(decoded.get(i, set()) for i in range(len(leaves) + 1) if mask >> i & 1))
        assert to_ranges(got) == [tuple(r) for r in gc[k]], k
        groups.append(mask)
    gc_ids = leaves + aggregates

    scripts = sorted(sc)
    assert sorted(scx) == scripts
    sc_runs = runs(sc, scripts)
    decoded = decode_runs(sc_runs)
    for i, k in enumerate(scripts):
        assert decoded.get(i, set()) == points(sc[k]), k

    # Aliases (already normalized in regex-syntax's tables) of the values its lookups can reach:
    # a canonical name without a table (Surrogate, Unknown, Katakana_Or_Hiragana) is an error
    # there, as a name not found is here.
    def names(values, ids):
        by_id = [[] for _ in ids]
        for alias, canon in values:
            if canon in ids:
                by_id[ids.index(canon)].append(alias)
        return ";".join(",".join(a) for a in by_id)

    assert pv["Script"] == pv["Script_Extensions"]
    gc_aliases = {a for a, c in pv["General_Category"]} | {"any", "assigned", "ascii"}
    assert not gc_aliases & {a for a, c in pv["Script"]}, "a name is both a category and a script"
    gc_names = names(pv["General_Category"], gc_ids)
    sc_names = names(pv["Script"], scripts)
    assert "" not in gc_names.split(";") + sc_names.split(";")
    # src/library/regex_unicode.rs names these properties itself.
    props = re.findall(r'\("([^"]*)", "([^"]*)"\)', read("property_names.rs"))
    named = {}
    for alias, canon in props:
        named.setdefault(canon, set()).add(alias)
    assert named["General_Category"] == {"gc", "generalcategory"}
    assert named["Script"] == {"sc", "script"}
    assert named["Script_Extensions"] == {"scx", "scriptextensions"}
    assert named["White_Space"] == {"space", "whitespace", "wspace"}
    # A property name that is also a category or script alias would be an error there (its
    # binary property has no data): there is none.
    shadow = {a for a, c in props if a not in ("cf", "sc", "lc")}
    assert not shadow & (gc_aliases | {a for a, c in pv["Script"]}), "a property shadows a value"

    scx_enc = []
    for k in scripts:
        base, ext = points(sc[k]), points(scx[k])
        for part in (to_ranges(ext - base), to_ranges(base - ext)):
            scx_enc += varint(len(part))
            prev = 0
            for a, b in part:
                scx_enc += varint(a - prev) + varint(b - a)
                prev = b
    # Case folding: regex-syntax's table maps every code point to all other members of its orbit.
    text = read("case_folding_simple.rs")
    fold = {ch(a): [ch(x) for x in re.findall(CH, b)] for a, b in re.findall(r"\(%s, &\[(.*?)\]\)" % CH, text)}
    fold_enc, prev = [], 0
    for c in sorted(fold):
        orbit = sorted(set([c] + fold[c]))
        for x in orbit:
            assert sorted(set([x] + fold[x])) == orbit, "orbit of U+%04X" % c
        nxt = orbit[(orbit.index(c) + 1) % len(orbit)]
        d = nxt - c
        fold_enc += varint(c - prev) + varint(d * 2 if d >= 0 else -d * 2 - 1)
        prev = c

    def array(name, data):
        lines = ["pub static %s: [u8; %d] = [" % (name, len(data))]
        for i in range(0, len(data), 24):
            lines.append("    " + ", ".join(str(x) for x in data[i : i + 24]) + ",")
        lines.append("];")
        return "\n".join(lines)

    out = [
        "// Generated by scripts/gen-regex-tables.py from regex-syntax %s's Unicode tables; do not edit." % VERSION,
        "//! The Unicode data of Go regexps (`\\p{..}` classes, `(?i)` case folding), compact: see",
        "//! scripts/gen-regex-tables.py for the format.",
        "",
        "/// General category leaves (ids below this); the next id is the surrogates.",
        "pub const GC_LEAVES: u8 = %d;" % len(leaves),
        "/// The leaves of each aggregate category (%s)." % ", ".join(aggregates),
        "pub static GC_GROUPS: [u32; %d] = [%s];" % (len(groups), ", ".join("0x%08x" % g for g in groups)),
        "/// Aliases of %s, then of %s." % (", ".join(leaves), ", ".join(aggregates)),
        'pub static GC_NAMES: &str = "%s";' % gc_names,
        "/// Aliases of %s." % ", ".join(scripts),
        'pub static SC_NAMES: &str = "%s";' % sc_names,
        array("GC_IDS", gc_runs[0]),
        array("GC_LENS", gc_runs[1]),
        array("SC_IDS", sc_runs[0]),
        array("SC_LENS", sc_runs[1]),
        array("SCX", scx_enc),
        array("FOLD", fold_enc),
        "",
    ]
    text = "\n".join(out)
    if "--check" in sys.argv:
        if open(OUT).read() != text:
            sys.exit("%s is not what scripts/gen-regex-tables.py generates" % OUT)
        return
    open(OUT, "w").write(text)
    print("wrote %s: runs %d + %d bytes, scx %d, fold %d, names %d + %d" % (
        OUT, len(gc_runs[0]) + len(gc_runs[1]), len(sc_runs[0]) + len(sc_runs[1]), len(scx_enc), len(fold_enc), len(gc_names), len(sc_names)))


main()
