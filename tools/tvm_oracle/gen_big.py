"""An ops corpus like gen_ops.py's for the windowed ops and matmul, with the sample corpus's
larger extents: channels 8 to 64 (grouped and depthwise convolutions among them), spatial
extents 4 to 16, kernels up to 5, and matmuls of 16 to 64 rows. gen_ops.py draws extents
of at most 12 and channels of at most 12; the sample has (2, 32, 7, 12) convolved by
(16, 16, 3, 3) with groups 2, or a (48, 4, 1) kernel. Variants, dialects and the index as
gen_ops.py (plain, scheduled, a symbolic batch).
Usage: gen_big.py OUT SEED PER [OPS...] (development only)."""
import sys

from gen_ops import R, SPECS, T, main

BIG = {}


def _channels(rng):
    """(cin, cout, groups): groups 1, 2, 4 or depthwise."""
    cin = rng.choice([8, 12, 16, 32])
    groups = rng.choice([1, 1, 2, 4, cin])
    cout = groups * rng.choice([1, 2, 3]) if groups == cin else rng.choice([8, 16, 48, 64])
    if cout % groups:
        groups = 1
    return cin, cout, groups


def _conv(rng, nd, transpose=False):
    layouts = {1: [("NCW", "OIW"), ("NWC", "WIO")], 2: [("NCHW", "OIHW"), ("NHWC", "HWIO"), ("NHWC", "OHWI")],
               3: [("NCDHW", "OIDHW"), ("NDHWC", "DHWIO")]}
    if transpose:
        layouts = {1: [("NCW", "IOW")], 2: [("NCHW", "IOHW")], 3: [("NCDHW", "IODHW")]}
    dl, kl = rng.choice(layouts[nd])
    cin, cout, groups = _channels(rng)
    if transpose:
        groups = rng.choice([1, 1, 2])
    hi = {1: 16, 2: 16, 3: 8}[nd]
    spatial = [rng.randint(4, hi) for _ in range(nd)]
    k = [min(rng.choice([1, 2, 3, 3, 5]), spatial[i]) for i in range(nd)]
    strides = [rng.choice([1, 1, 2]) for _ in range(nd)]
    dil = [rng.choice([1, 1, 2]) if k[i] * 2 <= spatial[i] else 1 for i in range(nd)] if not transpose else [1] * nd
    pad = [rng.randint(0, k[i] - 1) for i in range(nd)] + [rng.randint(0, k[i] - 1) for i in range(nd)]
    n = rng.randint(1, 2)
    dims = dict(zip("DHW"[-nd:], spatial))
    dshape = [{"N": n, "C": cin, **dims}[ch] for ch in dl]
    kd = dict(zip("DHW"[-nd:], k))
    if transpose:
        wshape = [{"I": cin, "O": cout // groups if cout % groups == 0 else 8, **kd}[ch] for ch in kl]
        fn = {1: R.nn.conv1d_transpose, 2: R.nn.conv2d_transpose, 3: R.nn.conv3d_transpose}[nd]
        return [T(dshape), T(wshape)], lambda v: fn(v[0], v[1], strides, pad, [0] * nd, dil, groups, dl, kl)
    wshape = [{"O": cout, "I": cin // groups, **kd}[ch] for ch in kl]
    fn = {1: R.nn.conv1d, 2: R.nn.conv2d, 3: R.nn.conv3d}[nd]
    return [T(dshape), T(wshape)], lambda v: fn(v[0], v[1], strides, pad, dil, groups, dl, kl)


def _pool(rng, nd, kind):
    lay = rng.choice({1: ["NCW", "NWC"], 2: ["NCHW", "NHWC"], 3: ["NCDHW", "NDHWC"]}[nd])
    spatial = [rng.randint(6, {1: 16, 2: 16, 3: 8}[nd]) for _ in range(nd)]
    k = [rng.choice([2, 3, 3, 4]) for _ in range(nd)]
    s = [rng.choice([1, 2, 2, 3]) for _ in range(nd)]
    d = [rng.choice([1, 1, 1, 2]) for _ in range(nd)]
    p = [rng.randint(0, k[i] // 2) for i in range(nd)] + [rng.randint(0, k[i] // 2) for i in range(nd)]
    ceil = rng.random() < 0.3
    cip = rng.random() < 0.4 if kind == "avg" else False
    dims = dict(zip("DHW"[-nd:], spatial))
    shape = [{"N": rng.randint(1, 2), "C": rng.choice([8, 12, 16, 32]), **dims}[ch] for ch in lay]
    fn = getattr(R.nn, f"{kind}_pool{nd}d")
    return [T(shape)], lambda v: fn(v[0], k, s, p, d, ceil, cip, lay)


def _adaptive(rng, nd):
    lay = rng.choice({1: ["NCW", "NWC"], 2: ["NCHW", "NHWC"], 3: ["NCDHW", "NDHWC"]}[nd])
    spatial = [rng.randint(5, {1: 16, 2: 16, 3: 8}[nd]) for _ in range(nd)]
    outs = [rng.choice([1, 2, 3, 7, sp // 2]) for sp in spatial]
    dims = dict(zip("DHW"[-nd:], spatial))
    shape = [{"N": rng.randint(1, 2), "C": rng.choice([8, 16, 32]), **dims}[ch] for ch in lay]
    fn = getattr(R.nn, f"adaptive_avg_pool{nd}d")
    return [T(shape)], lambda v: fn(v[0], outs, lay)


for _nd in (1, 2, 3):
    BIG[f"nn.conv{_nd}d"] = (lambda nd: lambda rng: _conv(rng, nd))(_nd)
    BIG[f"nn.conv{_nd}d_transpose"] = (lambda nd: lambda rng: _conv(rng, nd, True))(_nd)
    BIG[f"nn.adaptive_avg_pool{_nd}d"] = (lambda nd: lambda rng: _adaptive(rng, nd))(_nd)
    for _k in ("max", "avg"):
        BIG[f"nn.{_k}_pool{_nd}d"] = (lambda nd, kk: lambda rng: _pool(rng, nd, kk))(_nd, _k)


def _matmul(rng):
    m, k, n = rng.choice([8, 16, 32]), rng.choice([16, 32, 64]), rng.choice([8, 12, 16])
    kind = rng.randint(0, 3)
    if kind == 0:
        a, b = [m, k], [k, n]
    elif kind == 1:
        bt = [rng.randint(2, 4)]
        a, b = bt + [m, k], bt + [k, n]
    elif kind == 2:
        a, b = [m, k], [k]
    else:
        a, b = [k], [k, n]
    return [T(a), T(b)], lambda v: R.matmul(v[0], v[1])


BIG["matmul"] = _matmul
SPECS.clear()
SPECS.update(BIG)

if __name__ == "__main__":
    out, seed, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    main(out, seed, per, sys.argv[4:] or None)
