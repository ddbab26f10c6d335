"""Time parsing and op-info analysis of ResNet-50 (../shared/corpus/models/resnet50.py)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tir  # noqa: E402
from opinfo.api import analyze_module  # noqa: E402

PATH = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "models" / "resnet50.py"


def main() -> None:
    text = PATH.read_text()
    t0 = time.perf_counter()
    mod = tir.parse(text)
    t1 = time.perf_counter()
    infos = analyze_module(mod)
    t2 = time.perf_counter()
    n = len(infos)
    print(f"parse    {t1 - t0:.3f} s")
    print(f"analyze  {t2 - t1:.3f} s  ({n} PrimFuncs, {1000 * (t2 - t1) / max(n, 1):.1f} ms each)")
    print(f"total    {t2 - t0:.3f} s")


if __name__ == "__main__":
    main()
