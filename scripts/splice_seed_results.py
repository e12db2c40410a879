#!/usr/bin/env python3
"""Splice the output of seed_table.py and claims.py into docs/seed-results.md.

    python3 scripts/splice_seed_results.py docs/seed-results.md table.md claims.md

Replaces the table that starts with "| scenario | metric" by table.md's rows, the table that
starts with "| # | claim |" by claims.md's rows, and the "N of M claims reproduced" line after
it by claims.md's; the prose around them is left as it is. The file is written atomically.
"""
import os
import re
import sys
import tempfile

COUNT = re.compile(r"^\d+ of \d+ claims reproduced")


def fail(msg):
    print(f"splice_seed_results: {msg}", file=sys.stderr)
    sys.exit(2)


def rows(path):
    with open(path) as f:
        return [l for l in f.read().split("\n") if l.startswith("|")]


def splice(lines, new, header):
    try:
        i = next(k for k, l in enumerate(lines) if l.startswith(header))
    except StopIteration:
        fail(f"no table starting with '{header}' in the document")
    j = i
    while j < len(lines) and lines[j].startswith("|"):
        j += 1
    if not new:
        fail(f"the new '{header}' table has no rows")
    return lines[:i] + new + lines[j:], i + len(new)


def main():
    if len(sys.argv) != 4:
        fail("usage: " + __doc__.strip().split("\n\n")[1].strip())
    doc, table, claims = sys.argv[1:4]
    with open(doc) as f:
        lines = f.read().split("\n")
    lines, _ = splice(lines, rows(table), "| scenario | metric")
    lines, end = splice(lines, rows(claims), "| # | claim |")
    with open(claims) as f:
        count = [l for l in f.read().split("\n") if COUNT.match(l)]
    for k in range(end, min(end + 3, len(lines))):
        if count and COUNT.match(lines[k]):
            lines[k] = count[0]
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(doc)))
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, doc)


if __name__ == "__main__":
    try:
        main()
    except OSError as e:
        fail(str(e))
