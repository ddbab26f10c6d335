"""Attribute values gen_ops' original specs never draw (session 8 attribute-coverage audit).

``extend(SPECS, T, rshape)`` wraps the specs of the mainstream ops: with probability ``P`` a case
draws from the gap menu below, otherwise from the original spec, unchanged. The gaps were found
by comparing each op's Relax signature (TVM 0.27) with the original draws:

- image.resize2d: coordinate_transformation_mode pytorch_half_pixel / tf_half_pixel_for_nn /
  tf_crop_and_resize (with roi, extrapolation_value), rounding_method ceil (and nearest with
  the other modes), cubic_alpha -0.5, cubic_exclude 1, an output axis of size 1
- take: mode clip / wrap, axis None, negative axis, int32 indices
- conv: out_layout other than data_layout, padding wider than the kernel, transposed
  dilation > 1 and output_padding > 0, groups on conv3d_transpose
- pools: out_layout other than layout, adaptive output_size None
- matmul: out_dtype, [m,k]x[k] and [k]x[k]
- layer_norm / rms_norm: negative axes, non-trailing axes, epsilon 1e-12 .. 0.1
- group_norm / instance_norm / batch_norm: channel last (axis -1 or 3), wider epsilon
- softmax / log_softmax: covered already
- strided_slice: negative begin/end, end past the extent, negative strides, strides omitted
- nn.pad: pad_mode reflect / replicate / circular / edge (edge lowers as constant)
- clip: integer bounds, one-sided wide bounds; leakyrelu alpha 0.5/0.25/0.001;
  softplus beta/threshold
- tile: repeats longer / shorter than the rank; flip, argmax/argmin, concat, cumsum,
  gather_elements, split, repeat: negative axes
- reductions: a single int axis; cumsum/cumprod axis None and dtype
- astype to/from bool, int8, uint8, float64; where with a broadcast condition
- scatter_elements reduction add/mul/mean/max/min; one_hot middle axis; prelu axis -1
- layout_transform: permuting maps, splits by 2, a padded split (session 33)
"""
import os

P = 0.5
U = bool(os.environ.get("OPINFO_GAPS_UNOBSERVABLE"))
"""Also draw values the loops cannot show (see UNOBSERVABLE): every such case is a `wrong`
for a recognizer that keeps the sample corpus's conventions, so they are off by default."""
UNOBSERVABLE = """
- pytorch_half_pixel with every output axis longer than one (computes as half_pixel)
- conv*_transpose output_padding > 0 with a stride > 1 (the same loops as a larger after-padding)
- adaptive_avg_pool output_size None (the input's size, printed as that size)
- group_norm channel_axis -1, one_hot axis == rank of the indices (the sign of an axis)
- tile repeats shorter than the rank (TVM pads them with leading 1s)
- nn.pad "edge" (TVM 0.27 lowers it as a constant pad)
- layer_norm / group_norm / instance_norm center or scale False (TVM 0.27's legalization ignores
  both: the loops multiply by gamma and add beta either way; not drawn)
- a max pool's count_include_pad True (no effect on a max; not drawn)
- strided_slice begin < 0, end past the extent or not one past the last element read
"""


