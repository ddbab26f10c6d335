"""``opinfo demo [--model PATH] [--engine interp|c] [--backend onnxruntime|c]``."""
from __future__ import annotations

import sys

from .common import InputError, fail, with_examples

def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "demo", help="the whole story on a network: lower, analyze, plan layouts, offload, run",
        description="Lower a network (built in, or --model PATH), recover its ops, re-plan layouts to NHWC, "
        "offload convolutions to an external backend, then run all three modules and check they agree. "
        "Exit 0 when they agree, 1 on a mismatch, 2 on bad input.",
        **with_examples("opinfo demo                                  the built-in ResNet-style network",
                        "opinfo demo --model ../shared/corpus/models/resnet50.py --engine c",
                        "opinfo demo --backend c                      offload to generated C instead of ONNX Runtime"))
    p.add_argument("--model", metavar="PATH", help="a TVMScript module with a graph-level main")
    p.add_argument("--engine", choices=("interp", "c"), default="interp", help="how to run the modules")
    p.add_argument("--backend", choices=("onnxruntime", "c"), default="onnxruntime",
                   help="the BYOC backend to offload to")


def run(args) -> int:
    from ..demo import run_demo

    try:
        return run_demo(sys.stdout, args.model, args.engine, args.backend)
    except InputError as err:
        return fail(str(err))
