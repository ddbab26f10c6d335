"""Generate model corpus entries (MODEL.py + MODEL.json) like ../shared/corpus/models with real TVM."""
import json, os, sys
import onnx
import tvm
from tvm import relax
from tvm import tirx as tir
from tvm.relax.frontend.onnx import from_onnx

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light")


def jsonable(v):
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, str):
        return str(v)
    cls = type(v).__name__
    if cls == "IntImm":
        return bool(v.value) if "bool" in str(getattr(v, "ty", "")) else int(v.value)
    if cls == "FloatImm":
        return float(v.value)
    if cls == "ShapeExpr":
        return [jsonable(x) for x in v.values]
    if cls == "PrimValue":  # TVM 0.25/0.26 pass some arguments so
        return jsonable(v.value)
    if cls in ("Constant", "GenericConst"):
        data = v.data if hasattr(v, "data") else v.value
        return jsonable(data.numpy().item()) if data.numpy().size == 1 else str(v)
    if isinstance(v, tvm.ir.Op):
        return v.name
    if hasattr(v, "__len__") and hasattr(v, "__getitem__") and not hasattr(v, "keys"):
        return [jsonable(x) for x in v]
    return str(v)


def attrs_of(call):
    """(Relax op name without ``relax.``, its attributes as JSON values), with the parameters
    Relax passes as arguments (slice bounds, clip bounds, target shapes, tril/triu k, one_hot
    values) added under their attribute names, as the sample corpus records them."""
    out = {}
    if call.attrs is not None:
        for k in dir(call.attrs):
            if k.startswith("_") or k in ("id_", "is_", "same_as") or k.startswith("get_"):
                continue
            v = getattr(call.attrs, k)
            if callable(v) and not hasattr(v, "__len__"):
                continue
            out[k] = jsonable(v)
    name = call.op.name[len("relax."):]
    a = call.args
    if name == "strided_slice":
        for i, k in enumerate(["axes", "begin", "end", "strides"]):
            if 1 + i < len(a):
                out[k] = jsonable(a[1 + i])
    elif name == "clip":
        out["min"], out["max"] = jsonable(a[1]), jsonable(a[2])
    elif name in ("reshape", "broadcast_to", "collapse_sum_to"):
        out["shape"] = jsonable(a[1])
    elif name in ("tril", "triu"):
        out["k"] = jsonable(a[1])
    elif name == "one_hot":
        out["on_value"], out["off_value"] = jsonable(a[1]), jsonable(a[2])
    return name, out


def tensor_type(shape, dtype):
    """A tensor's type for relax.Var: TensorStructInfo in TVM 0.25/0.26 (whose relax.TensorType
    is another class there), TensorType since 0.27."""
    return getattr(relax, "TensorStructInfo", relax.TensorType)(shape, dtype)


def var_name(var) -> str:
    """A Relax variable's name: ``name`` since TVM 0.26, ``name_hint`` in 0.25."""
    return var.name if hasattr(var, "name") else var.name_hint


def ty_of(expr):
    return expr.struct_info if hasattr(expr, "struct_info") else expr.ty


def shape_of(sinfo):
    if type(sinfo).__name__ in ("TensorType", "TensorStructInfo") and sinfo.shape is not None:
        return [str(x) if type(x).__name__ != "IntImm" else f"T.int64({x.value})" for x in sinfo.shape.values]
    return None


def weights_as_inputs(model):
    """Light models build their weights with ConstantOfShape: make each such weight a graph input."""
    from onnx import numpy_helper, helper, TensorProto
    g = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    keep = []
    new_inputs = []
    for n in g.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits:
            shape = [int(x) for x in inits[n.input[0]]]
            new_inputs.append(helper.make_tensor_value_info(n.output[0], TensorProto.FLOAT, shape))
        else:
            keep.append(n)
    used = {i for n in keep for i in n.input}
    del g.node[:]
    g.node.extend(keep)
    old_inputs = [i for i in g.input if i.name not in inits]
    del g.input[:]
    g.input.extend(old_inputs + new_inputs)
    kept_inits = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept_inits)
    return model


def main(name, out_dir):
    model = onnx.load(os.path.join(LIGHT, f"light_{name}.onnx"))
    emit(weights_as_inputs(model), name, out_dir, f"onnx light model zoo light_{name}.onnx")


def emit(model, name, out_dir, source):
    """Import ``model`` with TVM's Relax ONNX frontend, legalize it and write NAME.py and
    NAME.json (every PrimFunc's Relax op and attributes, and TVM's kinds) to ``out_dir``."""
    mod = from_onnx(model)
    calls = {}
    for b in mod["main"].body.blocks:
        for bd in b.bindings:
            if (isinstance(bd.value, relax.Call) and isinstance(bd.value.op, tvm.ir.Op)
                    and bd.value.op.name != "relax.call_tir"):  # emit_te by the frontend: no Relax op
                calls[var_name(bd.var)] = bd.value
    lmod = relax.transform.LegalizeOps()(mod)
    kmod = relax.transform.AnnotateTIROpPattern()(lmod)
    kinds = {}
    names = {0: "elemwise", 1: "broadcast", 2: "injective", 3: "comm_reduce", 4: "out_ewise_fusable", 8: "opaque"}
    for gv, f in kmod.functions.items():
        if isinstance(f, tir.PrimFunc):
            p = f.attrs["op_pattern"] if f.attrs and "op_pattern" in f.attrs else None
            kinds[gv.name_hint] = names.get(int(p)) if p is not None else None
    prim = {}
    for b in lmod["main"].body.blocks:
        for bd in b.bindings:
            v = bd.value
            if isinstance(v, relax.Call) and v.op.name == "relax.call_tir":
                gv = v.args[0].name_hint
                src = calls.get(var_name(bd.var))
                if src is None:
                    continue
                op, at = attrs_of(src)
                rec = {"op": op, "attrs": at, "input_shapes": [shape_of(ty_of(a)) for a in src.args
                                                        if type(ty_of(a)).__name__ in ("TensorType", "TensorStructInfo")]}
                if gv in prim and (prim[gv]["op"], prim[gv]["attrs"]) != (op, at):
                    prim[gv]["ambiguous"] = True
                elif gv not in prim:
                    prim[gv] = rec
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{name}.py"), "w") as fh:
        fh.write(lmod.script())
    with open(os.path.join(out_dir, f"{name}.json"), "w") as fh:
        json.dump({"model": name, "source": source, "primfuncs": prim, "tvm_kind": kinds}, fh, indent=1)
    print(name, len(prim), "primfuncs", sum(1 for p in prim.values() if p.get("ambiguous")), "ambiguous")


if __name__ == "__main__":
    out = sys.argv[1]
    for n in sys.argv[2:]:
        main(n, out)
