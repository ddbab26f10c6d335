"""Generate `layout` and `fused` cases like ../shared/corpus/ops with real TVM 0.27.

    gen_variants.py OUT SEED CASES [layout|fused]...

* ``layout``: one Relax op on NCHW tensors, legalized, then its PrimFunc's 4-D buffers
  re-laid-out with ``transform_layout`` (activations NCHW -> NCHW{k}c, conv kernels
  OIHW -> OIHW{k}i{k}o, k = 4 or 8); the expected attributes name the packed layouts and the
  file holds only the PrimFunc (like the sample's nn_max_pool2d_1_1).
* ``fused``: a small Relax graph (2-4 ops) legalized, then AnnotateTIROpPattern, FuseOps and
  FuseTIR; ``op: "fused"`` with ``fused_ops`` in dataflow order (the sample lists attributes
  for convs, pools, reductions, permutes, ... and none for elementwise ops).
"""
import json, os, random, sys
import numpy as np
import tvm
from tvm import relax, tirx
from gen_ops import T, kinds_of, to_old_dialect, _blocks
from gen_models import attrs_of

R = relax.op
F = "float32"
DROP = {"out_dtype", "out_layout"}
"""Attributes the sample's fused_ops do not list."""


# ----------------------------------------------------------------------------- layout cases

def _chan(rng, k):
    return k * rng.choice([1, 1, 2])


