#!/usr/bin/env python3
"""Counts the returns to a file already left when following the model through Session::initialize.

Issue 24's measure of how well session creation reads as a pipeline: start at Session::initialize
(host/session/session.cpp), follow every call it makes into the host's own code, in source order,
depth first, and write down the file each call enters when it is not the caller's own file (a function
calling several functions of one file enters it once). A *return* is entering a file that is already in
that trail. A pipeline whose stages each live in their own files
enters each file once (0 returns); a stage that goes back to an earlier stage's file (rebuilding the
IR, inferring the model again, rewriting the proto) shows up as a return.

How calls are followed (static, from the source; no build needed):
  - functions are found with universal ctags (name, file, body lines, class);
  - a call is `name(` in a body (comments and string literals removed); it is resolved to the
    definition in the same file, else to the one file defining a function of that name (qualified
    `Class::name(` picks the class; `.name(` / `->name(` only methods); names defined in several files
    without a way to choose are left out (--verbose lists them);
  - the spine is Session::initialize and the stage functions in host/session/session_stages.cpp: it is
    followed without entering the trail (it is where a reader comes back to, by design);
  - files not on the model's path are not followed: host/core/ (errors, logging, tensors), discovery/,
    provider/ (the door to plugins), options/, isolation/, model/creation_counts.cpp, and the data
    types' own files (graph/graph.cpp: the IR's classes; graph/graph_editor.cpp: its editor, through
    which every stage that changes the IR goes; model/tensor_proto.cpp);
  - a member call `.name(` is resolved only to the one file defining a method of that name, and only
    when the caller's file names its class (so that protobuf and standard-library accessors are not
    taken for host functions);
  - each function is read once: calling it again enters its file again (counted) but is not re-read;
  - --depth (default 3) bounds how many calls below a stage are followed.

Usage: benchmarks/stage_returns.py [--root REPO] [--depth N] [--verbose]
Prints the trail (one line per file entered, `<-` marking a return) and the count.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

SPINE_FILES = {"host/session/session.cpp", "host/session/session_stages.cpp"}
# Not the model's path: rooms every stage consults (errors, logging, tensors; plugin discovery; the
# provider door; options; provider isolation) and the creation counters (instrumentation).
SKIP_PREFIXES = ("host/core/", "host/discovery/", "host/provider/", "host/options/", "host/isolation/",
                 "host/model/creation_counts.cpp",
                 # Data types and their accessors, not stages: the IR's classes and its editor (every
                 # stage that changes the IR goes through it), TensorProto <-> Tensor.
                 "host/graph/graph.cpp", "host/graph/graph_editor.cpp", "host/model/tensor_proto.cpp")
KEYWORDS = {
    "if", "for", "while", "switch", "return", "sizeof", "catch", "static_cast", "dynamic_cast",
    "reinterpret_cast", "const_cast", "decltype", "alignof", "noexcept", "throw", "new", "delete",
    "operator", "defined", "assert", "typeid",
}
# Member functions of the standard library that share a name with some host function.
STD_MEMBERS = {
    "size", "reserve", "get", "push_back", "emplace_back", "insert", "find", "count", "begin", "end", "empty",
    "clear", "erase", "back", "front", "data", "resize", "str", "c_str", "swap", "at", "value", "reset",
    "release", "emplace", "assign", "append", "substr", "what", "load", "store", "lock", "unlock", "wait",
    "join", "pop_back", "has_value", "length", "compare", "rfind", "mutable_node", "name",
}
# Generated protobuf accessors (proto.add_node(), mutable_graph(), set_name(), ...).
PROTO_ACCESSOR = re.compile(r"^(add|mutable|set|clear|has|release)_")
Def = collections.namedtuple("Def", "name file start end cls local")


def ctags_definitions(root):
    out = subprocess.run(
        ["ctags", "-R", "--languages=C++", "--langmap=C++:+.h", "--c++-kinds=f", "--fields=+nesK", "-f", "-", "host"],
        cwd=root, check=True, capture_output=True, text=True).stdout
    defs = collections.defaultdict(list)
    for line in out.splitlines():
        parts = line.split("\t")
        name, path = parts[0], parts[1]
        if name.startswith("__anon") or not path.endswith(".cpp"):
            continue
        fields = dict(p.split(":", 1) for p in parts[3:] if ":" in p)
        if "line" not in fields or "end" not in fields:
            continue
        cls = ""
        for key in ("class", "struct"):
            if key in fields:
                cls = fields[key].split("::")[-1]
        local = "file" in fields  # static or in an unnamed namespace: callable from its own file only
        defs[name].append(Def(name, path, int(fields["line"]), int(fields["end"]), cls, local))
    return defs


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'R"\((.*?)\)"', '""', text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\])*'", "''", text)
    return text


CALL = re.compile(r"(\.|->|::)?\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:<[^<>;(){}]*>)?\s*\(")
QUALIFIER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)::$")


class Reader:
    def __init__(self, root, depth, verbose):
        self.root = root
        self.depth = depth
        self.verbose = verbose
        self.defs = ctags_definitions(root)
        self.lines = {}
        self.file_words = {}
        self.read = set()
        self.trail = []  # (file, depth, via)
        self.ambiguous = collections.Counter()

    def text(self, path):
        if path not in self.lines:
            with open(os.path.join(self.root, path), encoding="utf-8") as f:
                self.lines[path] = f.read().split("\n")
        return self.lines[path]

    def words(self, path):
        if path not in self.file_words:
            self.file_words[path] = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*",
                                                   strip_comments_and_strings("\n".join(self.text(path)))))
        return self.file_words[path]

    def body(self, d):
        text = "\n".join(self.text(d.file)[d.start - 1:d.end])
        text = strip_comments_and_strings(text)
        brace = text.find("{")  # skip the signature (its parameter list is no call)
        return text[brace:] if brace >= 0 else ""

    def resolve(self, here, prefix, name, before):
        candidates = [d for d in self.defs.get(name, [])
                      if not d.file.startswith(SKIP_PREFIXES) and (not d.local or d.file == here.file)]
        if prefix in (".", "->"):
            if name in STD_MEMBERS or PROTO_ACCESSOR.match(name):
                return None
            candidates = [d for d in candidates if d.cls]
            if len({d.file for d in candidates}) > 1 and not any(d.file == here.file for d in candidates):
                self.ambiguous[name] += 1
                return None
            words = self.words(here.file)
            candidates = [d for d in candidates if d.cls in words]
        elif prefix is None:
            # A method called unqualified is one of the caller's class (its file), or a constructor.
            candidates = [d for d in candidates if not d.cls or d.file == here.file or d.name == d.cls]
        elif prefix == "::":
            q = QUALIFIER.search(before)
            if q and q.group(1) in ("std", "fs", "boost", "onnx", "fmt", "google", "protobuf"):
                return None
            if q and q.group(1) != "ephost":
                candidates = [d for d in candidates if d.cls == q.group(1) or d.name == q.group(1)]
        if not candidates:
            return None
        same = [d for d in candidates if d.file == here.file]
        if same:
            return same[0]
        if len({d.file for d in candidates}) == 1:
            return candidates[0]
        self.ambiguous[name] += 1
        return None

    def calls(self, d):
        text = self.body(d)
        for m in CALL.finditer(text):
            prefix, name = m.group(1), m.group(2)
            if name in KEYWORDS or name == d.name:
                continue
            target = self.resolve(d, prefix, name, text[:m.start(2)])
            if target and target != d:
                yield target

    def follow(self, d, depth, spine, entered=None):
        if d in self.read:
            return
        self.read.add(d)
        if entered is None:
            entered = set()  # a function (or a stage) that calls several functions of one file enters it once
        for target in self.calls(d):
            target_spine = spine and target.file in SPINE_FILES
            if not target_spine and target.file != d.file and target.file not in entered:
                entered.add(target.file)
                self.trail.append((target.file, depth, f"{d.name} -> {target.name}"))
            if target_spine:
                # A stage's helpers in the spine share the stage's entries; Session::initialize's own
                # calls are each a stage of their own.
                self.follow(target, depth, True, entered if d.cls != "Session" else None)
            elif depth < self.depth:
                self.follow(target, depth + 1, False)

    def run(self):
        start = [d for d in self.defs["initialize"] if d.cls == "Session"]
        if not start:
            sys.exit("Session::initialize not found under host/")
        self.follow(start[0], 1, True)
        returns = 0
        seen = set()
        printed = []
        for path, depth, via in self.trail:
            back = path in seen
            returns += back
            seen.add(path)
            printed.append(f"{'<- ' if back else '   '}{'  ' * (depth - 1)}{path}   ({via})")
        return returns, printed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    reader = Reader(args.root, args.depth, args.verbose)
    returns, printed = reader.run()
    print("\n".join(printed))
    if args.verbose and reader.ambiguous:
        print("not followed (defined in several files): " +
              ", ".join(f"{n} x{c}" for n, c in sorted(reader.ambiguous.items())))
    print(f"returns to a file already left: {returns} (depth {args.depth}, {len(printed)} files entered)")


if __name__ == "__main__":
    main()
