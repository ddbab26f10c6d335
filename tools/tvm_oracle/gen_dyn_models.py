"""The ONNX light model zoo with a symbolic batch (development only; TVM's interpreter):
``gen_models.py``'s corpus with the data input's and the outputs' first dimension made the
ONNX ``dim_param`` N, so every PrimFunc has a symbolic batch ``n``.

    python gen_dyn_models.py OUT resnet50 squeezenet densenet121 inception_v1 bvlc_alexnet
"""
import os
import sys

import onnx

import gen_models as gm

if __name__ == "__main__":
    out = sys.argv[1]
    for name in sys.argv[2:]:
        model = gm.weights_as_inputs(onnx.load(os.path.join(gm.LIGHT, f"light_{name}.onnx")))
        g = model.graph
        g.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
        for o in g.output:
            o.type.tensor_type.shape.dim[0].dim_param = "N"
        del g.value_info[:]
        try:
            gm.emit(model, name + "_dyn", out, f"onnx light model zoo light_{name}.onnx, batch N")
        except Exception as e:  # noqa: BLE001 - TVM's importer fails on some (shufflenet's AveragePool)
            print("FAIL", name, type(e).__name__, str(e)[:300])
