"""Generate an ops corpus like ../shared/corpus/ops with real TVM 0.27 (index.json + CASE.py [+ CASE.npz])."""
import json, os, random, sys
import numpy as np
import tvm
from tvm import relax
from tvm import tirx
from gen_models import attrs_of, jsonable, tensor_type

R = relax.op
F = "float32"


def T(shape, dtype=F):
    return (tuple(shape), dtype)


def rshape(rng, rank, lo=2, hi=9):
    return [rng.randint(lo, hi) for _ in range(rank)]


# ----------------------------------------------------------------------------- specs
# each spec: rng -> (inputs [(shape, dtype)], fn(vars) -> relax expr)
SPECS = {}


def spec(name):
    def deco(f):
        SPECS[name] = f
        return f
    return deco


UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "exp", "floor", "log",
         "negative", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc",
         "erf", "isnan", "isinf", "isfinite", "logical_not"]
for _u in UNARY:
    def _mk(u):
        def f(rng):
            dt = "bool" if u == "logical_not" else F
            return [T(rshape(rng, rng.randint(1, 4)), dt)], lambda v: getattr(R, u)(v[0])
        return f
    SPECS[_u] = _mk(_u)

for _u in ["nn.relu", "nn.gelu", "nn.gelu_tanh", "nn.silu", "nn.selu", "nn.relu6"]:
    def _mk(u):
        def f(rng):
            return [T(rshape(rng, rng.randint(1, 4)))], lambda v: getattr(R.nn, u[3:])(v[0])
        return f
    SPECS[_u] = _mk(_u)


@spec("nn.leakyrelu")
def _(rng):
    a = rng.choice([0.01, 0.1, 0.2, 0.3, 0.05])
    return [T(rshape(rng, rng.randint(1, 4)))], lambda v: R.nn.leakyrelu(v[0], a)


@spec("nn.softplus")
def _(rng):
    b, t = rng.choice([1.0, 2.0, 0.5]), rng.choice([20.0, 10.0, 5.0])
    return [T(rshape(rng, rng.randint(1, 4)))], lambda v: R.nn.softplus(v[0], b, t)


@spec("clip")
def _(rng):
    lo = rng.choice([-1.0, 0.0, -2.5, 0.5]); hi = lo + rng.choice([1.0, 3.0, 6.0])
    return [T(rshape(rng, rng.randint(1, 4)))], lambda v: R.clip(v[0], lo, hi)


BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum", "mod", "floor_mod",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
BOOLBIN = ["logical_and", "logical_or", "logical_xor"]
INTBIN = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]


def _bshapes(rng):
    r = rng.randint(1, 4)
    a = rshape(rng, r)
    kind = rng.randint(0, 3)
    if kind == 0:
        b = list(a)
    elif kind == 1:
        b = [1 if rng.random() < 0.5 else d for d in a]
    else:
        b = a[rng.randint(0, r - 1):]
    if rng.random() < 0.3:
        a, b = b, a
    return a, b


for _b in BINARY + BOOLBIN + INTBIN:
    def _mk(b):
        def f(rng):
            dt = "bool" if b in BOOLBIN else ("int32" if b in INTBIN else F)
            s1, s2 = _bshapes(rng)
            return [T(s1, dt), T(s2, dt)], lambda v: getattr(R, b)(v[0], v[1])
        return f
    SPECS[_b] = _mk(_b)


def _axes(rng, r, allow_none=True):
    if allow_none and rng.random() < 0.2:
        return None
    k = rng.randint(1, r)
    ax = sorted(rng.sample(range(r), k))
    return [a - r if rng.random() < 0.3 else a for a in ax]


for _r in ["sum", "mean", "max", "min", "prod", "variance", "std"]:
    def _mk(n):
        def f(rng):
            r = rng.randint(1, 4)
            ax, kd = _axes(rng, r), rng.random() < 0.5
            return [T(rshape(rng, r))], lambda v: getattr(R, n)(v[0], ax, kd)
        return f
    SPECS[_r] = _mk(_r)

for _r in ["argmax", "argmin"]:
    def _mk(n):
        def f(rng):
            r = rng.randint(1, 4)
            ax = rng.choice([None] + list(range(r)))
            kd = rng.random() < 0.5
            return [T(rshape(rng, r))], lambda v: getattr(R, n)(v[0], ax, kd)
        return f
    SPECS[_r] = _mk(_r)

for _r in ["cumsum", "cumprod"]:
    def _mk(n):
        def f(rng):
            r = rng.randint(1, 3)
            ax = rng.choice(list(range(r)))
            ex = rng.random() < 0.3
            return [T(rshape(rng, r))], lambda v: getattr(R, n)(v[0], ax, None, ex)
        return f
    SPECS[_r] = _mk(_r)

for _s in ["nn.softmax", "nn.log_softmax"]:
    def _mk(n):
        def f(rng):
            r = rng.randint(1, 4)
            ax = rng.randint(-r, r - 1)
            return [T(rshape(rng, r))], lambda v: getattr(R.nn, n[3:])(v[0], ax)
        return f
    SPECS[_s] = _mk(_s)


@spec("nn.layer_norm")
def _(rng):
    r = rng.randint(2, 4)
    s = rshape(rng, r)
    k = rng.randint(1, r - 1)
    axes = list(range(r - k, r))
    eps = rng.choice([1e-5, 1e-6, 1e-3])
    c, sc = True, True  # TVM's legalization ignores both
    return [T(s), T([s[a] for a in axes]), T([s[a] for a in axes])], lambda v: R.nn.layer_norm(v[0], v[1], v[2], axes, eps, c, sc)


@spec("nn.rms_norm")
def _(rng):
    r = rng.randint(2, 4)
    s = rshape(rng, r)
    axes = [r - 1] if rng.random() < 0.6 else [r - 2, r - 1]
    eps = rng.choice([1e-5, 1e-6])
    return [T(s), T([s[a] for a in axes])], lambda v: R.nn.rms_norm(v[0], v[1], axes, eps)


@spec("nn.group_norm")
def _(rng):
    g = rng.choice([1, 2, 4])
    c = g * rng.randint(1, 3)
    r = rng.randint(3, 4)
    s = [rng.randint(1, 3), c] + rshape(rng, r - 2)
    eps = rng.choice([1e-5, 1e-6])
    return [T(s), T([c]), T([c])], lambda v: R.nn.group_norm(v[0], v[1], v[2], g, 1, list(range(2, r)), eps)


@spec("nn.instance_norm")
def _(rng):
    r = rng.randint(3, 4)
    s = rshape(rng, r)
    eps = rng.choice([1e-5, 1e-6])
    return [T(s), T([s[1]]), T([s[1]])], lambda v: R.nn.instance_norm(v[0], v[1], v[2], 1, list(range(2, r)), eps)


@spec("nn.batch_norm")
def _(rng):
    r = rng.randint(2, 4)
    s = rshape(rng, r)
    ax = 1
    eps = rng.choice([1e-5, 1e-3])
    c = [T([s[ax]])] * 4
    return [T(s)] + c, lambda v: R.nn.batch_norm(v[0], v[1], v[2], v[3], v[4], ax, eps, training=False)