def _lay_conv(rng, k):
    groups = rng.choice([1, 1, 1, 2])
    cin, cout = groups * _chan(rng, k), groups * _chan(rng, k)
    kh, kw = rng.choice([1, 2, 3]), rng.choice([1, 2, 3])
    st = [rng.choice([1, 1, 2]), rng.choice([1, 1, 2])]
    dil = [rng.choice([1, 1, 2]), rng.choice([1, 1, 2])]
    pad = [rng.randint(0, kh - 1), rng.randint(0, kw - 1), rng.randint(0, kh - 1), rng.randint(0, kw - 1)]
    x = [rng.randint(1, 2), cin, rng.randint(5, 9), rng.randint(5, 9)]
    w = [cout, cin // groups, kh, kw]
    return [T(x), T(w)], lambda v: R.nn.conv2d(v[0], v[1], st, pad, dil, groups, "NCHW", "OIHW")


def _lay_pool(kind):
    def f(rng, k):
        ks = [rng.choice([1, 2, 3]), rng.choice([1, 2, 3])]
        st = [rng.choice([1, 2]), rng.choice([1, 2])]
        pad = [rng.randint(0, ks[0] // 2), rng.randint(0, ks[1] // 2)] * 2
        ceil = rng.random() < 0.3
        cip = rng.random() < 0.4 if kind == "avg" else False
        x = [rng.randint(1, 2), _chan(rng, k), rng.randint(5, 10), rng.randint(5, 10)]
        fn = getattr(R.nn, f"{kind}_pool2d")
        return [T(x)], lambda v: fn(v[0], ks, st, pad, [1, 1], ceil, cip, "NCHW")
    return f


def _lay_adaptive(rng, k):
    h, w = rng.randint(4, 10), rng.randint(4, 10)
    outs = [rng.choice([1, 2, h]), rng.choice([1, 2, w])]
    return [T([rng.randint(1, 2), _chan(rng, k), h, w])], lambda v: R.nn.adaptive_avg_pool2d(v[0], outs, "NCHW")


def _lay_binary(name):
    def f(rng, k):
        x = [rng.randint(1, 2), _chan(rng, k), rng.randint(2, 6), rng.randint(2, 6)]
        y = rng.choice([list(x), [1, x[1], 1, 1], [x[0], x[1], 1, x[3]]])
        return [T(x), T(y)], lambda v: getattr(R, name)(v[0], v[1])
    return f


def _lay_unary(fn):
    def f(rng, k):
        x = [rng.randint(1, 2), _chan(rng, k), rng.randint(2, 6), rng.randint(2, 6)]
        return [T(x)], lambda v: fn(v[0])
    return f


def _lay_batch_norm(rng, k):
    x = [rng.randint(1, 2), _chan(rng, k), rng.randint(2, 6), rng.randint(2, 6)]
    eps = rng.choice([1e-5, 1e-3])
    return [T(x)] + [T([x[1]])] * 4, lambda v: R.nn.batch_norm(v[0], v[1], v[2], v[3], v[4], 1, eps, training=False)


LAYOUT_SPECS = {
    "nn.conv2d": _lay_conv, "nn.max_pool2d": _lay_pool("max"), "nn.avg_pool2d": _lay_pool("avg"),
    "nn.adaptive_avg_pool2d": _lay_adaptive, "add": _lay_binary("add"), "multiply": _lay_binary("multiply"),
    "subtract": _lay_binary("subtract"), "maximum": _lay_binary("maximum"),
    "nn.relu": _lay_unary(R.nn.relu), "sigmoid": _lay_unary(R.sigmoid), "exp": _lay_unary(R.exp),
    "tanh": _lay_unary(R.tanh), "clip": _lay_unary(lambda x: R.clip(x, 0.0, 6.0)),
    "nn.batch_norm": _lay_batch_norm,
}
LAYOUT_KEYS = {"layout": "NCHW", "out_layout": "NCHW", "data_layout": "NCHW", "kernel_layout": "OIHW"}


def _build(inputs, fn, dynamic=False):
    n = tirx.Var("n", "int64") if dynamic else None
    bb = relax.BlockBuilder()
    params = []
    for i, (shape, dt) in enumerate(inputs):
        shp = list(shape)
        if dynamic and (i == 0 or (WIDE2 and list(shape) == list(inputs[0][0]))):  # same shape, same batch
            shp[0] = n
        params.append(relax.Var("x" if i == 0 else f"x{i}", relax.TensorType(shp, dt)))
    with bb.function("main", params):
        with bb.dataflow():
            out = fn(bb, params)
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    return bb.get()


def _packed_map(role, k):
    if role == "kernel":
        return lambda o, i, h, w: (o // k, i // k, h, w, i % k, o % k)
    return lambda n, c, h, w: (n, c // k, h, w, c % k)


def relayout(func, k, kernel_param, inner):
    """``func`` with every 4-D parameter (and, when ``inner``, every 4-D intermediate whose
    channels split) packed by ``transform_layout``."""
    from tvm import s_tir
    sch = s_tir.Schedule(func)
    params = list(func.params)  # TVM 0.27: the parameters are the buffers
    todo = [(b, "kernel" if i == kernel_param else "data") for i, b in enumerate(params) if len(b.shape) == 4]
    done = []  # buffers are told apart by identity: an intermediate may share a param's name
    for buf, role in todo:
        for blk in _all_blocks(sch):
            block = sch.get(blk)
            regions = list(block.reads) + list(block.writes)
            if any(r.source.same_as(buf) for r in regions) and not _among(buf, done):
                sch.transform_layout(blk, buf, _packed_map(role, k))
                done.append(buf)
    if inner:
        for blk in _all_blocks(sch):
            for w in sch.get(blk).writes:
                b = w.source
                if len(b.shape) == 4 and not _among(b, done) and int(b.shape[1]) % k == 0:
                    sch.transform_layout(blk, b, _packed_map("data", k))
                    done.append(b)
    return sch.mod["main"]


def _among(buf, bufs):
    return any(buf.same_as(b) for b in bufs)


def _all_blocks(sch):
    return _blocks(sch)


def _packed_attrs(attrs, k):
    out = dict(attrs)
    for key, lay in LAYOUT_KEYS.items():
        if out.get(key) == lay:
            out[key] = f"NCHW{k}c" if lay == "NCHW" else f"OIHW{k}i{k}o"
    return out


LAYOUT_DYNAMIC = bool(os.environ.get("OPINFO_LAYOUT_DYNAMIC"))
"""Layout cases (the sample's ops, not the wide ones) with a symbolic batch half of the time;
without it a seed draws exactly what it drew before."""


def layout_case(name, rng, dynamic=False):
    k = rng.choice([4, 4, 8])
    inputs, fn = LAYOUT_SPECS[name](rng, k)
    mod = _build(inputs, lambda bb, v: bb.emit(fn(v)), dynamic)
    _, attrs = attrs_of(mod["main"].body.blocks[0].bindings[0].value)
    lmod = relax.transform.LegalizeOps()(mod)
    funcs = [(gv, f) for gv, f in lmod.functions.items() if isinstance(f, tirx.PrimFunc)]
    if len(funcs) != 1:
        return None
    gv, f = funcs[0]
    f = relayout(f, k, 1 if name == "nn.conv2d" else None, rng.random() < 0.3)
    pmod = tvm.IRModule({gv: f})
    return pmod, _packed_attrs(attrs, k), inputs, kinds_of(pmod)


# ----------------------------------------------------------------------------- wide layout cases
# OPINFO_WIDE_LAYOUT=1: more ops of the NCHW{k}c family (k = 4, 8 or 16), NHWC -> NHWC{k}c,
# conv kernels OIHW{k}i{k}o or OIHW{k}o, conv1d/conv3d, transposed convs. Without it a seed
# draws exactly what it drew before.

LAYOUT_WIDE = bool(os.environ.get("OPINFO_WIDE_LAYOUT"))


def _act(lay, n, c, sp):
    """An activation shape in layout ``lay`` (N, C and spatial dims in order)."""
    dims = dict(zip([ch for ch in lay if ch not in "NC"], sp))
    return [{"N": n, "C": c, **dims}[ch] for ch in lay]


def _w_conv(nd, transpose=False):
    def f(rng, k, lay):
        lay = {1: "NCW", 2: lay, 3: "NCDHW"}[nd]
        kl = {1: "OIW", 2: "OIHW" if lay == "NCHW" else rng.choice(["OHWI", "HWIO"]), 3: "OIDHW"}[nd]
        if transpose:
            kl = "IO" + kl[2:] if lay[1] == "C" else "IOHW"
        groups, kind = 1, rng.choice(["dense", "dense", "grouped", "depthwise"]) if not transpose else "dense"
        if kind == "grouped":
            groups = 2
        cin = groups * _chan(rng, k)
        cout = groups * _chan(rng, k)
        if kind == "depthwise":
            cin = _chan(rng, k)
            groups, cout = cin, cin * rng.choice([1, 1, 2])
        ks = [rng.choice([1, 2, 3]) for _ in range(nd)]
        st = [rng.choice([1, 1, 2]) for _ in range(nd)]
        dil = [rng.choice([1, 1, 2]) for _ in range(nd)]
        pad = [rng.randint(0, ks[i] - 1) for i in range(nd)] + [rng.randint(0, ks[i] - 1) for i in range(nd)]
        sp = [rng.randint(5, 9) if nd < 3 else rng.randint(3, 6) for _ in range(nd)]
        x = _act(lay, rng.randint(1, 2), cin, sp)
        kd = dict(zip([ch for ch in kl if ch not in "OI"], ks))
        if transpose:
            w = [{"I": cin, "O": cout // groups, **kd}[ch] for ch in kl]
            op = [0] * nd  # padding after and output_padding reach the loops only as their difference
            fn = {1: R.nn.conv1d_transpose, 2: R.nn.conv2d_transpose, 3: R.nn.conv3d_transpose}[nd]
            return [T(x), T(w)], lambda v: fn(v[0], v[1], st, pad, op, dil, groups, lay, kl), (1, kl, "IO")
        w = [{"O": cout, "I": cin // groups, **kd}[ch] for ch in kl]
        splits = "O" if cin // groups % k or rng.random() < 0.3 else "IO"
        fn = {1: R.nn.conv1d, 2: R.nn.conv2d, 3: R.nn.conv3d}[nd]
        return [T(x), T(w)], lambda v: fn(v[0], v[1], st, pad, dil, groups, lay, kl), (1, kl, splits)
    return f


def _w_pool(kind):
    def f(rng, k, lay):
        ks = [rng.choice([1, 2, 3]), rng.choice([1, 2, 3])]
        st = [rng.choice([1, 2]), rng.choice([1, 2, 3])]
        dil = [rng.choice([1, 1, 1, 2])] * 2  # a framework's one dilation (the sample's pools: 1)
        pad = [rng.randint(0, ks[0] // 2), rng.randint(0, ks[1] // 2), rng.randint(0, ks[0] // 2),
               rng.randint(0, ks[1] // 2)]
        ceil = rng.random() < 0.5
        cip = rng.random() < 0.5 if kind == "avg" else False
        x = _act(lay, rng.randint(1, 2), _chan(rng, k), [rng.randint(5, 11), rng.randint(5, 11)])
        fn = getattr(R.nn, f"{kind}_pool2d")
        return [T(x)], lambda v: fn(v[0], ks, st, pad, dil, ceil, cip, lay), None
    return f


def _w_adaptive(rng, k, lay):
    h, w = rng.randint(4, 11), rng.randint(4, 11)
    outs = [rng.choice([1, 2, 3, 5, h]), rng.choice([1, 3, 4, w])]
    x = _act(lay, rng.randint(1, 2), _chan(rng, k), [h, w])
    return [T(x)], lambda v: R.nn.adaptive_avg_pool2d(v[0], outs, lay), None


def _x4(rng, k, lay, lo=2, hi=6):
    return _act(lay, rng.randint(1, 2), _chan(rng, k), [rng.randint(lo, hi), rng.randint(lo, hi)])


def _w_reduce(name):
    def f(rng, k, lay):
        x = _x4(rng, k, lay)
        hw = [a for a, ch in enumerate(lay) if ch in "HW"]
        axis = rng.choice([hw, [lay.index("C")], hw])
        keep = rng.random() < 0.7
        return [T(x)], lambda v: getattr(R, name)(v[0], axis, keep), None
    return f


def _w_softmax(name):
    def f(rng, k, lay):
        x = _x4(rng, k, lay)
        ax = rng.choice([lay.index("C"), lay.index("C"), lay.index("C") - 4, 3])
        return [T(x)], lambda v: getattr(R.nn, name)(v[0], ax), None
    return f


def _w_group_norm(rng, k, lay):
    x = _x4(rng, k, "NCHW")
    c = x[1]
    g = rng.choice([d for d in (1, 2, 4, c) if c % d == 0])
    eps = rng.choice([1e-5, 1e-6])
    return [T(x), T([c]), T([c])], lambda v: R.nn.group_norm(v[0], v[1], v[2], g, 1, [2, 3], eps), None


def _w_instance_norm(rng, k, lay):
    x = _x4(rng, k, "NCHW")
    eps = rng.choice([1e-5, 1e-3])
    return [T(x), T([x[1]]), T([x[1]])], lambda v: R.nn.instance_norm(v[0], v[1], v[2], 1, [2, 3], eps), None


def _w_layer_norm(rng, k, lay):
    x = _x4(rng, k, "NCHW")
    axes = rng.choice([[1, 2, 3], [3], [2, 3]])
    eps = rng.choice([1e-5, 1e-6])
    g = [x[a] for a in axes]
    return [T(x), T(g), T(g)], lambda v: R.nn.layer_norm(v[0], v[1], v[2], axes, eps, True, True), None


def _w_resize(rng, k, lay):
    x = _x4(rng, k, lay, 3, 7)
    sz = [rng.randint(2, 12), rng.randint(2, 12)]
    method = rng.choice(["nearest_neighbor", "linear", "cubic"])
    ctm = rng.choice(["half_pixel", "align_corners", "asymmetric"])
    rm = rng.choice(["round", "floor", "round_prefer_ceil"]) if method == "nearest_neighbor" else "round"
    return [T(x)], lambda v: R.image.resize2d(v[0], sz, None, lay, method, ctm, rm), None


def _w_concat(rng, k, lay):
    x = _x4(rng, k, lay)
    c = lay.index("C")
    shapes = []
    for _ in range(rng.randint(2, 3)):
        t = list(x)
        t[c] = _chan(rng, k)
        shapes.append(t)
    return [T(s) for s in shapes], lambda v: R.concat(v, c), None


def _w_slice(rng, k, lay):
    x = _x4(rng, k, lay, 4, 10)
    axes = sorted(rng.sample([a for a, ch in enumerate(lay) if ch in "HW"], rng.randint(1, 2)))
    begin, end, strides = [], [], []
    for a in axes:
        b = rng.randint(0, x[a] - 2)
        st = rng.choice([1, 1, 2])
        e = b + st * ((rng.randint(b + 1, x[a]) - b - 1) // st) + 1
        begin.append(b), end.append(e), strides.append(st)
    return [T(x)], lambda v: R.strided_slice(v[0], axes, begin, end, strides), None


def _w_pad(rng, k, lay):
    x = _x4(rng, k, lay)
    pw = [0] * 8
    for a, ch in enumerate(lay):
        if ch in "HW":
            pw[2 * a], pw[2 * a + 1] = rng.randint(0, 2), rng.randint(0, 2)
    val = rng.choice([0.0, 1.0, -1.5])
    return [T(x)], lambda v: R.nn.pad(v[0], pw, "constant", val), None


def _w_unary(fn):
    def f(rng, k, lay):
        return [T(_x4(rng, k, lay))], lambda v: fn(v[0]), None
    return f


def _w_leaky(rng, k, lay):
    a = rng.choice([0.01, 0.1, 0.2])
    return [T(_x4(rng, k, lay))], lambda v: R.nn.leakyrelu(v[0], a), None


def _w_clip(rng, k, lay):
    lo, hi = rng.choice([(0.0, 6.0), (-1.0, 1.0), (0.5, 2.5)])
    return [T(_x4(rng, k, lay))], lambda v: R.clip(v[0], lo, hi), None


def _w_where(rng, k, lay):
    x = _x4(rng, k, lay)
    return [T(x, "bool"), T(x), T(x)], lambda v: R.where(v[0], v[1], v[2]), None


def _w_binary(name):
    def f(rng, k, lay):
        x = _x4(rng, k, lay)
        bias = [x[a] if ch == "C" else 1 for a, ch in enumerate(lay)]
        y = rng.choice([list(x), bias, bias])
        pair = [x, y] if rng.random() < 0.7 else [y, x]
        return [T(pair[0]), T(pair[1])], lambda v: getattr(R, name)(v[0], v[1]), None
    return f


WIDE_SPECS = {
    "nn.conv2d": _w_conv(2), "nn.conv2d_transpose": _w_conv(2, True), "nn.conv1d": _w_conv(1),
    "nn.conv3d": _w_conv(3), "nn.max_pool2d": _w_pool("max"), "nn.avg_pool2d": _w_pool("avg"),
    "nn.adaptive_avg_pool2d": _w_adaptive, "mean": _w_reduce("mean"), "sum": _w_reduce("sum"),
    "max": _w_reduce("max"), "nn.softmax": _w_softmax("softmax"), "nn.log_softmax": _w_softmax("log_softmax"),
    "nn.group_norm": _w_group_norm, "nn.instance_norm": _w_instance_norm, "nn.layer_norm": _w_layer_norm,
    "image.resize2d": _w_resize, "concat": _w_concat, "strided_slice": _w_slice, "nn.pad": _w_pad,
    "clip": _w_clip, "nn.relu6": _w_unary(R.nn.relu6), "nn.leakyrelu": _w_leaky, "where": _w_where,
    "subtract": _w_binary("subtract"), "divide": _w_binary("divide"), "maximum": _w_binary("maximum"),
    "add": _w_binary("add"), "multiply": _w_binary("multiply"),
    "nn.batch_norm": lambda rng, k, lay: _lay_batch_norm(rng, k) + (None,),
}
WIDE_LAYOUT_ATTRS = {"layout": "data", "data_layout": "data", "out_layout": "out", "kernel_layout": "kernel"}


def _split_map(layout, letters, k):
    """Index map of ``layout`` with the dimensions named in ``letters`` split by ``k``, their
    sub-axes trailing in that order."""
    at = [layout.index(ch) for ch in letters]

    def f(*idx):
        return tuple(i // k if j in at else i for j, i in enumerate(idx)) + tuple(idx[j] % k for j in at)
    return f


def _splits_ok(shape, layout, letters, k):
    return len(shape) == len(layout) and all(int(shape[layout.index(ch)]) % k == 0 for ch in letters)


def wide_relayout(func, k, lay, kern, inner):
    """``func`` with its activations (rank of ``lay``, C a multiple of ``k``) packed to
    ``lay{k}c`` and the kernel ``kern`` = (parameter, layout, split letters) packed; returns
    (function, {parameter position: packed layout})."""
    from tvm import s_tir
    sch = s_tir.Schedule(func)
    params = list(func.params)
    todo = []
    for i, b in enumerate(params):
        if kern is not None and i == kern[0]:
            if _splits_ok(b.shape, kern[1], kern[2], k):
                todo.append((i, b, kern[1], kern[2]))
        elif _splits_ok(b.shape, lay, "C", k):
            todo.append((i, b, lay, "C"))
    done, named = [], {}
    for i, buf, layout, letters in todo:
        for blk in _all_blocks(sch):
            block = sch.get(blk)
            if any(r.source.same_as(buf) for r in list(block.reads) + list(block.writes)) and not _among(buf, done):
                sch.transform_layout(blk, buf, _split_map(layout, letters, k))
                done.append(buf)
                named[i] = layout + "".join(f"{k}{ch.lower()}" for ch in letters)
    if inner:
        for blk in _all_blocks(sch):
            for w in sch.get(blk).writes:
                b = w.source
                if not _among(b, done) and _splits_ok(b.shape, lay, "C", k):
                    sch.transform_layout(blk, b, _split_map(lay, "C", k))
                    done.append(b)
    return sch.mod["main"], named


def wide_layout_case(name, rng):
    k = rng.choice([4, 4, 8, 16])
    lay = "NHWC" if rng.random() < 0.25 else "NCHW"
    inputs, fn, kern = WIDE_SPECS[name](rng, k, lay)
    if name == "nn.batch_norm":
        kern, lay = None, "NCHW"
    if name in ("nn.conv1d", "nn.conv3d"):
        lay = {"nn.conv1d": "NCW", "nn.conv3d": "NCDHW"}[name]
    mod = _build(inputs, lambda bb, v: bb.emit(fn(v)))
    _, attrs = attrs_of(mod["main"].body.blocks[0].bindings[0].value)
    lmod = relax.transform.LegalizeOps()(mod)
    funcs = [(gv, f) for gv, f in lmod.functions.items() if isinstance(f, tirx.PrimFunc)]
    if len(funcs) != 1:
        return None
    gv, f = funcs[0]
    f, named = wide_relayout(f, k, lay, kern, rng.random() < 0.3)
    if not named:
        return None
    where = {"data": 0, "kernel": kern[0] if kern else None, "out": len(f.params) - 1}
    out = dict(attrs)
    for key, role in WIDE_LAYOUT_ATTRS.items():
        if key in out and where[role] in named:
            out[key] = named[where[role]]
    pmod = tvm.IRModule({gv: f})
    return pmod, out, inputs, kinds_of(pmod)


# ----------------------------------------------------------------------------- fused cases
# A graph: an anchor (or none) then a chain of elementwise/broadcast followers. Every step is
# (relax expr builder, extra input shapes, gt record).

def _ax(axes, rank):
    return [a % rank for a in axes] if isinstance(axes, list) else axes


def _gt(call, rank=None):
    name, attrs = attrs_of(call)
    attrs = {a: b for a, b in attrs.items() if a not in DROP}
    for key in ("axis", "axes"):
        if key in attrs and rank:
            attrs[key] = _ax(attrs[key], rank) if isinstance(attrs[key], list) else \
                (attrs[key] % rank if isinstance(attrs[key], int) else attrs[key])
    return {"op": name, **({"attrs": attrs} if attrs and name not in EW_NO_ATTRS else {})}


EW_NO_ATTRS = {"add", "multiply", "subtract", "divide", "maximum", "minimum", "nn.relu", "nn.gelu", "sigmoid",
               "nn.silu", "tanh", "exp", "square", "sqrt", "negative", "matmul"}


def _anchor(rng):
    """(inputs, fn(params) -> expr, output shape, channel axis or None)"""
    kind = rng.choice(["conv1d", "conv2d", "conv2d", "conv3d", "matmul", "matmul", "pool", "pool", "adaptive",
                       "none"])
    n = rng.randint(1, 2)
    if kind.startswith("conv"):
        nd = int(kind[4])
        groups = rng.choice([1, 1, 2])
        cin, cout = groups * rng.randint(1, 4), groups * rng.randint(1, 4)
        sp = [rng.randint(4, 9) for _ in range(nd)]
        ks = [rng.choice([1, 2, 3]) for _ in range(nd)]
        st = [rng.choice([1, 1, 2]) for _ in range(nd)]
        dil = [rng.choice([1, 1, 2]) for _ in range(nd)]
        pad = [rng.randint(0, k - 1) for k in ks] * 2
        dl, kl = {1: ("NCW", "OIW"), 2: ("NCHW", "OIHW"), 3: ("NCDHW", "OIDHW")}[nd]
        if rng.random() < 0.25:
            dl, kl = {1: ("NWC", "WIO"), 2: ("NHWC", rng.choice(["HWIO", "OHWI"])), 3: ("NDHWC", "DHWIO")}[nd]
        dims = dict(zip("DHW"[-nd:], sp))
        xs = [{"N": n, "C": cin, **dims}[c] for c in dl]
        ws = [{"O": cout, "I": cin // groups, **dict(zip("DHW"[-nd:], ks))}[c] for c in kl]
        f = {1: R.nn.conv1d, 2: R.nn.conv2d, 3: R.nn.conv3d}[nd]
        out = [{"N": n, "C": cout, **{a: (s + 2 * p - d * (k - 1) - 1) // t + 1
                                       for a, s, p, d, k, t in zip("DHW"[-nd:], sp, pad, dil, ks, st)}}[c] for c in dl]
        return [T(xs), T(ws)], lambda v: f(v[0], v[1], st, pad, dil, groups, dl, kl), out, dl.index("C")
    if kind == "matmul":
        m, k, j = rng.randint(2, 9), rng.randint(2, 9), rng.randint(2, 9)
        if rng.random() < 0.4:
            b = rng.randint(1, 3)
            return [T([b, m, k]), T([k, j])], lambda v: R.matmul(v[0], v[1]), [b, m, j], 2
        return [T([m, k]), T([k, j])], lambda v: R.matmul(v[0], v[1]), [m, j], 1
    if kind in ("pool", "adaptive"):
        c, h, w = rng.randint(2, 6), rng.randint(5, 10), rng.randint(5, 10)
        if kind == "adaptive":
            o = [rng.choice([1, 2, h]), rng.choice([1, 2, w])]
            return [T([n, c, h, w])], lambda v: R.nn.adaptive_avg_pool2d(v[0], o, "NCHW"), [n, c] + o, 1
        ks, st = [rng.choice([2, 3]), rng.choice([1, 2, 3])], [2, rng.choice([1, 2])]
        pad = [rng.randint(0, ks[0] // 2), rng.randint(0, ks[1] // 2)] * 2
        fn = rng.choice([R.nn.max_pool2d, R.nn.avg_pool2d])
        out = [n, c] + [(s + 2 * p - k) // t + 1 for s, p, k, t in zip((h, w), pad[:2], ks, st)]
        return [T([n, c, h, w])], lambda v: fn(v[0], ks, st, pad, [1, 1], False, False, "NCHW"), out, 1
    shape = [n, rng.randint(2, 6), rng.randint(2, 6), rng.randint(2, 6)][: rng.randint(2, 4)]
    return [T(shape)], None, shape, 1


def _follower(rng, shape, cax):
    """(extra input shapes, fn(prev, extra params) -> expr)"""
    unary = {"nn.relu": R.nn.relu, "nn.gelu": R.nn.gelu, "sigmoid": R.sigmoid, "nn.silu": R.nn.silu,
             "tanh": R.tanh, "exp": R.exp, "clip": lambda x: R.clip(x, rng.choice([-1.0, 0.0]), 6.0)}
    if rng.random() < 0.55:
        name = rng.choice(list(unary))
        return [], lambda p, e: unary[name](p)
    op = getattr(R, rng.choice(["add", "add", "multiply", "subtract", "maximum"]))
    r = len(shape)
    kind = rng.randint(0, 2)
    if kind == 0:
        other = [1] + list(shape[1:])  # not the batch: it may be symbolic
    elif kind == 1 and cax is not None:
        other = [1] * r
        other[cax] = shape[cax]
        if cax == r - 1 and rng.random() < 0.5:
            other = [shape[cax]]
    else:
        other = [shape[-1]]
    return [T(other)], lambda p, e: op(p, e[0])


def _reduction_graph(rng):
    r = rng.randint(2, 4)
    shape = [rng.randint(2, 7) for _ in range(r)]
    pre = rng.choice([("exp", R.exp), ("square", R.square), ("multiply", None), ("sigmoid", R.sigmoid)])
    red = rng.choice([R.sum, R.mean, R.max])
    ax = sorted(rng.sample(range(r), rng.randint(1, r - 1)))
    kd = rng.random() < 0.5
    inputs = [T(shape)] + ([T(shape)] if pre[0] == "multiply" else [])

    def fn(bb, v):
        a = bb.emit(R.multiply(v[0], v[1]) if pre[1] is None else pre[1](v[0]))
        return bb.emit(red(a, ax, kd))
    return inputs, fn


def _after_matmul(rng):
    """matmul then softmax or layer_norm (two PrimFuncs: TVM never fuses two anchors)."""
    m, k, j = rng.randint(2, 8), rng.randint(2, 8), rng.randint(2, 8)
    ln = rng.random() < 0.5
    inputs = [T([m, k]), T([k, j])] + ([T([j]), T([j])] if ln else [])

    def fn(bb, v):
        a = bb.emit(R.matmul(v[0], v[1]))
        if ln:
            return bb.emit(R.nn.layer_norm(a, v[2], v[3], [1], rng.choice([1e-5, 1e-6])))
        return bb.emit(R.nn.softmax(a, rng.choice([1, -1])))
    return inputs, fn


def _move_matmul(rng):
    """permute_dims or reshape feeding matmul."""
    m, k, j = rng.randint(2, 8), rng.randint(2, 8), rng.randint(2, 8)
    if rng.random() < 0.5:
        inputs = [T([m, k]), T([j, k])]
        return inputs, lambda bb, v: bb.emit(R.matmul(v[0], bb.emit(R.permute_dims(v[1], [1, 0]))))
    inputs = [T([m, k]), T([k * j])]
    return inputs, lambda bb, v: bb.emit(R.matmul(v[0], bb.emit(R.reshape(v[1], [k, j]))))


def _chain_graph(rng):
    inputs, anchor, shape, cax = _anchor(rng)
    steps = [_follower(rng, shape, cax) for _ in range(rng.randint(1 if anchor else 2, 3 if anchor else 3))]
    if anchor is not None and len(shape) == 4 and rng.random() < 0.25:
        c = [1, shape[1], 1, 1]  # batch-norm inference: scale, shift, relu
        steps = [([T(c)], lambda p, e: R.multiply(p, e[0])), ([T(c)], lambda p, e: R.add(p, e[0])),
                 ([], lambda p, e: R.nn.relu(p))]
    base, inputs = len(inputs), inputs + [t for extra, _ in steps for t in extra]

    def fn(bb, v):
        return _emit_steps(bb, bb.emit(anchor(v)) if anchor is not None else v[0], v, base, steps)
    return inputs, fn


def _emit_steps(bb, cur, v, base: int, steps):
    """Emit the follower ``steps`` after ``cur``; their extra inputs are ``v[base:]`` in order."""
    k = base
    for extra, step in steps:
        cur = bb.emit(step(cur, v[k:k + len(extra)]))
        k += len(extra)
    return cur


def _norm_graph(rng):
    """softmax / log_softmax / layer_norm / rms_norm (out_ewise_fusable) then elementwise ops."""
    r = rng.randint(2, 4)
    shape = [rng.randint(2, 7) for _ in range(r)]
    kind = rng.choice(["softmax", "log_softmax", "layer_norm", "rms_norm"])
    inputs = [T(shape)]
    if kind in ("layer_norm", "rms_norm"):
        inputs += [T(shape[-1:])] * (2 if kind == "layer_norm" else 1)
    ax = rng.randint(0, r - 1)
    eps = rng.choice([1e-5, 1e-6])
    steps = [_follower(rng, shape, r - 1) for _ in range(rng.randint(1, 2))]
    base, inputs = len(inputs), inputs + [t for extra, _ in steps for t in extra]

    def fn(bb, v):
        if kind == "layer_norm":
            cur = bb.emit(R.nn.layer_norm(v[0], v[1], v[2], [r - 1], eps))
        elif kind == "rms_norm":
            cur = bb.emit(R.nn.rms_norm(v[0], v[1], [r - 1], eps))
        else:
            cur = bb.emit(getattr(R.nn, kind)(v[0], ax))
        return _emit_steps(bb, cur, v, base, steps)
    return inputs, fn


def _movement_graph(rng):
    """Elementwise ops and one movement op (permute_dims, reshape, expand_dims, strided_slice):
    TVM fuses injective ops with elementwise ones."""
    r = rng.randint(2, 4)
    shape = [rng.randint(2, 6) for _ in range(r)]
    perm = list(range(r))
    while perm == sorted(perm):  # an identity permute_dims is a plain copy
        rng.shuffle(perm)
    moves = {
        "permute_dims": lambda x: R.permute_dims(x, perm),
        "reshape": lambda x: R.reshape(x, [int(np.prod(shape))] if rng.random() < 0.5 else [shape[0], -1]),
        "expand_dims": lambda x: R.expand_dims(x, rng.randint(0, r)),
        "strided_slice": lambda x: R.strided_slice(x, [r - 1], [1], [shape[-1]], [1]),
    }
    move = moves[rng.choice(list(moves))]
    first = rng.random() < 0.5
    unary = rng.choice([R.exp, R.sigmoid, R.nn.relu, R.tanh])
    inputs = [T(shape)] + ([T(shape)] if not first else [])

    def fn(bb, v):
        if first:
            return bb.emit(unary(bb.emit(move(v[0]))))
        return bb.emit(move(bb.emit(R.add(v[0], v[1]))))
    return inputs, fn


def _twice_graph(rng):
    """An anchor whose result is used twice: a * tanh(a). (a * sigmoid(a) would be exactly
    the blocks of nn.silu's legalization, names aside: not a fair question.)"""
    inputs, anchor, shape, cax = _anchor(rng)

    def fn(bb, v):
        a = bb.emit(anchor(v)) if anchor is not None else v[0]
        s = bb.emit(R.tanh(a))
        return bb.emit(R.multiply(a, s))
    return inputs, fn


GRAPHS = [(_chain_graph, 6), (_reduction_graph, 2), (_after_matmul, 1), (_move_matmul, 1), (_norm_graph, 2),
          (_movement_graph, 2), (_twice_graph, 1)]


def fused_case(rng, dynamic):
    graphs = WIDE2_GRAPHS if WIDE2 else WIDE_GRAPHS if WIDE else GRAPHS
    pick = rng.choices([g for g, _ in graphs], [w for _, w in graphs])[0]
    inputs, fn = pick(rng)
    mod = _build(inputs, fn, dynamic)
    ops = []
    for binding in mod["main"].body.blocks[0].bindings:
        call = binding.value
        if isinstance(call, relax.Call) and hasattr(call.op, "name"):
            if WIDE and call.args and isinstance(call.args[0], relax.Tuple):  # concat
                rank = call.args[0].fields[0].ty.ndim
            else:
                rank = call.args[0].ty.ndim if call.args else None
            ops.append(_gt(call, rank))
    if len(ops) < 2:
        return None
    lmod = relax.transform.LegalizeOps()(mod)
    lmod = relax.transform.AnnotateTIROpPattern()(lmod)
    lmod = relax.transform.FuseOps()(lmod)
    lmod = relax.transform.FuseTIR()(lmod)
    lmod = relax.transform.DeadCodeElimination()(lmod)
    if not _all_lowered(lmod):
        return None
    return _strip_pattern(lmod), ops, inputs, kinds_of(lmod)


def _all_lowered(mod):
    """Whether every binding of ``main`` calls a PrimFunc (TVM cannot legalize some ops
    over a symbolic batch; such a case has nothing to score)."""
    call_tir = tvm.ir.Op.get("relax.call_tir")
    for binding in mod["main"].body.blocks[0].bindings:
        v = binding.value
        if isinstance(v, relax.Call) and not v.op.same_as(call_tir):
            return False
    return True


def _strip_pattern(mod):
    """The sample's functions carry no op_pattern (the answer TVM would give)."""
    for gv, f in list(mod.functions.items()):
        if isinstance(f, tirx.PrimFunc) and f.attrs is not None and "op_pattern" in f.attrs:
            mod[gv] = f.without_attr("op_pattern")
    return mod


# ----------------------------------------------------------------------------- wider fused graphs
# Drawn only with OPINFO_WIDE_FUSED=1 (GRAPHS above is unchanged, so existing seeds produce the
# same cases): more anchors (transposed convs, 1-D/3-D pools, uneven adaptive pools, norms,
# resize), reductions with heads and tails, movement ops between elementwise ops, batched
# matmul with a permuted rhs, casts, and more followers. TVM decides what fuses.

WIDE = os.environ.get("OPINFO_WIDE_FUSED") in ("1", "2")
WIDE2 = os.environ.get("OPINFO_WIDE_FUSED") == "2"  # the graph shapes of WIDE2_GRAPHS below


def _infer_shape(inputs, anchor):
    """The static output shape of ``anchor`` over ``inputs`` (Relax's own shape inference)."""
    bb = relax.BlockBuilder()
    params = [relax.Var(f"p{i}", relax.TensorType(list(s), d)) for i, (s, d) in enumerate(inputs)]
    with bb.function("probe", params):
        out = bb.emit(anchor(params))
        bb.emit_func_output(out)
    return [int(x) for x in out.ty.shape.values]


def _in_layout(lay, n, c, sp):
    return [{"N": n, "C": c, **dict(zip("DHW"[-len(sp):], sp))}[ch] for ch in lay]


def _wide_anchor(rng):
    """(inputs, fn(params) -> expr or None, output shape, channel axis or None)"""
    kind = rng.choice(["convT", "convT", "pool13", "pool13", "adaptive13", "adaptive13", "resize", "old", "old"])
    n = rng.randint(1, 2)
    if kind == "old":
        return _anchor(rng)
    if kind == "convT":
        nd = rng.choice([1, 2, 2, 3])
        groups = rng.choice([1, 1, 2])
        cin, cout = groups * rng.randint(1, 3), groups * rng.randint(1, 3)
        sp = [rng.randint(3, 7) for _ in range(nd)]
        ks = [rng.choice([1, 2, 3]) for _ in range(nd)]
        st = [rng.choice([1, 2, 2]) for _ in range(nd)]
        dil = [rng.choice([1, 1, 2]) for _ in range(nd)]
        pad = [rng.randint(0, max(0, dil[i] * (ks[i] - 1))) for i in range(nd)] * 2
        opad = [0] * nd  # padding after and output_padding reach the loops only as a difference
        dl = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[nd]
        kl = {1: "IOW", 2: "IOHW", 3: "IODHW"}[nd]
        f = {1: R.nn.conv1d_transpose, 2: R.nn.conv2d_transpose, 3: R.nn.conv3d_transpose}[nd]
        inputs = [T([n, cin] + sp), T([cin, cout // groups] + ks)]
        fn = lambda v: f(v[0], v[1], st, pad, opad, dil, groups, dl, kl)
        return inputs, fn, _infer_shape(inputs, fn), 1
    if kind == "pool13":
        nd = rng.choice([1, 3])
        c = rng.randint(1, 4)
        sp = [rng.randint(4, 9) for _ in range(nd)]
        ks = [rng.choice([1, 2, 3]) for _ in range(nd)]
        st = [rng.choice([1, 2]) for _ in range(nd)]
        dil = [rng.choice([1, 1, 2]) for _ in range(nd)]
        pad = [rng.randint(0, k // 2) for k in ks] + [rng.randint(0, k // 2) for k in ks]
        ceil = rng.random() < 0.15
        avg = rng.random() < 0.5
        cip = avg and rng.random() < 0.5  # a max pool has no count to include the padding in
        lay = rng.choice({1: ["NCW", "NCW", "NWC"], 3: ["NCDHW", "NCDHW", "NDHWC"]}[nd])
        f = {(1, False): R.nn.max_pool1d, (1, True): R.nn.avg_pool1d,
             (3, False): R.nn.max_pool3d, (3, True): R.nn.avg_pool3d}[(nd, avg)]
        inputs = [T(_in_layout(lay, n, c, sp))]
        fn = lambda v: f(v[0], ks, st, pad, dil, ceil, cip, lay)
        return inputs, fn, _infer_shape(inputs, fn), lay.index("C")
    if kind == "adaptive13":
        nd = rng.choice([1, 3])
        c = rng.randint(1, 4)
        sp = [rng.randint(3, 9) for _ in range(nd)]
        o = [rng.choice([1, 2, 3, s, s - 1]) for s in sp]
        f = {1: R.nn.adaptive_avg_pool1d, 3: R.nn.adaptive_avg_pool3d}[nd]
        lay = rng.choice({1: ["NCW", "NCW", "NWC"], 3: ["NCDHW", "NCDHW", "NDHWC"]}[nd])
        inputs = [T(_in_layout(lay, n, c, sp))]
        fn = lambda v: f(v[0], o, lay)
        return inputs, fn, _infer_shape(inputs, fn), lay.index("C")
    h, w = rng.randint(3, 8), rng.randint(3, 8)
    sz = [rng.randint(2, 12), rng.randint(2, 12)]
    method = rng.choice(["nearest_neighbor", "linear", "cubic"])
    ctm = rng.choice(["half_pixel", "align_corners", "asymmetric"])
    rm = rng.choice(["round", "floor", "round_prefer_ceil"]) if method == "nearest_neighbor" else "round"
    c = rng.randint(1, 4)
    inputs = [T([n, c, h, w])]
    fn = lambda v: R.image.resize2d(v[0], sz, None, "NCHW", method, ctm, rm)
    return inputs, fn, [n, c] + sz, 1


def _wide_follower(rng, shape, cax):
    """(extra input shapes, fn(prev, extra params) -> expr); may emit more than one op."""
    c = lambda x: relax.const(x, F)
    unary = {
        "sqrt": lambda p, e: R.sqrt(p), "abs": lambda p, e: R.abs(p), "erf": lambda p, e: R.erf(p),
        "log": lambda p, e: R.log(p), "rsqrt": lambda p, e: R.rsqrt(p),
        "leakyrelu": lambda p, e, a=rng.choice([0.01, 0.1, 0.2]): R.nn.leakyrelu(p, a),
        "softplus": lambda p, e, b=rng.choice([1.0, 2.0, 0.5]), t=rng.choice([20.0, 10.0]): R.nn.softplus(p, b, t),
        "power": lambda p, e, k=rng.choice([2.0, 3.0, 0.5]): R.power(p, c(k)),
        "divide_c": lambda p, e, k=rng.choice([2.0, 3.0, 0.25]): R.divide(p, c(k)),
        "where": lambda p, e, k=rng.choice([0.0, 0.5, -1.0]): R.where(
            getattr(R, rng.choice(["greater", "less", "greater_equal"]))(p, c(k)), p, R.multiply(p, c(0.1))),
        "clip": lambda p, e, lo=rng.choice([-2.0, -0.5, 1.0]), hi=rng.choice([0.5, 3.0, 4.0]): R.clip(p, lo, max(hi, lo + 1.0)),
        "relu6": lambda p, e: R.nn.relu6(p),
        "relu": lambda p, e: R.nn.relu(p), "sigmoid": lambda p, e: R.sigmoid(p), "tanh": lambda p, e: R.tanh(p),
        "exp": lambda p, e: R.exp(p), "gelu": lambda p, e: R.nn.gelu(p),
    }
    u = rng.random()
    if u < 0.6:
        name = rng.choice(list(unary))
        return [], unary[name]
    if u < 0.67:
        return [], lambda p, e, dt=rng.choice(["float16", "float64"]): R.astype(R.astype(p, dt), F)
    op = getattr(R, rng.choice(["add", "multiply", "subtract", "divide", "maximum", "minimum"]))
    r = len(shape)
    kind = rng.randint(0, 2)
    if kind == 0:
        other = [1] + list(shape[1:])
    elif kind == 1 and cax is not None:
        other = [1] * r
        other[cax] = shape[cax]
    else:
        other = [shape[-1]]
    if rng.random() < 0.3:  # the operand first
        return [T(other)], lambda p, e: op(e[0], p)
    return [T(other)], lambda p, e: op(p, e[0])


def _wide_chain_graph(rng):
    inputs, anchor, shape, cax = _wide_anchor(rng)
    steps = [_wide_follower(rng, shape, cax) for _ in range(rng.randint(1 if anchor else 2, 3))]
    if rng.random() < 0.15:  # the result cast to another dtype
        steps.append(([], lambda p, e, dt=rng.choice(["float16", "float64", "int32"]): R.astype(p, dt)))
    base, inputs = len(inputs), inputs + [t for extra, _ in steps for t in extra]

    def fn(bb, v):
        return _emit_steps(bb, bb.emit(anchor(v)) if anchor is not None else v[0], v, base, steps)
    return inputs, fn


def _wide_reduction_graph(rng):
    """elementwise head(s), a reduction over some axes, elementwise tail(s)."""
    r = rng.randint(2, 4)
    shape = [rng.randint(2, 7) for _ in range(r)]
    red = rng.choice([R.sum, R.mean, R.max, R.min, R.prod, R.variance])
    ax = sorted(rng.sample(range(r), rng.randint(1, r)))
    if len(ax) == r and rng.random() < 0.7:
        ax = ax[1:]
    kd = rng.random() < 0.5
    out = [1 if i in ax else s for i, s in enumerate(shape)] if kd else [s for i, s in enumerate(shape) if i not in ax]
    heads = [_wide_follower(rng, shape, None) for _ in range(rng.randint(0, 2))]
    tails = [_wide_follower(rng, out, None) for _ in range(rng.randint(0 if heads else 1, 2))] if out else []
    inputs = [T(shape)]
    hb = len(inputs)
    inputs += [t for extra, _ in heads for t in extra]
    tb = len(inputs)
    inputs += [t for extra, _ in tails for t in extra]

    def fn(bb, v):
        cur = _emit_steps(bb, v[0], v, hb, heads)
        cur = bb.emit(red(cur, ax, kd))
        return _emit_steps(bb, cur, v, tb, tails)
    return inputs, fn


def _wide_movement_graph(rng):
    """take / concat / strided_slice / tile / broadcast_to / squeeze / flip between elementwise ops."""
    r = rng.randint(2, 4)
    shape = [rng.randint(2, 6) for _ in range(r)]
    kind = rng.choice(["take", "concat", "strided_slice", "tile", "broadcast_to", "squeeze", "flip"])
    inputs = [T(shape)]
    ax = rng.randint(0, r - 1)
    if kind == "squeeze" or kind == "broadcast_to":
        ones = sorted(rng.sample(range(1, r), rng.randint(1, r - 1)))
        shape = [1 if i in ones else s for i, s in enumerate(shape)]
        inputs = [T(shape)]
    if kind == "take":
        inputs.append(T([rng.randint(1, 5)], "int64"))
        ax = rng.randint(1, r - 1)
        move = lambda bb, x, v: R.take(x, v[1], ax)
    elif kind == "concat":
        ax = rng.randint(1, r - 1)
        other = list(shape)
        other[ax] = rng.randint(1, 4)
        inputs.append(T(other))
        first = rng.random() < 0.5
        move = lambda bb, x, v: R.concat([x, v[1]] if first else [v[1], x], ax)
    elif kind == "strided_slice":
        axes = sorted(rng.sample(range(1, r), rng.randint(1, r - 1)))
        begin, end, strides = [], [], []
        for a in axes:
            s = shape[a]
            # end one past the last element taken, as gen_ops draws it (the loops show no more)
            if rng.random() < 0.25 and s > 2:
                st = -rng.randint(1, 2)
                b = rng.randint(1, s - 1)
                last = b + st * ((b - rng.randint(0, b - 1)) // -st)
                e = last + st if last + st >= 0 else -s - 1  # -1 would count from the end
                begin.append(b), end.append(e), strides.append(st)
            else:
                b = rng.randint(0, s - 2)
                st = rng.choice([1, 1, 2])
                begin.append(b), end.append(b + st * ((rng.randint(b + 1, s) - b - 1) // st) + 1), strides.append(st)
        move = lambda bb, x, v: R.strided_slice(x, axes, begin, end, strides)
    elif kind == "tile":
        reps = [rng.randint(1, 3) for _ in range(rng.randint(r, r + 1))]  # fewer are padded with ones
        move = lambda bb, x, v: R.tile(x, reps)
    elif kind == "broadcast_to":
        def move(bb, x, v):
            tgt = [x.ty.shape.values[0]] + [rng.randint(2, 4) if s == 1 else s for s in shape[1:]]
            return R.broadcast_to(x, tgt)
    elif kind == "squeeze":
        sq = [a for a in ones if rng.random() < 0.7] or ones[:1]
        move = lambda bb, x, v: R.squeeze(x, sq)
    else:
        axf = rng.randint(0, r - 1)
        move = lambda bb, x, v: R.flip(x, axf)
    pre = [_wide_follower(rng, shape, None) for _ in range(rng.randint(0, 1))]
    post_u = [rng.choice([R.exp, R.sigmoid, R.nn.relu, R.tanh, R.sqrt, R.abs, R.negative])
              for _ in range(rng.randint(0 if pre else 1, 2))]
    base, inputs = len(inputs), inputs + [t for extra, _ in pre for t in extra]

    def fn(bb, v):
        cur = _emit_steps(bb, v[0], v, base, pre)
        cur = bb.emit(move(bb, cur, v))
        for u in post_u:
            cur = bb.emit(u(cur))
        return cur
    return inputs, fn


def _wide_bmm_graph(rng):
    """3-D @ 3-D batched matmul, the rhs permuted (or not), then followers."""
    b, m, k, j = rng.randint(1, 3), rng.randint(2, 7), rng.randint(2, 7), rng.randint(2, 7)
    perm = rng.choice([[0, 2, 1], [0, 2, 1], None])
    rhs = [b, j, k] if perm else [b, k, j]
    steps = [_wide_follower(rng, [b, m, j], 2) for _ in range(rng.randint(0, 2))]
    inputs = [T([b, m, k]), T(rhs)]
    base, inputs = len(inputs), inputs + [t for extra, _ in steps for t in extra]

    def fn(bb, v):
        y = bb.emit(R.permute_dims(v[1], perm)) if perm else v[1]
        return _emit_steps(bb, bb.emit(R.matmul(v[0], y)), v, base, steps)
    return inputs, fn


def _wide_norm_graph(rng):
    """group_norm / instance_norm / batch_norm (inference) / layer_norm over 2 axes /
    softmax, log_softmax on a non-last axis, then followers."""
    kind = rng.choice(["group_norm", "instance_norm", "batch_norm", "layer_norm2", "softmax", "log_softmax"])
    eps = rng.choice([1e-5, 1e-3])
    r = 4 if kind in ("group_norm", "instance_norm") else rng.randint(3, 4)
    shape = [rng.randint(1, 3)] + [rng.randint(2, 6) for _ in range(r - 1)]
    if kind == "group_norm":
        g = rng.choice([1, 2])
        shape[1] = g * rng.randint(1, 3)
    c = shape[1]
    inputs = [T(shape)]
    if kind in ("group_norm", "instance_norm"):
        inputs += [T([c]), T([c])]
    elif kind == "batch_norm":
        inputs += [T([c])] * 4
    elif kind == "layer_norm2":
        inputs += [T(shape[-2:])] * 2
    ax = rng.randint(0, r - 2)
    steps = [_wide_follower(rng, shape, 1) for _ in range(rng.randint(1, 2))]
    base, inputs = len(inputs), inputs + [t for extra, _ in steps for t in extra]

    def fn(bb, v):
        if kind == "group_norm":
            cur = bb.emit(R.nn.group_norm(v[0], v[1], v[2], g, 1, [2, 3], eps))
        elif kind == "instance_norm":
            cur = bb.emit(R.nn.instance_norm(v[0], v[1], v[2], 1, [2, 3], eps))
        elif kind == "batch_norm":
            t = bb.emit(R.nn.batch_norm(v[0], v[1], v[2], v[3], v[4], 1, eps, training=False))
            cur = bb.emit(relax.TupleGetItem(t, 0))
        elif kind == "layer_norm2":
            cur = bb.emit(R.nn.layer_norm(v[0], v[1], v[2], [r - 2, r - 1], eps))
        else:
            cur = bb.emit(getattr(R.nn, kind)(v[0], ax))
        return _emit_steps(bb, cur, v, base, steps)
    return inputs, fn


WIDE_GRAPHS = [(_wide_chain_graph, 6), (_wide_reduction_graph, 3), (_wide_movement_graph, 3),
               (_wide_bmm_graph, 1), (_wide_norm_graph, 3)]


# ----------------------------------------------------------------------------- other graph shapes
# Drawn only with OPINFO_WIDE_FUSED=2: diamonds (an intermediate read by two later ops), two
# chains joined, softmax / layer_norm / variance written from primitives, reductions of
# products, bias shapes of every rank, scalar constants on either side, comparisons feeding
# where, clip/minimum/maximum chains, casts inside chains, movement ops between elementwise
# ops, matmul/conv followed by diamonds or residual adds, long chains.

def _c(x):
    return relax.const(x, F)


def _w2_shape(rng, lo=2, hi=4):
    return [rng.randint(1, 3)] + [rng.randint(2, 6) for _ in range(rng.randint(lo, hi) - 1)]


def _w2_unary(rng):
    name = rng.choice(["exp", "tanh", "sigmoid", "relu", "sqrt_abs", "negative", "square", "abs", "erf", "log_abs"])
    return {"exp": R.exp, "tanh": R.tanh, "sigmoid": R.sigmoid, "relu": R.nn.relu, "negative": R.negative,
            "square": R.square, "abs": R.abs, "erf": R.erf,
            "sqrt_abs": lambda x: R.sqrt(R.abs(x)), "log_abs": lambda x: R.log(R.abs(x))}[name]


def _w2_bias(rng, shape):
    """A bias of any rank up to len(shape), each kept axis 1 or the full extent (not the batch)."""
    r = len(shape)
    k = rng.randint(1, r)
    tail = shape[r - k:]
    out = [1 if (i == r - k and r - k == 0) or rng.random() < 0.35 else s for i, s in zip(range(r - k, r), tail)]
    if r - k == 0:
        out[0] = 1  # the batch may be symbolic
    return out


def _w2_diamond(rng):
    """an intermediate used twice."""
    kind = rng.choice(["mul_act_add", "center_square", "center_div", "sq_diff", "gate", "self_add", "residual_act"])
    shape = _w2_shape(rng)
    r = len(shape)
    ax = rng.randint(1, r - 1)
    kd = True
    pre = rng.random() < 0.5
    inputs = [T(shape)] + ([T(_w2_bias(rng, shape))] if pre else [])
    # a * sigmoid(a) is nn.silu's very blocks (compute, T_multiply), d * d square's (T_multiply):
    # the loops cannot tell them apart, so neither is drawn
    act = rng.choice([R.tanh, R.exp, R.nn.relu, R.erf])

    def fn(bb, v):
        a = bb.emit(R.add(v[0], v[1])) if pre else v[0]
        if kind == "mul_act_add":
            s = bb.emit(act(a))
            m = bb.emit(R.multiply(a, s))
            return bb.emit(R.add(m, a))
        if kind == "center_square":
            d = bb.emit(R.subtract(a, bb.emit(R.mean(a, [ax], kd))))
            return bb.emit(R.square(d))
        if kind == "center_div":
            m = bb.emit(rng.choice([R.max, R.sum, R.mean])(a, [ax], kd))
            return bb.emit(R.divide(a, m) if rng.random() < 0.5 else R.subtract(a, m))
        if kind == "sq_diff":
            d = bb.emit(R.subtract(a, _c(rng.choice([0.5, 1.0]))))
            return bb.emit(R.multiply(d, bb.emit(R.abs(d))))
        if kind == "gate":
            s = bb.emit(act(a))
            t = bb.emit(R.tanh(a))
            return bb.emit(R.multiply(s, t))
        if kind == "self_add":
            e = bb.emit(act(a))
            return bb.emit(R.add(e, e))
        e = bb.emit(act(a))
        f = bb.emit(R.multiply(e, _c(0.5)))
        return bb.emit(R.add(f, a))
    return inputs, fn


def _w2_join(rng):
    """two elementwise chains joined by a binary op: tanh(a) * exp(b)."""
    shape = _w2_shape(rng)
    other = shape if rng.random() < 0.6 else _w2_bias(rng, shape)
    ua, ub = [_w2_unary(rng) for _ in range(rng.randint(1, 2))], [_w2_unary(rng) for _ in range(rng.randint(1, 2))]
    op = getattr(R, rng.choice(["add", "multiply", "subtract", "divide", "maximum", "minimum"]))
    tail = [_w2_unary(rng) for _ in range(rng.randint(0, 1))]

    def fn(bb, v):
        a, b = v[0], v[1]
        for u in ua:
            a = bb.emit(u(a))
        for u in ub:
            b = bb.emit(u(b))
        cur = bb.emit(op(a, b))
        for u in tail:
            cur = bb.emit(u(cur))
        return cur
    return [T(shape), T(other)], fn


def _w2_manual(rng):
    """softmax / log_softmax / layer_norm / rms_norm / variance written from primitives."""
    kind = rng.choice(["softmax", "softmax_nomax", "log_softmax", "layer_norm", "rms_norm", "variance", "l2norm"])
    shape = _w2_shape(rng, 2, 4)
    r = len(shape)
    ax = rng.choice([r - 1, r - 1, rng.randint(1, r - 1)])
    eps = rng.choice([1e-5, 1e-6])
    inputs = [T(shape)]
    if kind in ("layer_norm", "rms_norm"):
        inputs += [T([shape[-1]])] * (2 if kind == "layer_norm" else 1)
        ax = r - 1

    def fn(bb, v):
        x = v[0]
        if kind.startswith("softmax") or kind == "log_softmax":
            if kind != "softmax_nomax":
                x = bb.emit(R.subtract(x, bb.emit(R.max(x, [ax], True))))
            e = bb.emit(R.exp(x))
            s = bb.emit(R.sum(e, [ax], True))
            if kind == "log_softmax":
                return bb.emit(R.subtract(x, bb.emit(R.log(s))))
            return bb.emit(R.divide(e, s))
        if kind == "rms_norm":
            ms = bb.emit(R.mean(bb.emit(R.square(x)), [ax], True))
            y = bb.emit(R.multiply(x, bb.emit(R.rsqrt(bb.emit(R.add(ms, _c(eps)))))))
            return bb.emit(R.multiply(y, v[1]))
        if kind == "l2norm":
            ss = bb.emit(R.sum(bb.emit(R.square(x)), [ax], True))
            return bb.emit(R.divide(x, bb.emit(R.sqrt(ss))))
        d = bb.emit(R.subtract(x, bb.emit(R.mean(x, [ax], True))))
        var = bb.emit(R.mean(bb.emit(R.square(d)), [ax], kind != "variance" or rng.random() < 0.5))
        if kind == "variance":
            return var
        y = bb.emit(R.divide(d, bb.emit(R.sqrt(bb.emit(R.add(var, _c(eps)))))))
        return bb.emit(R.add(bb.emit(R.multiply(y, v[1])), v[2]))
    return inputs, fn


def _w2_reduce_product(rng):
    """sum / mean / max of a product (or difference), then maybe a tail."""
    shape = _w2_shape(rng, 2, 4)
    r = len(shape)
    ax = sorted(rng.sample(range(1, r), rng.randint(1, r - 1)))
    kd = rng.random() < 0.5
    other = shape if rng.random() < 0.6 else _w2_bias(rng, shape)
    op = getattr(R, rng.choice(["multiply", "multiply", "subtract", "add"]))
    red = rng.choice([R.sum, R.sum, R.mean, R.max, R.min])
    tail = [_w2_unary(rng) for _ in range(rng.randint(0, 1))]

    def fn(bb, v):
        cur = bb.emit(red(bb.emit(op(v[0], v[1])), ax, kd))
        for u in tail:
            cur = bb.emit(u(cur))
        return cur
    return [T(shape), T(other)], fn


def _w2_scalar(rng):
    """scalar constants on either side, comparisons feeding where, clip/min/max chains, casts."""
    shape = _w2_shape(rng)
    steps = []
    for _ in range(rng.randint(2, 4)):
        k = rng.choice([2.0, 0.5, -1.0, 3.0, 0.25])
        kind = rng.choice(["lhs", "rhs", "where", "where_in", "clip", "minmax", "cast", "unary"])
        if kind == "lhs":
            op = getattr(R, rng.choice(["subtract", "divide", "add", "multiply", "maximum", "minimum", "power"]))
            steps.append(lambda bb, p, v, op=op, k=abs(k) + 0.5: op(_c(k), p))
        elif kind == "rhs":
            op = getattr(R, rng.choice(["subtract", "divide", "add", "multiply", "maximum", "minimum"]))
            steps.append(lambda bb, p, v, op=op, k=k: op(p, _c(k)))
        elif kind == "where":
            cmp = getattr(R, rng.choice(["greater", "less", "greater_equal", "less_equal", "equal", "not_equal"]))
            other = rng.choice(["const", "neg", "zero"])
            steps.append(lambda bb, p, v, cmp=cmp, k=k, other=other: R.where(
                cmp(p, _c(k)), p, _c(0.0) if other == "zero" else R.negative(p) if other == "neg" else _c(k)))
        elif kind == "where_in":  # a comparison of two inputs choosing between them
            cmp = getattr(R, rng.choice(["greater", "less"]))
            steps.append(lambda bb, p, v, cmp=cmp: R.where(cmp(p, v[1]), p, v[1]))
        elif kind == "clip":
            lo = rng.choice([-1.0, 0.0, 0.5])
            steps.append(lambda bb, p, v, lo=lo: R.clip(p, lo, lo + rng.choice([1.0, 6.0])))
        elif kind == "minmax":
            steps.append(lambda bb, p, v, k=k: R.minimum(R.maximum(p, _c(-abs(k))), _c(abs(k) + 1.0)))
        elif kind == "cast":
            dt = rng.choice(["float16", "float64"])
            u = _w2_unary(rng)
            steps.append(lambda bb, p, v, dt=dt, u=u: R.astype(bb.emit(u(bb.emit(R.astype(p, dt)))), F))
        else:
            steps.append(lambda bb, p, v, u=_w2_unary(rng): u(p))

    def fn(bb, v):
        cur = v[0]
        for st in steps:
            cur = bb.emit(st(bb, cur, v))
        return cur
    return [T(shape), T(shape)], fn


def _w2_move_between(rng):
    """elementwise ops on both sides of a reshape / expand_dims / permute_dims / squeeze."""
    shape = _w2_shape(rng, 2, 4)
    r = len(shape)
    perm = list(range(r))
    while perm == sorted(perm):
        rng.shuffle(perm)
    kind = rng.choice(["permute_dims", "reshape", "expand_dims", "reshape_split"])
    size = int(np.prod(shape[1:]))

    def move(x):
        if kind == "permute_dims":
            return R.permute_dims(x, perm)
        if kind == "expand_dims":
            return R.expand_dims(x, rng.randint(1, r))
        if kind == "reshape":
            return R.reshape(x, [x.ty.shape.values[0], size])
        return R.reshape(x, [x.ty.shape.values[0]] + list(reversed(shape[1:])))
    before = [_w2_unary(rng) for _ in range(rng.randint(0, 2))]
    after = [_w2_unary(rng) for _ in range(rng.randint(1, 2))]
    bias = rng.random() < 0.5

    def fn(bb, v):
        cur = bb.emit(R.add(v[0], v[1])) if bias else v[0]
        for u in before:
            cur = bb.emit(u(cur))
        cur = bb.emit(move(cur))
        for u in after:
            cur = bb.emit(u(cur))
        return cur
    return [T(shape)] + ([T(_w2_bias(rng, shape))] if bias else []), fn


def _w2_anchor_diamond(rng):
    """matmul or conv followed by a diamond or a residual add of the input."""
    kind = rng.choice(["matmul", "matmul", "conv_res", "conv_res", "conv"])
    if kind == "matmul":
        b, m, k, j = rng.randint(1, 3), rng.randint(2, 7), rng.randint(2, 7), rng.randint(2, 7)
        inputs = [T([b, m, k]), T([k, j]), T([j])]
        anchor = lambda v: R.matmul(v[0], v[1])
        out_shape = [b, m, j]
    else:
        n, c = rng.randint(1, 2), rng.randint(1, 4)
        hw = [rng.randint(4, 8), rng.randint(4, 8)]
        ks = rng.choice([1, 3])
        cout = c if kind == "conv_res" else rng.randint(1, 4)
        inputs = [T([n, c] + hw), T([cout, c, ks, ks]), T([1, cout, 1, 1])]
        anchor = lambda v: R.nn.conv2d(v[0], v[1], [1, 1], [ks // 2] * 4, [1, 1], 1, "NCHW", "OIHW")
        out_shape = [n, cout] + hw
    tail = rng.choice(["residual", "mul_act", "gate", "center"]) if kind != "conv_res" else "residual"

    def fn(bb, v):
        a = bb.emit(anchor(v))
        a = bb.emit(R.add(a, v[2]))
        if tail == "residual":
            a = bb.emit(rng.choice([R.nn.relu, R.tanh, R.sigmoid])(a))
            return bb.emit(R.add(a, v[0]) if kind == "conv_res" else R.add(a, a))
        if tail == "mul_act":
            return bb.emit(R.multiply(a, bb.emit(R.tanh(a))))
        if tail == "gate":
            return bb.emit(R.multiply(bb.emit(R.sigmoid(a)), bb.emit(R.exp(a))))
        return bb.emit(R.square(bb.emit(R.subtract(a, _c(1.0)))))
    return inputs, fn


def _w2_long_chain(rng):
    """5-6 ops after an anchor or none, with bias operands of every rank."""
    inputs, anchor, shape, cax = _anchor(rng) if rng.random() < 0.6 else _wide_anchor(rng)
    steps = []
    for _ in range(rng.randint(5, 6) - (1 if anchor else 0)):
        if rng.random() < 0.4:
            op = getattr(R, rng.choice(["add", "multiply", "subtract", "divide", "maximum", "minimum"]))
            b = _w2_bias(rng, shape)
            steps.append(([T(b)], (lambda p, e, op=op: op(e[0], p)) if rng.random() < 0.3
                          else (lambda p, e, op=op: op(p, e[0]))))
        else:
            steps.append(_wide_follower(rng, shape, cax) if rng.random() < 0.5 else ([], lambda p, e, u=_w2_unary(rng): u(p)))
    base, inputs = len(inputs), inputs + [t for extra, _ in steps for t in extra]

    def fn(bb, v):
        return _emit_steps(bb, bb.emit(anchor(v)) if anchor is not None else v[0], v, base, steps)
    return inputs, fn


WIDE2_GRAPHS = [(_w2_diamond, 3), (_w2_join, 2), (_w2_manual, 3), (_w2_reduce_product, 2), (_w2_scalar, 3),
                (_w2_move_between, 2), (_w2_anchor_diamond, 2), (_w2_long_chain, 3)]


# ----------------------------------------------------------------------------- main

def _record(cid, rng, out_dir, text):
    dialect = "tirx"
    if rng.random() < 0.4:
        text, dialect = to_old_dialect(text), "tir"
    with open(os.path.join(out_dir, cid + ".py"), "w") as fh:
        fh.write(text)
    return dialect


def _shapes(inputs, dynamic):
    same = lambda i, s: i == 0 or (WIDE2 and list(s) == list(inputs[0][0]))
    return [{"shape": ["n" if dynamic and same(i, s) and j == 0 else str(x) for j, x in enumerate(s)], "dtype": d}
            for i, (s, d) in enumerate(inputs)]


def main(out_dir, seed, count, variants):
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed)
    cases = []
    for j in range(count):
        variant = variants[j % len(variants)]
        try:
            if variant == "layout":
                name = rng.choice(list(WIDE_SPECS if LAYOUT_WIDE else LAYOUT_SPECS))
                cid, dynamic = f"{name.replace('.', '_')}_{seed}_{j}", False
                if LAYOUT_DYNAMIC and not LAYOUT_WIDE:
                    dynamic = rng.random() < 0.5
                got = wide_layout_case(name, rng) if LAYOUT_WIDE else layout_case(name, rng, dynamic)
                if got is None:
                    continue
                mod, attrs, inputs, kinds = got
                entry = {"op": name, "attrs": attrs}
            else:
                dynamic = rng.random() < 0.3
                got = fused_case(rng, dynamic)
                if got is None:
                    continue
                mod, ops, inputs, kinds = got
                cid = "fused_" + "_".join(o["op"].split(".")[-1] for o in ops) + f"_{seed}_{j}"
                entry = {"op": "fused", "fused_ops": ops}
            text = mod.script()
        except Exception as e:
            print("SKIP", variant, j, type(e).__name__, str(e).splitlines()[0][:150] if str(e) else "",
                  file=sys.stderr)
            continue
        dialect = _record(cid, rng, out_dir, text)
        cases.append({"id": cid, **entry, "inputs": _shapes(inputs, dynamic), "tvm_kind": kinds,
                      "n_primfuncs": len(kinds), "variant": variant, "dynamic": dynamic, "dialect": dialect,
                      "numeric": False})
    with open(os.path.join(out_dir, "index.json"), "w") as fh:
        json.dump({"generator": f"apache-tvm {tvm.__version__}", "seed": seed, "cases": cases}, fh, indent=1)
    print(len(cases), "cases")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] or ["layout", "fused"])
