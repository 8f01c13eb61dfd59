#!/usr/bin/env bash
# Checks the dependency graph of src/: no cycle, and no edge that goes up a layer.
#
#   scripts/check_includes.sh [BUILD_DIR]  |  --self-test
#
# A module is a .c file and its .h (src/fs/core/cache.c + cache.h = fs/core/cache; the tree
# is tree.h with its private files tree_impl.h and tree_*.c). Module A
# depends on module B when A's .c or .h includes B's header, and — when BUILD_DIR holds
# the compiled objects — when A's object calls a function or uses a variable that B's
# object defines (a header may declare what another module defines, so includes alone
# would miss a call up). A call through a function pointer that a higher layer hands
# down (fs->open_at, a view's hooks) is not an edge: the lower module depends only on the
# pointer's type, declared at its level.
#
# The folders are the layers. A folder includes only folders below it, lowest first:
#   src/parse/base     reader, diag, names, the model, the format enum
#   src/parse/codec    decoders (Oodle, BitKnit, RNC, RefPack)
#   src/parse/FAMILY   one parser family each (gr2, sims, t2fs); families never use
#                      each other
#   src/parse          the format table's detection dispatch (every family's CODE_detect)
#   src/fs/core        tree, byte sources, cache, coverage, the view helpers
#   src/fs/export      glTF/OBJ writers
#   src/fs/views/FAMILY  one view family each (gr2, sims, t2fs); families never use
#                      each other
#   src/fs/open        format dispatch (every family's CODE_view_open), options
#   src/fs/cmd         the libfuse3 adapter and the two commands
# Modules of one folder may use each other (without a cycle). src/parse never uses src/fs.
# A file in no folder above is reported, so a new folder gets a place on purpose.
#
# The tree is opaque: its structs (struct tree, node, dirinfo, every struct the private files
# src/fs/core/tree_*.c and tree_impl.h define) have their bodies there only. Views, the adapter, the commands, tests and
# fuzz targets use the tree_* functions of tree.h, so tree.h defines no struct body (but
# struct tree_limits, the options tree_new takes, and struct tree_computed_ops, the
# callbacks a view gives a computed directory) and no other file under src/, tests/
# or fuzz/ defines a struct of the tree's.
#
# Exit status: 0 when the graph is clean, 1 otherwise (each problem printed).
#
# --self-test checks the checker: it builds a small src/ in a temporary directory with a
# cycle, an upward edge, a parse -> fs include and a struct of tree_impl.h's defined in tree.h,
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
        mkdir -p "$t/scripts" "$t/src/parse/base" "$t/src/parse/gr2" "$t/src/parse/sims" "$t/src/fs/core" \
            "$t/src/fs/views/gr2" "$t/src/fs/views/sims" "$t/src/fs/cmd"
        cp "$self" "$t/scripts/"
        printf '#include "fs/core/tree.h"\n' >"$t/src/parse/base/reader.c"            # parse -> fs
        printf '#include "parse/gr2/gr2.h"\n' >"$t/src/parse/base/diag.c"             # base -> family: up
        printf '#include "parse/gr2/gr2.h"\n' >"$t/src/parse/sims/rig.c"              # family -> family
        : >"$t/src/parse/gr2/gr2.h"
        printf '#include "fs/views/gr2/view_a.h"\n' >"$t/src/fs/core/tree.h"         # core -> views: up
        printf '#include "fs/views/gr2/view_b.h"\n' >"$t/src/fs/views/gr2/view_a.h"  # a -> b
        printf '#include "fs/views/gr2/view_a.h"\n' >"$t/src/fs/views/gr2/view_b.c"  # b -> a: cycle
        printf '#include "fs/views/gr2/view_a.h"\n' >"$t/src/fs/views/sims/view_c.c" # views family -> family
        printf '#include "fs/core/tree.h"\n' >"$t/src/fs/cmd/s3rig_main.c"           # down: fine
        : >"$t/src/fs/views/gr2/view_b.h"; : >"$t/src/fs/views/gr2/view_a.c"
        printf 'struct node {\n    int kind;\n};\nstruct tree { int n; };\n' >"$t/src/fs/core/tree_impl.h"
        printf 'struct tree_limits {\n    int max;\n};\nstruct node { int kind; };\n' >>"$t/src/fs/core/tree.h" # opacity
        out=$(bash "$t/scripts/check_includes.sh" 2>&1)
        rc=$?
        ok=1
        [ $rc -eq 1 ] || ok=0
        for want in "upward edge parse/base/reader -> fs/core/tree (src/parse must not use src/fs)" \
                    "upward edge parse/base/diag (parse/base) -> parse/gr2/gr2 (parse/gr2)" \
                    "parse/sims/rig (parse/sims) -> parse/gr2/gr2 (parse/gr2): families never use each other" \
                    "upward edge fs/core/tree (fs/core) -> fs/views/gr2/view_a (fs/views/gr2)" \
                    "fs/views/sims/view_c (fs/views/sims) -> fs/views/gr2/view_a (fs/views/gr2): families never use each other" \
                    "cycle among fs/views/gr2/view_a, fs/views/gr2/view_b" \
                    "the tree is opaque: src/fs/core/tree.h defines struct node" \
                    "7 problem(s)"; do
            case $out in *"$want"*) ;; *) echo "self-test: missing: $want"; ok=0 ;; esac
        done
        case $out in *s3rig_main*) echo "self-test: a downward edge reported"; ok=0 ;; esac
        case $out in *tree_limits*) echo "self-test: struct tree_limits reported"; ok=0 ;; esac
        # clean once the bad edges are gone
        : >"$t/src/parse/base/reader.c"; : >"$t/src/parse/base/diag.c"; : >"$t/src/parse/sims/rig.c"
        : >"$t/src/fs/views/gr2/view_b.c"; : >"$t/src/fs/views/sims/view_c.c"
        printf 'struct tree_limits {\n    int max;\n};\n' >"$t/src/fs/core/tree.h"
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

