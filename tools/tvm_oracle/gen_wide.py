"""gen_ops.py with wider attribute draws than the sample corpus shows: other modes, negative
axes and strides, out_layout differing from the data layout, grouped and transposed convs
with every option, pools with every option, reductions of scatters, permuting and splitting
layout maps. A hunt for confident wrong answers on attribute values the sample never has.

Usage: gen_wide.py OUT SEED PER_OP [OPS...]  (OPINFO_SCHEDULE works as in gen_ops.py;
TVM_PYTHON=... GEN=gen_wide.py OPS="$(python gen_wide.py --ops)" gen_per_op.sh OUT SEED PER)"""
import sys

import gen_ops
from gen_ops import F, R, T, relax, rshape

WIDE = {}


def wide(name):
    def deco(f):
        WIDE[name] = f
        return f
    return deco


@wide("take")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    ax = rng.choice([None] + list(range(-r, r)))
    mode = rng.choice(["fast", "clip", "wrap"])
    return [T(s), T(rshape(rng, rng.randint(1, 2)), "int64")], lambda v: R.take(v[0], v[1], ax, mode)


@wide("strided_slice")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r, 3, 9)
    axes = sorted(rng.sample(range(r), rng.randint(1, r)))
    begin, end, strides = [], [], []
    for a in axes:
        n = s[a]
        st = rng.choice([1, 2, -1, -2, 3])
        if st > 0:
            b = rng.randint(-n, n - 2)
            e = rng.choice([rng.randint(b % n + 1, n), -1])
        else:
            b = rng.choice([n - 1, -1, rng.randint(1, n - 1)])
            e = rng.choice([-n - 1, rng.randint(-n, (b % n) - 1)])
        begin.append(b); end.append(e); strides.append(st)
    return [T(s)], lambda v: R.strided_slice(v[0], axes, begin, end, strides)


@wide("split")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r, 4, 9)
    ax = rng.randint(-r, r - 1)
    n = s[ax]
    if rng.random() < 0.5:
        parts = rng.choice([d for d in (2, 3, 4) if n % d == 0] or [1])
        return [T(s)], lambda v: R.split(v[0], parts, ax)
    idx = sorted(rng.sample(range(1, n), rng.randint(1, min(3, n - 1))))
    return [T(s)], lambda v: R.split(v[0], idx, ax)


@wide("scatter_elements")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    ax = rng.randint(-r, r - 1)
    red = rng.choice(["update", "add", "mul", "mean", "min", "max"])
    return [T(s), T(s, "int64"), T(s)], lambda v: R.scatter_elements(v[0], v[1], v[2], ax, red)


@wide("gather_nd")
def _(rng):
    b = rng.randint(2, 3)
    s = [b] + rshape(rng, 2)
    m = rng.randint(1, 2)
    bd = rng.choice([0, 1])
    return [T(s), T([b, rng.randint(2, 4), m], "int64")], lambda v: R.gather_nd(v[0], v[1], bd)


@wide("one_hot")
def _(rng):
    r = rng.randint(1, 3)
    ax = rng.randint(-1, r)
    on, off = rng.choice([(1.0, 0.0), (2.5, -1.0), (0.0, 1.0)])
    pv = relax.PrimValue if hasattr(relax, "PrimValue") else None
    mk = (lambda x: pv(gen_ops.tirx.FloatImm(F, x))) if pv else (lambda x: x)
    return [T(rshape(rng, r), "int32")], lambda v: R.one_hot(v[0], mk(on), mk(off), rng.randint(2, 6), ax)


@wide("permute_dims")
def _(rng):
    r = rng.randint(1, 4)
    axes = None if rng.random() < 0.3 else [a - r if rng.random() < 0.3 else a for a in rng.sample(range(r), r)]
    return [T(rshape(rng, r))], lambda v: R.permute_dims(v[0], axes)


@wide("squeeze")
def _(rng):
    r = rng.randint(2, 4)
    s = rshape(rng, r)
    units = sorted(rng.sample(range(r), rng.randint(1, r - 1)))
    for u in units:
        s[u] = 1
    ax = None if rng.random() < 0.4 else [u - r if rng.random() < 0.4 else u for u in units]
    return [T(s)], lambda v: R.squeeze(v[0], ax)


