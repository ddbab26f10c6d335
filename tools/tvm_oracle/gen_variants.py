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
        if dynamic and i == 0:
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


def layout_case(name, rng):
    k = rng.choice([4, 4, 8])
    inputs, fn = LAYOUT_SPECS[name](rng, k)
    mod = _build(inputs, lambda bb, v: bb.emit(fn(v)))
    _, attrs = attrs_of(mod["main"].body.blocks[0].bindings[0].value)
    lmod = relax.transform.LegalizeOps()(mod)
    funcs = [(gv, f) for gv, f in lmod.functions.items() if isinstance(f, tirx.PrimFunc)]
    if len(funcs) != 1:
        return None
    gv, f = funcs[0]
    f = relayout(f, k, 1 if name == "nn.conv2d" else None, rng.random() < 0.3)
    pmod = tvm.IRModule({gv: f})
    return pmod, _packed_attrs(attrs, k), inputs, kinds_of(pmod)


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
    pick = rng.choices([g for g, _ in GRAPHS], [w for _, w in GRAPHS])[0]
    inputs, fn = pick(rng)
    mod = _build(inputs, fn, dynamic)
    ops = []
    for binding in mod["main"].body.blocks[0].bindings:
        call = binding.value
        if isinstance(call, relax.Call) and hasattr(call.op, "name"):
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


# ----------------------------------------------------------------------------- main

def _record(cid, rng, out_dir, text):
    dialect = "tirx"
    if rng.random() < 0.4:
        text, dialect = to_old_dialect(text), "tir"
    with open(os.path.join(out_dir, cid + ".py"), "w") as fh:
        fh.write(text)
    return dialect


def _shapes(inputs, dynamic):
    return [{"shape": ["n" if dynamic and i == 0 and j == 0 else str(x) for j, x in enumerate(s)], "dtype": d}
            for i, (s, d) in enumerate(inputs)]


def main(out_dir, seed, count, variants):
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed)
    cases = []
    for j in range(count):
        variant = variants[j % len(variants)]
        try:
            if variant == "layout":
                name = rng.choice(list(LAYOUT_SPECS))
                cid, dynamic = f"{name.replace('.', '_')}_{seed}_{j}", False
                got = layout_case(name, rng)
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
