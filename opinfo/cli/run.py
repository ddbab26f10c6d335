"""``opinfo run PATH --inputs IN.npz --output OUT.npz [--engine interp|c]``.

Runs the module's ``main`` (or its only PrimFunc, whose last parameter is the output) on the
arrays ``arr_0, arr_1, ...`` of IN.npz and writes ``out`` (``out_0, out_1, ...`` for a
tuple) to OUT.npz, only when the run succeeded. Bad input exits with code 2.
"""
from __future__ import annotations

import os
import tempfile
import zipfile

import numpy as np

from .common import InputError, check_output_path, fail, read_module, with_examples


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("run", help="execute a module on inputs from an .npz file",
                              description=__doc__.split("\n\n")[0],
                              **with_examples("opinfo run model.py --inputs in.npz --output out.npz",
                                              "opinfo run model.py --inputs in.npz --output out.npz --engine c",
                                              note="IN.npz holds arr_0, arr_1, ... (numpy.savez(path, *arrays)); "
                                              "exit 2 on missing or mis-shaped inputs."))
    p.add_argument("path", help="TVMScript file (a module or one prim_func)")
    p.add_argument("--inputs", required=True, help="IN.npz with arrays arr_0, arr_1, ...")
    p.add_argument("--output", "-o", required=True, help="OUT.npz to write ('out', or 'out_0'... for tuples)")
    p.add_argument("--engine", choices=("interp", "c"), default="interp", help="interpreter or compiled C (gcc)")


def run(args) -> int:
    try:
        check_output_path(args.output, [args.path, args.inputs])
        module = read_module(args.path)
        inputs = read_inputs(args.inputs)
        result = execute(module, inputs, args.engine, args.path)
    except InputError as err:
        return fail(str(err))
    write_outputs(args.output, result)
    return 0


def read_inputs(path: str) -> list:
    """The arrays arr_0, arr_1, ... of an .npz file, in order."""
    try:
        data = np.load(path, allow_pickle=False)
        if not hasattr(data, "files"):
            raise InputError(f"{path}: not an .npz archive (save the inputs with numpy.savez)")
        with data:
            names = set(data.files)
            count = 0
            while f"arr_{count}" in names:
                count += 1
            extra = sorted(names - {f"arr_{i}" for i in range(count)})
            if extra:
                raise InputError(f"{path}: unexpected arrays {extra}; inputs must be named arr_0, arr_1, ...")
            return [data[f"arr_{i}"] for i in range(count)]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise InputError(f"{path}: cannot read inputs: {err or type(err).__name__}") from None


def execute(module, inputs: list, engine: str, path: str):
    """Run ``module`` (entry: main or its only PrimFunc); errors in the inputs become InputError."""
    import tir
    from tir.execute import entry_function
    from tir.interp_data import InterpError

    from tir.function import PrimFunc

    try:
        entry = module if isinstance(module, PrimFunc) else entry_function(module)
    except InterpError as err:
        raise InputError(f"{path}: {err}") from None
    _check_count(entry, inputs, path)
    try:
        return tir.run(module, *inputs, engine=engine, registry=external_functions(module))
    except InterpError as err:
        raise InputError(f"{path}: {err}") from None
    except RuntimeError as err:  # no compiler, compile failure
        raise InputError(f"{path}: {err}") from None


def external_functions(module) -> "dict | None":
    """External functions of a partitioned module (``opinfo byoc -o``): rebuilt from its
    graph functions with a ``Compiler`` attribute (see opinfo/cli/byoc.py)."""
    from tir.module import IRModule

    if not isinstance(module, IRModule) or not any("Compiler" in f.attrs for _, f in module.graph_funcs()):
        return None
    from byoc import load_externals

    return load_externals(module)


def _check_count(entry, inputs, path) -> None:
    from tir.function import PrimFunc

    if isinstance(entry, PrimFunc):
        want = len(entry.params) - 1
    else:
        want = len(entry.params)
    if len(inputs) != want:
        raise InputError(f"{path}: the entry function takes {want} input(s), the .npz has {len(inputs)} (arr_0..)")


def write_outputs(path: str, result) -> None:
    """Write ``out`` (or ``out_0, out_1, ...``) atomically, so a failed write leaves no file."""
    if isinstance(result, tuple):
        arrays = {f"out_{i}": np.asarray(r) for i, r in enumerate(_flatten(result))}
    else:
        arrays = {"out": np.asarray(result)}
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(suffix=".npz", dir=folder)
    os.close(fd)
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _flatten(values):
    for v in values:
        if isinstance(v, tuple):
            yield from _flatten(v)
        else:
            yield v
