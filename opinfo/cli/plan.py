"""``opinfo plan PATH --layout OP=DATA[:KERNEL] ... [-o OUT.py] [--json]``.

Re-plans the data layouts of a lowered module: the named ops are converted to the given
layouts, the new layouts are propagated through every op whose rule allows it, and
``layout_transform`` calls are inserted only where a layout must change. Writes the planned
module as TVMScript (never over PATH) and prints a summary: ops converted, transforms
inserted and why, ops left in their layout. Bad input exits with code 2.
"""
from __future__ import annotations

import json

from .common import InputError, check_output_path, fail, read_module, with_examples


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("plan", help="re-plan data layouts of a lowered module",
                              description=__doc__.split("\n\n")[0],
                              **with_examples("opinfo plan model.py --layout nn.conv2d=NHWC:OHWI --layout nn.max_pool2d=NHWC -o nhwc.py",
                                              "opinfo plan model.py --layout nn.conv2d=NCHW4c:OIHW4i4o --json"))
    p.add_argument("path", help="TVMScript module with a graph-level main")
    p.add_argument("--layout", action="append", default=[], metavar="OP=DATA[:KERNEL]",
                   help="target layout of an op, e.g. nn.conv2d=NHWC:OHWI or nn.max_pool2d=NHWC (repeatable)")
    p.add_argument("--output", "-o", help="write the planned module (TVMScript) here")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def parse_targets(specs: "list[str]") -> dict:
    """``["nn.conv2d=NHWC:OHWI"]`` -> ``{"nn.conv2d": ("NHWC", "OHWI")}`` (layouts checked)."""
    from layout.layout import Layout, LayoutError

    if not specs:
        raise InputError("plan: give at least one --layout OP=LAYOUT (e.g. --layout nn.conv2d=NHWC:OHWI)")
    targets = {}
    for spec in specs:
        op, sep, value = spec.partition("=")
        if not sep or not op or not value:
            raise InputError(f"--layout {spec!r}: expected OP=DATA[:KERNEL], e.g. nn.conv2d=NHWC:OHWI")
        parts = value.split(":")
        if len(parts) > 2:
            raise InputError(f"--layout {spec!r}: at most a data and a kernel layout")
        try:
            for p in parts:
                Layout.parse(p)
        except LayoutError as err:
            raise InputError(f"--layout {spec!r}: {err}") from None
        targets[op] = parts[0] if len(parts) == 1 else tuple(parts)
    return targets


def plan_module(module, targets: dict, path: str):
    """Run the planner; its refusals of the input become InputError."""
    from layout.layout import LayoutError
    from layout.planner import plan

    try:
        return plan(module, targets)
    except (LayoutError, ValueError) as err:
        raise InputError(f"{path}: {err}") from None


def run(args) -> int:
    try:
        targets = parse_targets(args.layout)
        if args.output:
            check_output_path(args.output, [args.path])
        module = read_module(args.path)
        planned, summary = plan_module(module, targets, args.path)
    except InputError as err:
        return fail(str(err))
    if args.output:
        _write(args.output, planned)
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        print(summary.text())
        if args.output:
            print(f"planned module written to {args.output}")
    return 0


def _write(path: str, module) -> None:
    import tir

    with open(path, "w", encoding="utf-8") as f:
        f.write(tir.to_script(module))
