"""Compiling emitted C with gcc and calling it on numpy arrays through ctypes.

Shared libraries are cached by a hash of the source and the compiler flags in
``$XDG_CACHE_HOME/opinfo`` (default ``~/.cache/opinfo``), so a function is compiled once
per machine; within a process the loaded functions are cached too.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .codegen_c import c_signature, emit_c
from .function import PrimFunc
from .interp import bind_params
from .interp_data import InterpError
from .interp_expr import Ctx

CFLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-fwrapv", "-fno-math-errno", "-std=gnu99", "-fexcess-precision=standard",
          "-fno-tree-loop-if-convert", "-ffp-contract=off", "-fno-strict-aliasing")
"""``-ffp-contract=off``: ``a * b + c`` rounds twice, as TVM's LLVM build computes it (gcc would
fuse it into one FMA on this machine: measured 80 of 256 float32 elements off TVM's by an ulp).
``-fno-strict-aliasing``: a view of another type over a buffer's storage (TVM's storage reuse,
``T.decl_buffer(..., "bool", data=x.data)``) accesses the same memory through both types."""
_LOADED: dict = {}


class CompilerNotFound(RuntimeError):
    """No C compiler on PATH: the C engine is unavailable (the interpreter still works)."""


class CompileError(RuntimeError):
    """gcc rejected the emitted source."""


def cache_dir() -> Path:
    """The per-user directory holding compiled libraries."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "opinfo"
    path.mkdir(parents=True, exist_ok=True)
    return path


def compiler() -> str:
    """Path of gcc, or a clear error when there is none."""
    cc = shutil.which(os.environ.get("CC", "gcc")) or shutil.which("gcc")
    if cc is None:
        raise CompilerNotFound(
            "the C engine needs gcc, and no gcc was found on PATH; install gcc or use engine='interp'"
        )
    return cc


def compile_source(source: str) -> Path:
    """Compile ``source`` to a shared library (cached by content hash); returns its path."""
    cc = compiler()
    key = hashlib.sha256("\0".join((source, cc, *CFLAGS)).encode()).hexdigest()[:32]
    lib = cache_dir() / f"tir_{key}.so"
    if lib.exists():
        return lib
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        src, out = Path(tmp) / "kernel.c", Path(tmp) / "kernel.so"
        src.write_text(source)
        proc = subprocess.run([cc, *CFLAGS, "-o", str(out), str(src), "-lm"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"gcc failed on the emitted C:\n{proc.stderr[-2000:]}")
        os.replace(out, lib)
    return lib


_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
}


def _scalar_ctype(v):
    t = _CTYPES.get(str(v.dtype))
    if t is None:
        raise InterpError(f"scalar parameter {v.name!r} of type {v.dtype} is not supported by the C engine")
    return t


class CFunction:
    """A compiled PrimFunc: call it like ``interpret`` (one argument per parameter, in place)."""

    def __init__(self, func: PrimFunc, source: str, cfunc):
        self.func = func
        self.source = source
        self._cfunc = cfunc
        self._sig = c_signature(func)

    def __call__(self, *args) -> None:
        func = self.func
        name = func.name or "prim_func"
        if len(args) != len(func.params):
            raise InterpError(f"{name}: expects {len(func.params)} arguments, got {len(args)}")
        ctx = Ctx(where=f"function {name!r}")
        pairs = bind_params(func, args, ctx, name)
        data = {buf: d for buf, (arr, d) in zip(func.buffers, pairs)}
        cargs = [d.flat.ctypes.data_as(ctypes.c_void_p) for d in (data[b] for b in self._sig.buffers)]
        for v in (*self._sig.scalars, *self._sig.shape_vars):
            if v not in ctx.vars:
                raise InterpError(f"{name}: symbolic value {v.name!r} cannot be bound from the arguments")
            cargs.append(_scalar_ctype(v)(ctx.vars[v].item()))
        self._cfunc(*cargs)
        for arr, d in pairs:
            if arr.flags.writeable and not np.shares_memory(arr, d.flat):
                arr[...] = d.view()


def build(func: PrimFunc) -> CFunction:
    """Emit, compile (or reuse) and load ``func``; returns a callable on numpy arrays."""
    from .devectorize import for_engines

    source = emit_c(for_engines(func))  # vector stores and thread launches as loops
    key = hashlib.sha256(source.encode()).hexdigest()
    cfunc = _LOADED.get(key)
    if cfunc is None:
        lib = ctypes.CDLL(str(compile_source(source)))
        cfunc = getattr(lib, c_signature(func).symbol)
        cfunc.restype = None
        _LOADED[key] = cfunc
    return CFunction(func, source, cfunc)
