"""The ``opinfo`` command line.

Each subcommand lives in its own module with ``add_parser(subparsers)`` and ``run(args) ->
int``. Exit codes: 0 success, 1 findings or mismatch, 2 bad input, 3 an internal error (a
bug: one line naming it, the traceback with ``OPINFO_TRACEBACK=1``).
"""
from __future__ import annotations

import argparse
import importlib
import sys

# subcommand -> module (in opinfo.cli); listed explicitly, imported only when used.
COMMANDS = {
    "show": "show",
    "run": "run",
    "analyze": "analyze",
    "plan": "plan",
    "byoc": "byoc",
    "demo": "demo",
}

EPILOG = """examples:
  opinfo demo                                  the whole story on a built-in network
  opinfo show model.py                         functions, buffers, blocks and loops
  opinfo analyze model.py                      recovered ops, kinds and attributes
  opinfo run model.py --inputs in.npz --output out.npz
"""


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("opinfo")
    except Exception:  # not installed: running from a checkout
        return "0.1.0"


def build_parser(available: dict) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opinfo",
        description="Recover op-level facts (op name, kind, attributes) from lowered TVM PrimFuncs, "
        "and use them: run, plan layouts, offload to external backends.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"opinfo {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in available.items():
        module.add_parser(sub)
    return parser


def _load_commands() -> dict:
    loaded = {}
    for name, modname in COMMANDS.items():
        try:
            loaded[name] = importlib.import_module(f".{modname}", __name__)
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{modname}":
                raise
    return loaded


def main(argv: "list[str] | None" = None) -> int:
    commands = _load_commands()
    parser = build_parser(commands)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return commands[args.command].run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``opinfo analyze ... | head``): stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as err:  # a bug, not bad input (commands report those themselves)
        import os

        if os.environ.get("OPINFO_TRACEBACK"):
            raise
        print(f"opinfo {args.command}: internal error: {type(err).__name__}: {err} "
              "(please report it; OPINFO_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return 3
