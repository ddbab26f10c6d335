#!/usr/bin/env python3
"""Compare two runs of ``opinfo analyze FILES --json`` per (file, PrimFunc): the regression
check used before every change to recognition (a development tool).

    git worktree add /tmp/base HEAD                      # the code before the change
    (cd /tmp/base && python -m opinfo analyze $FILES --json --jobs 2) > before.jsonl
    python -m opinfo analyze $FILES --json --jobs 2 > after.jsonl
    python tools/answer_diff.py before.jsonl after.jsonl

Prints every function whose ops or kind differ (before, after) and a count; exits 1 when
some answer changed.
"""
from __future__ import annotations

import json
import sys


def answers(path: str) -> dict:
    """(file, function name) -> its ops and kind as canonical JSON."""
    out = {}
    with open(path) as fh:
        for line in fh:
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            funcs = rec.get("functions") or [{"name": None, "ops": None, "kind": rec.get("error")}]
            for f in funcs:
                out[(rec.get("file"), f.get("name"))] = json.dumps([f.get("ops"), f.get("kind")], sort_keys=True)
    return out


def main() -> None:
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    before, after = answers(sys.argv[1]), answers(sys.argv[2])
    changed = 0
    for key in sorted(set(before) | set(after), key=lambda k: (str(k[0]), str(k[1]))):
        if before.get(key) != after.get(key):
            changed += 1
            print(f"== {key[0]} {key[1]}\n  - {before.get(key, '(absent)')}\n  + {after.get(key, '(absent)')}")
    print(f"{changed} changed of {len(set(before) | set(after))}")
    sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
