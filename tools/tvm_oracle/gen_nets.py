"""More synthetic ONNX networks of families the CNN zoo and gen_graphs.py lack: a ViT block
(patch-embedding conv, class token, pre-norm attention with a Where mask, native Gelu), a
MobileNetV3 + MLP-mixer block (depthwise conv, HardSwish, SE with HardSigmoid, token-mixing
MatMul, tanh-form GELU), an FPN/YOLO-style detection head (Resize by sizes, Slice with steps,
Sigmoid/Exp decoding, Split, Gather, Expand, Tile, TopK-free score selection), a 1-D conv
sequence model (Conv1d, BatchNormalization, Pad, InstanceNormalization, LeakyRelu, PRelu, Selu,
Softplus, pools, ConvTranspose1d, ArgMax, Cast), a recommender (embedding Gathers, feature
crosses, Sum/Max/Mean of several inputs) and a 3-D conv video block. Sizes and attributes come
from the seed; weights are graph inputs. Same import and legalization as gen_models.py (emit).
Usage: gen_nets.py OUT SEED [NAMES...] (development only)."""
import math
import random
import sys

import numpy as np
from onnx import TensorProto, helper, shape_inference

from gen_graphs import Graph, bn, conv
from gen_models import emit

F = TensorProto.FLOAT


class Net(Graph):
    opset = 20

    def model(self, outputs):
        g = helper.make_graph(self.nodes, self.name, self.inputs,
                              [helper.make_tensor_value_info(o, F, None) for o in outputs], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])
        m = shape_inference.infer_shapes(m)
        inferred = {v.name: v for v in m.graph.value_info}
        for out in m.graph.output:
            if out.name in inferred:
                out.type.CopyFrom(inferred[out.name].type)
        return m


def _gelu_tanh(g, x):
    c = g.op("Mul", [g.op("Pow", [x, g.scalar(3.0)]), g.scalar(0.044715)])
    t = g.op("Tanh", [g.op("Mul", [g.op("Add", [x, c]), g.scalar(math.sqrt(2.0 / math.pi))])])
    return g.op("Mul", [g.op("Mul", [x, g.scalar(0.5)]), g.op("Add", [t, g.scalar(1.0)])])


def vit(g):
    r = g.rng
    b, p, hw = r.choice([1, 2]), r.choice([2, 4]), r.choice([8, 16])
    heads, d = r.choice([1, 2, 4]), r.choice([4, 8])
    dm, n = heads * d, (hw // p) ** 2
    x = g.input([b, 3, hw, hw])
    t = conv(g, x, 3, dm, p, s=p, p=0)
    t = g.op("Transpose", [g.op("Reshape", [t, g.const([b, dm, n])])], perm=[0, 2, 1])
    cls = g.op("Expand", [g.weight([1, 1, dm]), g.const([b, 1, dm])])
    t = g.op("Concat", [cls, t], axis=1)
    s = n + 1
    t = g.op("Add", [t, g.weight([1, s, dm])])
    h = g.op("LayerNormalization", [t, g.weight([dm]), g.weight([dm])], axis=-1, epsilon=r.choice([1e-6, 1e-5]))
    qkv = g.op("Add", [g.op("MatMul", [h, g.weight([dm, 3 * dm])]), g.weight([3 * dm])])
    q, k, v = g.op("Split", [qkv, g.const([dm, dm, dm])], n_out=3, axis=-1)

    def heads_of(u, perm):
        return g.op("Transpose", [g.op("Reshape", [u, g.const([b, s, heads, d])])], perm=perm)

    q, k, v = heads_of(q, [0, 2, 1, 3]), heads_of(k, [0, 2, 3, 1]), heads_of(v, [0, 2, 1, 3])
    a = g.op("Mul", [g.op("MatMul", [q, k]), g.scalar(1.0 / math.sqrt(d))])
    mask = g.input([b, 1, 1, s], TensorProto.INT64, "mask")
    a = g.op("Where", [g.op("Equal", [mask, g.const(0)]), g.scalar(-1e9), a])
    a = g.op("Softmax", [a], axis=-1)
    o = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [a, v])], perm=[0, 2, 1, 3]), g.const([b, s, dm])])
    t = g.op("Add", [t, g.op("Add", [g.op("MatMul", [o, g.weight([dm, dm])]), g.weight([dm])])])
    h = g.op("LayerNormalization", [t, g.weight([dm]), g.weight([dm])], axis=-1, epsilon=1e-6)
    h = g.op("Gelu", [g.op("MatMul", [h, g.weight([dm, 2 * dm])])], approximate=r.choice(["none", "tanh"]))
    t = g.op("Add", [t, g.op("MatMul", [h, g.weight([2 * dm, dm])])])
    c = g.op("Gather", [t, g.const(0)], axis=1)
    return [g.op("Gemm", [c, g.weight([10, dm]), g.weight([10])], transB=1)]