@wide("expand_dims")
def _(rng):
    r = rng.randint(1, 3)
    k = rng.randint(1, 2)
    ax = sorted(rng.sample(range(r + k), k))
    ax = [a - (r + k) if rng.random() < 0.4 else a for a in ax]
    return [T(rshape(rng, r))], lambda v: R.expand_dims(v[0], ax)


@wide("tile")
def _(rng):
    r = rng.randint(1, 3)
    reps = [rng.randint(1, 3) for _ in range(rng.randint(1, r + 2))]
    return [T(rshape(rng, r))], lambda v: R.tile(v[0], reps)


@wide("repeat")
def _(rng):
    r = rng.randint(1, 3)
    ax = rng.choice([None] + list(range(-r, r)))
    return [T(rshape(rng, r))], lambda v: R.repeat(v[0], rng.randint(1, 3), ax)


@wide("flip")
def _(rng):
    r = rng.randint(1, 4)
    return [T(rshape(rng, r))], lambda v: R.flip(v[0], rng.randint(-r, r - 1))


@wide("nn.pad")
def _(rng):
    r = rng.randint(1, 4)
    s = rshape(rng, r, 3, 7)
    mode = rng.choice(["constant", "reflect", "edge", "replicate", "circular"])
    hi = 2 if mode in ("constant", "edge", "replicate") else 1
    pw = [rng.randint(0, hi) for _ in range(2 * r)]
    val = rng.choice([0.0, 2.0, -0.5])
    return [T(s)], lambda v: R.nn.pad(v[0], pw, mode, val)


@wide("concat")
def _(rng):
    r = rng.randint(1, 3)
    s = rshape(rng, r)
    ax = rng.randint(-r, r - 1)
    k = rng.randint(1, 3)
    shapes = []
    for _ in range(k):
        t = list(s)
        t[ax] = rng.randint(1, 4)
        shapes.append(T(t))
    return shapes, lambda v: R.concat(list(v), ax)


