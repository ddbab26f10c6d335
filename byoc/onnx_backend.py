"""The ``onnxruntime`` backend: a region becomes an ONNX model run by an ONNX Runtime session.

The model is rebuilt from the region's recovered ops and attributes (never from the loops),
so what runs in ONNX Runtime is exactly what opinfo claims the PrimFuncs compute.

Weights: every value entering the region is an input of the ONNX graph. Weights are
parameters of ``main`` (after its ``num_input`` inputs), so they arrive at run time; with
``bake_weights`` (the default) the external function turns them into initializers at its
first call and reuses that session while the same weight arrays are passed again (a
different array object rebuilds the session; changing a weight array in place between
calls is not detected). Baked weights let ONNX Runtime pre-pack convolution kernels and
fold batch norms, as it does for the original model. ``R.const`` values are always
initializers. With ``bake_weights=False`` weights are fed at every call.
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
    bake_weights: bool = True
    """Make weight parameters initializers at the first call (see the module docstring)."""

    def check(self, op) -> "str | None":
        """Why ``op`` cannot be offloaded (attribute predicates per op), or None."""
        return onnx_check(op)

    def patterns(self) -> list:
        return conv_patterns(self.name)

    def check_function(self, mod, func_name: str, analyze=None) -> "str | None":
        """Why the graph function ``mod[func_name]`` cannot become an ONNX model, or None."""
        from .onnx_build import build_model
        from .region import Unsupported, flatten

        try:
            build_model(flatten(mod, func_name, analyze))
        except Unsupported as err:
            return str(err)
        return None

    def codegen(self, mod, func_name: str, analyze=None) -> ExternalModule:
        """An ONNX model for ``mod[func_name]``, run lazily in an InferenceSession."""
        from .onnx_build import build_model
        from .region import flatten

        region = flatten(mod, func_name, analyze)
        model = build_model(region)
        weights = weight_positions(mod, func_name) if self.bake_weights else ()
        fn = _SessionFn(model, len(region.params), self.threads, weights)
        return ExternalModule(func_name, self.name, fn, model)


def weight_positions(mod, func_name: str) -> tuple:
    """Positions of the arguments of main's call of ``func_name`` that are weight parameters."""
    from tir import relax as R

    from .graph import input_count

    main = mod.main
    weights = set(main.params[input_count(main):])
    for b in main.bindings:
        v = b.value
        name = v.func if isinstance(v, R.CallDPSPacked) else getattr(getattr(v, "func", None), "name", None)
        if name == func_name and isinstance(v, (R.Call, R.CallDPSPacked)):
            return tuple(i for i, a in enumerate(v.args) if a in weights)
    return ()


class _SessionFn:
    """Calls an ONNX model with the region's inputs; the session is created on first use,
    with the weight inputs baked as initializers (rebuilt when other weight arrays come)."""

    def __init__(self, model, n_inputs: int, threads: int, weights: tuple = ()):
        self.model = model
        self.n_inputs = n_inputs
        self.threads = threads
        self.weights = weights
        self.baked: tuple = ()
        self.session = None
        self.names = None

    def _open(self, args):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Several sessions take turns in one graph: idle pool threads must not spin and
        # steal the cores from the session that runs next.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3  # errors only: unused-initializer notes are noise to a user
        if self.threads:
            opts.intra_op_num_threads = self.threads
        model = _with_initializers(self.model, {i: args[i] for i in self.weights})
        self.session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        self.names = [i.name for i in self.session.get_inputs()]
        self.baked = tuple(args[i] for i in self.weights)

    def __call__(self, *args):
        if self.session is None or any(args[i] is not w for i, w in zip(self.weights, self.baked)):
            self._open(args)
        weights = set(self.weights)
        fed = [a for i, a in enumerate(args[: self.n_inputs]) if i not in weights]
        return self.session.run(None, dict(zip(self.names, fed)))


def _with_initializers(model, values: dict):
    """A copy of ``model`` whose graph inputs at the given positions are initializers."""
    if not values:
        return model
    import onnx
    from onnx import numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    inputs = list(out.graph.input)
    del out.graph.input[:]
    for i, vi in enumerate(inputs):
        if i in values:
            out.graph.initializer.append(numpy_helper.from_array(values[i], vi.name))
        else:
            out.graph.input.append(vi)
    return out
