"""``opinfo analyze PATH... [--json] [--jobs N] [--verify]``: recovered ops, kinds and attributes."""
from __future__ import annotations

import json
import os
import sys

from .common import InputError, Progress, as_module, read_module, with_examples


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("analyze", help="recover op names, kinds and attributes",
                              description="Recover the op, its TVM pattern kind and its attributes "
                              "from every PrimFunc of TVMScript files (or folders of them).",
                              **with_examples("opinfo analyze model.py", "opinfo analyze corpus/ops --json --jobs 2",
                                              "opinfo analyze planned.py --dot | dot -Tsvg -o graph.svg",
                                              note="A function that cannot be recognised with certainty has no "
                                              "ops: never a guess. Where it can, it says why: 'undecided' (a reading "
                                              "whose starred name or attributes the loops leave open), 'withheld' (a "
                                              "kernel of a small graph whose other kernel is not recognised) or 'refused' "
                                              "(a soundness check). 'warnings' go with an answer the function computes as written but TVM's "
                                              "build of it does not (storage read at a later iteration than TVM "
                                              "allocates it for). Exit 2 when a file could not be read."))
    p.add_argument("paths", nargs="+", metavar="PATH", help="a TVMScript file or a folder of .py files")
    p.add_argument("--json", action="store_true", help="JSON Lines: one object per file")
    p.add_argument("--jobs", type=int, default=0,
                   help="analyse files in N processes (default: one per usable CPU, up to "
                   f"{MAX_AUTO_JOBS}, when there are at least {AUTO_JOBS_FILES} files; else 1)")
    p.add_argument("--verify", action="store_true",
                   help="confirm each function named as one op by lowering that op afresh and running both on "
                   "random inputs (slower); an op that computes something else is withdrawn ('refuted' in JSON), "
                   "each op says 'verified': true, or null where it cannot be checked")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="S",
                   help="seconds of processor time the analysis of one PrimFunc may take; past it the function keeps its kind "
                   f"and has no ops ('refused' says why); 0: no limit (default: {DEFAULT_TIME_LIMIT:g})")
    p.add_argument("--dot", action="store_true",
                   help="print the graph of recovered ops as Graphviz DOT (offloaded regions and "
                   "layout transforms marked); render with: dot -Tsvg -o graph.svg")


def expand(paths: list) -> list:
    """Files to analyse: folders expand to their .py files (sorted)."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".py")))
        else:
            out.append(p)
    return out


def call_order(mod) -> list:
    """PrimFunc names: those main calls first (in call order), then the rest in file order."""
    from tir.functor import pre_order_visit
    from tir.relax import GlobalVar

    names = [n for n, _ in mod.prim_funcs()]
    called = []
    main = mod.main
    if main is not None and not hasattr(main, "buffer_map"):
        def visit(n):
            if isinstance(n, GlobalVar) and n.name in names and n.name not in called:
                called.append(n.name)
            return True
        pre_order_visit(main, visit)
    return called + [n for n in names if n not in called]


DEFAULT_TIME_LIMIT = 120.0
"""Seconds of processor time one PrimFunc's analysis may take by default (``--time-limit``).
The slowest functions of the corpora measured take 15-35 s (vision.roi_pool and
scatter_elements, whose data-dependent loops the interpreter walks point by point; up to
twice that on a machine busy with other work), and one dlight-scheduled roi_align 110-150 s
(its thread loops walked too: refused past the limit); the limit keeps one pathological
kernel from stalling a model or a corpus."""


def analyze_file(path: str, verify: bool = False, time_limit: "float | None" = None) -> dict:
    """The JSON record of one file (``verify``, ``time_limit``: see :func:`module_record`)."""
    try:
        mod = read_module(path)
    except InputError as err:
        msg = str(err)
        prefix = f"{path}:"
        return {"file": path, "error": msg[len(prefix):].lstrip() if msg.startswith(prefix) else msg}
    except Exception as err:  # a bug in the reader: report it for this file, go on with the others
        return {"file": path, "error": f"1:1: internal error while reading: {type(err).__name__}: {err}"}
    try:
        return module_record(as_module(mod, path), path, verify, time_limit)
    except Exception as err:  # a bug in an analysis: report it for this file, go on with the others
        return {"file": path, "error": f"1:1: internal error while analysing: {type(err).__name__}: {err}"}


def module_record(mod, path: str, verify: bool = False, time_limit: "float | None" = None) -> dict:
    """The JSON record of a parsed module: its PrimFuncs in call order, analysed. With
    ``verify`` each op of a function named as one op is checked by :func:`opinfo.verify_op`:
    ``"verified": true`` (or null: not checkable); one that computes something else than
    the function is withdrawn and listed under the function's ``"refuted"``. ``time_limit``
    bounds each function's analysis (:func:`opinfo.analyze`)."""
    from ..api import analyze_module

    infos = analyze_module(mod, time_limit)
    funcs = dict(mod.prim_funcs())
    out = []
    for name in call_order(mod):
        rec = infos[name].to_json()
        if verify:
            _verified(rec, funcs[name], infos[name])
        out.append(rec)
    return {"file": path, "functions": out}


