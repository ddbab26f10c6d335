"""TVM's kind (AnnotateTIROpPattern) of every lowered function of a folder, written to
``FOLDER/tvm_kinds.json`` (file name -> kind) for ``../lowered_check.py`` (development only).

    python lower_kinds.py FOLDER
"""
import glob
import json
import os
import sys

from tvm import relax, tirx
from tvm.script import from_source

NAMES = {0: "elemwise", 1: "broadcast", 2: "injective", 3: "comm_reduce", 4: "out_ewise_fusable", 8: "opaque"}

if __name__ == "__main__":
    folder = sys.argv[1]
    kinds = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.py"))):
        try:
            out = relax.transform.AnnotateTIROpPattern()(from_source(open(f).read()))
            for fn in out.functions.values():
                if isinstance(fn, tirx.PrimFunc):
                    kinds[os.path.basename(f)] = NAMES.get(int(fn.attrs["op_pattern"]), "?")
        except Exception as e:  # noqa: BLE001 - TVM cannot read back some of its own prints
            print("SKIP", os.path.basename(f), type(e).__name__, str(e)[:80])
    json.dump(kinds, open(os.path.join(folder, "tvm_kinds.json"), "w"))
    print(len(kinds), "kinds")
