"""The ``onnxruntime`` backend: a region becomes an ONNX model run by an ONNX Runtime session.

The model is rebuilt from the region's recovered ops and attributes (never from the loops),
so what runs in ONNX Runtime is exactly what opinfo claims the PrimFuncs compute. Every
value entering the region, weights included, is an input of the ONNX graph and is passed
at each call: weights are parameters of ``main`` (they arrive at run time, like TVM
without ``bind_params``); only ``R.const`` values are baked in as initializers.
"""
from __future__ import annotations

import attrs

from .backend import ExternalModule
from .onnx_ops import check as onnx_check
from .pattern import is_op, wildcard

_CONVS = ("nn.conv1d", "nn.conv2d", "nn.conv3d")
_ACTS = ("nn.relu", "nn.relu6", "clip", "sigmoid", "nn.silu", "nn.leakyrelu")


def _any_of(names):
    return is_op().where(lambda info: info.name in names)


def conv_patterns(prefix: str) -> list:
    """conv -> [bias add] -> [batch_norm] -> [activation], the longest chain first."""
    conv = _any_of(_CONVS)(wildcard(), wildcard())
    biased = conv.optional(lambda x: is_op("add")(x, wildcard()))
    normed = biased.optional(lambda x: is_op("nn.batch_norm")(x, wildcard(), wildcard(), wildcard(), wildcard()))
    act = normed.optional(lambda x: _any_of(_ACTS)(x))
    dense = is_op("matmul")(wildcard(), wildcard()).optional(lambda x: is_op("add")(x, wildcard()))
    return [(f"{prefix}.conv_bn_act", act), (f"{prefix}.matmul_add", dense)]


@attrs.frozen
class OnnxRuntimeBackend:
    """Offload to ONNX Runtime (CPU execution provider)."""

    name: str = "onnxruntime"
    threads: int = 0
    """intra-op threads of each session (0: ONNX Runtime's default)."""

    def check(self, op) -> "str | None":
        """Why ``op`` cannot be offloaded (attribute predicates per op), or None."""
        return onnx_check(op)

    def patterns(self) -> list:
        return conv_patterns(self.name)

    def codegen(self, mod, func_name: str, analyze=None) -> ExternalModule:
        """An ONNX model for ``mod[func_name]``, run lazily in an InferenceSession."""
        from .onnx_build import build_model
        from .region import flatten

        region = flatten(mod, func_name, analyze)
        model = build_model(region)
        return ExternalModule(func_name, self.name, _SessionFn(model.SerializeToString(), len(region.params),
                                                               self.threads), model)


class _SessionFn:
    """Calls an ONNX model with the region's inputs; the session is created on first use."""

    def __init__(self, model_bytes: bytes, n_inputs: int, threads: int):
        self.model_bytes = model_bytes
        self.n_inputs = n_inputs
        self.threads = threads
        self.session = None
        self.names = None

    def _open(self):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if self.threads:
            opts.intra_op_num_threads = self.threads
        self.session = ort.InferenceSession(self.model_bytes, opts, providers=["CPUExecutionProvider"])
        self.names = [i.name for i in self.session.get_inputs()]

    def __call__(self, *args):
        if self.session is None:
            self._open()
        feeds = dict(zip(self.names, args[: self.n_inputs]))
        return self.session.run(None, feeds)
