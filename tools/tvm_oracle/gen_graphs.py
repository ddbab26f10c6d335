"""Generate model corpus entries like ../shared/corpus/models from synthetic ONNX graphs built
here (architectures the light model zoo lacks: MobileNet-style inverted residuals, a BERT-style
encoder layer with a decomposed GELU, a decomposed layer norm, YOLO-style upsampling, a U-Net
step, squeeze-and-excitation), with sizes and attributes drawn from a seed. Weights are graph
inputs, as in the sample corpus. Usage: gen_graphs.py OUT SEED [NAMES...] (development only)."""
import math
import random
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, shape_inference

from gen_models import emit

F = TensorProto.FLOAT


class Graph:
    def __init__(self, name, rng):
        self.name, self.rng = name, rng
        self.nodes, self.inputs, self.inits, self.n = [], [], [], 0

    def fresh(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def input(self, shape, dtype=F, base="x"):
        name = self.fresh(base)
        self.inputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        return name

    def weight(self, shape):
        return self.input(shape, F, "w")

    def const(self, values, dtype=np.int64):
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.asarray(values, dtype=dtype), name))
        return name

    def scalar(self, value):
        return self.const(np.float32(value), np.float32)

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, outputs):
        g = helper.make_graph(self.nodes, self.name, self.inputs,
                              [helper.make_tensor_value_info(o, F, None) for o in outputs], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m = shape_inference.infer_shapes(m)
        inferred = {v.name: v for v in m.graph.value_info}
        for out in m.graph.output:
            if out.name in inferred:
                out.type.CopyFrom(inferred[out.name].type)
        return m


def conv(g, x, cin, cout, k, s=1, p=None, groups=1, dil=1, bias=True):
    p = k // 2 * dil if p is None else p
    ins = [x, g.weight([cout, cin // groups, k, k])] + ([g.weight([cout])] if bias else [])
    return g.op("Conv", ins, kernel_shape=[k, k], strides=[s, s], pads=[p] * 4, group=groups, dilations=[dil, dil])


def bn(g, x, c):
    return g.op("BatchNormalization", [x] + [g.weight([c]) for _ in range(4)], epsilon=g.rng.choice([1e-5, 1e-3]))


def mobilenet(g):
    r = g.rng
    c, hw = r.choice([8, 16]), r.choice([16, 24, 32])
    x = g.input([1, 3, hw, hw])
    y = g.op("Clip", [bn(g, conv(g, x, 3, c, 3, 2, bias=False), c), g.scalar(0.0), g.scalar(6.0)])
    for stride in (1, r.choice([1, 2])):
        e = c * r.choice([2, 4])
        t = g.op("Clip", [conv(g, y, c, e, 1), g.scalar(0.0), g.scalar(6.0)])
        t = g.op("Clip", [conv(g, t, e, e, 3, stride, groups=e), g.scalar(0.0), g.scalar(6.0)])
        t = conv(g, t, e, c, 1)
        y = g.op("Add", [y, t]) if stride == 1 else t
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])], axis=1)
    y = g.op("Gemm", [y, g.weight([10, c]), g.weight([10])], transB=1)
    return [g.op("Softmax", [y], axis=-1)]


def _gelu_decomposed(g, x):
    e = g.op("Erf", [g.op("Div", [x, g.scalar(math.sqrt(2.0))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [e, g.scalar(1.0)])]), g.scalar(0.5)])


def encoder(g):
    r = g.rng
    s, heads, d = r.choice([4, 8]), r.choice([1, 2]), r.choice([8, 16])
    dm, vocab = heads * d, r.choice([20, 50])
    ids = g.input([1, s], TensorProto.INT64, "ids")
    x = g.op("Gather", [g.weight([vocab, dm]), ids], axis=0)
    x = g.op("Add", [x, g.weight([s, dm])])
    x = g.op("LayerNormalization", [x, g.weight([dm]), g.weight([dm])], axis=-1, epsilon=r.choice([1e-5, 1e-12]))

    def proj(t, n_in, n_out):
        return g.op("Add", [g.op("MatMul", [t, g.weight([n_in, n_out])]), g.weight([n_out])])

    def split_heads(t, perm):
        return g.op("Transpose", [g.op("Reshape", [t, g.const([1, s, heads, d])])], perm=perm)

    q, k, v = (split_heads(proj(x, dm, dm), p) for p in ([0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3]))
    a = g.op("Div", [g.op("MatMul", [q, k]), g.scalar(math.sqrt(d))])
    a = g.op("Softmax", [g.op("Add", [a, g.input([1, 1, 1, s], F, "mask")])], axis=-1)
    o = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [a, v])], perm=[0, 2, 1, 3]), g.const([1, s, dm])])
    x = g.op("Add", [x, proj(o, dm, dm)])
    x = g.op("LayerNormalization", [x, g.weight([dm]), g.weight([dm])], axis=-1, epsilon=1e-5)
    h = _gelu_decomposed(g, proj(x, dm, 2 * dm))
    return [g.op("Add", [x, proj(h, 2 * dm, dm)])]


