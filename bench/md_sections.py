"""Generated sections of a Markdown file (BENCHMARKS.md), between markers; the rest is kept.

A generated section is the text between two marker lines:

    <!-- bench:NAME -->
    ...written by a script, replaced on every run...
    <!-- /bench:NAME -->

`replace_sections(path, {NAME: body})` replaces the body of each named section and leaves every
other line of the file as it is (hand-written sections, headings, notes). A section not yet in the
file is appended at the end under a `## heading`. Used by bench/bench.py; another script adds its
own section the same way:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # when run from elsewhere
    from md_sections import replace_sections
    replace_sections("BENCHMARKS.md", {"ranks": ("Many ranks: `sightline ranks`", table_text)})

Names are lowercase words and dashes; a marker is a line of its own.
"""
import os
import re

_OPEN = re.compile(r"^<!-- bench:([a-z0-9-]+) -->$")


def _markers(name):
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def replace_sections(path, sections, title="# Benchmarks"):
    """sections: {name: (heading, body)}; heading is used only when the section is new to the file.

    Raises ValueError when a section in the file is opened without being closed (or twice), rather
    than guess what of the file belongs to it.
    """
    lines = open(path).read().splitlines() if os.path.exists(path) else [title, ""]
    seen = set()
    out = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        name = m.group(1)
        if name in seen:
            raise ValueError(f"{path}: section {name!r} appears twice")
        seen.add(name)
        opening, closing = _markers(name)
        try:
            end = lines.index(closing, i + 1)
        except ValueError:
            raise ValueError(f"{path}: {opening} has no {closing}") from None
        out.append(opening)
        if name in sections:
            out += sections[name][1].rstrip("\n").splitlines()
        else:
            out += lines[i + 1:end]
        out.append(closing)
        i = end + 1
    for name, (heading, body) in sections.items():
        if name in seen:
            continue
        opening, closing = _markers(name)
        if out and out[-1] != "":
            out.append("")
        out += [f"## {heading}", "", opening] + body.rstrip("\n").splitlines() + [closing, ""]
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")
    os.replace(path + ".tmp", path)
