"""gen_ops.py with unit dimensions: every dimension rshape draws is 1 with probability
OPINFO_UNIT_P (default 0.3). Real shapes have them (batch 1, a channel of 1, a kept axis),
and they are where several readings coincide (a reduction or softmax over an axis of 1,
a division by a count of 1 that TVM folds away).

Usage: gen_unitdims.py OUT SEED PER_OP [OPS...]  (OPINFO_SCHEDULE works as in gen_ops.py)"""
import os
import sys

import gen_ops

_P = float(os.environ.get("OPINFO_UNIT_P", "0.3"))
_rshape = gen_ops.rshape


def _unit_rshape(rng, rank, lo=2, hi=9):
    shape = _rshape(rng, rank, lo, hi)
    return [1 if rng.random() < _P else d for d in shape]


gen_ops.rshape = _unit_rshape

if __name__ == "__main__":
    gen_ops.main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] or None)
