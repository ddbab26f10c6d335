"""Which scheduled cases opinfo abstains on does TVM's own build compute right? (development tool)

``tools/schedule_audit.py`` runs a scheduled function and its unscheduled one (``CASE.plain``,
written with ``OPINFO_SAVE_PLAIN=1``) in the project's interpreter, which runs the loops as
written. TVM's build does not always agree: its lowering allocates a block-local intermediate
where its accesses meet (fresh at every iteration of the loops around them), so a consumer
that ``reverse_compute_at`` left reading what an earlier iteration wrote reads garbage in the
compiled function while the interpreter keeps the value. This tool asks TVM itself: both
functions are built for ``llvm`` and run on the same random inputs (a symbolic extent at 5),
and every case opinfo abstains on is one of

  tvm-broken   TVM's build of the scheduled function computes something else than the
               unscheduled one: abstaining is right
  gap          both agree and opinfo names the unscheduled function: recognition could improve
  both-abstain both agree and opinfo abstains on the unscheduled function too (an ambiguity
               the loops leave open, an op opinfo does not name)
  no-build     TVM cannot build or run one of them

With ``--named`` the named cases are audited instead (:func:`audit_named`): whether the
warning opinfo gives where TVM's build of a function computes something else than its loops
(``warnings``) goes with exactly the functions TVM's build breaks.

Run with TVM's interpreter (it calls opinfo through the project's own, ``--opinfo-python``):
    /abs/tvmenv/bin/python tools/tvm_oracle/tvm_build_audit.py CORPUS [--show gap,no-build] [--named]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_compare import load, run_all  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYMBOLIC = 5


def _build_and_run_here(path: str) -> "list | None":
    try:
        return run_all(load(path), SYMBOLIC)
    except Exception:  # noqa: BLE001 -- any failure to parse, build or run is "no-build"
        return None


def build_and_run(path: str) -> "list | None":
    """Every argument of the file's PrimFunc after TVM's llvm build ran it on random inputs
    (:mod:`build_compare`: thread bindings made serial loops, the old dialect rewritten); None
    when TVM cannot read, build or run it. Runs in a forked child: TVM 0.27 can abort the
    process (heap corruption in some schedules' builds), which then loses that case only."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def work():
        child.send(_build_and_run_here(path))

    proc = ctx.Process(target=work)
    proc.start()
    child.close()
    try:
        got = parent.recv() if parent.poll(600) else None
    except EOFError:  # the child died before sending
        got = None
    proc.join(5)
    if proc.is_alive():
        proc.kill()
    return got


def _differ(a, b) -> bool:
    """``opinfo.verify.differ``'s rule (atol 1e-4 here): opinfo does not import under TVM's
    interpreter, which lacks ``attrs``."""
    if a.shape != b.shape:
        return True
    if np.array_equal(a, b, equal_nan=True):
        return False
    if a.dtype.kind != "f":
        return True
    tol = 2e-2 if a.dtype.itemsize <= 2 else 1e-4
    return not np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


def named(paths: list, python: str, warned: "dict | None" = None) -> dict:
    """path -> whether opinfo names an op in it (``opinfo analyze --json``); ``warned``, when
    given, gets path -> whether some function of it carries ``warnings``."""
    out = subprocess.run([python, "-m", "opinfo", "analyze", "--json", *paths], cwd=ROOT,
                         capture_output=True, text=True)
    found = {}
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        found[rec["file"]] = any(fn["ops"] for fn in rec.get("functions", []))
        if warned is not None:
            warned[rec["file"]] = any(fn.get("warnings") for fn in rec.get("functions", []))
    return found


def _plain_copy(corpus: str, case: str) -> str:
    """A ``.py`` copy in /tmp of the case's unscheduled function (the scorer reads every
    ``.py`` of a corpus, so the plains stay ``.plain`` there)."""
    dst = os.path.join("/tmp", f"tvm_build_audit_{os.getpid()}_{case}.py")
    with open(os.path.join(corpus, case + ".plain")) as src, open(dst, "w") as out:
        out.write(src.read())
    return dst


def _broken(path: str, plain: str) -> "bool | None":
    """Whether TVM's build of ``path`` computes something else than its unscheduled function
    ``plain``; None when TVM cannot build or run one of them."""
    mine, base = build_and_run(path), build_and_run(plain)
    if mine is None or base is None or len(mine) != len(base):
        return None
    return any(_differ(a, b) for a, b in zip(mine, base))


def audit_named(corpus: str, cases: list, answered: dict, warned: dict, show: set) -> Counter:
    """The named cases, each built with TVM and compared with its unscheduled function:

      warned-broken    a warning says TVM's build computes something else, and it does
      warned-agrees    a warning, yet TVM's build agrees (storage reused by luck, or a
                       false alarm)
      unwarned-broken  no warning, and TVM's build computes something else (a miscompile
                       the warning does not cover)
      ok               no warning, TVM's build agrees
      no-build         TVM cannot build or run one of them"""
    counts: Counter = Counter()
    for c in cases:
        path = os.path.join(corpus, c + ".py")
        if not answered.get(path):
            continue
        plain = _plain_copy(corpus, c)
        broken = _broken(path, plain)
        os.unlink(plain)
        if broken is None:
            verdict = "no-build"
        elif warned.get(path):
            verdict = "warned-broken" if broken else "warned-agrees"
        else:
            verdict = "unwarned-broken" if broken else "ok"
        counts[verdict] += 1
        if verdict in show:
            print(f"{verdict:17s}{c}", flush=True)
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--show", default="gap", help="comma list of categories to print (default gap)")
    ap.add_argument("--opinfo-python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--named", action="store_true",
                    help="audit the named cases instead: does a warning go with each function TVM's build breaks?")
    args = ap.parse_args(argv)
    cases = sorted(f[:-6] for f in os.listdir(args.corpus) if f.endswith(".plain"))
    scheduled = [os.path.join(args.corpus, c + ".py") for c in cases]
    warned: dict = {}
    answered = named([p for p in scheduled if os.path.exists(p)], args.opinfo_python, warned)
    if args.named:
        show = set(args.show.split(",")) if args.show != "gap" else {"warned-agrees", "unwarned-broken"}
        print(dict(audit_named(args.corpus, cases, answered, warned, show)))
        return 0
    abstained = [c for c, p in zip(cases, scheduled) if answered.get(p) is False]
    plains = [_plain_copy(args.corpus, c) for c in abstained]
    plain_named = named(plains, args.opinfo_python) if plains else {}
    show = set(args.show.split(","))
    counts: Counter = Counter()
    for c, plain in zip(abstained, plains):
        broken = _broken(os.path.join(args.corpus, c + ".py"), plain)
        if broken is None:
            verdict = "no-build"
        elif broken:
            verdict = "tvm-broken"
        else:
            verdict = "gap" if plain_named.get(plain) else "both-abstain"
        os.unlink(plain)
        counts[verdict] += 1
        if verdict in show:
            print(f"{verdict:13s}{c}", flush=True)
    print(dict(counts), f"({len(cases) - len(abstained)} of {len(cases)} scheduled cases named)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
