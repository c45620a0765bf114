#!/usr/bin/env python3
"""Generate data/objects/types.txt: the Go JSON shape of every built-in kind, per Kubernetes version
(and data/objects/sources.txt: the tags and commits it was read from).

What the apiserver's decode → default → ToUnstructured round trip does to an object depends on the
Go types' json tags (omitempty, omitzero, pointers, slices, maps, non-pointer structs), on the
declarative `+default=` markers in kubernetes/api, and on the imperative SetDefaults_* functions of
kubernetes/kubernetes. This script reads the first two from the Go sources and writes them as data;
the third is ported by hand (src/objects/defaults.rs), and this script records, per version, the
SetDefaults_* function names found in the defaults.go files given, so a test can tell when upstream
has a function the port does not cover.

Inputs (nothing is downloaded; sources stay outside the repository):
  --api DIR           a git clone of github.com/kubernetes/api (read with `git show <tag>:<path>`)
  --apimachinery DIR  a git clone of github.com/kubernetes/apimachinery (pkg/apis/meta/v1)
  --defaults DIR      optional: kubernetes/kubernetes pkg/apis/<group>/<version>/defaults.go files laid out
                      as DIR/<minor>/<group>/<version>/defaults.go (or DIR/<group>/<version>/defaults.go
                      for all versions); their SetDefaults_* names go into data/objects/setdefaults.txt,
                      with DIR/SOURCES (where the files came from) as its header
  --check             compare with the committed files instead of writing them (exit 1 on a difference)

Output format (types.txt), one line per type over all versions:
  <mask> <type> <field>[~<mask>] ...       mask: hex bitmask over VERSIONS (bit 0 = 1.30) of the versions
                                           that have the type, or the field when it differs
  <mask> =<group>/<version>/<Kind> <type>  a top-level kind and its root type
  field: <json>:<shape>[?][!][=<default JSON>]
  shape: s string, i int32 (and the other integers but int64), l int64, f float, b bool, y []byte (base64 string), q Quantity, x IntOrString,
         t metav1.Time, u metav1.MicroTime, d metav1.Duration, r any JSON (RawExtension, JSON, FieldsV1),
         @<type> a struct; prefixes * pointer, [ slice, { map with string keys
  ? omitempty, ! omitzero, =<json> the field's declarative +default
"""
import argparse, json, os, re, subprocess, sys

VERSIONS = ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
# kubernetes/api and kubernetes/apimachinery tags per Kubernetes minor (the newest patch at generation
# time; 1.37 has no release yet: its newest pre-release tag).
TAGS = {
    "1.30": "v0.30.14", "1.31": "v0.31.14", "1.32": "v0.32.13", "1.33": "v0.33.13",
    "1.34": "v0.34.10", "1.35": "v0.35.7", "1.36": "v0.36.3", "1.37": "v0.37.0-beta.0",
}
# Groups left out to keep the data small: review and discovery kinds that are never stored, and
# the large dynamic-resource-allocation and flow-control APIs (their objects are taken as given).
SKIPPED_GROUPS = {"apidiscovery.k8s.io", "authentication.k8s.io", "authorization.k8s.io",
                  "storagemigration.k8s.io", "resource.k8s.io", "flowcontrol.apiserver.k8s.io"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "data", "objects")

SPECIAL = {  # apimachinery types with their own JSON form
    "resource.Quantity": "q", "intstr.IntOrString": "x", "metav1.Time": "t", "metav1.MicroTime": "u",
    "metav1.Duration": "d", "runtime.RawExtension": "r", "metav1.FieldsV1": "r", "apiextensionsv1.JSON": "r",
    "types.UID": "s", "metav1.Verbs": "[s",
}
SCALARS = {"string": "s", "bool": "b", "float32": "f", "float64": "f"}
for t in ["int", "int8", "int16", "int32", "uint", "uint8", "uint16", "uint32", "uint64"]:
    SCALARS[t] = "i"
# The decoder's range and its error text depend on the width (the API has only int32 and int64).
SCALARS["int64"] = "l"


