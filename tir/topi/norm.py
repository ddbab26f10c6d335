"""Normalisations: ``nn.layer_norm``, ``nn.rms_norm``, ``nn.group_norm`` and inference
``nn.batch_norm``, block for block as TVM's topi/Relax legalization writes them."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder, sum_
from ..expr import Call, Cast, Var, as_int, const
from ..stmt import BufferStore, LetStmt, seq
from .. import dtype as dt
from ..expr import BufferLoad
from .broadcast import broadcast_index
from .common import OpError, ShapeError, index
from .reduce import _count, reduce_axes
from .transform import reshape


def _dims(shape):
    return [as_int(e) if as_int(e) is not None else e for e in shape]


def _check_param(op, arg, buf, shape):
    have, want = _dims(buf.shape), _dims(shape)
    if have != want:
        static = all(isinstance(e, int) for e in have + want)
        raise (ShapeError if static else OpError)(op, arg, f"expected shape {want}, got {have}")


def layer_norm(b: Builder, x: Buffer, gamma: Buffer, beta: Buffer, axes=-1, epsilon=1e-5, center=True,
               scale=True) -> Buffer:
    """``(x - mean) * rsqrt(var + eps) * gamma + beta`` over ``axes`` (x_sum, x_mean, x_var_sum blocks)."""
    op = "nn.layer_norm"
    red = reduce_axes(op, x.ndim, axes)
    kept = [d for d in range(x.ndim) if d not in red]
    _check_param(op, "gamma", gamma, [x.shape[d] for d in red])
    _check_param(op, "beta", beta, [x.shape[d] for d in red])
    names = [f"ax{i}" for i in range(len(kept))]
    rk = [b.reduce_axis(x.shape[d], f"k{d}") for d in red]
    rk2 = [b.reduce_axis(x.shape[d], f"k{d}") for d in red]

    def src(o, ks):
        pos = {**dict(zip(kept, o)), **dict(zip(red, ks))}
        return tuple(pos[d] for d in range(x.ndim))

    rshape = [x.shape[d] for d in kept]
    count = _count(x, red)
    total = b.compute(f"{x.name}_sum", rshape, lambda *o: sum_(x[src(o, [k.var for k in rk])], rk), names=names)
    mean = b.compute(f"{x.name}_mean", rshape, lambda *o: total[o] / count, names=names)

    def var_body(*o):
        d = x[src(o, [k.var for k in rk2])] - mean[o]
        return sum_(d * d, rk2)

    var = b.compute(f"{x.name}_var_sum", rshape, var_body, names=names)
    eps = const(epsilon, x.dtype)

    def out(*i):
        o = tuple(i[d] for d in kept)
        r = tuple(i[d] for d in red)
        v = (x[i] - mean[o]) * Call(x.dtype, "rsqrt", (var[o] / count + eps,))
        v = v * gamma[r] if scale else v
        return v + beta[r] if center else v

    return b.compute("T_layer_norm", x.shape, out, names=[f"ax{d}" for d in range(x.ndim)])


def instance_norm(b: Builder, x: Buffer, gamma: Buffer, beta: Buffer, channel_axis=1, axes=None, epsilon=1e-5,
                  center=True, scale=True) -> Buffer:
    """Normalized over ``axes`` (the spatial ones by default) per sample and channel, then
    ``gamma[c]`` and ``beta[c]`` of the channel: one two-value reduction (sum and sum of
    squares), as TVM legalizes it."""
    op = "nn.instance_norm"
    if not isinstance(channel_axis, int) or not -x.ndim <= channel_axis < x.ndim:
        raise OpError(op, "channel_axis", f"{channel_axis!r} is not an axis of a {x.ndim}-d tensor")
    ca = channel_axis % x.ndim
    red = reduce_axes(op, x.ndim, axes if axes is not None else [d for d in range(1, x.ndim) if d != ca])
    if ca in red or 0 in red:
        raise OpError(op, "axes", f"{axes!r} must leave the batch axis and the channel axis {ca}")
    _check_param(op, "gamma", gamma, [x.shape[ca]])
    _check_param(op, "beta", beta, [x.shape[ca]])
    # half precision is summed in float32 and normalized there, cast back before gamma and beta
    acc = dt.float32 if x.dtype.is_float and x.dtype.bits < 32 else x.dtype
    s_buf, q_buf, kept, count = _sums_and_squares(b, x, red, op, acc)
    eps = const(epsilon, acc)

    def out(*i):
        o = tuple(i[d] for d in kept)
        mean = s_buf[o] / count
        xi = x[i] if acc == x.dtype else Cast(acc, x[i])
        v = (xi - mean) * Call(acc, "rsqrt", (q_buf[o] / count - mean * (s_buf[o] / count) + eps,))
        v = v if acc == x.dtype else Cast(x.dtype, v)
        v = v * gamma[(i[ca],)] if scale else v
        return v + beta[(i[ca],)] if center else v

    return b.compute("T_instance_norm", x.shape, out, names=[f"ax{d}" for d in range(x.ndim)])


def _sums_and_squares(b: Builder, x: Buffer, red: list, op: str, acc=None) -> tuple:
    """One block reducing ``x`` over the axes ``red`` into two buffers at once, the sum and
    the sum of squares (``<x>_red_temp``, TVM's tuple reduction), in type ``acc`` (``x``'s
    by default; each element cast to it): (sums, squares, the kept axes, the element count
    as a constant)."""
    from .common import static

    acc = x.dtype if acc is None else acc
    kept = [d for d in range(x.ndim) if d not in red]
    rk = {d: b.reduce_axis(x.shape[d], f"k{d}") for d in red}
    names = [f"ax{i}" for i in range(len(kept))]
    rshape = [x.shape[d] for d in kept]
    s_buf = b.alloc(f"{x.name}_red_temp_v0", rshape, acc)
    q_buf = b.alloc(f"{x.name}_red_temp_v1", rshape, acc)
    ivars = [Var(f"v_{n}", dt.int64) for n in names]

    def make_body():
        o = tuple(ivars)
        pos = dict(zip(kept, o))
        val = x[tuple(rk[d].var if d in rk else pos[d] for d in range(x.ndim))]
        val = val if acc == x.dtype else Cast(acc, val)
        ns, nq = Var(f"v_{s_buf.name}", acc), Var(f"v_{q_buf.name}", acc)
        body = LetStmt(ns, BufferLoad(s_buf, o) + val, LetStmt(nq, BufferLoad(q_buf, o) + val * val, seq(
            BufferStore(s_buf, ns, o), BufferStore(q_buf, nq, o))))
        zero = const(0.0, acc)
        return body, seq(BufferStore(s_buf, zero, o), BufferStore(q_buf, zero, o)), (s_buf, q_buf)

    b.emit_block(b.unique(f"{x.name}_red_temp"), list(zip(names, ivars, rshape)), list(rk.values()), make_body)
    n = 1
    for d in red:
        n *= static(x.shape[d], op, "data")
    return s_buf, q_buf, kept, const(float(n), acc)


def rms_norm(b: Builder, x: Buffer, weight: Buffer, axes=-1, epsilon=1e-5) -> Buffer:
    """``x * rsqrt(mean(x^2) + eps) * weight`` with TVM's cast blocks around it."""
    op = "nn.rms_norm"
    red = reduce_axes(op, x.ndim, axes)
    kept = [d for d in range(x.ndim) if d not in red]
    _check_param(op, "weight", weight, [x.shape[d] for d in red])
    names = [f"ax{d}" for d in range(x.ndim)]
    xc = b.compute("T_cast", x.shape, lambda *i: x[i], names=names)
    sq = b.compute("T_multiply", x.shape, lambda *i: xc[i] * xc[i], names=names)
    rk = {d: b.reduce_axis(x.shape[d], f"k{d}") for d in red}

    def sq_src(o):
        pos = dict(zip(kept, o))
        return tuple(rk[d].var if d in rk else pos[d] for d in range(x.ndim))

    knames = [f"ax{i}" for i in range(len(kept))]
    rshape = [x.shape[d] for d in kept]
    ssum = b.compute(f"{sq.name}_red", rshape, lambda *o: sum_(sq[sq_src(o)], list(rk.values())), names=knames)
    count = _count(x, red)
    eps = const(epsilon, x.dtype)
    rs = b.compute("rsqrt", rshape, lambda *o: Call(x.dtype, "rsqrt", (ssum[o] / count + eps,)), names=knames)
    wc = b.compute("T_cast", weight.shape, lambda *i: weight[i], names=[f"ax{d}" for d in range(weight.ndim)])

    def out(*i):
        return rs[tuple(i[d] for d in kept)] * xc[i] * wc[tuple(i[d] for d in red)]

    res = b.compute("T_rms_norm", x.shape, out, names=names)
    return b.compute("T_cast", x.shape, lambda *i: res[i], names=names)


