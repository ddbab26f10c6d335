"""Time tir.parse on the ResNet-50 corpus file, and on 2x/4x concatenations (linear scaling).

Run from the project root: ``python3 benchmarks/parse.py``. Target: under 0.5 s for the file.
"""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tir  # noqa: E402

MODEL = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "models" / "resnet50.py"


def repeated(text: str, k: int) -> str:
    """One module holding ``k`` renamed copies of every function of ``text`` (main included)."""
    head, _, body = text.partition("class Module:\n")
    names = re.findall(r"^    def (\w+)\(", body, flags=re.M)
    copies = []
    for i in range(k):
        part = body
        for n in sorted(names, key=len, reverse=True):
            part = re.sub(rf"(def |cls\.){n}\b", rf"\g<1>{n}_c{i}", part)
        copies.append(part)
    return head + "class Module:\n" + "\n".join(copies)


def best_of(text: str, runs: int = 5) -> float:
    """The fastest of ``runs`` parses, in seconds."""
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        tir.parse(text)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    if not MODEL.exists():
        print(f"corpus not found at {MODEL}")
        return
    text = MODEL.read_text()
    for k in (1, 2, 4):
        t = text if k == 1 else repeated(text, k)
        s = best_of(t)
        kb = len(t.encode()) / 1024
        print(f"resnet50 x{k}: {kb:7.0f} KB  parse {s:.3f} s  {1000 * s / kb:.3f} ms/KB")


if __name__ == "__main__":
    main()