def _verified(rec: dict, func, info) -> None:
    from ..verify import verify

    for op, ok in zip(list(rec["ops"]), verify(func, info)):
        if ok is False:
            rec["ops"].remove(op)
            rec.setdefault("refuted", []).append(op)
        else:
            op["verified"] = ok


def table(rec: dict) -> str:
    """A record of a file that was read, as a readable table: one line per function (and a
    footnote when an attribute is starred as assumed)."""
    lines = [rec["file"]]
    for fn in rec["functions"]:
        ops = "; ".join(_op_text(o) for o in fn["ops"])
        for key in ("undecided", "withheld"):  # readings not reported, and why
            if not ops and fn.get(key):
                ops = f"({key}: " + "; ".join(_op_text(o) for o in fn[key]) + ")"
        if not ops and fn.get("part_of"):
            ops = f"(part of the op of {fn['part_of']})"
        ops = ops or (f"(refused: {fn['refused']})" if fn.get("refused") else "(not recognized)")
        if fn.get("refuted"):
            ops += " (refuted by re-lowering: " + "; ".join(_op_text(o) for o in fn["refuted"]) + ")"
        elif fn["ops"] and all(o.get("verified") for o in fn["ops"]):
            ops += "  [verified]"
        lines.append(f"  {fn['name']:<28} {fn['kind']:<18} {ops}")
        lines.extend(f"    warning: {w}" for w in fn.get("warnings", ()))
    if any(o.get("assumed") for fn in rec["functions"] for o in fn["ops"]):
        lines.append("  * not decided by the loops: the convention of framework importers (inside a network; "
                     "in a graph of several kernels only a forward op's name, sum for collapse_sum_to)")
    if any(fn.get("undecided") and not fn["ops"] for fn in rec["functions"]):
        lines.append("  undecided: not reported; the loops leave the starred name or attributes open (other values "
                     "compute the same); shown with the importers' convention, which a network gets")
    if any(fn.get("withheld") and not fn["ops"] for fn in rec["functions"]):
        lines.append("  withheld: not reported; another kernel of this small graph is not recognised, so the "
                     "graph's op sequence would be incomplete")
    return "\n".join(lines)


def _op_text(op: dict) -> str:
    """``name(k=v, ...)``; an attribute filled in by the importers' convention (the loops
    leave it open, see OpInfo.assumed) is starred: ``ceil_mode*=False``; so is the name
    when it is the convention (``sum*``: collapse_sum_to computes the same)."""
    assumed = set(op.get("assumed", ()))
    attrs = ", ".join(f"{k}{'*' if k in assumed else ''}={v}" for k, v in op["attrs"].items())
    name = op["op"] + ("*" if "op" in assumed else "")
    return f"{name}({attrs})" if attrs else name


MAX_AUTO_JOBS = 8
AUTO_JOBS_FILES = 8
"""``--jobs`` left at 0 uses one process per usable CPU (at most :data:`MAX_AUTO_JOBS`) for
at least this many files; the records come out in the order of the files either way."""


def auto_jobs(jobs: int, files: int) -> int:
    """The processes ``--jobs`` asks for: ``jobs`` when given (>= 1), else one per usable
    CPU for :data:`AUTO_JOBS_FILES` files or more."""
    if jobs >= 1:
        return jobs
    if files < AUTO_JOBS_FILES:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, MAX_AUTO_JOBS, files))


def _records(files: list, jobs: int, verify: bool = False, time_limit: "float | None" = None):
    jobs = auto_jobs(jobs, len(files))
    if jobs <= 1 or len(files) < 2:
        for f in files:
            yield analyze_file(f, verify, time_limit)
        return
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(partial(analyze_file, verify=verify, time_limit=time_limit), files, chunksize=2)


def run(args) -> int:
    files = expand(args.paths)
    if not files:
        print("analyze: no .py files found", file=sys.stderr)
        return 2
    if args.dot:
        return _dot(files)
    failed = False
    with Progress(len(files), "analyze") as progress:
        for rec in _records(files, args.jobs, args.verify, args.time_limit):
            failed = failed or "error" in rec
            progress.clear()
            if "error" in rec and not args.json:  # PATH:line:col: message, like every command
                sep = ":" if rec["error"][:1].isdigit() else ": "  # PATH: cannot read: ...
                print(f"{rec['file']}{sep}{rec['error']}", file=sys.stderr, flush=True)
                continue
            print(json.dumps(rec) if args.json else table(rec), flush=True)
            progress.advance(os.path.basename(rec["file"]))
    return 2 if failed else 0


def _dot(files: list) -> int:
    """One DOT digraph per file on stdout; unreadable files on stderr, exit 2."""

    from ..dot import module_dot

    failed = False
    for path in files:
        try:
            mod = read_module(path)
        except InputError as err:
            print(err, file=sys.stderr)
            failed = True
            continue
        mod = as_module(mod, path)
        print(module_dot(mod, title=path), flush=True)
    return 2 if failed else 0
