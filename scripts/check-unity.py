#!/usr/bin/env python3
"""Checks the unity batches of a build (cmake/Unity.cmake) for names that two files of a batch
each keep to themselves.

In a unity build the files of a batch are one translation unit, so what a file declares with
internal linkage (in an anonymous namespace, or `static` at file scope) is visible to the files
after it. Two equal definitions are a compile error, which the build finds; what it does not find
is two *functions* of the same name with different parameters: they become overloads, and a call
written for one can silently bind to the other. A `#define` or `using namespace` in a file also
reaches every later file of its batch. This lists both; the fix is to rename, to move the file to
SCHEDMATE_UNITY_SKIP, or (a type alias both files declare alike, such as `json`) to leave it.

Usage: scripts/check-unity.py BUILD_DIR [--source-dir DIR]
Exit status: 0 when nothing was found, 1 when something was, 2 on bad usage (no batches found).
The scan is textual (comments and string literals are blanked first): a hit is a place to look.
"""

import argparse
import os
import re
import sys
from pathlib import Path

KEYWORDS = set(
    "if for while switch return sizeof alignof decltype operator static_assert noexcept "
    "requires template typename class struct enum const constexpr inline static auto void int "
    "bool char double float long unsigned size_t std".split()
)




def blank_comments_and_strings(src: str) -> str:
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r'R"(\w*)\(.*?\)\1"', '""', src, flags=re.S)
    src = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', src)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "''", src)


def type_aliases(src: str) -> dict[str, str]:
    """`using NAME = TYPE;` and `using SCOPE::NAME;`: NAME -> what it names, without spaces."""
    out = {m.group(1): re.sub(r"\s+", "", m.group(2))
           for m in re.finditer(r"\busing\s+(\w+)\s*=\s*([^;]+);", src)}
    for m in re.finditer(r"\busing\s+((?:\w+::)+(\w+))\s*;", src):
        out[m.group(2)] = m.group(1)
    return out


def declared_name(statement: str) -> str | None:
    """The name a namespace-scope declaration or definition head introduces."""
    alias = re.search(r"\busing\s+(\w+)\s*=", statement)
    if alias:
        return alias.group(1)
    head = statement.split("=")[0]
    calls = [n for n in re.findall(r"(\w+)\s*\(", head) if n not in KEYWORDS]
    if calls:
        return calls[0]
    var = re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*(?:\{.*)?$", head.strip())
    return var.group(1) if var else None


def anonymous_namespace_names(src: str) -> set[str]:
    """Names declared directly in the file's anonymous namespaces."""
    names: set[str] = set()
    for m in re.finditer(r"namespace\s*\{", src):
        depth, paren, start, j = 0, 0, m.end(), m.end()
        while j < len(src):
            c = src[j]
            if c == "(":
                paren += 1
            elif c == ")":
                paren -= 1
            elif c == "{":
                if depth == 0 and paren == 0:
                    head = src[start:j]
                    types = re.findall(r"\b(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)", head)
                    if types:  # a type's definition: its name, not its bases'
                        names.add(types[0])
                    elif name := declared_name(head):
                        names.add(name)
                depth += 1
            elif c == "}":
                if depth == 0:
                    break
                depth -= 1
                if depth == 0:
                    start = j + 1
            elif c == ";" and depth == 0 and paren == 0:
                if name := declared_name(src[start:j]):
                    names.add(name)
                start = j + 1
            j += 1
    names.update(re.findall(r"^static\s+[^;{=]*?(\w+)\s*\(", src, flags=re.M))
    return {n for n in names - KEYWORDS if not n.isdigit()}


def batches(build_dir: Path, source_dir: Path):
    for unity in sorted(build_dir.glob("src/**/*_unity_*.cc")):
        files = []
        for inc in re.findall(r'#include "([^"]+)"', unity.read_text()):
            path = Path(inc) if os.path.isabs(inc) else source_dir / "src" / inc
            if path.exists():
                files.append(path)
        if len(files) > 1:
            yield unity, files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--source-dir", type=Path, default=Path(__file__).resolve().parent.parent)
    args = ap.parse_args()
    found = list(batches(args.build_dir, args.source_dir))
    if not found:
        print(f"check-unity: no unity batches under {args.build_dir}/src", file=sys.stderr)
        return 2
    problems = 0
    for unity, files in found:
        text = {f: blank_comments_and_strings(f.read_text()) for f in files}
        internal = {f: anonymous_namespace_names(t) for f, t in text.items()}
        aliases = {f: type_aliases(t) for f, t in text.items()}
        for i, f in enumerate(files):
            rel = f.relative_to(args.source_dir) if f.is_relative_to(args.source_dir) else f
            if i < len(files) - 1:  # a leak matters only when a later file sees it
                for n, line in enumerate(f.read_text().splitlines(), 1):
                    if re.match(r"\s*#\s*define\b|\s*using\s+namespace\b", line):
                        print(f"{rel}:{n}: leaks into later files of {unity.name}: {line.strip()}")
                        problems += 1
            for g in files[i + 1 :]:
                # The same alias of the same type twice (`using json = nlohmann::json;`) is legal.
                same_alias = {n for n, t in aliases[f].items() if aliases[g].get(n) == t}
                common = sorted((internal[f] & internal[g]) - same_alias)
                if common:
                    grel = g.relative_to(args.source_dir) if g.is_relative_to(args.source_dir) else g
                    print(f"{rel} and {grel} both declare {', '.join(common)} ({unity.name})")
                    problems += 1
    print(f"check-unity: {len(found)} batches, {problems} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