def group_norm(b: Builder, x: Buffer, gamma: Buffer, beta: Buffer, num_groups=1, channel_axis=1, axes=None,
               epsilon=1e-5, center=True, scale=True) -> Buffer:
    """Group normalisation: reshape to (..., G, C/G, ...), one two-value reduction (sum and
    sum of squares), normalise, reshape back."""
    op = "nn.group_norm"
    from .common import normalize_axis, static

    ca = normalize_axis(channel_axis, x.ndim, op, "channel_axis")
    channels = static(x.shape[ca], op, "data channels")
    if not isinstance(num_groups, int) or num_groups < 1 or channels % num_groups:
        raise OpError(op, "num_groups", f"{num_groups!r} must divide the {channels} channels")
    _check_param(op, "gamma", gamma, [x.shape[ca]])
    _check_param(op, "beta", beta, [x.shape[ca]])
    shape5 = [static(e, op, "data") for e in x.shape]
    shape5[ca:ca + 1] = [num_groups, channels // num_groups]
    xr = reshape(b, x, shape5)
    spatial = [d for d in range(x.ndim) if d != ca and d not in (0,)] if axes is None else \
        [normalize_axis(a, x.ndim, op, "axes") for a in axes]
    # axes of the reshaped tensor reduced: the channel-in-group axis and the given spatial axes
    red = sorted([ca + 1] + [d + 1 if d > ca else d for d in spatial])
    s_buf, q_buf, kept, count = _sums_and_squares(b, xr, red, op)
    gshape = [num_groups, channels // num_groups]
    g2 = reshape(b, gamma, gshape)
    b2 = reshape(b, beta, gshape)
    eps = const(epsilon, x.dtype)

    def out(*i):
        o = tuple(i[d] for d in kept)
        mean = s_buf[o] / count
        v = (xr[i] - mean) * Call(x.dtype, "rsqrt", (q_buf[o] / count - mean * (s_buf[o] / count) + eps,))
        g = (i[ca], i[ca + 1])
        v = v * g2[g] if scale else v
        return v + b2[g] if center else v

    normed = b.compute("T_group_norm", shape5, out, names=[f"ax{d}" for d in range(len(shape5))])
    return reshape(b, normed, [static(e, op, "data") for e in x.shape])


def batch_norm(b: Builder, x: Buffer, gamma: Buffer, beta: Buffer, mean: Buffer, var: Buffer, axis=1,
               epsilon=1e-5, center=True, scale=True, momentum=0.1, training=False):
    """Inference batch norm: ``(x - mean) / sqrt(var + eps) * gamma + beta``; returns the three
    outputs Relax defines (result, moving mean, moving var) as TVM's legalization does."""
    op = "nn.batch_norm"
    from .common import normalize_axis, static

    if training:
        raise OpError(op, "training", "only inference batch norm is supported")
    ax = normalize_axis(axis, x.ndim, op)
    for arg, buf in (("gamma", gamma), ("beta", beta), ("moving_mean", mean), ("moving_var", var)):
        _check_param(op, arg, buf, [x.shape[ax]])
    bshape = [x.shape[d] if d == ax else index(1) for d in range(x.ndim)]
    names = [f"ax{d}" for d in range(x.ndim)]

    def expand(p):
        return reshape(b, p, [static(e, op, "data") for e in bshape])

    def bin_(name, a, c, fn):
        return b.compute(name, x.shape, lambda *i: fn(a[i], c[broadcast_index(c.shape, i, a.shape)]), names=names)

    m = expand(mean)
    centered = bin_("T_subtract", x, m, lambda p, q: p - q)
    v = expand(var)
    ve = b.compute("T_add", v.shape, lambda *i: v[i] + const(epsilon, x.dtype), names=names)
    sd = b.compute("compute", v.shape, lambda *i: Call(x.dtype, "sqrt", (ve[i],)))
    res = bin_("T_divide", centered, sd, lambda p, q: p / q)
    if scale:
        res = bin_("T_multiply", res, expand(gamma), lambda p, q: p * q)
    if center:
        res = bin_("T_add", res, expand(beta), lambda p, q: p + q)
    mm = b.compute("T_multiply", mean.shape, lambda i: mean[i], names=["ax0"])
    mv = b.compute("T_multiply", var.shape, lambda i: var[i], names=["ax0"])
    return res, mm, mv
