"""Time parsing and op-info analysis of ResNet-50 (../shared/corpus/models/resnet50.py),
and of a module holding every function twice (renamed), as the ratio to the first: about
2.0 when analysis grows linearly with model size.

Run from the project root: ``python3 benchmarks/analyze.py``. Target: under 1.5 s for the
file (parse + analysis). Every module of ``tir`` and ``opinfo`` is imported before the clock
starts (analysis imports some recognizers at first use; with PYTHONDONTWRITEBYTECODE set that
means compiling them inside the timed run), and the import time is printed on its own line.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tir  # noqa: E402
from opinfo.api import analyze_module  # noqa: E402

from parse import repeated  # noqa: E402

PATH = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "models" / "resnet50.py"


def import_all() -> float:
    """Seconds to import every module of ``tir`` and ``opinfo``."""
    t0 = time.perf_counter()
    import opinfo
    for package in (tir, opinfo):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    return time.perf_counter() - t0


def timed(text: str) -> tuple:
    """(parse seconds, analysis seconds, PrimFuncs analysed)."""
    t0 = time.perf_counter()
    mod = tir.parse(text)
    t1 = time.perf_counter()
    infos = analyze_module(mod)
    return t1 - t0, time.perf_counter() - t1, len(infos)


def main() -> None:
    if not PATH.exists():
        print(f"corpus not found at {PATH}")
        return
    text = PATH.read_text()
    print(f"import   {import_all():.3f} s  (every module of tir and opinfo, not counted below)")
    parse, analysis, n = timed(text)
    print(f"parse    {parse:.3f} s")
    print(f"analyze  {analysis:.3f} s  ({n} PrimFuncs, {1000 * analysis / max(n, 1):.1f} ms each)")
    print(f"total    {parse + analysis:.3f} s")
    parse2, analysis2, n2 = timed(repeated(text, 2))
    print(f"x2 model ({n2} PrimFuncs): parse + analysis {parse2 + analysis2:.3f} s, "
          f"{(parse2 + analysis2) / (parse + analysis):.2f}x the x1 model (linear: 2.00x)")


if __name__ == "__main__":
    main()