def _conv(rng, nd, transpose=False):
    layouts = {1: [("NCW", "OIW"), ("NWC", "WIO")], 2: [("NCHW", "OIHW"), ("NHWC", "HWIO"), ("NHWC", "OHWI")],
               3: [("NCDHW", "OIDHW"), ("NDHWC", "DHWIO")]}
    if transpose:
        layouts = {1: [("NCW", "IOW")], 2: [("NCHW", "IOHW")], 3: [("NCDHW", "IODHW")]}
    dl, kl = rng.choice(layouts[nd])
    groups = rng.choice([1, 1, 2, 4]) if not transpose else rng.choice([1, 1, 2])
    cin = groups * rng.randint(1, 3)
    cout = groups * rng.randint(1, 3)
    if rng.random() < 0.15 and not transpose:
        groups = cin; cout = cin * rng.choice([1, 2])  # depthwise
    spatial = [rng.randint(5, 10) for _ in range(nd)]
    k = [rng.choice([1, 2, 3]) for _ in range(nd)]
    strides = [rng.choice([1, 1, 2]) for _ in range(nd)]
    dil = [rng.choice([1, 1, 2]) for _ in range(nd)] if not transpose else [1] * nd
    pad = [rng.randint(0, max(0, k[i] - 1)) for i in range(nd)] + [rng.randint(0, max(0, k[i] - 1)) for i in range(nd)]
    n = rng.randint(1, 2)
    dims = dict(zip("DHW"[-nd:], spatial))
    dshape = [{"N": n, "C": cin, **dims}[ch] for ch in dl]
    kd = dict(zip("DHW"[-nd:], k))
    if transpose:
        wshape = [{"I": cin, "O": cout // groups, **kd}[ch] for ch in kl]
        op = [0] * nd
        fn = {1: R.nn.conv1d_transpose, 2: R.nn.conv2d_transpose, 3: R.nn.conv3d_transpose}[nd]
        return [T(dshape), T(wshape)], lambda v: fn(v[0], v[1], strides, pad, op, dil, groups, dl, kl)
    wshape = [{"O": cout, "I": cin // groups, **kd}[ch] for ch in kl]
    fn = {1: R.nn.conv1d, 2: R.nn.conv2d, 3: R.nn.conv3d}[nd]
    return [T(dshape), T(wshape)], lambda v: fn(v[0], v[1], strides, pad, dil, groups, dl, kl)


for _nd in (1, 2, 3):
    SPECS[f"nn.conv{_nd}d"] = (lambda nd: lambda rng: _conv(rng, nd))(_nd)
    SPECS[f"nn.conv{_nd}d_transpose"] = (lambda nd: lambda rng: _conv(rng, nd, True))(_nd)


def _pool(rng, nd, kind):
    layouts = {1: ["NCW", "NWC"], 2: ["NCHW", "NHWC"], 3: ["NCDHW", "NDHWC"]}
    lay = rng.choice(layouts[nd])
    spatial = [rng.randint(5, 12) for _ in range(nd)]
    k = [rng.choice([1, 2, 3]) for _ in range(nd)]
    s = [rng.choice([1, 2, 2]) for _ in range(nd)]
    d = [rng.choice([1, 1, 1, 2]) for _ in range(nd)]
    p = [rng.randint(0, max(0, k[i] // 2)) for i in range(nd)] * 2
    if rng.random() < 0.4:
        p = [rng.randint(0, max(0, k[i] // 2)) for i in range(nd)] + [rng.randint(0, max(0, k[i] // 2)) for i in range(nd)]
    ceil = rng.random() < 0.3
    cip = rng.random() < 0.4 if kind == 'avg' else False
    dims = dict(zip("DHW"[-nd:], spatial))
    shape = [{"N": rng.randint(1, 2), "C": rng.randint(2, 8), **dims}[ch] for ch in lay]
    fn = getattr(R.nn, f"{kind}_pool{nd}d")
    return [T(shape)], lambda v: fn(v[0], k, s, p, d, ceil, cip, lay)


for _nd in (1, 2, 3):
    for _k in ("max", "avg"):
        SPECS[f"nn.{_k}_pool{_nd}d"] = (lambda nd, kk: lambda rng: _pool(rng, nd, kk))(_nd, _k)


def _adaptive(rng, nd):
    layouts = {1: ["NCW", "NWC"], 2: ["NCHW", "NHWC"], 3: ["NCDHW", "NDHWC"]}
    lay = rng.choice(layouts[nd])
    spatial = [rng.randint(4, 12) for _ in range(nd)]
    outs = [rng.choice([1, 2, sp // 2 if sp % 2 == 0 else 1, sp]) for sp in spatial]
    dims = dict(zip("DHW"[-nd:], spatial))
    shape = [{"N": rng.randint(1, 2), "C": rng.randint(2, 8), **dims}[ch] for ch in lay]
    fn = getattr(R.nn, f"adaptive_avg_pool{nd}d")
    return [T(shape)], lambda v: fn(v[0], outs, lay)


for _nd in (1, 2, 3):
    SPECS[f"nn.adaptive_avg_pool{_nd}d"] = (lambda nd: lambda rng: _adaptive(rng, nd))(_nd)


@spec("matmul")
def _(rng):
    m, k, n = rshape(rng, 3)
    kind = rng.randint(0, 4)
    if kind == 0:
        a, b = [m, k], [k, n]
    elif kind == 1:
        bt = rshape(rng, 1)
        a, b = bt + [m, k], bt + [k, n]
    elif kind == 2:
        bt = rshape(rng, 1)
        a, b = bt + [m, k], [k, n]
    elif kind == 3:
        a, b = [k], [k, n]
    else:
        a, b = [2, 1, m, k], [3, k, n]
    return [T(a), T(b)], lambda v: R.matmul(v[0], v[1])


@spec("permute_dims")
def _(rng):
    r = rng.randint(2, 5)
    ax = list(range(r)); rng.shuffle(ax)
    if rng.random() < 0.15:
        ax = None
    return [T(rshape(rng, r))], lambda v: R.permute_dims(v[0], ax)


@spec("reshape")
def _(rng):
    s = rshape(rng, rng.randint(1, 4))
    tot = int(np.prod(s))
    divs = [d for d in range(1, tot + 1) if tot % d == 0]
    a = rng.choice(divs)
    new = [a, tot // a] if rng.random() < 0.5 else [tot]
    if rng.random() < 0.3:
        new = [1] + new
    return [T(s)], lambda v: R.reshape(v[0], new)


@spec("flatten")
def _(rng):
    return [T(rshape(rng, rng.randint(2, 4)))], lambda v: R.flatten(v[0])


@spec("expand_dims")
def _(rng):
    r = rng.randint(1, 3)
    ax = rng.randint(-r - 1, r)
    return [T(rshape(rng, r))], lambda v: R.expand_dims(v[0], ax)


@spec("squeeze")
def _(rng):
    r = rng.randint(2, 4)
    s = rshape(rng, r)
    ax = sorted(rng.sample(range(r), rng.randint(1, r - 1)))
    for a in ax:
        s[a] = 1
    axx = ax if rng.random() < 0.7 else None
    return [T(s)], lambda v: R.squeeze(v[0], axx)


@spec("concat")
def _(rng):
    r = rng.randint(1, 4)
    s = rshape(rng, r)
    ax = rng.randint(0, r - 1)
    n = rng.randint(2, 3)
    shapes = []
    for _ in range(n):
        t = list(s); t[ax] = rng.randint(1, 6); shapes.append(t)
    return [T(x) for x in shapes], lambda v: R.concat(v, ax)


@spec("stack")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    ax = rng.randint(0, r)
    n = rng.randint(2, 3)
    return [T(s)] * n, lambda v: R.stack(v, ax)


@spec("split")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r, 4, 10)
    ax = rng.randint(0, r - 1)
    if rng.random() < 0.5:
        sec = rng.choice([d for d in (2, 3, 4) if s[ax] % d == 0] or [1])
    else:
        sec = sorted(rng.sample(range(1, s[ax]), min(2, s[ax] - 1)))
    return [T(s)], lambda v: R.split(v[0], sec, ax)


@spec("strided_slice")
def _(rng):
    r = rng.randint(1, 4)
    s = rshape(rng, r, 3, 10)
    axes = sorted(rng.sample(range(r), rng.randint(1, r)))
    begin, end, strides = [], [], []
    for a in axes:
        b = rng.randint(0, s[a] - 2); st = rng.choice([1, 1, 2]); e = b + st * ((rng.randint(b + 1, s[a]) - b - 1) // st) + 1
        begin.append(b); end.append(e); strides.append(st)
    return [T(s)], lambda v: R.strided_slice(v[0], axes, begin, end, strides)


@spec("take")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    ax = rng.randint(0, r - 1)
    ir = rng.randint(1, 2)
    return [T(s), T(rshape(rng, ir), "int64")], lambda v: R.take(v[0], v[1], ax)


@spec("broadcast_to")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    src = [1 if rng.random() < 0.5 else d for d in s]
    if rng.random() < 0.3:
        s = [rng.randint(2, 4)] + s
    return [T(src)], lambda v: R.broadcast_to(v[0], s)


@spec("tile")
def _(rng):
    r = rng.randint(1, 3)
    reps = [rng.randint(1, 3) for _ in range(r)]
    return [T(rshape(rng, r))], lambda v: R.tile(v[0], reps)


@spec("repeat")
def _(rng):
    r = rng.randint(1, 3)
    ax = rng.choice([None] + list(range(r)))
    return [T(rshape(rng, r))], lambda v: R.repeat(v[0], rng.randint(2, 3), ax)


@spec("flip")
def _(rng):
    r = rng.randint(1, 4)
    return [T(rshape(rng, r))], lambda v: R.flip(v[0], rng.randint(0, r - 1))


@spec("where")
def _(rng):
    s1, s2 = _bshapes(rng)
    return [T(s1, "bool"), T(s1), T(s2)], lambda v: R.where(v[0], v[1], v[2])


@spec("astype")
def _(rng):
    src = rng.choice([F, "int32", "float16"]); dst = rng.choice([d for d in [F, "int32", "float16", "int64"] if d != src])
    return [T(rshape(rng, rng.randint(1, 3)), src)], lambda v: R.astype(v[0], dst)


@spec("nn.pad")
def _(rng):
    r = rng.randint(1, 4)
    pw = [rng.randint(0, 2) for _ in range(2 * r)]
    val = rng.choice([0.0, 1.0, -1.5])
    return [T(rshape(rng, r))], lambda v: R.nn.pad(v[0], pw, "constant", val)


@spec("image.resize2d")
def _(rng):
    lay = rng.choice(["NCHW", "NHWC"])
    h, w = rng.randint(3, 8), rng.randint(3, 8)
    sz = [rng.randint(2, 12), rng.randint(2, 12)]
    method = rng.choice(["nearest_neighbor", "linear", "cubic"])
    ctm = rng.choice(["half_pixel", "align_corners", "asymmetric"])
    rm = rng.choice(["round", "floor", "round_prefer_ceil"]) if method == "nearest_neighbor" else "round"
    shape = {"NCHW": [1, 3, h, w], "NHWC": [1, h, w, 3]}[lay]
    return [T(shape)], lambda v: R.image.resize2d(v[0], sz, None, lay, method, ctm, rm)


@spec("one_hot")
def _(rng):
    on, off = rng.choice([(1.0, 0.0), (5.0, -1.0)])
    r = rng.randint(1, 2)
    ax = rng.choice([-1, 0])
    return [T(rshape(rng, r), "int32")], lambda v: R.one_hot(v[0], relax.PrimValue(tirx.FloatImm(F, on)) if hasattr(relax, "PrimValue") else on, relax.PrimValue(tirx.FloatImm(F, off)) if hasattr(relax, "PrimValue") else off, rng.randint(3, 6), ax)


for _t in ("tril", "triu"):
    def _mk(n):
        def f(rng):
            k = rng.randint(-2, 2)
            return [T(rshape(rng, rng.randint(2, 3)))], lambda v: getattr(R, n)(v[0], k)
        return f
    SPECS[_t] = _mk(_t)


@spec("gather_elements")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    ax = rng.randint(0, r - 1)
    return [T(s), T(s, "int64")], lambda v: R.gather_elements(v[0], v[1], ax)


@spec("gather_nd")
def _(rng):
    s = rshape(rng, 3)
    m = rng.randint(1, 2)
    return [T(s), T([rng.randint(2, 4), m], "int64")], lambda v: R.gather_nd(v[0], v[1])


@spec("scatter_elements")
def _(rng):
    s = rshape(rng, 2)
    return [T(s), T(s, "int64"), T(s)], lambda v: R.scatter_elements(v[0], v[1], v[2], rng.randint(0, 1))


@spec("nn.prelu")
def _(rng):
    s = rshape(rng, rng.randint(2, 4))
    return [T(s), T([s[1]])], lambda v: R.nn.prelu(v[0], v[1], 1)


@spec("nn.pixel_shuffle")
def _(rng):
    u = rng.choice([2, 3])
    return [T([1, 2 * u * u, 3, 4])], lambda v: R.nn.pixel_shuffle(v[0], u)


@spec("nn.dropout")
def _(rng):
    return [T(rshape(rng, 2))], lambda v: R.nn.dropout(v[0], rng.choice([0.1, 0.5]))


@spec("einsum")
def _(rng):
    m, k, n = rshape(rng, 3)
    return [T([m, k]), T([k, n])], lambda v: R.einsum(v, "ij,jk->ik")


@spec("collapse_sum_to")
def _(rng):
    s = rshape(rng, 3)
    tgt = [1, s[1], 1] if rng.random() < 0.5 else [s[2]]
    return [T(s)], lambda v: R.collapse_sum_to(v[0], tgt)


@spec("nn.attention")
def _(rng):
    b, s, h, d = rng.randint(1, 2), rng.randint(2, 5), rng.randint(1, 2), rng.choice([4, 8])
    skv = rng.choice([s, rng.randint(2, 6)])
    dv = rng.choice([d, 4, 6])
    scale = rng.choice([None, None, round(rng.uniform(0.1, 1.0), 3)])
    causal = rng.choice([None, None, "TopLeft", "BottomRight"])
    return ([T([b, s, h, d]), T([b, skv, h, d]), T([b, skv, h, dv])],
            lambda v: R.nn.attention(v[0], v[1], v[2], scale=scale, causal_mask=causal))


# ---- ops beyond the sample corpus's list (hidden-corpus candidates)
for _b in ["atan2", "log_add_exp"]:
    def _mk(b):
        def f(rng):
            s1, s2 = _bshapes(rng)
            return [T(s1), T(s2)], lambda v: getattr(R, b)(v[0], v[1])
        return f
    SPECS[_b] = _mk(_b)


@spec("bitwise_not")
def _(rng):
    return [T(rshape(rng, rng.randint(1, 4)), "int32")], lambda v: R.bitwise_not(v[0])


@spec("outer")
def _(rng):
    return [T([rng.randint(2, 9)]), T([rng.randint(2, 9)])], lambda v: R.outer(v[0], v[1])


@spec("ewise_fma")
def _(rng):
    s = rshape(rng, rng.randint(1, 3))
    return [T(s)] * 3, lambda v: R.ewise_fma(v[0], v[1], v[2])


@spec("nn.batch_flatten")
def _(rng):
    return [T(rshape(rng, rng.randint(2, 4)))], lambda v: R.nn.batch_flatten(v[0])


@spec("image.resize3d")
def _(rng):
    shp = [1, rng.randint(1, 3)] + rshape(rng, 3, 2, 6)
    size = [d * rng.choice([1, 2]) + rng.choice([0, 1]) for d in shp[2:]]
    method = rng.choice(["nearest_neighbor", "linear"])
    ctm = rng.choice(["half_pixel", "align_corners", "asymmetric"])
    rm = rng.choice(["round", "floor", "ceil"]) if method == "nearest_neighbor" else ""
    return [T(shp)], lambda v: R.image.resize3d(v[0], size, method=method, coordinate_transformation_mode=ctm,
                                                 rounding_method=rm)


@spec("full_like")
def _(rng):
    fill = rng.choice([0.0, 1.0, -2.5, 3.0])
    return [T(rshape(rng, rng.randint(1, 4)))], lambda v: R.full_like(v[0], relax.const(fill, F))


@spec("masked_fill")
def _(rng):
    s = rshape(rng, rng.randint(1, 3))
    val = rng.choice([0.0, -1.0, 5.5])
    return [T(s), T(s, "bool")], lambda v: R.masked_fill(v[0], v[1], relax.const(val, F))


@spec("median")
def _(rng):
    r = rng.randint(1, 3)
    ax = rng.choice([None, rng.randint(0, r - 1)])
    kd = rng.random() < 0.5
    return [T(rshape(rng, r))], lambda v: R.median(v[0], ax, kd)


@spec("linear")
def _(rng):
    m, k, n = rng.randint(2, 6), rng.randint(2, 9), rng.randint(2, 9)
    if rng.random() < 0.5:
        return [T([m, k]), T([n, k]), T([n])], lambda v: R.linear(v[0], v[1], v[2])
    return [T([m, k]), T([n, k])], lambda v: R.linear(v[0], v[1])


@spec("scatter_nd")
def _(rng):
    return ([T([6, 4]), T([2, 1], "int64"), T([2, 4])],
            lambda v: R.scatter_nd(v[0], v[1], v[2], rng.choice(["update", "add"])))


@spec("reverse_sequence")
def _(rng):
    shp = rshape(rng, rng.randint(2, 4), 2, 6)
    seq, batch = rng.sample(range(len(shp)), 2)
    return [T(shp), T([shp[batch]], rng.choice(["int32", "int64"]))], \
        lambda v: R.reverse_sequence(v[0], v[1], seq, batch)


@spec("layout_transform")
def _(rng):
    c = rng.choice([4, 8])
    return ([T([1, c, rng.randint(2, 6), rng.randint(2, 6)])],
            lambda v: R.layout_transform(v[0], lambda n, ch, h, w: (n, ch // 4, h, w, ch % 4)))


@spec("eye_like")
def _(rng):
    return [T(rshape(rng, 2))], lambda v: R.eye_like(v[0], rng.choice([0, 1, -1]))


@spec("sort")
def _(rng):
    return [T(rshape(rng, 2))], lambda v: R.sort(v[0], -1, rng.random() < 0.5)


@spec("topk")
def _(rng):
    return [T(rshape(rng, 2, 4, 8))], lambda v: R.topk(v[0], 2, -1, "values")


@spec("ones_like")
def _(rng):
    return [T(rshape(rng, 2))], lambda v: R.ones_like(v[0])


@spec("zeros_like")
def _(rng):
    return [T(rshape(rng, 2))], lambda v: R.zeros_like(v[0])


# ---- further ops TVM 0.27 legalizes (creation, quantization, indexing, losses, vision)
ARG_NAMES = {
    "full": ["shape", "fill_value"], "ones": ["shape"], "zeros": ["shape"],
    "eye": ["n", "m", "k"], "hamming_window": ["window_size", "periodic", "alpha", "beta"],
    "slice_scatter": [None, None, "start", "end", "step"], "image.affine_grid": [None, "size"],
}
"""Parameters Relax passes as arguments (PrimValues, shapes), recorded under these names in
``attrs`` like ``gen_models.attrs_of`` records strided_slice's and clip's (None: a tensor)."""


@spec("hamming_window")
def _(rng):
    n, per = rng.randint(3, 12), rng.random() < 0.5
    alpha, beta = rng.choice([(0.54, 0.46), (0.5, 0.5)])
    return [], lambda v: R.hamming_window(n, per, alpha, beta, F)


@spec("eye")
def _(rng):
    n = rng.randint(2, 7); m = rng.choice([n, rng.randint(2, 7)]); k = rng.randint(-2, 2)
    return [], lambda v: R.eye(n, m, k, rng.choice([F, "int32"]))


@spec("full")
def _(rng):
    fill = rng.choice([0.0, 1.0, -2.5, 3.0])
    return [], lambda v: R.full(rshape(rng, rng.randint(1, 3)), relax.const(fill, F), F)


for _c in ("ones", "zeros"):
    def _mk(c):
        def f(rng):
            return [], lambda v: getattr(R, c)(rshape(rng, rng.randint(1, 3)), rng.choice([F, "int32"]))
        return f
    SPECS[_c] = _mk(_c)


@spec("bucketize")
def _(rng):
    nb = rng.randint(3, 8)
    return ([T(rshape(rng, rng.randint(1, 3))), T([nb])],
            lambda v: R.bucketize(v[0], v[1], rng.random() < 0.5, rng.random() < 0.5))


@spec("index_tensor")
def _(rng):
    s = rshape(rng, rng.randint(2, 3))
    k = rng.randint(1, len(s) - 1)
    idx = rshape(rng, rng.randint(1, 2), 2, 5)
    return [T(s)] + [T(idx, "int64")] * k, lambda v: R.index_tensor(v[0], relax.Tuple(list(v[1:])))


@spec("index_put")
def _(rng):
    s = rshape(rng, rng.randint(1, 2), 3, 8)
    m = rng.randint(1, 4)
    return ([T(s)] + [T([m], "int64")] * len(s) + [T([m])],
            lambda v: R.index_put(v[0], relax.Tuple(list(v[1:-1])), v[-1], rng.random() < 0.5))


@spec("slice_scatter")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r, 4, 10)
    ax = rng.randint(0, r - 1)
    step = rng.choice([1, 1, 2])
    start = rng.randint(0, s[ax] - 2)
    cnt = rng.randint(1, (s[ax] - 1 - start) // step + 1)
    end = start + step * (cnt - 1) + 1
    src = list(s); src[ax] = cnt
    return [T(s), T(src)], lambda v: R.slice_scatter(v[0], v[1], start, end, step, ax)


@spec("dynamic_strided_slice")
def _(rng):
    r = rng.randint(1, 3)
    return ([T(rshape(rng, r, 3, 9))] + [T([r], "int64")] * 3,
            lambda v: R.dynamic_strided_slice(v[0], v[1], v[2], v[3]))


def _quant(rng, deq):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    ax = rng.randint(-1, r - 1)
    per = rng.random() < 0.5
    q = [T([s[ax]] if per else [1]), T([s[ax]] if per else [1], "int8")]
    if deq:
        return [T(s, "int8")] + q, lambda v: R.dequantize(v[0], v[1], v[2], ax, F)
    return [T(s)] + q, lambda v: R.quantize(v[0], v[1], v[2], ax, rng.choice(["int8", "uint8"]))


SPECS["quantize"] = lambda rng: _quant(rng, False)
SPECS["dequantize"] = lambda rng: _quant(rng, True)


@spec("collapse_sum_like")
def _(rng):
    s = rshape(rng, 3)
    tgt = [1, s[1], 1] if rng.random() < 0.5 else [s[2]]
    return [T(s), T(tgt)], lambda v: R.collapse_sum_like(v[0], v[1])


@spec("meshgrid")
def _(rng):
    return ([T([rng.randint(2, 6)]) for _ in range(rng.randint(2, 3))],
            lambda v: R.meshgrid(relax.Tuple(list(v)), rng.choice(["ij", "xy"])))


@spec("image.grid_sample")
def _(rng):
    n, c, h, w = rng.randint(1, 2), rng.randint(1, 3), rng.randint(3, 6), rng.randint(3, 6)
    oh, ow = rng.randint(2, 5), rng.randint(2, 5)
    method = rng.choice(["bilinear", "nearest", "bicubic"])
    pm = rng.choice(["zeros", "border", "reflection"])
    ac = rng.random() < 0.5
    return ([T([n, c, h, w]), T([n, 2, oh, ow])],
            lambda v: R.image.grid_sample(v[0], v[1], method, "NCHW", pm, ac))


@spec("image.affine_grid")
def _(rng):
    n = rng.randint(1, 2)
    return [T([n, 2, 3])], lambda v: R.image.affine_grid(v[0], (rng.randint(2, 6), rng.randint(2, 6)),
                                                          rng.random() < 0.5)


@spec("nn.nll_loss")
def _(rng):
    n, c = rng.randint(2, 5), rng.randint(2, 6)
    red = rng.choice(["mean", "sum", "none"])
    ign = rng.choice([-100, -100, 1])
    return ([T([n, c]), T([n], "int64"), T([c])],
            lambda v: R.nn.nll_loss(v[0], v[1], v[2], red, ign))


@spec("nn.cross_entropy_with_logits")
def _(rng):
    s = rshape(rng, rng.randint(1, 2))
    return [T(s), T(s)], lambda v: R.nn.cross_entropy_with_logits(v[0], v[1])


@spec("nn.attention_bias")
def _(rng):
    b, s, h, d = rng.randint(1, 2), rng.randint(2, 5), rng.randint(1, 2), rng.choice([4, 8])
    skv = rng.choice([s, rng.randint(2, 6)])
    scale = rng.choice([None, round(rng.uniform(0.1, 1.0), 3)])
    causal = rng.choice([None, None, "TopLeft", "BottomRight"])
    return ([T([b, s, h, d]), T([b, skv, h, d]), T([b, skv, h, d]), T([b, h, s, skv])],
            lambda v: R.nn.attention_bias(v[0], v[1], v[2], v[3], scale=scale, causal_mask=causal))


@spec("vision.roi_align")
def _(rng):
    ps = [rng.randint(1, 3), rng.randint(1, 3)]
    lay = rng.choice(["NCHW", "NHWC"])
    shp = [1, 2, 8, 8] if lay == "NCHW" else [1, 8, 8, 2]
    return ([T(shp), T([rng.randint(1, 3), 5])],
            lambda v: R.vision.roi_align(v[0], v[1], ps, rng.choice([1.0, 0.5, 0.25]), rng.choice([-1, 1, 2]),
                                         rng.random() < 0.5, lay, rng.choice(["avg", "max"])))


@spec("vision.roi_pool")
def _(rng):
    ps = [rng.randint(1, 3), rng.randint(1, 3)]
    return ([T([1, 2, 8, 8]), T([rng.randint(1, 3), 5])],  # TVM's legalization: NCHW only
            lambda v: R.vision.roi_pool(v[0], v[1], ps, rng.choice([1.0, 0.5]), "NCHW"))


# ---- ops TVM 0.27 legalizes that the sample corpus does not show (session 8; arange with
# constant arguments is folded to a constant by LegalizeOps: no PrimFunc)
def _pool_bwd(rng, kind):
    lay = rng.choice(["NCHW", "NHWC"])
    sp = [rng.randint(5, 10), rng.randint(5, 10)]
    k = [rng.choice([1, 2, 3]) for _ in range(2)]
    st = [rng.choice([1, 2, 2]) for _ in range(2)]
    p = [rng.randint(0, k[i] // 2) for i in range(2)] * 2
    ceil, cip = False, (rng.random() < 0.4 if kind == "avg" else False)
    n, c = rng.randint(1, 2), rng.randint(2, 6)
    shape = [n, c] + sp if lay == "NCHW" else [n] + sp + [c]
    out = [(sp[i] + 2 * p[i] - k[i]) // st[i] + 1 for i in range(2)]
    oshape = [n, c] + out if lay == "NCHW" else [n] + out + [c]
    fn = getattr(R.grad, f"{kind}_pool2d_backward")
    return [T(oshape), T(shape)], lambda v: fn(v[0], v[1], k, st, p, [1, 1], ceil, cip, lay)


SPECS["grad.max_pool2d_backward"] = lambda rng: _pool_bwd(rng, "max")
SPECS["grad.avg_pool2d_backward"] = lambda rng: _pool_bwd(rng, "avg")


@spec("grad.nll_loss_backward")
def _(rng):
    n, c = rng.randint(2, 5), rng.randint(2, 6)
    red = rng.choice(["mean", "sum", "none"])
    ign = rng.choice([-100, -100, 1])
    g = T([] if red != "none" else [n])
    return ([g, T([n, c]), T([n], "int64"), T([c])],
            lambda v: R.grad.nll_loss_backward(v[0], v[1], v[2], v[3], red, ign))


@spec("grad.take_backward")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    ax = rng.randint(0, r - 1)
    idx = rshape(rng, rng.randint(1, 2))
    out = s[:ax] + idx + s[ax + 1:]
    return [T(out), T(s), T(idx, "int64")], lambda v: R.grad.take_backward(v[0], v[1], v[2], ax)


@spec("vision.get_valid_counts")
def _(rng):
    b, n = rng.randint(1, 2), rng.randint(3, 8)
    return [T([b, n, 6])], lambda v: R.vision.get_valid_counts(v[0], rng.choice([0.0, 0.3]), 0, 1)


@spec("vision.multibox_transform_loc")
def _(rng):
    b, c, n = 1, rng.randint(2, 4), rng.randint(2, 6)
    return ([T([b, c, n]), T([b, n * 4]), T([1, n, 4])],
            lambda v: R.vision.multibox_transform_loc(v[0], v[1], v[2], rng.random() < 0.5, 0.0,
                                                      (0.1, 0.1, 0.2, 0.2), True, rng.random() < 0.5))


if not os.environ.get("OPINFO_NO_GAPS"):
    # attribute values the specs above never draw, mixed in with probability 1/2 (the original
    # draws stay; OPINFO_NO_GAPS=1 reproduces corpora generated before)
    from gen_attr_gaps import extend
    extend(SPECS, T, rshape, R, relax, tirx)


# ----------------------------------------------------------------------------- build one case

def build(name, rng, dynamic):
    inputs, fn = SPECS[name](rng)
    n = tirx.Var("n", "int64") if dynamic else None
    bb = relax.BlockBuilder()
    params = []
    for i, (shape, dt) in enumerate(inputs):
        shp = list(shape)
        if dynamic and i == 0 and shp:
            shp[0] = n
        params.append(relax.Var("x" if i == 0 else f"y{i}" if len(inputs) > 2 else "y", tensor_type(shp, dt)))
    with bb.function("main", params):
        with bb.dataflow():
            call = fn(params)
            lv = bb.emit(call)
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    mod = bb.get()
    call = mod["main"].body.blocks[0].bindings[0].value
    name, attrs = attrs_of(call)
    for k, a in zip(ARG_NAMES.get(name, ()), call.args):
        if k is not None:
            attrs[k] = jsonable(a)
    return mod, attrs, inputs


def kinds_of(mod):
    names = {0: "elemwise", 1: "broadcast", 2: "injective", 3: "comm_reduce", 4: "out_ewise_fusable", 8: "opaque"}
    k = relax.transform.AnnotateTIROpPattern()(mod)
    out = {}
    for gv, f in k.functions.items():
        if isinstance(f, tirx.PrimFunc):
            p = f.attrs["op_pattern"] if f.attrs is not None and "op_pattern" in f.attrs else None
            out[gv.name_hint] = names.get(int(p)) if p is not None else None
    return out


def _blocks(sch):
    root = sch.get_sblock("root") if hasattr(sch, "get_sblock") else sch.get_block("root")
    return list(sch.get_child_blocks(root))


def _splittable(sch, loops) -> tuple:
    """(constant extents, 0 for symbolic ones; positions of the loops worth splitting)."""
    exts = [int(sch.get(l).extent) if isinstance(sch.get(l).extent, tirx.IntImm) else 0 for l in loops]
    return exts, [i for i, e in enumerate(exts) if e >= 4]


def _draw_split(rng, exts, cand) -> tuple:
    """(loop position, split factor) drawn at random, a factor dividing the extent if any."""
    i = rng.choice(cand)
    return i, rng.choice([d for d in (2, 3, 4) if exts[i] % d == 0] or [2])


def schedule(mod, rng):
    from tvm import s_tir
    changed = False
    for gv, f in list(mod.functions.items()):
        if not isinstance(f, tirx.PrimFunc):
            continue
        sch = s_tir.Schedule(f)
        for blk in _blocks(sch):
            bname = sch.get(blk).name_hint
            if ("pad" in bname) and rng.random() < 0.6:
                try:
                    sch.compute_inline(blk); changed = True; continue
                except Exception:
                    pass
            try:
                loops = sch.get_loops(blk)
            except Exception:
                continue
            exts, cand = _splittable(sch, loops)
            if not cand:
                continue
            i, fac = _draw_split(rng, exts, cand)
            try:
                outer, inner = sch.split(loops[i], [None, fac])
                loops = sch.get_loops(blk)
                perm = list(loops)
                j = rng.randint(0, len(perm) - 1); k2 = rng.randint(0, len(perm) - 1)
                perm[j], perm[k2] = perm[k2], perm[j]
                try:
                    sch.reorder(*perm)
                except Exception:
                    pass
                changed = True
            except Exception:
                pass
        mod[gv] = sch.mod["main"]
    return changed


SAVE_PLAIN = bool(os.environ.get("OPINFO_SAVE_PLAIN"))
ALL_SCHEDULED = bool(os.environ.get("OPINFO_ALL_SCHEDULED"))
"""With OPINFO_ALL_SCHEDULED=1 every case is a ``scheduled`` one (split/reorder, pads inlined:
the sample's variant), none dynamic: a wider hunt through the sample's own schedules."""
"""With OPINFO_SAVE_PLAIN=1, a scheduled case's function before scheduling is written beside it
(``CASE.plain``, not a ``.py``: the scorer reads every ``.py``), for tools/schedule_audit.py."""
EXTENDED = [t for t in os.environ.get("OPINFO_SCHEDULE", "").split(",") if t]
"""Further loop transformations for robustness corpora (not in the sample corpus), chosen with
the environment variable OPINFO_SCHEDULE, a comma list of: fuse, compute_at, decompose,
annotate, inline, cache, rfactor, blockize, bind, reverse_inline, decompose_padding,
block_layout, reindex, storage, resplit, symsplit (resplit, symbolic loops too), and
(``_schedule_s10``) reverse_compute_at, rolling, loop_partition, add_unit_loop, reorder_iters,
pad_einsum, merge, epilogue, reindex_cache, cache_inplace, cache_index, read_at, write_at,
hide_access, annotate_access, layout_sched, vec_split. Every case is then scheduled."""


def _try(fn, *args, **kw):
    try:
        fn(*args, **kw)
        return True
    except Exception:
        return False


def schedule_extended(mod, rng, kinds):
    """Apply the transformations named in ``kinds`` at random; True when anything changed."""
    from tvm import s_tir
    changed = False
    for gv, f in list(mod.functions.items()):
        if not isinstance(f, tirx.PrimFunc):
            continue
        sch = s_tir.Schedule(f)
        if "inline" in kinds:
            for blk in _blocks(sch)[:-1]:
                if rng.random() < 0.5:
                    changed |= _try(sch.compute_inline, blk)
        if "compute_at" in kinds:
            for blk in _blocks(sch)[:-1]:
                if rng.random() < 0.7:
                    try:
                        consumers = sch.get_consumers(blk)
                        if len(consumers) == 1:
                            loops = sch.get_loops(consumers[0])
                            if loops:
                                loop = loops[rng.randint(0, len(loops) - 1)]
                                sch.compute_at(blk, loop, preserve_unit_loops=rng.random() < 0.5)
                                changed = True
                    except Exception:
                        pass
        if "rfactor" in kinds:
            for blk in _blocks(sch):
                try:
                    loops = sch.get_loops(blk)
                    block = sch.get(blk)
                    kinds_ = [int(iv.iter_type) for iv in block.iter_vars]
                    if 2 in kinds_ and loops and rng.random() < 0.7:
                        changed |= _try(sch.rfactor, loops[-1], 0)
                except Exception:
                    pass
        if "cache" in kinds and rng.random() < 0.7:
            blk = _blocks(sch)[-1]
            if rng.random() < 0.5:
                changed |= _try(sch.cache_write, blk, 0, "local")
            else:
                changed |= _try(sch.cache_read, blk, 0, "shared")
        for blk in _blocks(sch):
            try:
                loops = sch.get_loops(blk)
            except Exception:
                continue
            exts, cand = _splittable(sch, loops)
            if cand and rng.random() < 0.8:
                i, fac = _draw_split(rng, exts, cand)
                changed |= _try(sch.split, loops[i], [None, fac])
            if "fuse" in kinds and rng.random() < 0.7:
                loops = sch.get_loops(blk)
                if len(loops) >= 2:
                    i = rng.randint(0, len(loops) - 2)
                    changed |= _try(sch.fuse, loops[i], loops[i + 1])
            if "decompose" in kinds:
                loops = sch.get_loops(blk)
                if loops and rng.random() < 0.8:
                    changed |= _try(sch.decompose_reduction, blk, loops[rng.randint(0, len(loops) - 1)])
            if "annotate" in kinds:
                loops = sch.get_loops(blk)
                if loops:
                    changed |= _try(sch.parallel, loops[0])
                    if len(loops) > 1 and rng.random() < 0.5:
                        changed |= _try(sch.vectorize, loops[-1])
                    elif len(loops) > 1:
                        changed |= _try(sch.unroll, loops[-1])
            if "blockize" in kinds and rng.random() < 0.5:
                loops = sch.get_loops(blk)
                if len(loops) >= 2:
                    changed |= _try(sch.blockize, loops[-1])
        changed |= _schedule_more(sch, rng, kinds)
        changed |= _schedule_s10(sch, rng, kinds)
        mod[gv] = sch.mod["main"]
    return changed


def _written(block):
    """The buffer of a block's first write region (``.buffer`` in TVM's tir, ``.source`` of
    the TensorRegion in 0.27's s_tir), or None."""
    w = block.writes[0]
    return getattr(w, "buffer", None) or getattr(w, "source", None)


def _reindex(sch, blk):
    """``sch.reindex(blk, ("write", 0))`` when it works. TVM 0.27's ReIndex segfaults on
    some blocks (variance's and std's T_divide at seed 53), which would end the whole run: it is tried
    first in a forked child, and done here only when the child succeeded."""
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # TVM's crash report: the parent says it in one line
        ok = _try(sch.reindex, blk, ("write", 0))
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        print("REINDEX CRASH", sch.get(blk).name_hint, file=sys.stderr)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        return False
    return _try(sch.reindex, blk, ("write", 0))


def _resplit(sch, blk, rng, symbolic=False):
    """Split up to three loops of ``blk`` (factors 2-5, dividing or not: a T.where guards the
    rest; ``symbolic``: loops of a symbolic extent too) and put all its loops in a random order."""
    changed = False
    for _ in range(rng.randint(1, 3)):
        loops = sch.get_loops(blk)
        exts, cand = _splittable(sch, loops)
        cand = [i for i in cand if exts[i] >= 3] or [i for i, e in enumerate(exts) if e >= 2]
        if symbolic:
            cand += [i for i, e in enumerate(exts) if e == 0] * 2  # a symbolic extent: a guard on n
        if not cand:
            break
        i = rng.choice(cand)
        changed |= _try(sch.split, loops[i], [None, rng.randint(2, 5)])
    loops = list(sch.get_loops(blk))
    if len(loops) >= 2:
        rng.shuffle(loops)
        changed |= _try(sch.reorder, *loops)
    return changed


def _schedule_more(sch, rng, kinds):
    """bind (GPU-style thread binding of fused spatial loops), reverse_inline, decompose_padding,
    block_layout (transform_block_layout permuting block variables), reindex, storage (set_scope
    and storage_align of intermediates), resplit (several splits and a full random reorder)."""
    changed = False
    if "resplit" in kinds or "symsplit" in kinds:
        for blk in _blocks(sch):
            if rng.random() < 0.8:
                changed |= _resplit(sch, blk, rng, "symsplit" in kinds)
    if "reverse_inline" in kinds:
        for blk in _blocks(sch)[1:]:
            if rng.random() < 0.7:
                changed |= _try(sch.reverse_compute_inline, blk)
    if "decompose_padding" in kinds:
        for blk in _blocks(sch):
            if "pad" in sch.get(blk).name_hint:
                loops = sch.get_loops(blk)
                if loops:
                    changed |= _try(sch.decompose_padding, blk, loops[0])
    for blk in _blocks(sch):
        block = sch.get(blk)
        n = len(block.iter_vars)
        if "block_layout" in kinds and n >= 2 and rng.random() < 0.7:
            perm = list(range(n)); rng.shuffle(perm)
            names = [f"v{i}" for i in range(n)]
            src = f"lambda {', '.join(names)}: ({', '.join(names[p] for p in perm)},)"
            changed |= _try(sch.transform_block_layout, blk, eval(src))
        if "reindex" in kinds and rng.random() < 0.5:
            changed |= _reindex(sch, blk)
        if "storage" in kinds and rng.random() < 0.7 and len(block.writes) == 1:
            buf = _written(block)
            if buf is not None and len(buf.shape) >= 2:
                changed |= _try(sch.storage_align, blk, 0, len(buf.shape) - 2, 4, 1)
            changed |= _try(sch.set_scope, blk, 0, rng.choice(["shared", "local"]))
        if "bind" in kinds:
            try:
                loops = sch.get_loops(blk)
                spatial = [l for l, iv in zip(loops, block.iter_vars) if int(iv.iter_type) == 0]
                k = 0
                for l in loops:
                    if k < len(spatial) and l.same_as(spatial[k]):
                        k += 1
                    else:
                        break
                if k >= 1:
                    fused = sch.fuse(*loops[:k]) if k > 1 else loops[0]
                    bx, tx = sch.split(fused, [None, rng.choice([4, 8, 32])])
                    sch.bind(bx, "blockIdx.x"); sch.bind(tx, "threadIdx.x")
                    changed = True
            except Exception:
                pass
    return changed


def _lambda(n, body):
    """``lambda v0, ..., v{n-1}: body`` where body is a format string over the names list ``v``."""
    names = [f"v{i}" for i in range(n)]
    return eval(f"lambda {', '.join(names)}: {body(names)}")


def _schedule_s10(sch, rng, kinds):
    """Primitives of ``tvm.s_tir.Schedule`` the earlier kinds never applied:

    reverse_compute_at (a consumer moved under a loop of its producer), rolling (compute_at then
    rolling_buffer of the intermediate), loop_partition (a loop cut into consecutive loops),
    add_unit_loop (a unit loop over a block or a loop), reorder_iters (reorder_block_iter_var),
    pad_einsum (an einsum block's domain padded), merge (equal outer loops of sibling blocks
    merged), epilogue (fuse_reduction_epilogue), reindex_cache (reindex_cache_read/write with an
    identity or permuted index map), cache_inplace, cache_index, read_at / write_at,
    hide_access (unsafe_hide_buffer_access of a read not written), annotate_access
    (annotate_buffer_access widening a read region), layout_sched (transform_layout of an
    intermediate buffer after splits), vec_split (split the innermost loop, vectorize or unroll
    it, parallel the outermost)."""
    changed = False
    if "reverse_compute_at" in kinds:
        for blk in _blocks(sch)[1:]:
            if rng.random() < 0.8:
                try:
                    producers = sch.get_producers(blk)
                    if len(producers) == 1:
                        loops = sch.get_loops(producers[0])
                        if loops:
                            loop = loops[rng.randint(0, len(loops) - 1)]
                            sch.reverse_compute_at(blk, loop, preserve_unit_loops=rng.random() < 0.5)
                            changed = True
                except Exception:
                    pass
    if "rolling" in kinds:
        for blk in _blocks(sch)[:-1]:
            try:
                consumers = sch.get_consumers(blk)
                if len(consumers) == 1:
                    loops = sch.get_loops(consumers[0])
                    if loops:
                        sch.compute_at(blk, loops[rng.randint(0, len(loops) - 1)])
                        changed = True
                        changed |= _try(sch.rolling_buffer, blk, 0)
            except Exception:
                pass
    if "cache_index" in kinds:
        for blk in _blocks(sch):
            if rng.random() < 0.6:
                changed |= _try(sch.cache_index, blk, "global", rng.choice([0, 1, 2]))
    for blk in _blocks(sch):
        try:
            block = sch.get(blk)
        except Exception:
            continue
        n = len(block.iter_vars)
        if "pad_einsum" in kinds and n and rng.random() < 0.7:
            changed |= _try(sch.pad_einsum, blk, [rng.choice([1, 2, 4, 8, 16]) for _ in range(n)])
        if "reorder_iters" in kinds and n >= 2 and rng.random() < 0.7:
            perm = list(range(n)); rng.shuffle(perm)
            changed |= _try(sch.reorder_block_iter_var, blk, perm)
        if "reindex_cache" in kinds and n and rng.random() < 0.6:
            perm = list(range(n))
            if rng.random() < 0.5:
                rng.shuffle(perm)
            imap = _lambda(n, lambda v: f"({', '.join(v[p] for p in perm)},)")
            if rng.random() < 0.5 and block.reads:
                changed |= _try(sch.reindex_cache_read, blk, rng.randint(0, len(block.reads) - 1),
                                rng.choice(["shared", "local"]), imap)
            elif block.writes:
                changed |= _try(sch.reindex_cache_write, blk, 0, rng.choice(["shared", "local"]), imap)
        if "cache_inplace" in kinds and rng.random() < 0.7:
            try:
                out = _written(sch.get(blk))
                for i, r in enumerate(sch.get(blk).reads):
                    if (getattr(r, "buffer", None) or getattr(r, "source", None)).same_as(out):
                        changed |= _try(sch.cache_inplace, blk, i, rng.choice(["shared", "local"]))
                        break
            except Exception:
                pass
        if ("read_at" in kinds or "write_at" in kinds) and rng.random() < 0.7:
            try:
                loops = sch.get_loops(blk)
                if loops:
                    loop = loops[rng.randint(0, len(loops) - 1)]
                    if "read_at" in kinds and sch.get(blk).reads and rng.random() < 0.6:
                        changed |= _try(sch.read_at, loop, blk, rng.randint(0, len(sch.get(blk).reads) - 1),
                                        rng.choice(["shared", "local"]))
                    elif "write_at" in kinds:
                        changed |= _try(sch.write_at, loop, blk, 0, rng.choice(["shared", "local"]))
            except Exception:
                pass
        if "loop_partition" in kinds and rng.random() < 0.8:
            try:
                loops = sch.get_loops(blk)
                exts, cand = _splittable(sch, loops)
                if cand:
                    i = rng.choice(cand)
                    cut = rng.randint(1, exts[i] - 1)
                    factors = [cut, None] if rng.random() < 0.6 or exts[i] - cut < 2 else \
                        [cut, rng.randint(1, exts[i] - cut - 1), None]
                    changed |= _try(sch.loop_partition, loops[i], factors)
            except Exception:
                pass
        if "add_unit_loop" in kinds and rng.random() < 0.6:
            try:
                loops = sch.get_loops(blk)
                if loops and rng.random() < 0.5:
                    changed |= _try(sch.add_unit_loop, loops[rng.randint(0, len(loops) - 1)])
                else:
                    changed |= _try(sch.add_unit_loop, blk)
            except Exception:
                pass
        if "hide_access" in kinds and rng.random() < 0.5:
            try:
                b = sch.get(blk)
                out = _written(b)
                idx = [i for i, r in enumerate(b.reads)
                       if not (getattr(r, "buffer", None) or getattr(r, "source", None)).same_as(out)]
                if idx:
                    changed |= _try(sch.unsafe_hide_buffer_access, blk, "read", [rng.choice(idx)])
            except Exception:
                pass
        if "annotate_access" in kinds and rng.random() < 0.6:
            try:
                b = sch.get(blk)
                if b.reads:
                    i = rng.randint(0, len(b.reads) - 1)
                    buf = getattr(b.reads[i], "buffer", None) or getattr(b.reads[i], "source", None)
                    whole = tuple((0, e) for e in buf.shape)
                    changed |= _try(sch.annotate_buffer_access, blk, i, "read",
                                    _lambda(n, lambda v: repr(whole)))
            except Exception:
                pass
        if "vec_split" in kinds and rng.random() < 0.8:
            try:
                loops = sch.get_loops(blk)
                exts, cand = _splittable(sch, loops)
                if loops and exts[-1] >= 4:
                    fac = rng.choice([d for d in (2, 4, 8) if exts[-1] % d == 0] or [2])
                    _, inner = sch.split(loops[-1], [None, fac])
                    changed = True
                    changed |= _try(sch.vectorize if rng.random() < 0.5 else sch.unroll, inner)
                loops = sch.get_loops(blk)
                if len(loops) >= 2 and rng.random() < 0.5:
                    changed |= _try(sch.unroll, loops[rng.randint(0, len(loops) - 2)])
                if loops:
                    changed |= _try(sch.parallel, loops[0])
            except Exception:
                pass
    if "layout_sched" in kinds:
        for blk in _blocks(sch):
            try:
                b = sch.get(blk)
                loops = sch.get_loops(blk)
                exts, cand = _splittable(sch, loops)
                if cand:
                    i, fac = _draw_split(rng, exts, cand)
                    changed |= _try(sch.split, loops[i], [None, fac])
                buf = _written(b)
                if buf is None or any(buf.same_as(p) for p in sch.mod["main"].buffer_map.values()):
                    continue  # a parameter: its layout is the function's signature
                r = len(buf.shape)
                if r >= 2:
                    perm = list(range(r)); rng.shuffle(perm)
                    changed |= _try(sch.transform_layout, blk, ("write", 0),
                                    _lambda(r, lambda v: f"({', '.join(v[p] for p in perm)},)"))
                elif r == 1 and isinstance(buf.shape[0], tirx.IntImm) and int(buf.shape[0]) % 2 == 0:
                    changed |= _try(sch.transform_layout, blk, ("write", 0), lambda i: (i // 2, i % 2))
            except Exception:
                pass
    if "merge" in kinds:
        blocks = _blocks(sch)
        for a, b in zip(blocks, blocks[1:]):
            try:
                la, lb = sch.get_loops(a), sch.get_loops(b)
                if la and lb and rng.random() < 0.8:
                    changed |= _try(sch.merge, la[0], lb[0])
            except Exception:
                pass
    if "epilogue" in kinds:
        for blk in _blocks(sch):
            try:
                b = sch.get(blk)
                if any(int(iv.iter_type) == 2 for iv in b.iter_vars):
                    consumers = sch.get_consumers(blk)
                    if len(consumers) == 1:
                        changed |= _try(sch.fuse_reduction_epilogue, blk, consumers[0])
            except Exception:
                pass
    return changed


def to_old_dialect(text):
    return (text.replace("from tvm.script import tirx as T", "from tvm.script import tir as T")
            .replace("T.sblock_alloc_buffer(", "T.alloc_buffer(").replace("T.sblock_attr(", "T.block_attr(")
            .replace("T.sblock(", "T.block(").replace(", s_tir=True", "").replace("tirx.noalias", "tir.noalias"))


def write_case(out_dir, rng, cid, text, plain_text=None) -> str:
    """Write ``CID.py`` (40% of the cases rewritten to the old dialect, as the sample) and,
    when given, the unscheduled function as ``CID.plain``; the dialect written."""
    dialect = "tirx"
    if rng.random() < 0.4:
        text, dialect = to_old_dialect(text), "tir"
    with open(os.path.join(out_dir, cid + ".py"), "w") as fh:
        fh.write(text)
    if plain_text is not None:
        with open(os.path.join(out_dir, cid + ".plain"), "w") as fh:
            fh.write(plain_text)
    return dialect


def main(out_dir, seed, per_op, only=None):
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed)
    cases = []
    names = only or list(SPECS)
    for name in names:
        for j in range(per_op):
            variant = "scheduled" if ALL_SCHEDULED else ["plain", "plain", "scheduled", "plain"][j % 4]
            dynamic = j % 3 == 1 and not ALL_SCHEDULED
            cid = f"{name.replace('.', '_')}_{seed}_{j}"
            try:
                mod, attrs, inputs = build(name, rng, dynamic)
                lmod = relax.transform.LegalizeOps()(mod)
                kinds = kinds_of(lmod)
                if dynamic and not kinds:
                    # A symbolic batch TVM cannot legalize (e.g. it must broadcast against a
                    # constant extent) leaves no PrimFunc: nothing to score, so use static shapes.
                    dynamic = False
                    mod, attrs, inputs = build(name, rng, dynamic)
                    lmod = relax.transform.LegalizeOps()(mod)
                    kinds = kinds_of(lmod)
                if len(kinds) != 1:
                    # Like the sample corpus: one PrimFunc per case (ops that Relax expands into
                    # several ops, such as linear or masked_fill, or that TVM leaves unlowered,
                    # such as sort, are not single-op cases).
                    print("SKIP", cid, f"{len(kinds)} PrimFuncs", file=sys.stderr)
                    continue
                plain_text = lmod.script() if SAVE_PLAIN else None
                if EXTENDED:
                    variant = "scheduled" if schedule_extended(lmod, rng, EXTENDED) else "plain"
                elif variant == "scheduled" and not schedule(lmod, rng):
                    variant = "plain"
                if variant == "scheduled":
                    kinds = kinds_of(lmod)  # TVM's answer on the function as printed
                text = lmod.script()
            except Exception as e:
                print("SKIP", cid, type(e).__name__, str(e).splitlines()[0][:150] if str(e) else "", file=sys.stderr)
                continue
            dialect = write_case(out_dir, rng, cid, text, plain_text if variant == "scheduled" else None)
            cases.append({"id": cid, "op": name, "attrs": attrs,
                          "inputs": [{"shape": [str(x) for x in s], "dtype": d} for s, d in inputs],
                          "tvm_kind": kinds, "n_primfuncs": len(kinds), "variant": variant, "dynamic": dynamic,
                          "dialect": dialect, "numeric": False})
    with open(os.path.join(out_dir, "index.json"), "w") as fh:
        json.dump({"generator": f"apache-tvm {tvm.__version__}", "seed": seed, "cases": cases}, fh, indent=1)
    print(len(cases), "cases")


if __name__ == "__main__":
    out, seed, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    main(out, seed, per, sys.argv[4:] or None)