def layernorm_decomposed(g):
    r = g.rng
    b, s, d = r.choice([1, 2]), r.choice([3, 5]), r.choice([8, 12])
    x = g.input([b, s, d])
    mean = g.op("ReduceMean", [x], axes=[-1], keepdims=1)
    dev = g.op("Sub", [x, mean])
    var = g.op("ReduceMean", [g.op("Pow", [dev, g.scalar(2.0)])], axes=[-1], keepdims=1)
    y = g.op("Div", [dev, g.op("Sqrt", [g.op("Add", [var, g.scalar(r.choice([1e-5, 1e-6]))])])])
    y = g.op("Add", [g.op("Mul", [y, g.weight([d])]), g.weight([d])])
    y = g.op("Tanh", [y])
    half = d // 2
    left = g.op("Slice", [y, g.const([0]), g.const([half]), g.const([2])])
    right = g.op("Slice", [y, g.const([half]), g.const([d]), g.const([2])])
    y = g.op("Concat", [right, left], axis=-1)
    parts = g.op("Split", [y, g.const([half, d - half])], n_out=2, axis=2)
    m = g.op("Greater", [parts[0], g.scalar(0.0)])
    w = g.op("Where", [m, parts[0], g.op("Neg", [parts[0]])])
    return [g.op("ReduceMax", [w], axes=[1], keepdims=0), g.op("Sigmoid", [parts[1]])]


def yolo(g):
    r = g.rng
    c, hw = r.choice([4, 8]), r.choice([8, 12, 16])
    x = g.input([1, 3, hw, hw])
    a = g.op("LeakyRelu", [bn(g, conv(g, x, 3, c, 3, bias=False), c)], alpha=0.1)
    b = g.op("MaxPool", [a], kernel_shape=[2, 2], strides=[2, 2])
    b = g.op("LeakyRelu", [conv(g, b, c, 2 * c, 3)], alpha=r.choice([0.1, 0.2]))
    up = g.op("Resize", [b, "", g.const([1.0, 1.0, 2.0, 2.0], np.float32)], mode="nearest",
              coordinate_transformation_mode=r.choice(["asymmetric", "half_pixel"]), nearest_mode="floor")
    y = g.op("Concat", [up, a], axis=1)
    y = conv(g, y, 3 * c, 6, 1)
    return [g.op("Mul", [g.op("Sigmoid", [y]), y])]


def unet(g):
    r = g.rng
    c, hw = r.choice([4, 8]), r.choice([8, 16])
    x = g.input([1, c, hw, hw])
    a = g.op("Relu", [conv(g, x, c, 2 * c, 3)])
    b = g.op("MaxPool", [a], kernel_shape=[2, 2], strides=[2, 2])
    b = g.op("Relu", [conv(g, b, 2 * c, 2 * c, 3)])
    u = g.op("ConvTranspose", [b, g.weight([2 * c, c, 2, 2]), g.weight([c])], kernel_shape=[2, 2], strides=[2, 2])
    y = g.op("Concat", [u, a], axis=1)
    y = conv(g, y, 3 * c, c, 3)
    y = g.op("InstanceNormalization", [y, g.weight([c]), g.weight([c])], epsilon=1e-5)
    y = g.op("Relu", [y])
    return [g.op("AveragePool", [y], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                 count_include_pad=r.choice([0, 1]))]


