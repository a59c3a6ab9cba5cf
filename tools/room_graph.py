#!/usr/bin/env python3
"""The room graph of the product, drawn from its own includes.

A room is a folder that holds source (common/, tuner/sweep/, dispatch/, ...);
its size is the lines of its .c, .h, .cu and .cuh files; an edge a -> b says
that files of a include files of b (with how many includes). The tests,
fuzz targets, tools and examples hang on the product from outside and are
not rooms of it.

Exits 1 (saying why) when
  - a room holds more than a third of the product's lines,
  - the rooms include each other in a loop,
  - two modules (x.c with x.h) include each other in a loop, in any room,
  - a room of the dispatch library (dispatch/, include/) reaches the tuner,
    the generator or the reports through its includes: an application that
    links the library must not pull them in,
  - the dispatch library's policy room (dispatch/policy/: what needs no GPU)
    reaches its runtime room (dispatch/runtime/) or the driver (cuda/).
Run from anywhere: `tools/room_graph.py [--root DIR] [--quiet]`; `make test`
runs it.
"""
import argparse
import os
import re
import subprocess
import sys

SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
OUTSIDE = ("tests", "fuzz", "tools", "examples", "build")
LIBRARY_ROOMS = ("dispatch", "include")
LIBRARY_MUST_NOT_REACH = ("tuner", "gen", "reports")
POLICY_ROOM = "dispatch/policy"
POLICY_MUST_NOT_REACH = ("dispatch/runtime", "cuda")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def tracked_sources(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                              "--exclude-standard"], check=True, capture_output=True,
                             text=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), root)
               for d, _, fs in os.walk(root) for f in fs]
    return sorted(p for p in out if p.endswith(SOURCE_EXT)
                  and p.split("/")[0] not in OUTSIDE and os.path.isfile(os.path.join(root, p)))


def room_of(path):
    return os.path.dirname(path) or "."


def top(room):
    return room.split("/")[0]


def resolve(root, src, name, known):
    """The tracked file an include names: beside the includer, from the
    root (-I.) or from include/ (-Iinclude); None for a system or generated
    header."""
    for cand in (os.path.join(os.path.dirname(src), name), name, os.path.join("include", name)):
        cand = os.path.normpath(cand)
        if cand in known:
            return cand
    return None


def loops(nodes, edges):
    """The graph's loops: each strongly connected component of more than
    one node, as a sorted list (Tarjan's algorithm)."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(n):
        index[n] = low[n] = len(index)
        stack.append(n)
        on.add(n)
        for m in edges.get(n, ()):
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in on:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            comp = []
            while True:
                m = stack.pop()
                on.discard(m)
                comp.append(m)
                if m == n:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return sorted(out)


def reach(start, edges):
    seen, todo = set(), [start]
    while todo:
        n = todo.pop()
        for m in edges.get(n, ()):
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--quiet", action="store_true", help="print only the problems")
    args = ap.parse_args()
    root = os.path.normpath(args.root)
    files = tracked_sources(root)
    known = set(files)

    lines, room_edges, module_edges = {}, {}, {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        r = room_of(f)
        lines[r] = lines.get(r, 0) + text.count("\n")
        mod = os.path.splitext(f)[0]
        for name in INCLUDE.findall(text):
            target = resolve(root, f, name, known)
            if not target:
                continue
            tr = room_of(target)
            if tr != r:
                room_edges.setdefault(r, {})
                room_edges[r][tr] = room_edges[r].get(tr, 0) + 1
            tmod = os.path.splitext(target)[0]
            if tmod != mod:
                module_edges.setdefault(mod, set()).add(tmod)

    total = sum(lines.values())
    problems = []
    if not args.quiet:
        print(f"{total} lines in {len(lines)} rooms (limit a room: a third, {total // 3})")
        for r in sorted(lines, key=lambda r: (-lines[r], r)):
            outs = room_edges.get(r, {})
            to = ", ".join(f"{t} ({n})" for t, n in sorted(outs.items()))
            print(f"  {r:<18} {lines[r]:>6} {100.0 * lines[r] / total:5.1f}%  -> {to or '-'}")
    for r, n in lines.items():
        if 3 * n > total:
            problems.append(f"room {r} holds {n} of {total} lines, more than a third")
    for loop in loops(lines.keys(), room_edges):
        problems.append("rooms include each other in a loop: " + ", ".join(loop))
    for loop in loops(module_edges.keys(), module_edges):
        problems.append("modules include each other in a loop: " + ", ".join(loop))
    for r in lines:
        if top(r) in LIBRARY_ROOMS:
            bad = sorted(t for t in reach(r, room_edges) if top(t) in LIBRARY_MUST_NOT_REACH)
            if bad:
                problems.append(f"the dispatch library's room {r} reaches {', '.join(bad)}")
    if POLICY_ROOM in lines:
        bad = sorted(t for t in reach(POLICY_ROOM, room_edges)
                     if any(t == n or t.startswith(n + "/") for n in POLICY_MUST_NOT_REACH))
        if bad:
            problems.append(f"the dispatch policy room {POLICY_ROOM} reaches {', '.join(bad)}")
    for p in problems:
        print(f"room_graph: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
