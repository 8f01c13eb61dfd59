#!/usr/bin/env bash
# Checks the dependency graph of src/: no cycle, and no edge that goes up a layer.
#
#   scripts/check_includes.sh [BUILD_DIR]  |  --self-test
#
# A module is a .c file and its .h (src/fs/tree.c + src/fs/tree.h = fs/tree). Module A
# depends on module B when A's .c or .h includes B's header, and — when BUILD_DIR holds
# the compiled objects — when A's object calls a function or uses a variable that B's
# object defines (a header may declare what another module defines, so includes alone
# would miss a call up). A call through a function pointer that a higher layer hands
# down (fs->open_at, the t2fs view's root_extra, the Granny view's granny_extra) is not
# an edge: the lower module depends only on the pointer's type, declared at its level.
#
# Layers, lowest first; a module may depend on its own layer or lower ones, never higher:
#   parse     src/parse/*: pure parsers; never src/fs
#   base      src/fs: sbuf source tree cache cover; view (struct s3fs, the value-file
#             helpers, /info, /unparsed) and the export helpers (export*, glb) views share
#   views     src/fs/view_*: one view per format, derived views
#   open      src/fs: options, and open (open, detect, dispatch to the views)
#   commands  src/fs: fuse_ll mount_main s3rig_main
# A file matching no rule is reported, so a new file gets a layer on purpose.
#
# The tree is opaque: its structs (struct tree, node, dirinfo, every struct src/fs/tree.c
# defines) have their bodies in tree.c only. Views, the adapter, the commands, tests and
# fuzz targets use the tree_* functions of tree.h, so tree.h defines no struct body (but
# struct tree_limits, the options tree_new takes) and no other file under src/, tests/
# or fuzz/ defines a struct of tree.c's.
#
# Exit status: 0 when the graph is clean, 1 otherwise (each problem printed).
#
# --self-test checks the checker: it builds a small src/ in a temporary directory with a
# cycle, an upward edge, a parse -> fs include and a struct of tree.c's defined in tree.h,
# and expects each to be found.
set -u
cd "$(dirname "$0")/.."
self=$(pwd)/scripts/check_includes.sh

build=""
for a in "$@"; do
    case $a in
    --self-test)
        t=$(mktemp -d)
        trap 'rm -rf "$t"' EXIT
        mkdir -p "$t/scripts" "$t/src/parse" "$t/src/fs"
        cp "$self" "$t/scripts/"
        printf '#include "fs/tree.h"\n' >"$t/src/parse/reader.c"          # parse -> fs
        printf '#include "fs/view_a.h"\n' >"$t/src/fs/tree.h"             # base -> views: up
        printf '#include "fs/view_b.h"\n' >"$t/src/fs/view_a.h"           # view_a -> view_b
        printf '#include "fs/view_a.h"\n' >"$t/src/fs/view_b.c"           # view_b -> view_a: cycle
        printf '#include "fs/tree.h"\n' >"$t/src/fs/s3rig_main.c"         # down: fine
        printf 'struct node {\n    int kind;\n};\nstruct tree { int n; };\n' >"$t/src/fs/tree.c"
        printf 'struct tree_limits {\n    int max;\n};\nstruct node { int kind; };\n' >>"$t/src/fs/tree.h" # opacity
        out=$(bash "$t/scripts/check_includes.sh" 2>&1)
        rc=$?
        ok=1
        [ $rc -eq 1 ] || ok=0
        for want in "upward edge parse/reader -> fs/tree (src/parse must not use src/fs)" \
                    "upward edge fs/tree (base) -> fs/view_a (views)" \
                    "cycle among fs/view_a, fs/view_b" \
                    "the tree is opaque: src/fs/tree.h defines struct node (struct bodies of the tree live in src/fs/tree.c)" \
                    "4 problem(s)"; do
            case $out in *"$want"*) ;; *) echo "self-test: missing: $want"; ok=0 ;; esac
        done
        case $out in *s3rig_main*) echo "self-test: a downward edge reported"; ok=0 ;; esac
        case $out in *tree_limits*) echo "self-test: struct tree_limits reported"; ok=0 ;; esac
        # clean once the bad edges are gone
        : >"$t/src/parse/reader.c"; : >"$t/src/fs/tree.h"; : >"$t/src/fs/view_b.c"
        printf 'struct tree_limits {\n    int max;\n};\n' >"$t/src/fs/tree.h"
        clean=$(bash "$t/scripts/check_includes.sh" 2>&1) || { echo "self-test: clean tree refused: $clean"; ok=0; }
        if [ $ok -eq 1 ]; then
            echo "check_includes: self-test passed"
            exit 0
        fi
        echo "$out"
        exit 1
        ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) build=$a ;;
    esac
done

symbols=""
if [ -n "$build" ]; then
    if ! command -v nm >/dev/null; then
        echo "check_includes: nm not found; checking includes only" >&2
    else
        # "FILE.o: T name" / "FILE.o: U name" for every object made from src/
        symbols=$(find "$build" -name 'src_*.c.o' -print0 2>/dev/null | sort -z |
            xargs -0 -r nm -A --defined-only --extern-only 2>/dev/null | awk '{print $1, "D", $NF}'
            find "$build" -name 'src_*.c.o' -print0 2>/dev/null | sort -z |
            xargs -0 -r nm -A --undefined-only 2>/dev/null | awk '{print $1, "U", $NF}')
    fi
fi

SYMBOLS="$symbols" python3 - <<'EOF'
import os, re, sys
from collections import defaultdict

