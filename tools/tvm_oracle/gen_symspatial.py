"""Windowed ops over symbolic spatial extents: a corpus like gen_ops.py's, whose first input
has every spatial axis (D, H, W of its layout) symbolic -- variable-size images, audio or
video -- instead of a symbolic batch; every other case split and reordered as gen_ops.py's
``scheduled`` variant. Development only (TVM is no dependency of opinfo).

    ../../../tvmenv/bin/python gen_symspatial.py OUT SEED CASES_PER_OP [OPS...]
"""
import json
import os
import random
import sys

import tvm
from tvm import relax, tirx

from gen_ops import ARG_NAMES, SPECS, attrs_of, jsonable, kinds_of, schedule, tensor_type, write_case

WINDOWED = [n for n in SPECS if n.startswith(("nn.conv", "nn.max_pool", "nn.avg_pool", "nn.adaptive_avg_pool",
                                               "image.resize"))]


def _module(inputs, fn, first_shape):
    bb = relax.BlockBuilder()
    params = [relax.Var("x" if i == 0 else f"y{i}" if len(inputs) > 2 else "y",
                        tensor_type(first_shape if i == 0 else list(s), d)) for i, (s, d) in enumerate(inputs)]
    with bb.function("main", params):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit(fn(params)))
        bb.emit_func_output(gv)
    return bb.get()


def build(name, rng):
    inputs, fn = SPECS[name](rng)
    static = _module(inputs, fn, list(inputs[0][0]))
    call = static["main"].body.blocks[0].bindings[0].value
    op, attrs = attrs_of(call)
    for k, a in zip(ARG_NAMES.get(op, ()), call.args):
        if k is not None:
            attrs[k] = jsonable(a)
    layout = attrs.get("data_layout") or attrs.get("layout") or ""
    shape = list(inputs[0][0])
    spatial = [i for i, c in enumerate(layout) if c in "DHW" and i < len(shape)]
    if not spatial:
        return None
    for i in spatial:
        shape[i] = tirx.Var("dhw"[["D", "H", "W"].index(layout[i])], "int64")
    return _module(inputs, fn, shape), attrs, [(shape, inputs[0][1])] + list(inputs[1:])


def main(out_dir, seed, per_op, only=None):
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed)
    cases = []
    for name in only or WINDOWED:
        for j in range(per_op):
            cid = f"{name.replace('.', '_')}_{seed}_{j}"
            try:
                built = build(name, rng)
                if built is None:
                    continue
                mod, attrs, inputs = built
                lmod = relax.transform.LegalizeOps()(mod)
                kinds = kinds_of(lmod)
                if len(kinds) != 1:
                    print("SKIP", cid, f"{len(kinds)} PrimFuncs", file=sys.stderr)
                    continue
                variant = "plain"
                if j % 2 == 1 and schedule(lmod, rng):  # split + reorder, pads inlined, as gen_ops
                    variant, kinds = "scheduled", kinds_of(lmod)
                text = lmod.script()
            except Exception as e:
                print("SKIP", cid, type(e).__name__, str(e).splitlines()[0][:150] if str(e) else "", file=sys.stderr)
                continue
            dialect = write_case(out_dir, rng, cid, text)
            cases.append({"id": cid, "op": name, "attrs": attrs,
                          "inputs": [{"shape": [str(x) for x in s], "dtype": d} for s, d in inputs],
                          "tvm_kind": kinds, "n_primfuncs": 1, "variant": variant, "dynamic": True,
                          "dialect": dialect, "numeric": False})
    with open(os.path.join(out_dir, "index.json"), "w") as fh:
        json.dump({"generator": f"apache-tvm {tvm.__version__} (symbolic spatial)", "seed": seed, "cases": cases},
                  fh, indent=1)
    print(len(cases), "cases")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] or None)
