"""The ``c`` backend: a region becomes one C function compiled into one shared library.

Like TVM's ``ccompiler`` example: the region's PrimFuncs are emitted with the project's C
emitter (:func:`tir.codegen_c.emit_c`) into one source, followed by one entry function
``void <symbol>(void **args)`` that calls them in dataflow order, holding the values
between them in ``malloc``'d temporaries. Arguments are the region's inputs then its
outputs, each a pointer to a C-contiguous array. Only static shapes and PrimFuncs without
scalar parameters are taken (anything else stays in TIR, with the reason).
"""
from __future__ import annotations

import ctypes

import attrs
import numpy as np

from .backend import ExternalModule
from .onnx_backend import conv_patterns
from .region import Region, Unsupported, constant_value


@attrs.frozen
class CBackend:
    """Offload regions to one compiled C function each."""

    name: str = "c"

    def check(self, op) -> "str | None":
        """Every recognised op: the C code is the PrimFuncs' own."""
        return None

    def patterns(self) -> list:
        return conv_patterns(self.name)

    def check_function(self, mod, func_name: str, analyze=None) -> "str | None":
        """Why the graph function ``mod[func_name]`` cannot become C code (its source is
        emitted, not compiled), or None: checked per unit, before units merge into regions,
        so one refusal does not keep a whole region in TIR."""
        from .region import flatten

        try:
            region_source(mod, flatten(mod, func_name, analyze))
        except Unsupported as err:
            return str(err)
        return None

    def codegen(self, mod, func_name: str, analyze=None) -> ExternalModule:
        """Emit and compile the region ``mod[func_name]``."""
        from tir.codegen_c_build import compile_source

        from .region import flatten

        region = flatten(mod, func_name, analyze)
        source = region_source(mod, region)
        lib = ctypes.CDLL(str(compile_source(source)))
        cfunc = getattr(lib, _c_name(func_name))
        cfunc.restype = None
        cfunc.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        dtypes = [_np_dtype(region.types[n]) for n in (*region.params, *region.outputs)]
        return ExternalModule(func_name, self.name, _CCall(cfunc, dtypes, len(region.params)), source)


def _c_name(symbol: str) -> str:
    return "byoc_" + "".join(c if c.isalnum() else "_" for c in symbol)


def _np_dtype(ty):
    from tir.interp_data import np_dtype

    return np_dtype(ty.dtype)


def _without_prelude(source: str, prelude: str) -> str:
    return source[len(prelude):] if source.startswith(prelude) else source


def _static_buffers(func, name: str) -> list:
    """(C type, element count) of each buffer parameter; refuses scalars and symbolic shapes."""
    from tir.codegen_c import c_signature
    from tir.codegen_c_expr import c_type
    from tir.expr import as_int

    sig = c_signature(func)
    if sig.scalars or sig.shape_vars:
        raise Unsupported(f"{name}: scalar parameters or symbolic shapes are not taken by the c backend")
    out = []
    for buf in sig.buffers:
        dims = [as_int(d) for d in buf.shape]
        if any(d is None for d in dims):
            raise Unsupported(f"{name}: buffer {buf.name!r} has a symbolic shape")
        out.append((c_type(buf.dtype), int(np.prod(dims, dtype=np.int64))))
    return out


def region_source(mod, region: Region) -> str:
    """C source of the region's PrimFuncs plus its entry function."""
    from tir.codegen_c import c_signature, emit_c
    from tir.codegen_c_expr import prelude

    pre = prelude()
    parts, emitted, body = [pre], set(), []
    names = (*region.params, *region.outputs)
    if len(set(names)) != len(names):
        raise Unsupported(f"{region.symbol}: a region output repeats an input or another output")
    ptr = {n: f"a{i}" for i, n in enumerate(names)}
    for k, (name, const) in enumerate(region.consts.items()):
        ptr[name] = f"k{k}"
        parts.append(_const_array(f"k{k}", name, const))
    temps = []
    for k, call in enumerate(region.calls):
        # the module's name, not the PrimFunc's global_symbol (legalized ones all say "main")
        func = mod[call.func].with_attr("global_symbol", call.func)
        bufs = _static_buffers(func, call.func)
        if call.func not in emitted:
            emitted.add(call.func)
            parts.append(_without_prelude(emit_c(func), pre))
        for j, name in enumerate(call.outputs):
            if name not in ptr:
                ctype, count = bufs[len(call.inputs) + j]
                ptr[name] = f"t{k}_{j}"
                temps.append(ptr[name])
                body.append(f"  {ctype}* {ptr[name]} = ({ctype}*)malloc(sizeof({ctype}) * {max(count, 1)});")
        args = [f"({bufs[i][0]}*){ptr[n]}" for i, n in enumerate((*call.inputs, *call.outputs))]
        body.append(f"  {c_signature(func).symbol}({', '.join(args)});")
    body += [f"  free({t});" for t in temps]
    head = [f"  void* a{i} = args[{i}];" for i in range(len(names))]
    entry = "\n".join([f"void {_c_name(region.symbol)}(void** args) {{", *head, *body, "}"])
    return "\n".join(parts + ["#include <stdlib.h>", entry]) + "\n"


def _const_array(c_name: str, name: str, const) -> str:
    """A graph constant of the region as a static C array (its exact values)."""
    from tir.codegen_c_expr import c_type, literal
    from tir.dtype import dtype

    values = constant_value(const, name).ravel()
    d = dtype(const.type.dtype)
    if d.is_float and d.bits not in (32, 64):
        raise Unsupported(f"constant {const.ref or name}: {d} constants are not taken by the c backend")
    body = ", ".join(literal(v, d) for v in values.tolist()) or literal(0, d)
    return f"static const {c_type(d)} {c_name}[{max(values.size, 1)}] = {{{body}}};"


class _CCall:
    """Calls the compiled entry with inputs then preallocated outputs (filled in place)."""

    def __init__(self, cfunc, dtypes: list, n_inputs: int):
        self.cfunc = cfunc
        self.dtypes = dtypes
        self.n_inputs = n_inputs

    def __call__(self, *args):
        if len(args) != len(self.dtypes):
            raise ValueError(f"expected {len(self.dtypes)} arrays (inputs then outputs), got {len(args)}")
        arrays = [np.ascontiguousarray(a, dtype=d) for a, d in zip(args, self.dtypes)]
        ptrs = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
        self.cfunc(ptrs)
        outs = arrays[self.n_inputs:]
        for given, filled in zip(args[self.n_inputs:], outs):
            if given is not filled:
                given[...] = filled
        return None