# (layer, rank, pattern on "dir/basename"): first match wins.
RULES = [
    ("parse", 0, r"parse/.*"),
    ("commands", 4, r"fs/(fuse_ll|mount_main|s3rig_main)"),
    ("open", 3, r"fs/(options|open.*|dispatch.*)"),
    ("views", 2, r"fs/view_.*"),
    ("base", 1, r"fs/(sbuf|source|tree|cache|cover|view|export.*|glb)"),
]

def layer_of(mod):
    for name, rank, pat in RULES:
        if re.fullmatch(pat, mod):
            return name, rank
    return None, None

mods = {}
for d in ("parse", "fs"):
    for f in sorted(os.listdir(os.path.join("src", d))):
        if f.endswith((".c", ".h")):
            mods.setdefault(d + "/" + f[:-2], []).append(os.path.join("src", d, f))

edges = defaultdict(dict)  # a -> {b: why}
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)
for m, files in mods.items():
    for f in files:
        for target in inc.findall(open(f, encoding="utf-8", errors="replace").read()):
            if target != m and target in mods:
                edges[m].setdefault(target, "%s includes %s.h" % (f, target))

# Symbol edges from the objects: who defines what, who uses it.
def mod_of_object(path):
    base = os.path.basename(path.split(":")[0])
    mm = re.fullmatch(r"src_(parse|fs)_(.+)\.c\.o", base)
    return mm and mm.group(1) + "/" + mm.group(2)

defined, used = {}, []
for line in os.environ.get("SYMBOLS", "").splitlines():
    parts = line.split()
    if len(parts) != 3:
        continue
    m = mod_of_object(parts[0])
    if not m or m not in mods:
        continue
    if parts[1] == "D":
        defined.setdefault(parts[2], m)
    else:
        used.append((m, parts[2]))
for m, sym in used:
    d = defined.get(sym)
    if d and d != m:
        edges[m].setdefault(d, "%s.c calls %s() of %s.c" % (m, sym, d))

problems = []
for m in mods:
    if layer_of(m)[0] is None:
        problems.append("%s: no layer (add it to RULES in scripts/check_includes.sh)" % m)
for a in sorted(edges):
    la, ra = layer_of(a)
    for b, why in sorted(edges[a].items()):
        lb, rb = layer_of(b)
        if ra is None or rb is None:
            continue
        if la == "parse" and lb != "parse":
            problems.append("upward edge %s -> %s (src/parse must not use src/fs): %s" % (a, b, why))
        elif rb > ra:
            problems.append("upward edge %s (%s) -> %s (%s): %s" % (a, la, b, lb, why))

# Cycles: strongly connected components (iterative Tarjan), each reported with one loop.
index, low, onstack, stack, sccs, counter = {}, {}, set(), [], [], [0]
for root in sorted(mods):
    if root in index:
        continue
    work = [(root, iter(sorted(edges[root])))]
    index[root] = low[root] = counter[0]; counter[0] += 1
    stack.append(root); onstack.add(root)
    while work:
        v, it = work[-1]
        nxt = next(it, None)
        if nxt is not None:
            if nxt not in index:
                index[nxt] = low[nxt] = counter[0]; counter[0] += 1
                stack.append(nxt); onstack.add(nxt)
                work.append((nxt, iter(sorted(edges[nxt]))))
            elif nxt in onstack:
                low[v] = min(low[v], index[nxt])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); onstack.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

def loop_in(comp):
    """One cycle through the component, as a list of edges."""
    members, start = set(comp), comp[0]
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w == start:
                path, x = [(v, w)], v
                while prev[x] is not None:
                    path.append((prev[x], x)); x = prev[x]
                return path[::-1]
            if w in members and w not in prev:
                prev[w] = v; queue.append(w)
    return []

for comp in sccs:
    problems.append("cycle among %s:" % ", ".join(comp))
    for a, b in loop_in(comp):
        problems.append("    %s" % edges[a][b])

# The tree is opaque (see the header of this script).
struct_body = re.compile(r"\bstruct\s+(\w+)\s*\{")
def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
tree_c = os.path.join("src", "fs", "tree.c")
private = {"tree", "node", "dirinfo"}
if os.path.exists(tree_c):
    private |= set(struct_body.findall(strip_comments(open(tree_c, encoding="utf-8", errors="replace").read())))
header_allowed = {"tree_limits"}
scanned = [f for fs_ in mods.values() for f in fs_]
for d in ("tests", "fuzz"):
    if os.path.isdir(d):
        for root_, _, files in os.walk(d):
            if "node_modules" in root_:
                continue
            scanned += [os.path.join(root_, f) for f in sorted(files) if f.endswith((".c", ".h"))]
for f in sorted(scanned):
    if os.path.normpath(f) == tree_c:
        continue
    text = strip_comments(open(f, encoding="utf-8", errors="replace").read())
    is_tree_h = os.path.normpath(f) == os.path.join("src", "fs", "tree.h")
    for name in struct_body.findall(text):
        if (is_tree_h and name not in header_allowed) or (name in private and not is_tree_h):
            problems.append("the tree is opaque: %s defines struct %s (struct bodies of the tree live in "
                            "src/fs/tree.c)" % (f, name))

nedges = sum(len(v) for v in edges.values())
if problems:
    nproblems = sum(1 for p in problems if not p.startswith("    "))
    print("check_includes: %d problem(s) in %d modules, %d dependencies" % (nproblems, len(mods), nedges))
    for p in problems:
        print("  " + p)
    sys.exit(1)
print("check_includes: %d modules, %d dependencies: no cycle, no upward edge" % (len(mods), nedges))
EOF
