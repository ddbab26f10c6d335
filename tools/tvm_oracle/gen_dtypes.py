"""Like gen_ops.py, with other element types: float16 everywhere a float32 input was, int32 /
int8 inputs for ops defined on integers, and matmul / conv2d with an ``out_dtype`` wider than
their inputs. Usage: gen_dtypes.py OUT SEED PER_OP [OPS...] (development only, needs TVM)."""
import sys

import gen_ops
from gen_ops import R, SPECS, T, rshape

INT_OK = ["add", "subtract", "multiply", "maximum", "minimum", "sum", "max", "min", "prod", "permute_dims",
          "reshape", "concat", "strided_slice", "take", "flip", "tile", "broadcast_to", "expand_dims", "squeeze",
          "argmax", "argmin", "where", "abs", "negative", "nn.pad", "repeat", "stack", "equal", "less", "clip",
          "floor_divide", "floor_mod", "matmul", "sign", "square"]
FLOAT_ONLY = ["exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "nn.relu", "nn.gelu", "nn.silu", "nn.softmax",
              "nn.log_softmax", "nn.layer_norm", "nn.rms_norm", "nn.conv2d", "nn.conv1d", "nn.max_pool2d",
              "nn.avg_pool2d", "nn.adaptive_avg_pool2d", "mean", "variance", "image.resize2d", "divide", "power",
              "nn.leakyrelu", "nn.batch_norm", "nn.group_norm", "nn.instance_norm", "nn.conv2d_transpose", "cos",
              "round", "floor", "ceil", "clip", "nn.relu6", "nn.softplus", "std", "astype"]


def _retyped(name, spec):
    def f(rng):
        inputs, fn = spec(rng)
        if name in INT_OK and rng.random() < 0.6:
            new = rng.choice(["int32", "int32", "int8", "int64"])
        else:
            new = "float16"
        return [(s, new if d == "float32" else d) for s, d in inputs], fn
    return f


def _wide_matmul(rng):
    m, k, n = rshape(rng, 3)
    src, out = rng.choice([("float16", "float32"), ("int8", "int32"), ("float32", "float32")])
    return [T([m, k], src), T([k, n], src)], lambda v: R.matmul(v[0], v[1], out_dtype=out)


def _wide_conv2d(rng):
    src, out = rng.choice([("float16", "float32"), ("int8", "int32")])
    cin, cout, h, w = rng.randint(1, 4), rng.randint(1, 4), rng.randint(5, 9), rng.randint(5, 9)
    k = rng.choice([1, 3])
    lay, kl = rng.choice([("NCHW", "OIHW"), ("NHWC", "HWIO")])
    d = [1, cin, h, w] if lay == "NCHW" else [1, h, w, cin]
    wt = [cout, cin, k, k] if kl == "OIHW" else [k, k, cin, cout]
    pad = [k // 2] * 4
    return [T(d, src), T(wt, src)], lambda v: R.nn.conv2d(v[0], v[1], 1, pad, 1, 1, lay, kl, out_dtype=out)


if __name__ == "__main__":
    out_dir, seed, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    names = sys.argv[4:] or [n for n in INT_OK + FLOAT_ONLY if n in SPECS]
    for n in set(names):
        SPECS[n] = _retyped(n, SPECS[n])
    wide = {"matmul": _wide_matmul, "nn.conv2d": _wide_conv2d}
    for n, f in wide.items():  # half of these cases widen their output
        base = SPECS[n]
        SPECS[n] = (lambda b, w: lambda rng: w(rng) if rng.random() < 0.5 else b(rng))(base, f)
    gen_ops.main(out_dir, seed, per, sorted(set(names)))