def _conv_wide(rng, nd, transpose):
    names = "DHW"[3 - nd:]
    data = rng.choice(["NC" + names, "N" + names + "C"])
    kern = rng.choice((["IO" + names, "OI" + names] if transpose else ["OI" + names, names + "IO", "O" + names + "I"]))
    out = rng.choice([None, data, "NC" + names, "N" + names + "C"])
    groups = rng.choice([1, 1, 2])
    cin, cout = groups * rng.randint(1, 3), groups * rng.randint(1, 3)
    k = [rng.randint(1, 3) for _ in range(nd)]
    sp = [rng.randint(4, 8) for _ in range(nd)]
    strides = [rng.randint(1, 2) for _ in range(nd)]
    dil = [rng.randint(1, 2) for _ in range(nd)]
    pad = [rng.randint(0, 2) for _ in range(2 * nd)]
    dshape = {"N": 1, "C": cin}
    dshape.update(zip(names, sp))
    ci_k, co_k = (cin, cout // groups) if transpose else (cin // groups, cout)
    kshape = {"O": co_k, "I": ci_k}
    kshape.update(zip(names, k))
    dt = [dshape[c] for c in data]
    kt = [kshape[c] for c in kern]
    op = getattr(R.nn, f"conv{nd}d" + ("_transpose" if transpose else ""))
    if transpose:
        opad = [rng.randint(0, s - 1) for s in strides]
        return [T(dt), T(kt)], lambda v: op(v[0], v[1], strides, pad, opad, [1] * nd, groups, data, kern, out)
    return [T(dt), T(kt)], lambda v: op(v[0], v[1], strides, pad, dil, groups, data, kern, out)


for _nd in (1, 2, 3):
    for _tr in (False, True):
        def _mk(nd, tr):
            return lambda rng: _conv_wide(rng, nd, tr)
        WIDE[f"nn.conv{_nd}d" + ("_transpose" if _tr else "")] = _mk(_nd, _tr)


def _pool_wide(rng, nd, kind):
    names = "DHW"[3 - nd:]
    lay = rng.choice(["NC" + names, "N" + names + "C"])
    out = rng.choice([None, lay, "NC" + names, "N" + names + "C"])
    sp = [rng.randint(4, 9) for _ in range(nd)]
    shape = {"N": 1, "C": rng.randint(1, 3)}
    shape.update(zip(names, sp))
    st = [shape[c] for c in lay]
    if kind == "adaptive":
        size = [rng.randint(1, s) for s in sp]
        return [T(st)], lambda v: getattr(R.nn, f"adaptive_avg_pool{nd}d")(v[0], size, lay, out)
    k = [rng.randint(1, 3) for _ in range(nd)]
    strides = [rng.randint(1, 3) for _ in range(nd)]
    dil = [rng.randint(1, 2) for _ in range(nd)]
    pad = [rng.randint(0, (kk - 1) * dd // 2 + 0) if kk > 1 else 0 for kk, dd in zip(k, dil)] * 2
    ceil, cip = rng.random() < 0.5, rng.random() < 0.5
    op = getattr(R.nn, f"{kind}_pool{nd}d")
    return [T(st)], lambda v: op(v[0], k, strides, pad, dil, ceil, cip, lay, out)


for _nd in (1, 2, 3):
    for _k in ("max", "avg", "adaptive"):
        def _mk(nd, k):
            return lambda rng: _pool_wide(rng, nd, k)
        WIDE[(f"nn.{_k}_pool{_nd}d" if _k != "adaptive" else f"nn.adaptive_avg_pool{_nd}d")] = _mk(_nd, _k)


@wide("image.resize2d")
def _(rng):
    lay = rng.choice(["NCHW", "NHWC"])
    h, w = rng.randint(2, 7), rng.randint(2, 7)
    sz = [rng.randint(1, 10), rng.randint(1, 10)]
    method = rng.choice(["nearest_neighbor", "linear", "cubic"])
    ctm = rng.choice(["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"])
    rm = rng.choice(["round", "floor", "ceil", "round_prefer_ceil", "round_prefer_floor"]) \
        if method == "nearest_neighbor" else "round"
    alpha = rng.choice([-0.75, -0.5])
    excl = rng.choice([0, 1])
    shape = {"NCHW": [1, 2, h, w], "NHWC": [1, h, w, 2]}[lay]
    return [T(shape)], lambda v: R.image.resize2d(v[0], sz, None, lay, method, ctm, rm, alpha, excl)


@wide("argmax")
def _(rng):
    r = rng.randint(1, 4)
    ax = rng.choice([None] + list(range(-r, r)))
    return [T(rshape(rng, r))], lambda v: R.argmax(v[0], ax, rng.random() < 0.5)


@wide("nn.softplus")
def _(rng):
    b, t = rng.choice([0.5, 1.0, 2.0]), rng.choice([5.0, 20.0, 1.0])
    return [T(rshape(rng, rng.randint(1, 3)))], lambda v: R.nn.softplus(v[0], b, t)


@wide("nn.leakyrelu")
def _(rng):
    a = rng.choice([0.01, 0.2, 1.5, -0.3])
    return [T(rshape(rng, rng.randint(1, 3)))], lambda v: R.nn.leakyrelu(v[0], a)


@wide("layout_transform")
def _(rng):
    maps = [lambda n, c, h, w: (n, h, w, c), lambda n, c, h, w: (n, c // 2, h, w, c % 2),
            lambda n, c, h, w: (n, h, w, c // 2, c % 2), lambda n, c, h, w: (c, n, w, h)]
    i = rng.randint(0, len(maps) - 1)
    return [T([1, 2 * rng.randint(1, 3), rng.randint(2, 5), rng.randint(2, 5)])], \
        lambda v: R.layout_transform(v[0], maps[i])


gen_ops.SPECS.clear()
gen_ops.SPECS.update(WIDE)

if __name__ == "__main__":
    if sys.argv[1:] == ["--ops"]:
        print(" ".join(WIDE))
        sys.exit(0)
    gen_ops.main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] or None)