def extend(SPECS, T, rshape, R, relax, tirx):
    F = "float32"
    gaps = {}

    def gap(name):
        def deco(f):
            gaps[name] = f
            return f
        return deco

    @gap("image.resize2d")
    def _(rng):
        lay = rng.choice(["NCHW", "NHWC"])
        h, w = rng.randint(3, 8), rng.randint(3, 8)
        sz = rng.choice([[rng.randint(2, 12), rng.randint(2, 12)], [1, rng.randint(2, 9)], [rng.randint(2, 9), 1]])
        method = rng.choice(["nearest_neighbor", "linear", "cubic"])
        ctm = rng.choice(["pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize",
                          "half_pixel", "align_corners", "asymmetric"])
        if ctm == "pytorch_half_pixel" and 1 not in sz and not U:
            sz[rng.randint(0, 1)] = 1
        rm = rng.choice(["round", "floor", "round_prefer_ceil", "ceil"]) if method == "nearest_neighbor" else "round"
        roi = None
        ext = 0.0
        if ctm == "tf_crop_and_resize":
            roi = [round(rng.uniform(0.0, 0.3), 2), round(rng.uniform(0.0, 0.3), 2),
                   round(rng.uniform(0.7, 1.0), 2), round(rng.uniform(0.7, 1.0), 2)]
            ext = rng.choice([0.0, 0.5, -1.0])
        alpha = rng.choice([-0.75, -0.5]) if method == "cubic" else -0.75
        excl = rng.choice([0, 1]) if method == "cubic" else 0
        shape = {"NCHW": [1, 3, h, w], "NHWC": [1, h, w, 3]}[lay]
        return [T(shape)], lambda v: R.image.resize2d(v[0], sz, roi, lay, method, ctm, rm, alpha, excl, ext)

    @gap("take")
    def _(rng):
        r = rng.randint(1, 3)
        s = rshape(rng, r)
        ax = rng.choice([None, rng.randint(-r, -1), rng.randint(0, r - 1)])
        mode = rng.choice(["fast", "clip", "wrap"])
        idt = rng.choice(["int64", "int32"])
        ir = rng.randint(1, 2)
        return [T(s), T(rshape(rng, ir), idt)], lambda v: R.take(v[0], v[1], ax, mode)

    def conv(rng, nd, transpose):
        layouts = {1: [("NCW", "OIW", "NWC"), ("NWC", "WIO", "NCW")],
                   2: [("NCHW", "OIHW", "NHWC"), ("NHWC", "HWIO", "NCHW"), ("NHWC", "OHWI", "NCHW")],
                   3: [("NCDHW", "OIDHW", "NDHWC"), ("NDHWC", "DHWIO", "NCDHW")]}
        if transpose:
            layouts = {1: [("NCW", "IOW", "NWC")], 2: [("NCHW", "IOHW", "NHWC")], 3: [("NCDHW", "IODHW", "NDHWC")]}
        dl, kl, other = rng.choice(layouts[nd])
        ol = rng.choice([dl, other])
        groups = rng.choice([1, 2, 4])
        cin = groups * rng.randint(1, 3)
        cout = groups * rng.randint(1, 3)
        spatial = [rng.randint(5, 10) for _ in range(nd)]
        k = [rng.choice([1, 2, 3]) for _ in range(nd)]
        strides = [rng.choice([1, 2, 3]) for _ in range(nd)]
        dil = [rng.choice([1, 2]) for _ in range(nd)]
        pad = [rng.randint(0, k[i] + 1) for i in range(nd)] + [rng.randint(0, k[i] + 1) for i in range(nd)]
        n = rng.randint(1, 2)
        dims = dict(zip("DHW"[-nd:], spatial))
        dshape = [{"N": n, "C": cin, **dims}[ch] for ch in dl]
        kd = dict(zip("DHW"[-nd:], k))
        if transpose:
            pad = [min(p, (k[i % nd] - 1) * dil[i % nd]) for i, p in enumerate(pad)]
            wshape = [{"I": cin, "O": cout // groups, **kd}[ch] for ch in kl]
            op = [rng.randint(0, strides[i] - 1) if U else 0 for i in range(nd)]
            fn = {1: R.nn.conv1d_transpose, 2: R.nn.conv2d_transpose, 3: R.nn.conv3d_transpose}[nd]
            return [T(dshape), T(wshape)], lambda v: fn(v[0], v[1], strides, pad, op, dil, groups, dl, kl, ol)
        wshape = [{"O": cout, "I": cin // groups, **kd}[ch] for ch in kl]
        fn = {1: R.nn.conv1d, 2: R.nn.conv2d, 3: R.nn.conv3d}[nd]
        return [T(dshape), T(wshape)], lambda v: fn(v[0], v[1], strides, pad, dil, groups, dl, kl, ol)

    for nd in (1, 2, 3):
        gaps[f"nn.conv{nd}d"] = (lambda nd: lambda rng: conv(rng, nd, False))(nd)
        gaps[f"nn.conv{nd}d_transpose"] = (lambda nd: lambda rng: conv(rng, nd, True))(nd)

    def pool(rng, nd, kind):
        layouts = {1: ["NCW", "NWC"], 2: ["NCHW", "NHWC"], 3: ["NCDHW", "NDHWC"]}
        lay = rng.choice(layouts[nd])
        olay = rng.choice(layouts[nd])
        spatial = [rng.randint(5, 12) for _ in range(nd)]
        k = [rng.choice([1, 2, 3, 4]) for _ in range(nd)]
        s = [rng.choice([1, 2, 3]) for _ in range(nd)]
        d = [rng.choice([1, 2]) for _ in range(nd)]
        p = [rng.randint(0, max(0, k[i] // 2)) for i in range(nd)] + [rng.randint(0, max(0, k[i] // 2)) for i in range(nd)]
        ceil = rng.random() < 0.5
        cip = rng.random() < 0.5 if kind == "avg" else False
        dims = dict(zip("DHW"[-nd:], spatial))
        shape = [{"N": rng.randint(1, 2), "C": rng.randint(2, 8), **dims}[ch] for ch in lay]
        fn = getattr(R.nn, f"{kind}_pool{nd}d")
        return [T(shape)], lambda v: fn(v[0], k, s, p, d, ceil, cip, lay, olay)

    for nd in (1, 2, 3):
        for kk in ("max", "avg"):
            gaps[f"nn.{kk}_pool{nd}d"] = (lambda nd, kk: lambda rng: pool(rng, nd, kk))(nd, kk)

    def adaptive(rng, nd):
        layouts = {1: ["NCW", "NWC"], 2: ["NCHW", "NHWC"], 3: ["NCDHW", "NDHWC"]}
        lay, olay = rng.choice(layouts[nd]), rng.choice(layouts[nd])
        spatial = [rng.randint(4, 12) for _ in range(nd)]
        outs = rng.choice([None if U else list(spatial), [rng.randint(1, sp) for sp in spatial], [rng.randint(1, 4)] * nd])
        dims = dict(zip("DHW"[-nd:], spatial))
        shape = [{"N": rng.randint(1, 2), "C": rng.randint(2, 8), **dims}[ch] for ch in lay]
        fn = getattr(R.nn, f"adaptive_avg_pool{nd}d")
        return [T(shape)], lambda v: fn(v[0], outs, lay, olay)

    for nd in (1, 2, 3):
        gaps[f"nn.adaptive_avg_pool{nd}d"] = (lambda nd: lambda rng: adaptive(rng, nd))(nd)

    @gap("matmul")
    def _(rng):
        m, k, n = rshape(rng, 3)
        kind = rng.randint(0, 3)
        a, b = [([m, k], [k]), ([k], [k]), ([2, m, k], [k]), ([m, k], [k, n])][kind]
        dt, odt = rng.choice([(F, None), (F, "float32"), (F, "float64"), ("float16", "float32"),
                              ("int8", "int32"), ("int32", None)])
        return [T(a, dt), T(b, dt)], lambda v: R.matmul(v[0], v[1], odt)

    @gap("nn.layer_norm")
    def _(rng):
        r = rng.randint(2, 4)
        s = rshape(rng, r)
        if rng.random() < 0.5:
            axes = sorted(rng.sample(range(r), rng.randint(1, r)))
        else:
            axes = list(range(r - rng.randint(1, r - 1), r))
        gs = [s[a] for a in axes]
        axes = [a - r if rng.random() < 0.5 else a for a in axes]
        eps = rng.choice([1e-12, 1e-5, 1e-6, 1e-3, 0.01, 0.1])
        return [T(s), T(gs), T(gs)], lambda v: R.nn.layer_norm(v[0], v[1], v[2], axes, eps, True, True)

    @gap("nn.rms_norm")
    def _(rng):
        r = rng.randint(1, 4)
        s = rshape(rng, r)
        axes = sorted(rng.sample(range(r), rng.randint(1, r)))
        gs = [s[a] for a in axes]
        axes = [a - r if rng.random() < 0.5 else a for a in axes]
        eps = rng.choice([1e-8, 1e-6, 1e-5, 1e-3, 0.01])
        return [T(s), T(gs)], lambda v: R.nn.rms_norm(v[0], v[1], axes, eps)

    @gap("nn.group_norm")
    def _(rng):
        g = rng.choice([1, 2, 3, 4])
        c = g * rng.randint(1, 3)
        r = rng.randint(3, 5)
        sp = rshape(rng, r - 2)
        eps = rng.choice([1e-5, 1e-6, 1e-3, 0.1])
        if rng.random() < 0.5:
            s, ca, axes = [rng.randint(1, 3), c] + sp, 1, list(range(2, r))
        else:
            s, ca, axes = [rng.randint(1, 3)] + sp + [c], rng.choice([r - 1, -1] if U else [r - 1]), list(range(1, r - 1))
        return [T(s), T([c]), T([c])], lambda v: R.nn.group_norm(v[0], v[1], v[2], g, ca, axes, eps)

    @gap("nn.instance_norm")
    def _(rng):
        r = rng.randint(3, 5)
        s = rshape(rng, r)
        eps = rng.choice([1e-5, 1e-6, 1e-3, 0.1])
        if rng.random() < 0.5:
            return [T(s), T([s[1]]), T([s[1]])], lambda v: R.nn.instance_norm(v[0], v[1], v[2], 1, list(range(2, r)), eps)
        ca = r - 1  # TVM 0.27's legalization indexes the shape with channel_axis as given
        return [T(s), T([s[-1]]), T([s[-1]])], lambda v: R.nn.instance_norm(v[0], v[1], v[2], ca, list(range(1, r - 1)), eps)

    @gap("nn.batch_norm")
    def _(rng):
        r = rng.randint(2, 5)
        s = rshape(rng, r)
        ax = rng.choice([1, r - 1, -1, 0])
        eps = rng.choice([1e-5, 1e-3, 1e-6, 0.1])
        c = [T([s[ax]])] * 4
        return [T(s)] + c, lambda v: R.nn.batch_norm(v[0], v[1], v[2], v[3], v[4], ax, eps, training=False)

    @gap("strided_slice")
    def _(rng):
        r = rng.randint(1, 4)
        s = rshape(rng, r, 3, 10)
        axes = sorted(rng.sample(range(r), rng.randint(1, r)))
        begin, end, strides = [], [], []
        for a in axes:
            n = s[a]
            st = rng.choice([1, 2, 3, -1, -2])
            if st > 0:
                if U:
                    b = rng.choice([rng.randint(0, n - 1), rng.randint(-n, -1)])
                    e = rng.choice([rng.randint(1, n), n + rng.randint(1, 50), rng.randint(-n + 1, -1), 2 ** 31 - 1])
                else:  # the sample's convention: end one past the last element read
                    b = rng.randint(0, n - 1)
                    e = b + st * ((rng.randint(b + 1, n) - b - 1) // st) + 1
            else:
                b = rng.choice([rng.randint(1, n - 1), -1, n + 5])
                e = rng.choice([rng.randint(-n - 5, -n - 1), 0, rng.randint(-n, -2)])
            begin.append(b); end.append(e); strides.append(st)
        if all(x == 1 for x in strides) and rng.random() < 0.5:
            return [T(s)], lambda v: R.strided_slice(v[0], axes, begin, end)
        ib = rng.random() < 0.2
        return [T(s)], lambda v: R.strided_slice(v[0], axes, begin, end, strides, ib)

    @gap("nn.pad")
    def _(rng):
        r = rng.randint(1, 4)
        s = rshape(rng, r, 3, 8)
        pw = [rng.randint(0, 2) for _ in range(2 * r)]
        # "edge" is not a mode TVM 0.27 legalizes: it lowers as a constant pad (unobservable)
        mode = rng.choice(["reflect", "replicate", "circular", "constant"] + (["edge"] if U else []))
        # pad_value enters only a constant pad's loops: other modes keep Relax's default 0.0
        # (a non-zero value there is unobservable: only with OPINFO_GAPS_UNOBSERVABLE)
        val = rng.choice([0.0, 2.0, -0.5]) if mode == "constant" or U else 0.0
        return [T(s)], lambda v: R.nn.pad(v[0], pw, mode, val)

    @gap("clip")
    def _(rng):
        lo, hi = rng.choice([(0.0, 6.0), (-3.0, 3.0), (0.0, 1.0), (-1e4, 0.0), (0.0, 1e4), (-0.5, 0.5),
                             (-128.0, 127.0)])
        if rng.random() < 0.3:
            return [T(rshape(rng, rng.randint(1, 4)), "int32")], lambda v: R.clip(v[0], int(lo), int(hi))
        return [T(rshape(rng, rng.randint(1, 4)))], lambda v: R.clip(v[0], lo, hi)

    @gap("nn.leakyrelu")
    def _(rng):
        a = rng.choice([0.5, 0.25, 0.001, 0.02, 1.5, 0.0])
        return [T(rshape(rng, rng.randint(1, 4)))], lambda v: R.nn.leakyrelu(v[0], a)

    @gap("nn.softplus")
    def _(rng):
        b, t = rng.choice([1.0, 3.0, 0.25]), rng.choice([1.0, 2.0, 30.0])
        return [T(rshape(rng, rng.randint(1, 4)))], lambda v: R.nn.softplus(v[0], b, t)

    @gap("tile")
    def _(rng):
        r = rng.randint(1, 3)
        reps = [rng.randint(1, 3) for _ in range(rng.choice([r + 1, r + 2] + ([max(1, r - 1)] if U else [])))]
        return [T(rshape(rng, r))], lambda v: R.tile(v[0], reps)

    @gap("flip")
    def _(rng):
        r = rng.randint(1, 4)
        return [T(rshape(rng, r))], lambda v: R.flip(v[0], rng.randint(-r, -1))

    for name in ("argmax", "argmin"):
        def mk(n):
            def f(rng):
                r = rng.randint(1, 4)
                ax, kd = rng.randint(-r, -1), rng.random() < 0.5
                return [T(rshape(rng, r))], lambda v: getattr(R, n)(v[0], ax, kd)
            return f
        gaps[name] = mk(name)

    for name in ("sum", "mean", "max", "min", "prod", "variance", "std"):
        def mk(n):
            def f(rng):
                r = rng.randint(1, 4)
                ax, kd = rng.randint(-r, r - 1), rng.random() < 0.5
                return [T(rshape(rng, r))], lambda v: getattr(R, n)(v[0], ax, kd)
            return f
        gaps[name] = mk(name)

    for name in ("cumsum", "cumprod"):
        def mk(n):
            def f(rng):
                r = rng.randint(1, 3)
                ax = rng.choice([None, -1, rng.randint(-r, r - 1)])
                dt, odt = rng.choice([(F, None), ("int32", None), ("int32", "float32"), (F, "float64"), ("int32", "int64")])
                ex = rng.random() < 0.3
                return [T(rshape(rng, r), dt)], lambda v: getattr(R, n)(v[0], ax, odt, ex)
            return f
        gaps[name] = mk(name)

    @gap("concat")
    def _(rng):
        r = rng.randint(1, 4)
        s = rshape(rng, r)
        ax = rng.randint(-r, -1)
        shapes = []
        for _ in range(rng.randint(2, 4)):
            t = list(s); t[ax] = rng.randint(1, 6); shapes.append(t)
        return [T(x) for x in shapes], lambda v: R.concat(v, ax)

    @gap("split")
    def _(rng):
        r = rng.randint(1, 3)
        s = rshape(rng, r, 4, 10)
        ax = rng.randint(-r, -1)
        sec = rng.choice([d for d in (2, 3, 4) if s[ax] % d == 0] or [1])
        return [T(s)], lambda v: R.split(v[0], sec, ax)

    @gap("repeat")
    def _(rng):
        r = rng.randint(1, 3)
        return [T(rshape(rng, r))], lambda v: R.repeat(v[0], rng.randint(1, 4), rng.randint(-r, -1))

    @gap("gather_elements")
    def _(rng):
        r = rng.randint(1, 3)
        s = rshape(rng, r)
        ax = rng.randint(-r, -1)
        idx = [rng.randint(1, d) for d in s]
        return [T(s), T(idx, rng.choice(["int32", "int64"]))], lambda v: R.gather_elements(v[0], v[1], ax)

    @gap("scatter_elements")
    def _(rng):
        r = rng.randint(1, 3)
        s = rshape(rng, r)
        ax = rng.randint(-r, r - 1)
        red = rng.choice(["update", "add", "mul", "mean", "max", "min"])
        return [T(s), T(s, "int64"), T(s)], lambda v: R.scatter_elements(v[0], v[1], v[2], ax, red)

    @gap("one_hot")
    def _(rng):
        on, off = rng.choice([(1.0, 0.0), (2.5, 0.5), (0.0, 1.0)])
        r = rng.randint(1, 3)
        ax = rng.randint(-1, r if U else r - 1)
        depth = rng.randint(2, 6)
        return [T(rshape(rng, r), rng.choice(["int32", "int64"]))], lambda v: R.one_hot(v[0], on, off, depth, ax)

    @gap("nn.prelu")
    def _(rng):
        r = rng.randint(2, 4)
        s = rshape(rng, r)
        ax = rng.choice([-1, r - 1, 0])
        return [T(s), T([s[ax]])], lambda v: R.nn.prelu(v[0], v[1], ax)

    @gap("astype")
    def _(rng):
        src = rng.choice([F, "int32", "bool", "float16", "int8", "float64"])
        dst = rng.choice([d for d in ["bool", "int8", "uint8", "float64", F, "int64", "float16"] if d != src])
        return [T(rshape(rng, rng.randint(1, 3)), src)], lambda v: R.astype(v[0], dst)

    @gap("where")
    def _(rng):
        r = rng.randint(1, 3)
        s = rshape(rng, r)
        c = [1 if rng.random() < 0.5 else d for d in s]
        if rng.random() < 0.3:
            c = c[rng.randint(0, r - 1):]
        x = [1 if rng.random() < 0.3 else d for d in s]
        return [T(c, "bool"), T(x), T(s)], lambda v: R.where(v[0], v[1], v[2])

    @gap("power")
    def _(rng):
        a = rshape(rng, rng.randint(1, 3))
        b = [1 if rng.random() < 0.4 else d for d in a]
        return [T(a, "float16"), T(b, "float16")], lambda v: R.power(v[0], v[1])

    @gap("vision.multibox_transform_loc")
    def _(rng):
        b, c, n = rng.randint(1, 2), rng.randint(2, 4), rng.randint(2, 6)
        soft = rng.random() < 0.5
        thr = rng.choice([0.0, 0.25, 0.4] + ([-0.5] if soft else [0.6]))
        var = rng.choice([(0.1, 0.1, 0.2, 0.2), (0.5, 1.0, 2.0, 0.25), (1.0, 1.0, 1.0, 1.0)])
        return ([T([b, c, n]), T([b, n * 4]), T([1, n, 4])],
                lambda v: R.vision.multibox_transform_loc(v[0], v[1], v[2], rng.random() < 0.5, thr, var,
                                                          rng.random() < 0.5, soft))

    @gap("layout_transform")
    def _(rng):
        # permuting maps lower to permute_dims' loops (session 33: read as permute_dims until
        # copy readings needed their op's tag), splits by other factors, a padded split
        maps = [(lambda n, c, h, w: (n, h, w, c), None), (lambda n, c, h, w: (c, n, w, h), None),
                (lambda n, c, h, w: (n, c // 2, h, w, c % 2), None),
                (lambda n, c, h, w: (n, h, w, c // 2, c % 2), None),
                (lambda n, c, h, w: (n, c // 4, h, w, c % 4), 0.0)]
        m, pad = maps[rng.randint(0, len(maps) - 1)]
        c = rng.choice([2, 4, 6]) if pad is None else rng.choice([3, 5, 6])
        return [T([rng.randint(1, 2), c, rng.randint(2, 5), rng.randint(2, 5)])], \
            lambda v: R.layout_transform(v[0], m, pad)

    for name in ("floor_divide", "floor_mod", "mod", "divide", "maximum", "minimum", "subtract"):
        def mk(n):
            def f(rng):
                a = rshape(rng, rng.randint(1, 3))
                b = [1 if rng.random() < 0.4 else d for d in a]
                dt = rng.choice(["int32", "int64", "float16"])
                return [T(a, dt), T(b, dt)], lambda v: getattr(R, n)(v[0], v[1])
            return f
        gaps[name] = mk(name)

    for name, orig in list(SPECS.items()):
        if name in gaps:
            SPECS[name] = (lambda o, g: lambda rng: (g if rng.random() < P else o)(rng))(orig, gaps[name])
    return sorted(gaps)