def mbv3_mixer(g):
    r = g.rng
    c, hw = r.choice([8, 16]), r.choice([16, 24])
    x = g.input([1, 3, hw, hw])
    y = g.op("HardSwish", [bn(g, conv(g, x, 3, c, 3, 2, bias=False), c)])
    k, st = r.choice([3, 5]), r.choice([1, 2])
    dw = g.op("HardSwish", [bn(g, conv(g, y, c, c, k, st, groups=c, bias=False), c)])
    side = (hw // 2 - 1) // st + 1
    s = g.op("GlobalAveragePool", [dw])
    s = g.op("Relu", [conv(g, s, c, c // 4, 1)])
    s = g.op("HardSigmoid", [conv(g, s, c // 4, c, 1)], alpha=1.0 / 6, beta=0.5)
    y = g.op("Mul", [dw, s])
    y = g.op("Clip", [conv(g, y, c, c, 1), g.scalar(0.0), g.scalar(r.choice([6.0, 4.0]))])
    # tokens: (1, C, H, W) -> (1, H*W, C)
    y = g.op("Reshape", [y, g.const(r.choice([[1, c, -1], [0, 0, -1]]))])
    tok = g.op("Transpose", [y], perm=[0, 2, 1])
    return _mixer(g, tok, c, side * side)


def _mixer(g, tok, c, n):
    r = g.rng
    # token count comes from shape inference at build time: read it from the nodes built so far
    h = g.op("LayerNormalization", [tok, g.weight([c]), g.weight([c])], axis=-1, epsilon=1e-5)
    h = g.op("Transpose", [h], perm=[0, 2, 1])
    h = _gelu_tanh(g, g.op("MatMul", [h, g.weight([n, n])]))
    tok = g.op("Add", [tok, g.op("Transpose", [g.op("MatMul", [h, g.weight([n, n])])], perm=[0, 2, 1])])
    h = g.op("LayerNormalization", [tok, g.weight([c]), g.weight([c])], axis=-1, epsilon=1e-5)
    h = g.op("Gelu", [g.op("MatMul", [h, g.weight([c, 2 * c])])])
    tok = g.op("Add", [tok, g.op("MatMul", [h, g.weight([2 * c, c])])])
    y = g.op("ReduceMean", [tok, g.const([1])], keepdims=0) if r.random() < 0.5 \
        else g.op("Flatten", [g.op("GlobalAveragePool", [g.op("Transpose", [tok], perm=[0, 2, 1])])], axis=1)
    y = g.op("Gemm", [y, g.weight([c, 5]), g.weight([5])], alpha=r.choice([1.0, 0.5]))
    return [g.op("LogSoftmax", [y], axis=-1)]


def det_head(g):
    r = g.rng
    c, hw, a, nc = r.choice([4, 8]), r.choice([8, 16]), r.choice([2, 3]), r.choice([2, 4])
    p3 = g.input([1, c, hw, hw])
    p4 = g.input([1, 2 * c, hw // 2, hw // 2])
    l4 = conv(g, p4, 2 * c, c, 1)
    if r.random() < 0.5:
        up = g.op("Resize", [l4, "", "", g.const([1, c, hw, hw])], mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode=r.choice(["floor", "round_prefer_floor"]))
    else:
        up = g.op("Resize", [l4, "", g.const([1.0, 1.0, 2.0, 2.0], np.float32)], mode="linear",
                  coordinate_transformation_mode=r.choice(["half_pixel", "align_corners", "asymmetric"]))
    f = g.op("Add", [conv(g, p3, c, c, 1), up])
    f = g.op("Relu", [conv(g, f, c, c, 3)])
    f = g.op("Concat", [f, g.op("MaxPool", [f], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])], axis=1)
    o = conv(g, f, 2 * c, a * (5 + nc), 1)
    o = g.op("Reshape", [o, g.const([1, a, 5 + nc, hw * hw])])
    o = g.op("Transpose", [o], perm=[0, 1, 3, 2])  # (1, A, HW, 5+nc)
    xy = g.op("Sigmoid", [g.op("Slice", [o, g.const([0]), g.const([2]), g.const([3])])])
    wh = g.op("Slice", [o, g.const([2]), g.const([4]), g.const([3])])
    rest = g.op("Slice", [o, g.const([4]), g.const([5 + nc]), g.const([3])])
    grid = g.op("Tile", [g.weight([1, 1, hw, 2]), g.const([1, 1, hw, 1])])
    xy = g.op("Mul", [g.op("Add", [g.op("Mul", [xy, g.scalar(2.0)]), grid]), g.scalar(8.0)])
    anchors = g.op("Expand", [g.weight([1, a, 1, 2]), g.const([1, a, hw * hw, 2])])
    wh = g.op("Mul", [g.op("Exp", [wh]), anchors])
    conf, cls = g.op("Split", [g.op("Sigmoid", [rest]), g.const([1, nc])], n_out=2, axis=3)
    score = g.op("Mul", [conf, cls])
    best = g.op("ReduceMax", [score, g.const([3])], keepdims=1)
    label = g.op("Cast", [g.op("ArgMax", [score], axis=3, keepdims=1)], to=F)
    boxes = g.op("Concat", [g.op("Sub", [xy, g.op("Div", [wh, g.scalar(2.0)])]),
                            g.op("Add", [xy, g.op("Div", [wh, g.scalar(2.0)])]), best, label], axis=3)
    boxes = g.op("Reshape", [boxes, g.const([1, a * hw * hw, 6])])
    even = g.op("Slice", [boxes, g.const([0]), g.const([a * hw * hw]), g.const([1]), g.const([2])])
    idx = g.const(np.array(sorted(r.sample(range(a * hw * hw // 2), 4))))
    return [g.op("Gather", [even, idx], axis=1), g.op("ReduceSum", [boxes, g.const([1])], keepdims=0)]


def seq_conv1d(g):
    r = g.rng
    b, c, L = r.choice([1, 2]), r.choice([4, 8]), r.choice([16, 20])
    x = g.input([b, c, L])

    def conv1(t, cin, cout, k, s=1, p=None, groups=1, dil=1):
        p = k // 2 * dil if p is None else p
        return g.op("Conv", [t, g.weight([cout, cin // groups, k]), g.weight([cout])], kernel_shape=[k],
                    strides=[s], pads=[p, p], group=groups, dilations=[dil])

    y = g.op("Pad", [x, g.const([0, 0, 2, 0, 0, 2])], mode=r.choice(["reflect", "edge", "constant"]))
    y = conv1(y, c, 2 * c, 5, p=0)
    y = g.op("BatchNormalization", [y] + [g.weight([2 * c]) for _ in range(4)], epsilon=1e-5)
    y = g.op("LeakyRelu", [y], alpha=r.choice([0.01, 0.2]))
    y = conv1(y, 2 * c, 2 * c, 3, dil=r.choice([1, 2]), groups=r.choice([1, 2]))
    y = g.op("InstanceNormalization", [y, g.weight([2 * c]), g.weight([2 * c])], epsilon=r.choice([1e-5, 1e-3]))
    y = g.op("PRelu", [y, g.weight([2 * c, 1])])
    y = g.op("MaxPool", [y], kernel_shape=[2], strides=[2]) if r.random() < 0.5 \
        else g.op("AveragePool", [y], kernel_shape=[3], strides=[2], pads=[1, 1], count_include_pad=r.choice([0, 1]))
    y = g.op("Selu", [conv1(y, 2 * c, c, 3, s=r.choice([1, 2]))])
    y = g.op("ConvTranspose", [y, g.weight([c, c, 2]), g.weight([c])], kernel_shape=[2], strides=[2])
    y = g.op("Softplus", [y])
    s = g.op("ReduceSum", [y, g.const([2])], keepdims=1)
    m = g.op("ReduceMax", [y, g.const([1])], keepdims=0)
    am = g.op("Cast", [g.op("ArgMax", [y], axis=2, keepdims=0)], to=TensorProto.INT32)
    z = g.op("Mul", [y, g.op("Sigmoid", [s])])
    z = g.op("Div", [z, g.op("Add", [g.op("Unsqueeze", [m, g.const([1])]), g.scalar(1.0)])])
    return [z, am, g.op("ReduceMean", [z, g.const([1, 2])], keepdims=0)]


def recsys(g):
    r = g.rng
    b, e, f = r.choice([2, 4]), r.choice([4, 8]), r.choice([2, 3])
    embs = []
    for _ in range(f):
        ids = g.input([b], TensorProto.INT64, "ids")
        embs.append(g.op("Gather", [g.weight([r.choice([10, 30]), e]), ids], axis=0))
    bag = g.input([b, 3], TensorProto.INT64, "bag")
    pooled = g.op("ReduceMean", [g.op("Gather", [g.weight([20, e]), bag], axis=0), g.const([1])], keepdims=0)
    embs.append(pooled)
    dense = g.input([b, 5])
    dense = g.op("Log", [g.op("Add", [g.op("Clip", [dense, g.scalar(0.0)]), g.scalar(1.0)])])
    bot = g.op("Relu", [g.op("Gemm", [dense, g.weight([5, e]), g.weight([e])])])
    embs.append(bot)
    stack = g.op("Concat", [g.op("Unsqueeze", [t, g.const([1])]) for t in embs], axis=1)  # (b, f+2, e)
    inter = g.op("MatMul", [stack, g.op("Transpose", [stack], perm=[0, 2, 1])])
    sq = g.op("ReduceSumSquare", [stack, g.const([1])], keepdims=0)
    sm = g.op("ReduceSum", [stack, g.const([1])], keepdims=0)
    fm = g.op("Mul", [g.op("Sub", [g.op("Mul", [sm, sm]), sq]), g.scalar(0.5)])
    top = g.op("Concat", [g.op("Flatten", [inter], axis=1), fm, bot], axis=1)
    k = (f + 2) ** 2 + 2 * e
    h = g.op("Relu", [g.op("Gemm", [top, g.weight([k, 8]), g.weight([8])])])
    o = g.op(r.choice(["Sum", "Max", "Mean", "Min"]), [h, g.op("Neg", [h]), g.weight([8])])
    o = g.op("Sigmoid", [g.op("Gemm", [o, g.weight([1, 8]), g.weight([1])], transB=1)])
    return [o, g.op("Where", [g.op("Greater", [o, g.scalar(0.5)]), g.scalar(1.0), g.scalar(0.0)])]


def video3d(g):
    r = g.rng
    c, t, hw = r.choice([3, 4]), r.choice([4, 8]), r.choice([8, 12])
    x = g.input([1, c, t, hw, hw])
    y = g.op("Conv", [x, g.weight([8, c, 3, 3, 3])], kernel_shape=[3, 3, 3], strides=[1, 2, 2], pads=[1] * 6)
    y = g.op("Relu", [g.op("BatchNormalization", [y] + [g.weight([8]) for _ in range(4)], epsilon=1e-3)])
    y = g.op("MaxPool", [y], kernel_shape=[1, 3, 3], strides=[1, 2, 2], pads=[0, 1, 1, 0, 1, 1])
    y = g.op("Conv", [y, g.weight([8, 1, 3, 1, 1]), g.weight([8])], kernel_shape=[3, 1, 1], pads=[1, 0, 0, 1, 0, 0], group=8)
    y = g.op("Elu", [y], alpha=1.0) if r.random() < 0.5 else g.op("Mish", [y])
    y = g.op("AveragePool", [y], kernel_shape=[2, 2, 2], strides=[2, 2, 2])
    y = g.op("GlobalAveragePool", [y]) if r.random() < 0.5 else g.op("GlobalMaxPool", [y])
    y = g.op("Flatten", [y], axis=1)
    return [g.op("Softmax", [g.op("Gemm", [y, g.weight([8, 4]), g.weight([4])])], axis=1)]


def gpt_block(g):
    r = g.rng
    b, s, heads, d = r.choice([1, 2]), r.choice([4, 6]), r.choice([1, 2]), r.choice([4, 8])
    dm = heads * d
    x = g.input([b, s, dm])
    # RMS norm, decomposed
    ms = g.op("ReduceMean", [g.op("Mul", [x, x]), g.const([-1])], keepdims=1)
    h = g.op("Mul", [g.op("Mul", [x, g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [ms, g.scalar(1e-6)])])])]),
                     g.weight([dm])])
    q, k, v = (g.op("Transpose", [g.op("Reshape", [g.op("MatMul", [h, g.weight([dm, dm])]), g.const([b, s, heads, d])])],
                    perm=[0, 2, 1, 3]) for _ in range(3))
    # rotate-half on q: concat(-x2, x1)
    half = d // 2
    q1 = g.op("Slice", [q, g.const([0]), g.const([half]), g.const([-1])])
    q2 = g.op("Slice", [q, g.const([half]), g.const([d]), g.const([-1])])
    q = g.op("Add", [g.op("Mul", [q, g.weight([s, d])]),
                     g.op("Mul", [g.op("Concat", [g.op("Neg", [q2]), q1], axis=-1), g.weight([s, d])])])
    a = g.op("Div", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), g.scalar(math.sqrt(d))])
    tri = g.op("Trilu", [g.weight([s, s])], upper=0)
    a = g.op("Where", [g.op("Equal", [tri, g.scalar(0.0)]), g.scalar(-1e4), a])
    a = g.op("Softmax", [a], axis=-1)
    o = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [a, v])], perm=[0, 2, 1, 3]), g.const([b, s, dm])])
    x = g.op("Add", [x, g.op("MatMul", [o, g.weight([dm, dm])])])
    # SwiGLU MLP with SiLU written x * sigmoid(x)
    u = g.op("MatMul", [x, g.weight([dm, 2 * dm])])
    gate = g.op("MatMul", [x, g.weight([dm, 2 * dm])])
    m = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), u])
    x = g.op("Add", [x, g.op("MatMul", [m, g.weight([2 * dm, dm])])])
    logits = g.op("MatMul", [x, g.weight([dm, 16])])
    last = g.op("Gather", [logits, g.const(-1)], axis=1)
    return [g.op("ArgMax", [last], axis=-1, keepdims=0), g.op("ReduceLogSumExp", [last, g.const([-1])], keepdims=1)]


def norms_misc(g):
    r = g.rng
    c, hw = r.choice([4, 8]), r.choice([6, 8])
    x = g.input([2, c, hw, hw])
    ng = r.choice([1, 2, c // 2])  # opset 20: scale and bias per group (TVM's frontend reads them so)
    y = g.op("GroupNormalization", [x, g.weight([ng]), g.weight([ng])], num_groups=ng, epsilon=1e-5)
    y = g.op("Mish", [y]) if r.random() < 0.5 else g.op("ThresholdedRelu", [y], alpha=r.choice([0.5, 1.0]))
    y = g.op("MeanVarianceNormalization", [y], axes=[0, 2, 3])
    y = g.op("SpaceToDepth", [y], blocksize=2)
    y = g.op("ReduceProd", [g.op("Abs", [y]), g.const([1])], keepdims=1) if r.random() < 0.5 \
        else g.op("ReduceL1", [y, g.const([1])], keepdims=1)
    z = g.op("CumSum", [g.op("Flatten", [y], axis=1), g.const(1)], reverse=r.choice([0, 1]))
    hm = g.op("Hardmax", [z], axis=-1)
    return [g.op("Sign", [g.op("Sub", [z, hm])]), g.op("Round", [z])]


BUILDERS = {"vit": vit, "mbv3_mixer": mbv3_mixer, "det_head": det_head, "seq_conv1d": seq_conv1d,
            "recsys": recsys, "video3d": video3d,
            "gpt_block": gpt_block, "norms_misc": norms_misc}


if __name__ == "__main__":
    out_dir, seed = sys.argv[1], int(sys.argv[2])
    for name in sys.argv[3:] or list(BUILDERS):
        g = Net(name, random.Random(f"{seed}-{name}"))
        outputs = BUILDERS[name](g)
        try:
            emit(g.model(outputs), f"{name}_{seed}", out_dir, f"synthetic ONNX network {name}, seed {seed}")
        except Exception as e:  # a graph TVM's frontend cannot import: say so, go on
            print("SKIP", name, type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "", file=sys.stderr)