def git_show(repo, tag, path):
    r = subprocess.run(["git", "--git-dir", repo, "show", f"{tag}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def git_ls(repo, tag, path):
    r = subprocess.run(["git", "--git-dir", repo, "ls-tree", "--name-only", f"{tag}:{path}"],
                       capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else []


def git_rev(repo, tag):
    r = subprocess.run(["git", "--git-dir", repo, "rev-list", "-n1", tag], capture_output=True, text=True)
    return r.stdout.strip()


class Package:
    """The Go declarations of one package that matter here."""

    def __init__(self, path):
        self.path = path          # e.g. core/v1, meta/v1
        self.structs = {}         # name -> [(goname, typeexpr, tag, defaultmarker, imports)]
        self.named = {}           # name -> (typeexpr, imports)
        self.consts = {}          # name -> string value
        self.group = None

    def parse(self, src):
        src = re.sub(r'^\s*/\*.*?\*/', "", src, flags=re.M | re.S)
        imports = {}
        for m in re.finditer(r'^\s*(\w+\s+)?"([^"]+)"\s*$', src.split("\n)", 1)[0] if "import (" in src else "", re.M):
            alias = (m.group(1) or "").strip()
            p = m.group(2)
            alias = alias or p.rsplit("/", 1)[-1]
            imports[alias] = p
        for m in re.finditer(r'^import\s+(\w+\s+)?"([^"]+)"', src, re.M):
            alias = (m.group(1) or "").strip() or m.group(2).rsplit("/", 1)[-1]
            imports[alias] = m.group(2)
        g = re.search(r'^const GroupName = "([^"]*)"', src, re.M)
        if g:
            self.group = g.group(1)
        for m in re.finditer(r'^\s*(\w+)\s+(\w+)\s*=\s*"([^"]*)"', src, re.M):
            self.consts[m.group(1)] = m.group(3)
        lines = src.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            m = re.match(r'^type (\w+) struct \{\s*$', line)
            if m:
                name, fields, comments, depth = m.group(1), [], [], 0
                i += 1
                while i < len(lines) and not (depth == 0 and lines[i].startswith("}")):
                    l = lines[i].strip()
                    if l.startswith("//"):
                        if depth == 0:
                            comments.append(l)
                    elif l.endswith("{"):
                        depth += 1
                    elif l.startswith("}"):
                        depth -= 1
                    elif depth == 0:
                        if l.startswith("//"):
                            comments.append(l)
                        elif l:
                            fm = re.match(r'^(\w+)\s+([\w.*\[\]{}]+)\s*(`[^`]*`)?', l)
                            em = re.match(r'^([\w.*]+)\s*(`[^`]*`)?\s*(//.*)?$', l)
                            if fm or em:
                                dflt = None
                                for c in comments:
                                    dm = re.match(r'//\s*\+default=(.*)$', c)
                                    if dm:
                                        dflt = dm.group(1).strip()
                                if fm:
                                    gname, texpr, tag = fm.group(1), fm.group(2), fm.group(3) or ""
                                else:
                                    gname, texpr, tag = None, em.group(1), em.group(2) or ""
                                fields.append((gname, texpr, tag, dflt, imports))
                            comments = []
                        else:
                            comments = []
                    i += 1
                self.structs[name] = fields
            else:
                m = re.match(r'^type (\w+)\s*=?\s*([\w.*\[\]]+)\s*$', line)
                if m and m.group(2) not in ("struct", "interface"):
                    self.named[m.group(1)] = (m.group(2), imports)
            i += 1


def fix_embedded(fields):
    """`metav1.TypeMeta \\`json:",inline"\\`` parses as name=None; `Name Type` as both."""
    out = []
    for gname, texpr, tag, dflt, imports in fields:
        out.append((gname, texpr, tag, dflt, imports))
    return out


class Model:
    def __init__(self):
        self.pkgs = {}   # import path suffix -> Package
        self.types = {}  # qualified name -> [field strings]
        self.kinds = {}  # group/version/Kind -> qualified type

    def pkg_of(self, imports, alias, current):
        if alias is None:
            return current
        p = imports.get(alias, alias)
        for prefix in ("k8s.io/api/", "k8s.io/apimachinery/pkg/apis/"):
            if p.startswith(prefix):
                return p[len(prefix):]
        return p

    def shape(self, texpr, imports, pkg):
        """The shape code of a Go type expression in package pkg."""
        if texpr.startswith("*"):
            return "*" + self.shape(texpr[1:], imports, pkg)
        if texpr == "[]byte":
            return "y"
        if texpr.startswith("[]"):
            return "[" + self.shape(texpr[2:], imports, pkg)
        if texpr.startswith("map["):
            return "{" + self.shape(texpr[texpr.index("]") + 1:], imports, pkg)
        if texpr in SCALARS:
            return SCALARS[texpr]
        if texpr in ("interface{}", "any"):
            return "r"
        alias, _, name = texpr.rpartition(".")
        alias = alias or None
        qual = (alias + "." + name) if alias else None
        # Normalise the alias to the canonical spelling of special types.
        target = self.pkg_of(imports, alias, pkg.path)
        canon = {"meta/v1": "metav1", "k8s.io/apimachinery/pkg/api/resource": "resource",
                 "k8s.io/apimachinery/pkg/util/intstr": "intstr", "k8s.io/apimachinery/pkg/runtime": "runtime",
                 "k8s.io/apimachinery/pkg/types": "types", "apiextensions/v1": "apiextensionsv1"}.get(target)
        if canon and canon + "." + name in SPECIAL:
            return SPECIAL[canon + "." + name]
        p = self.pkgs.get(target)
        if p is None:
            raise KeyError(f"unknown package {target} for {texpr} in {pkg.path}")
        if name in p.structs:
            self.struct(p, name)
            return "@" + self.qname(p, name)
        if name in p.named:
            t, imps = p.named[name]
            return self.shape(t, imps, p)
        if name == "Time" and target == "meta/v1":
            return "t"
        raise KeyError(f"unknown type {texpr} in {pkg.path}")

    def qname(self, p, name):
        return p.path.replace("/", ".") + "." + name

    def struct(self, p, name):
        q = self.qname(p, name)
        if q in self.types:
            return q
        self.types[q] = None  # cycle guard
        fields = []
        seen = set()
        for gname, texpr, tag, dflt, imports in p.structs[name]:
            jm = re.search(r'json:"([^"]*)"', tag)
            jtag = jm.group(1) if jm else None
            if jtag == "-":
                continue
            parts = (jtag or "").split(",")
            jname = parts[0]
            embedded = gname is None
            if embedded and not jname:
                # An embedded struct: its fields are promoted (encoding/json).
                inner = texpr.lstrip("*")
                alias, _, iname = inner.rpartition(".")
                ip = self.pkgs[self.pkg_of(imports, alias or None, p.path)]
                iq = self.struct(ip, iname)
                for f in self.types[iq] or []:
                    key = re.match(r'[^*\[{@a-z]*[A-Za-z0-9_$-]*', f)
                    fname = split_field(f)[0]
                    if fname not in seen:
                        seen.add(fname)
                        fields.append(f)
                continue
            if not jname:
                jname = gname
            if jname in seen:
                continue
            seen.add(jname)
            s = self.shape(texpr, imports, p)
            flags = ("?" if "omitempty" in parts[1:] else "") + ("!" if "omitzero" in parts[1:] else "")
            d = ""
            if dflt is not None:
                d = "=" + default_json(dflt, p)
            fields.append(jname + ":" + s + flags + d)
        self.types[q] = fields
        return q


def split_field(f):
    name, _, rest = f.partition(":")
    return name, rest


def default_json(marker, p):
    """A `+default=` marker's value as JSON (ref(Const) resolved in the package)."""
    m = re.match(r'ref\((\w+)\)$', marker)
    if m:
        text = json.dumps(p.consts[m.group(1)])
    else:
        try:
            text = json.dumps(json.loads(marker), separators=(",", ":"))
        except ValueError:
            text = json.dumps(marker)
    # Fields are separated by spaces: a space inside a JSON string is written as an escape.
    return text.replace(" ", "\\u0020")


def load_version(api, apim, tag):
    model = Model()
    meta = Package("meta/v1")
    for f in git_ls(apim, tag, "pkg/apis/meta/v1"):
        if f.endswith(".go") and not f.endswith("_test.go") and not f.startswith(("zz_", "generated")):
            meta.parse(git_show(apim, tag, "pkg/apis/meta/v1/" + f) or "")
    model.pkgs["meta/v1"] = meta
    for group in git_ls(api, tag, ""):
        for ver in git_ls(api, tag, group):
            path = f"{group}/{ver}"
            files = [f for f in git_ls(api, tag, path) if f.endswith(".go") and not f.endswith("_test.go")
                     and not f.startswith("zz_generated") and not f.startswith("generated")]
            if "types.go" not in files:
                continue
            p = Package(path)
            for f in files:
                p.parse(git_show(api, tag, f"{path}/{f}") or "")
            model.pkgs[path] = p
    # apiextensions JSON is special; apiextensions-apiserver types are not in kubernetes/api.
    for path, p in sorted(model.pkgs.items()):
        if p.group is None or path == "meta/v1" or not re.match(r"v\d+$", path.split("/")[1]):
            continue  # GA versions only: the served-by-default built-in kinds
        if p.group in SKIPPED_GROUPS:
            continue
        gv = (p.group + "/" if p.group else "") + path.split("/")[1]
        for name, fields in p.structs.items():
            tm = any(g is None and t.endswith("TypeMeta") for g, t, _, _, _ in fields)
            om = any(t.endswith("ObjectMeta") for g, t, _, _, _ in fields)
            if tm and om:
                model.kinds[gv + "/" + name] = model.struct(p, name)
    return model


def setdefaults(defaults_dir, minor):
    """SetDefaults_* names per group/version from the defaults.go files given."""
    out = {}
    for base in [os.path.join(defaults_dir, minor), defaults_dir]:
        if not os.path.isdir(base):
            continue
        for root, _, files in os.walk(base):
            if "defaults.go" in files:
                rel = os.path.relpath(root, base)
                if rel.count(os.sep) != 1 or rel.split(os.sep)[0] in VERSIONS:
                    continue
                src = open(os.path.join(root, "defaults.go")).read()
                out.setdefault(rel.replace(os.sep, "/"), sorted(set(re.findall(r'^func (SetDefaults_\w+)\(', src, re.M))))
        if out:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", required=True)
    ap.add_argument("--apimachinery", required=True)
    ap.add_argument("--defaults")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    lines, types = {}, {}
    header = ["# Generated by scripts/gen-objects.py; do not edit. Sources:"]
    sd_lines = {}
    for bit, minor in enumerate(VERSIONS):
        tag = TAGS[minor]
        header.append(f"# {minor}: kubernetes/api {tag} {git_rev(a.api, tag)}, "
                      f"kubernetes/apimachinery {tag} {git_rev(a.apimachinery, tag)}")
        model = load_version(a.api, a.apimachinery, tag)
        for q, fields in model.types.items():
            tmask, fmasks = types.setdefault(q, [0, {}])
            types[q][0] = tmask | (1 << bit)
            for f in fields:
                fmasks[f] = fmasks.get(f, 0) | (1 << bit)
        for k, q in model.kinds.items():
            line = "=" + k + " " + q
            lines[line] = lines.get(line, 0) | (1 << bit)
        if a.defaults:
            for gv, names in setdefaults(a.defaults, minor).items():
                for n in names:
                    l = f"{gv} {n}"
                    sd_lines[l] = sd_lines.get(l, 0) | (1 << bit)
    for q, (tmask, fmasks) in types.items():
        fields = [f if m == tmask else f"{f}~{m:x}" for f, m in fmasks.items()]
        lines[" ".join([q] + fields)] = tmask
    body = [f"{m:x} {l}" for l, m in sorted(lines.items(), key=lambda kv: kv[0])]
    # The sources apart from the data: types.txt is compiled into the package, where 16 commit
    # hashes are incompressible bytes no one reads.
    outputs = {"types.txt": "\n".join(body) + "\n", "sources.txt": "\n".join(header) + "\n"}
    if a.defaults:
        sources = os.path.join(a.defaults, "SOURCES")
        notes = ["# " + l for l in open(sources).read().splitlines()] if os.path.exists(sources) else []
        outputs["setdefaults.txt"] = "\n".join(
            ["# SetDefaults_* functions of kubernetes/kubernetes pkg/apis/<group>/<version>/defaults.go, per version mask (scripts/gen-objects.py)"]
            + notes
            + [f"{m:02x} {l}" for l, m in sorted(sd_lines.items())]) + "\n"
    bad = False
    for name, text in outputs.items():
        path = os.path.join(OUT, name)
        if a.check:
            old = open(path).read() if os.path.exists(path) else None
            if old != text:
                print(f"{path} differs from the generator's output", file=sys.stderr)
                bad = True
        else:
            os.makedirs(OUT, exist_ok=True)
            open(path, "w").write(text)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
