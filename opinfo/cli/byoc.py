"""``opinfo byoc PATH --backend onnxruntime|c [--pattern NAME ...] [-o OUT.py] [--json]``.

Offloads the ops of a lowered module's ``main`` to an external backend using the ops and
attributes opinfo recovers, and prints what went where: per region its backend, symbol and
ops with attributes; and every op left in TIR with the reason. With ``-o`` the partitioned
module is written as TVMScript: ``main`` calls each region with ``R.call_dps_packed``, and
the regions stay in the file as graph functions with a ``Compiler`` attribute. External
modules are not saved beside it: ``opinfo run OUT.py`` rebuilds them from those functions
when it loads the file (ONNX models for ``onnxruntime``, a shared library for ``c``).
"""
from __future__ import annotations

import json
import sys

from .common import InputError, check_output_path, fail, read_module

EPILOG = """examples:
  opinfo byoc model.py --backend onnxruntime -o offloaded.py
  opinfo byoc model.py --backend c --json
  opinfo byoc model.py --pattern conv_bn_act

The written module runs with:  opinfo run OUT.py --inputs IN.npz --output OUT.npz [--engine c]
(its external modules are rebuilt from the Compiler functions on load; nothing else is saved).
Without --pattern the backend's patterns are used, then every other op it supports on its own;
with --pattern only the named composites are offloaded."""


def add_parser(subparsers) -> None:
    import argparse

    p = subparsers.add_parser("byoc", help="offload recovered ops to ONNX Runtime or C (partition main)",
                              description=__doc__.split("\n\n")[1], epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", help="TVMScript module with a graph-level main of call_tir bindings")
    p.add_argument("--backend", choices=("onnxruntime", "c"), default="onnxruntime",
                   help="where supported regions go (default onnxruntime)")
    p.add_argument("--pattern", action="append", default=[], metavar="NAME",
                   help="only offload composites of this backend pattern (repeatable), e.g. conv_bn_act")
    p.add_argument("-o", "--output", help="write the partitioned module (TVMScript) here; never PATH itself")
    p.add_argument("--json", action="store_true", help="print one JSON object with 'regions' and 'kept'")


def run(args) -> int:
    from byoc import memoized, summary

    analyze = memoized()  # one analysis per kernel for the partitioning and the summary
    try:
        if args.output:
            check_output_path(args.output, [args.path])
        module = read_module(args.path)
        part = _partition(module, args, analyze)
    except InputError as err:
        return fail(str(err))
    report = summary(part, analyze)
    if args.output:
        _write(part, args.output)
    if args.json:
        print(json.dumps({"file": args.path, "backend": args.backend, "output": args.output, **report}))
    else:
        _print_text(report, args)
    return 0


def _partition(module, args, analyze):
    from tir import relax as R

    import byoc
    from byoc.backend import UnknownName

    if not isinstance(module.main, R.Function):
        raise InputError(f"{args.path}: the module has no graph-level main to partition "
                         "(byoc needs R.call_tir bindings)")
    try:
        return byoc.partition(module, args.backend, patterns=args.pattern or None, analyze=analyze)
    except UnknownName as err:
        raise InputError(f"{args.path}: {err.args[0]}") from None
    except ImportError as err:
        raise InputError(f"backend {args.backend!r} needs {err.name}: pip install onnx onnxruntime") from None


def _write(part, path: str) -> None:
    import tir
    from byoc import strip_externals

    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(tir.to_script(strip_externals(part)))
    except OSError as err:
        raise InputError(f"{path}: cannot write: {err.strerror or err}") from None


def _attrs_text(attrs: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in attrs.items())


def _print_text(report: dict, args) -> None:
    out = sys.stdout
    regions, kept = report["regions"], report["kept"]
    n_ops = sum(len(r["ops"]) for r in regions)
    out.write(f"{args.path}: {len(regions)} region(s), {n_ops} op(s) offloaded to {args.backend}; "
              f"{len(kept)} call(s) kept in TIR\n")
    for r in regions:
        out.write(f"region {r['symbol']} ({r['backend']}):\n")
        for op in r["ops"]:
            out.write(f"  {op['op']}({_attrs_text(op['attrs'])})\n")
    for k in kept:
        ops = ", ".join(k["ops"]) or "unrecognised"
        out.write(f"kept {k['binding']} = {k['func']} [{ops}]: {k['reason']}\n")
    if args.output:
        out.write(f"wrote {args.output}\n")
