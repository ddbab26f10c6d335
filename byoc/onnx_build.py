"""Build an ONNX model from a flattened region (recovered ops over named values).

Region inputs become graph inputs (weights included: they are parameters of ``main`` and
arrive at run time); ``R.const`` values become initializers. Each op is converted by
:mod:`byoc.onnx_ops` from its Relax name and attributes.
"""
from __future__ import annotations

import numpy as np

from .region import Region, Unsupported, constant_value

OPSET = 17


class OnnxBuilder:
    """Accumulates ONNX nodes and initializers; names values freshly."""

    def __init__(self, shapes: "dict | None" = None, dtypes: "dict | None" = None):
        import onnx.helper  # noqa: F401  (fail early when onnx is missing)

        self.nodes: list = []
        self.initializers: list = []
        self.shapes = dict(shapes or {})
        self.dtypes = dict(dtypes or {})
        self.stacks: dict = {}
        """value -> (stacked values, axis) for values made by ``stack``."""
        self.count = 0

    def fresh(self, hint: str = "t") -> str:
        self.count += 1
        return f"_{hint}{self.count}"

    def node(self, op_type: str, inputs, output: "str | None" = None, **attributes) -> str:
        """Append one node; returns its (single) output name."""
        from onnx import helper

        out = output or self.fresh(op_type.lower())
        attrs_ = {k: v for k, v in attributes.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs_))
        return out

    def const(self, value, dtype=None) -> str:
        """An initializer holding ``value``."""
        from onnx import numpy_helper

        arr = np.asarray(value, dtype=dtype)
        name = self.fresh("c")
        self.initializers.append(numpy_helper.from_array(arr, name))
        self.shapes[name], self.dtypes[name] = arr.shape, arr.dtype
        return name

    def ints(self, values) -> str:
        """An int64 1-D initializer (shapes, axes, pads given as inputs)."""
        return self.const(np.asarray(list(values), dtype=np.int64))

    def shape(self, name: str) -> "tuple | None":
        return self.shapes.get(name)

    def rank(self, name: str, what: str) -> int:
        s = self.shapes.get(name)
        if s is None:
            raise Unsupported(f"{what}: the rank of its input is unknown")
        return len(s)

    def dtype(self, name: str):
        return self.dtypes.get(name, np.dtype("float32"))

    def transpose(self, name: str, perm) -> str:
        """``name`` transposed by ``perm`` (no node for the identity)."""
        perm = list(perm)
        if perm == sorted(perm):
            return name
        out = self.node("Transpose", [name], perm=perm)
        s = self.shapes.get(name)
        if s is not None:
            self.shapes[out] = tuple(s[p] for p in perm)
        self.dtypes[out] = self.dtype(name)
        return out


def _value_info(name: str, ty, shape):
    from onnx import helper

    from tir.interp_data import np_dtype

    elem = helper.np_dtype_to_tensor_dtype(np_dtype(ty.dtype))
    return helper.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def region_dtypes(region: Region) -> dict:
    from tir.interp_data import np_dtype

    return {n: np_dtype(t.dtype) for n, t in region.types.items() if hasattr(t, "dtype")}


def build_model(region: Region):
    """The ONNX ModelProto computing ``region``; raises Unsupported with the reason."""
    from onnx import helper, numpy_helper

    from tir.interp_data import np_dtype

    from .onnx_ops import convert

    b = OnnxBuilder(region.shapes, {**region.dtypes, **region_dtypes(region)})
    for name, c in region.consts.items():
        arr = constant_value(c, name).astype(np_dtype(c.type.dtype))
        b.initializers.append(numpy_helper.from_array(arr, name))
    for step in region.ops:
        convert(b, step)
    outputs = _unique_outputs(b, region)
    graph = helper.make_graph(
        live_nodes(b.nodes, [o for o, _ in outputs]), region.symbol,
        [_value_info(n, region.types[n], region.shapes.get(n)) for n in region.params],
        [_value_info(o, region.types[n], region.shapes.get(n)) for o, n in outputs],
        initializer=b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="opinfo.byoc")
    model.ir_version = 8
    return model


def live_nodes(nodes: list, outputs: list) -> list:
    """The nodes some output depends on, in their order."""
    needed = set(outputs)
    keep = []
    for node in reversed(nodes):
        if any(o in needed for o in node.output):
            keep.append(node)
            needed.update(node.input)
    return keep[::-1]


def _unique_outputs(b: OnnxBuilder, region: Region) -> list:
    """(graph output name, region value name): an Identity where a name is reused."""
    seen = set(region.params)
    out = []
    for n in region.outputs:
        name = n if n not in seen else b.node("Identity", [n])
        seen.add(name)
        out.append((name, n))
    return out