def se_block(g):
    r = g.rng
    c, hw = r.choice([8, 16]), r.choice([7, 14])
    x = g.input([1, c, hw, hw])
    y = g.op("Relu", [bn(g, conv(g, x, c, c, 3, bias=False), c)])
    s = g.op("GlobalAveragePool", [y])
    s = g.op("Relu", [conv(g, s, c, c // 4, 1)])
    s = g.op("HardSigmoid", [conv(g, s, c // 4, c, 1)], alpha=0.2, beta=0.5) if r.random() < 0.5 \
        else g.op("Sigmoid", [conv(g, s, c // 4, c, 1)])
    y = g.op("Relu", [g.op("Add", [g.op("Mul", [y, s]), x])])
    y = g.op("Transpose", [y], perm=[0, 2, 3, 1])
    y = g.op("Reshape", [y, g.const([1, hw * hw, c])])
    return [g.op("ReduceSum", [y, g.const([1])], keepdims=1)]


def vision_misc(g):
    r = g.rng
    c, hw = r.choice([4, 6]), r.choice([8, 12])
    x = g.input([1, c, hw, hw])
    y = g.op("Pad", [x, g.const([0, 0, 1, 1, 0, 0, 1, 1]), g.scalar(0.0)], mode=r.choice(["constant", "reflect", "edge"]))
    y = g.op("PRelu", [conv(g, y, c, c, 3, p=0), g.weight([c, 1, 1])])
    y = g.op("LRN", [y], size=3, alpha=1e-4, beta=0.75, bias=1.0)
    y = g.op("GlobalMaxPool", [y]) if r.random() < 0.3 else g.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = g.op("HardSwish", [y]) if r.random() < 0.5 else g.op("Elu", [y], alpha=1.0)
    y = g.op("Resize", [y, "", g.const([1.0, 1.0, 2.0, 2.0], np.float32)], mode="linear",
             coordinate_transformation_mode=r.choice(["half_pixel", "align_corners", "asymmetric"]))
    y = g.op("DepthToSpace", [g.op("Tile", [y, g.const([1, 4, 1, 1])])], blocksize=2, mode="DCR")
    y = g.op("LogSoftmax", [y], axis=1)
    return [g.op("ArgMax", [y], axis=1, keepdims=0), g.op("ReduceL2", [y], axes=[2, 3], keepdims=1)]


def sequence_misc(g):
    r = g.rng
    b, s, d = 2, r.choice([4, 6]), r.choice([4, 8])
    x = g.input([b, s, d])
    y = g.op("Softplus", [x]) if r.random() < 0.5 else g.op("Softsign", [x])
    y = g.op("Unsqueeze", [y, g.const([1])])
    y = g.op("Expand", [y, g.const([b, 3, s, d])])
    y = g.op("Reshape", [y, g.const([b * 3, s, d])])
    y = g.op("Slice", [y, g.const([s - 1]), g.const([-s - 1]), g.const([1]), g.const([-1])])
    y = g.op("CumSum", [y, g.const(1)]) if r.random() < 0.3 else g.op("Abs", [y])
    z = g.op("Gemm", [g.op("Reshape", [y, g.const([b * 3 * s, d])]), g.weight([d, d]), g.weight([d])],
             alpha=r.choice([1.0, 0.5]), beta=1.0)
    z = g.op("Reshape", [z, g.const([b * 3, s, d])])
    z = g.op("Einsum", [z, g.weight([d, d])], equation="bsd,de->bse") if r.random() < 0.3 else g.op("Exp", [z])
    m = g.op("Trilu", [g.weight([s, s])], upper=r.choice([0, 1]))
    z = g.op("Add", [g.op("MatMul", [m, z]), g.op("Cast", [g.input([b * 3, s, d], TensorProto.INT32, "ids")], to=F)])
    z = g.op("Squeeze", [g.op("ReduceMin", [z, g.const([2])], keepdims=1), g.const([2])])
    return [g.op("Mod", [g.op("Cast", [z], to=TensorProto.INT32), g.const(np.int32(3), np.int32)], fmod=0)]


BUILDERS = {"mobilenet": mobilenet, "encoder": encoder, "layernorm_decomposed": layernorm_decomposed,
            "yolo": yolo, "unet": unet, "se_block": se_block, "vision_misc": vision_misc,
            "sequence_misc": sequence_misc}


if __name__ == "__main__":
    out_dir, seed = sys.argv[1], int(sys.argv[2])
    for name in sys.argv[3:] or list(BUILDERS):
        g = Graph(name, random.Random(f"{seed}-{name}"))
        outputs = BUILDERS[name](g)
        try:
            emit(g.model(outputs), f"{name}_{seed}", out_dir, f"synthetic ONNX graph {name}, seed {seed}")
        except Exception as e:  # a graph TVM's frontend cannot import: say so, go on
            print("SKIP", name, type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "", file=sys.stderr)