# The symbols go through a file: as one environment variable they pass the kernel's limit
# for a single argument (128 KiB).
symbols=$(mktemp)
trap 'rm -f "$symbols"' EXIT
if [ -n "$build" ]; then
    if ! command -v nm >/dev/null; then
        echo "check_includes: nm not found; checking includes only" >&2
    else
        # "FILE.o: T name" / "FILE.o: U name" for every object made from src/
        { find "$build" -name 'src_*.c.o' -print0 2>/dev/null | sort -z |
            xargs -0 -r nm -A --defined-only --extern-only 2>/dev/null | awk '{print $1, "D", $NF}'
            find "$build" -name 'src_*.c.o' -print0 2>/dev/null | sort -z |
            xargs -0 -r nm -A --undefined-only 2>/dev/null | awk '{print $1, "U", $NF}'; } >"$symbols"
    fi
fi

SYMBOLS_FILE="$symbols" python3 - <<'EOF'
import os, re, sys
from collections import defaultdict

# (folder, rank, family): a module's layer is its folder; a folder may use folders of a
# lower rank, and its own; two folders of one rank are sibling families, never each other.
FOLDERS = {
    "parse/base": 0, "parse/codec": 1,
    "parse/gr2": 2, "parse/sims": 2, "parse/t2fs": 2,
    "parse": 3,
    "fs/core": 4, "fs/export": 5,
    "fs/views/gr2": 6, "fs/views/sims": 6, "fs/views/t2fs": 6,
    "fs/open": 7, "fs/cmd": 8,
}

def layer_of(mod):
    folder = os.path.dirname(mod)
    if folder in FOLDERS:
        return folder, FOLDERS[folder]
    return None, None

def module_of(name):
    """The module a file belongs to: the tree's private files (tree_impl.h, tree_*.c) are
    the tree's halves, one module with tree.h, so their calls to each other are no edges."""
    return "fs/core/tree" if re.fullmatch(r"fs/core/tree_\w+", name) else name

mods = {}
for root_, dirs, files in os.walk("src"):
    dirs.sort()
    for f in sorted(files):
        if f.endswith((".c", ".h")):
            path = os.path.join(root_, f)
            mods.setdefault(module_of(os.path.relpath(path, "src")[:-2]), []).append(path)

edges = defaultdict(dict)  # a -> {b: why}
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)
for m, files in mods.items():
    for f in files:
        for target in inc.findall(open(f, encoding="utf-8", errors="replace").read()):
            if target != m and target in mods:
                edges[m].setdefault(target, "%s includes %s.h" % (f, target))

# Symbol edges from the objects: who defines what, who uses it.
object_mod = {"src_" + os.path.relpath(f, "src").replace("/", "_") + ".o": m
              for m, files in mods.items() for f in files if f.endswith(".c")}
def mod_of_object(path):
    return object_mod.get(os.path.basename(path.split(":")[0]))

defined, used = {}, []
for line in open(os.environ["SYMBOLS_FILE"], encoding="utf-8", errors="replace").read().splitlines():
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
        problems.append("%s: no layer (add its folder to FOLDERS in scripts/check_includes.sh)" % m)
for a in sorted(edges):
    la, ra = layer_of(a)
    for b, why in sorted(edges[a].items()):
        lb, rb = layer_of(b)
        if ra is None or rb is None:
            continue
        if la.startswith("parse") and not lb.startswith("parse"):
            problems.append("upward edge %s -> %s (src/parse must not use src/fs): %s" % (a, b, why))
        elif rb > ra:
            problems.append("upward edge %s (%s) -> %s (%s): %s" % (a, la, b, lb, why))
        elif rb == ra and la != lb:
            problems.append("%s (%s) -> %s (%s): families never use each other: %s" % (a, la, b, lb, why))

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
core = os.path.join("src", "fs", "core")
tree_private = [os.path.join(core, f) for f in (sorted(os.listdir(core)) if os.path.isdir(core) else [])
                if re.fullmatch(r"tree.*\.[ch]", f) and f != "tree.h"]
private = {"tree", "node", "dirinfo"}
for f in tree_private:
    private |= set(struct_body.findall(strip_comments(open(f, encoding="utf-8", errors="replace").read())))
header_allowed = {"tree_limits", "tree_computed_ops"}
scanned = [f for fs_ in mods.values() for f in fs_]
for d in ("tests", "fuzz"):
    if os.path.isdir(d):
        for root_, _, files in os.walk(d):
            if "node_modules" in root_:
                continue
            scanned += [os.path.join(root_, f) for f in sorted(files) if f.endswith((".c", ".h"))]
for f in sorted(scanned):
    if os.path.normpath(f) in tree_private:
        continue
    text = strip_comments(open(f, encoding="utf-8", errors="replace").read())
    is_tree_h = os.path.normpath(f) == os.path.join(core, "tree.h")
    for name in struct_body.findall(text):
        if (is_tree_h and name not in header_allowed) or (name in private and not is_tree_h):
            problems.append("the tree is opaque: %s defines struct %s (struct bodies of the tree live in "
                            "src/fs/core/tree_impl.h and tree_*.c)" % (f, name))

nedges = sum(len(v) for v in edges.values())
if problems:
    nproblems = sum(1 for p in problems if not p.startswith("    "))
    print("check_includes: %d problem(s) in %d modules, %d dependencies" % (nproblems, len(mods), nedges))
    for p in problems:
        print("  " + p)
    sys.exit(1)
print("check_includes: %d modules, %d dependencies: no cycle, no upward edge" % (len(mods), nedges))
EOF
