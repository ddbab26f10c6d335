"""Confirm a recovered op by building it again.

:func:`verify_op` lowers the op afresh with the project's lowering library
(``tir.topi.lower``) from the answer alone: its name, its attributes and the shapes and
types of the buffers its operands name. Both functions then run in the interpreter on the
same random inputs (symbolic extents bound to a small value) and their outputs are
compared. It reads what the PrimFunc computes, so it also judges a scheduled function
whose loops compute something else than the op they came from. The ops of a fused answer are
checked one by one (:func:`verify_fused`) on the values the function's run leaves in the
buffers each reads and writes.

The check costs two runs of the function: :func:`opinfo.analyze` makes it on small
functions (``CHEAP_ELEMENTS``, symbolic extents at 1 when that makes a function small;
runs that walk more than ``CHEAP_STEPS`` loop iterations one at a time are stopped: the
answer is withdrawn when the op computes something else), ``opinfo analyze --verify`` and
:func:`verify_op` on any function up to ``MAX_ELEMENTS`` elements in its buffers. An op the
library cannot build from the answer (an operand that comes from ``main``) is left
unchecked (None); a scalar constant operand is built as a 0-d tensor of
the other operand's type.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from tir.expr import IntImm
from tir.function import PrimFunc
from tir.topi.common import ShapeError

from .info import OpInfo, Operand

MAX_ELEMENTS = 4_000_000
"""Largest total number of buffer elements a function may have to be run for the check."""
CHEAP_ELEMENTS = 20_000
"""Total buffer elements up to which :func:`opinfo.analyze` checks every answer naming one
op itself (a few milliseconds); ``--verify`` checks larger functions too."""
CHEAP_STEPS = 2_000
"""Loop iterations :func:`opinfo.analyze`'s own check lets a run walk one at a time (loops
the interpreter cannot vectorise: a compute_at schedule's sibling blocks): past it, the
answer is left unchecked rather than the analysis taking minutes."""
SYMBOLIC = 5
"""Value given to symbolic extents for the run."""
DRAWS = 2
"""Independent random inputs an answer must fail on to be refuted: a norm over three
elements whose variance happens to be tiny amplifies a difference of summation order past
any tolerance on one draw, a wrong answer differs on every draw."""
JUNK = 7.0
"""What storage the function allocates itself holds before the function writes it."""


def random_inputs(func: PrimFunc, rng, low: int = 0, symbolic: int = SYMBOLIC, gentle: bool = False,
                  near_one: bool = False) -> list:
    """Random arrays for every buffer of ``func``, in parameter order (floats around 0,
    from 0 to 1 when ``gentle``, of magnitude 0.5 to 1.5 and either sign when ``near_one``:
    a product of many stays finite; integers from ``low`` to 2, from 1 when ``gentle``;
    booleans); symbolic extents are ``symbolic``. Raises ValueError for an extent that is
    an expression of variables."""
    from tir.interp_data import np_dtype

    from .recognize.running import concrete_shapes

    shapes = concrete_shapes(func.buffers, symbolic)
    if shapes is None:
        raise ValueError("extents other than constants and variables")
    arrays = []
    for buf, shape in zip(func.buffers, shapes):
        dtype = np_dtype(buf.dtype)
        if np.issubdtype(dtype, np.floating):
            values = ((rng.random(shape) + 0.5) * rng.choice([-1.0, 1.0], shape) if near_one
                      else rng.random(shape) if gentle else rng.standard_normal(shape) * 3)
            arrays.append(np.asarray(values).astype(dtype))
        elif dtype == np.bool_:
            arrays.append(np.asarray(rng.integers(0, 2, shape)).astype(dtype))
        else:
            arrays.append(np.asarray(rng.integers(max(low, 1) if gentle else low, 3, shape)).astype(dtype))
    return arrays


def differ(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two outputs differ beyond rounding (half precision at 2e-2: one rounding of
    a differently ordered sum is already 1e-3 relative)."""
    if a.shape != b.shape:
        return True
    if np.array_equal(a, b, equal_nan=True):
        return False
    if not np.issubdtype(a.dtype, np.floating):
        return True
    rtol, atol = (2e-2, 2e-2) if a.dtype.itemsize <= 2 else (1e-4, 1e-5)
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
        return False
    if a.dtype.itemsize <= 2:
        return True
    # an element that a long single-precision sum brings near zero by cancellation keeps the
    # rounding of its largest terms (a 3-D transposed convolution: 0.0458 against 0.04586,
    # outputs up to 300): the absolute tolerance follows the output's typical magnitude
    scale = _typical_magnitude(a, b)
    return not np.allclose(a, b, rtol=rtol, atol=max(atol, SUM_ROUNDING * scale), equal_nan=True)


SUM_ROUNDING = 1e-5
"""Rounding a single-precision sum may show, relative to the output's typical magnitude
(the 90th percentile of its finite absolute values: a few huge elements, ``exp`` of a
large input, do not widen it): of the order of sqrt(terms) * 6e-8 in the mean, a few times
that at the worst element (1.1e-6 measured over 4,000 sums of 135 random terms added in
reverse order). A reading that computes something else differs by far more: a term
missing at a border is about 1/sqrt(terms) of the magnitude."""


def _typical_magnitude(a: np.ndarray, b: np.ndarray) -> float:
    values = np.abs(np.concatenate([a.ravel(), b.ravel()]).astype(np.float64))
    values = values[np.isfinite(values)]
    return float(np.percentile(values, 90)) if values.size else 0.0


def _listed(value):
    """An attribute value as ``tir.topi.lower`` takes it (lists, not tuples)."""
    return [_listed(v) for v in value] if isinstance(value, (tuple, list)) else value


LOWERED_MEMO = 32
"""How many lowerings :func:`_lower` remembers."""
_LOWERED: OrderedDict = OrderedDict()


def _lower(name: str, inputs: list, given: dict) -> PrimFunc:
    """``tir.topi.lower(name, inputs, **given)``, remembered (with the error it raised) for
    the last :data:`LOWERED_MEMO` static shapes: the checks of one answer (its operands, its
    output shapes, a run) lower the very same op at the very same shapes. Functions are
    frozen, so sharing one is safe."""
    import tir.topi

    key = _lowering_key(name, inputs, given)
    if key is None:
        return tir.topi.lower(name, inputs, **given)
    hit = _LOWERED.get(key)
    if hit is None:
        try:
            hit = (tir.topi.lower(name, list(key[1]), **given), None)
        except Exception as err:  # noqa: BLE001 - remembered and raised again below
            hit = (None, err)
        _LOWERED[key] = hit
        if len(_LOWERED) > LOWERED_MEMO:
            _LOWERED.popitem(last=False)
    else:
        _LOWERED.move_to_end(key)
    if hit[1] is not None:
        raise hit[1]
    return hit[0]


def _lowering_key(name: str, inputs: list, given: dict) -> "tuple | None":
    """A key of a lowering over static shapes only (ints or ``IntImm``), else None."""
    shapes = []
    for shape, dtype in inputs:
        dims = []
        for e in shape:
            if isinstance(e, IntImm):
                e = e.value
            if not isinstance(e, int) or isinstance(e, bool):
                return None
            dims.append(e)
        shapes.append((tuple(dims), str(dtype)))
    try:
        attrs = repr(sorted(given.items()))
    except TypeError:
        return None
    return name, tuple(shapes), attrs


def run_copies(func, arrays, scratch_fill=None, max_steps=None) -> list:
    """Every array after running ``func`` on copies of ``arrays`` (outputs included), the
    function's own storage starting as ``scratch_fill`` (zeros when None); ``max_steps``
    as for ``tir.interpret``."""
    from tir.interp import interpret

    args = [a.copy() for a in arrays]
    with np.errstate(all="ignore"):
        interpret(func, *args, scratch_fill=scratch_fill, max_steps=max_steps)
    return args


def _elements(func: PrimFunc, symbolic: int) -> "int | None":
    from .recognize.running import concrete_shapes

    shapes = concrete_shapes(func.buffers, symbolic)
    return None if shapes is None else sum(math.prod(s) for s in shapes)


def cheap_binding(func: PrimFunc) -> "int | None":
    """The value symbolic extents take for :func:`opinfo.analyze`'s own check of ``func``:
    ``SYMBOLIC`` when its buffers then hold at most ``CHEAP_ELEMENTS`` elements, else 1
    when the function has symbolic extents and is small enough with them at 1 (a right
    answer computes the function at every binding, so one binding refutes); None when the
    function is too large to check cheaply."""
    from .recognize.running import symbols

    for value in (SYMBOLIC, 1) if symbols(func.buffers) else (SYMBOLIC,):
        count = _elements(func, value)
        if count is not None and count <= CHEAP_ELEMENTS:
            return value
    return None


BEYOND_ELEMENTS = 200_000
"""Total buffer elements up to which :func:`refuted_past_constants` runs a function."""


def refuted_past_constants(func: PrimFunc, op: OpInfo, packed: "bool | None" = None) -> bool:
    """Whether ``op``, read over symbolic extents and confirmed at a small binding, computes
    something else once every symbolic extent is past every integer constant of ``func``'s
    body. A schedule over symbolic extents changes form there: dlight binds a fused loop to
    blocks of 1024 threads, and an index that takes the loop apart wrongly (``f0 * 1024 -
    f1``) still writes every element while one block covers the tensor. Checked when the
    function is still small at that binding (``BEYOND_ELEMENTS``); False otherwise."""
    from .recognize.running import above_constants, symbols

    if not symbols(func.buffers):
        return False
    value = above_constants(func)
    if value <= SYMBOLIC:
        return False
    count = _elements(func, value)
    if count is None or count > BEYOND_ELEMENTS:
        return False
    return verify_op(func, op, packed=packed, symbolic=value, max_steps=CHEAP_STEPS) is False


def cheap_to_verify(func: PrimFunc) -> bool:
    """Whether :func:`opinfo.analyze` checks answers of ``func`` itself (see
    :func:`cheap_binding`)."""
    return cheap_binding(func) is not None


def verify_op(func: PrimFunc, op: OpInfo, rng=None, packed: "bool | None" = None,
              symbolic: int = SYMBOLIC, max_steps: "int | None" = None) -> "bool | None":
    """True when ``op``, lowered afresh, computes what ``func`` computes on random inputs;
    False when it computes something else on ``DRAWS`` independent draws; None when it
    cannot be checked (see the module docstring). An op with several outputs (``split``)
    names one of them: the others are the parameters after it, or the function's last
    parameters when fewer follow it (``get_valid_counts`` names its second).

    ``packed``: whether some buffer of ``func`` holds a packed layout (``NCHW4c``; found
    out when None). An op whose attributes name the packed layouts (a convolution's
    ``data_layout``) is built packed; any other (an add, a softmax over packed buffers) is
    checked on the packed buffers and on the function's logical readings
    (``unpack.unpack_all``, where its answer was read unless it is a shape op): confirmed
    by one, refuted when every one refutes it.
    ``symbolic``: the value of every symbolic extent for the runs; ``max_steps``: see
    ``tir.interpret`` (a run past it leaves the answer unchecked)."""
    if op.output is None or op.output.param is None or any(o.param is None for o in op.operands):
        return None
    key = (id(func), symbolic, op.name, op.attrs, op.operands, op.output, op.constants)
    try:
        hit = _CONFIRMED.get(key)
    except TypeError:  # an attribute value that cannot be hashed: no memo
        hit, key = None, None
    if hit is not None and hit is func:
        return True  # confirmed already (analyze's own check, then --verify)
    verdict = _verify_op(func, op, np.random.default_rng(0) if rng is None else rng, packed, symbolic, max_steps)
    if verdict is True and key is not None:
        if len(_CONFIRMED) >= 1024:
            _CONFIRMED.clear()
        _CONFIRMED[key] = func
    return verdict


_CONFIRMED: dict = {}
"""``(id(func), symbolic binding, op name, attributes, operands, output, constants) -> func`` for
answers confirmed in this process: ``opinfo analyze --verify`` checks again what analyze's own
check confirmed (at another binding, a check is made anew).
Bounded; the function is kept to check the id."""


def _verify_op(func, op, rng, packed, symbolic, max_steps) -> "bool | None":
    verdict = _verify_plain(func, op, rng, symbolic, max_steps)
    logical = None if verdict is True or packed is False else _logical_readings(func, [op])
    if logical is None:
        return verdict
    # a shape op (a reshape of the 6-D tensor) may have been read on the packed buffers
    # themselves, any other on the logical ones: refuted only when no reading computes it
    verdicts = [verdict] + [_verify_plain(f, op, rng, symbolic, max_steps) for f in logical]
    return True if True in verdicts else False if all(v is False for v in verdicts) else None


def _verify_plain(func: PrimFunc, op: OpInfo, rng, symbolic: int, max_steps) -> "bool | None":
    from tir.interp import InterpError, StepLimit

    from .recognize.running import symbols

    try:
        args = _call_args(func, op)
        built = _fresh(func, op, args, rng, symbolic)
        if built is None:
            return None
        fresh, symbolic, arrays = built
        count = len(fresh.params) - len(args)
        start = op.output.param if op.output.param + count <= len(arrays) else len(arrays) - count
        outs = range(start, start + count)  # the op's outputs: from the one named, or the last ones
        if count < 1 or not start <= op.output.param < outs.stop:
            return None
        if not symbols(func.buffers) and any(tuple(int(e.value) for e in b.shape) != tuple(arrays[k].shape)
                                             for k, b in zip(outs, fresh.buffers[len(args):])):
            # the op as named makes a tensor of another shape than the function's output:
            # its attributes cannot be the function's (a stride read off ``v * 1`` over an
            # output axis of one element, where the shapes need a stride of 2 or more).
            # Static shapes only: an output of constant shape over inputs of symbolic ones
            # holds at one binding only, which the run may not be at
            return False
        if symbols(func.buffers):
            # over symbolic inputs, an output axis of constant extent that the op as named
            # gives one other extent at two bindings (a stride of 2 where the pad buffer's
            # rows and the output's need 3) is not the function's either; an extent that
            # follows the binding may match at one value (TVM's slice_scatter of an (n, 7, 8)
            # input into a (9, 7, 8) output holds at n = 9), and is no refutation
            wrong = _constant_axes_differ(func, fresh, outs, len(args))
            if wrong:
                # an axis wrong by the same extent at both bindings does not follow the
                # binding (another axis's extent may)
                again = _fresh(func, op, args, rng, symbolic + 1)
                if again is not None and set(_constant_axes_differ(func, again[0], outs, len(args))) & set(wrong):
                    return False
        draws, gentle, near_one = 0, False, False
        while draws < DRAWS:
            if arrays is None:
                arrays = random_inputs(func, rng, symbolic=symbolic, gentle=gentle, near_one=near_one)
            # the function's own storage starts as junk (7): an element it reads before
            # writing shows instead of passing for a zero. Not NaN: TVM's schedules multiply
            # unwritten storage by a zero of a dilated kernel, finite junk times 0 being the 0
            # intended
            try:
                mine = run_copies(func, arrays, scratch_fill=JUNK, max_steps=max_steps)
            except StepLimit:
                return None
            except InterpError:
                if gentle:
                    return None
                # floats that index (a region's batch and corners) out of range, an integer
                # divisor 0: small positive values instead
                arrays, gentle = None, True
                continue
            blank = [arrays[k] for k in outs]  # same start: an element neither writes agrees
            given = [arrays[a.param] if isinstance(a, Operand) else a for a in args]
            theirs = run_copies(fresh, given + blank, max_steps=max_steps)
            theirs = theirs[len(args):]
            if not any(differ(mine[k], t) for k, t in zip(outs, theirs)):
                if not saturated([mine[k] for k in outs]):
                    return True
                if near_one:
                    return None
                # every output overflowed (a float16 product of 45 normal draws is inf
                # whether it multiplies each term once or twice): agreement shows nothing;
                # inputs of magnitude near 1 keep a product finite
                arrays, near_one = None, True
                continue
            if _agree_in_single(func, fresh, arrays, args, outs, max_steps):
                return True
            draws, arrays = draws + 1, None
    except ShapeError:
        # the op as named cannot take the function's operands (a matmul of a (2, 6) matrix
        # by itself, read as a (2, 2) block): it is not the function's op
        return False
    except Exception:  # not buildable from the answer, or not runnable on these inputs
        return None
    return False


def saturated(outputs: list) -> bool:
    """Whether every one of ``outputs`` is floating point with no finite element (an
    overflow): two such runs agree whatever they computed."""
    return bool(outputs) and all(o.dtype.kind == "f" and o.size and not np.isfinite(o).any() for o in outputs)


def _agree_in_single(func, fresh, arrays, args, outs, max_steps) -> bool:
    """Whether ``func`` and the op built afresh, both half precision and converting no float
    width, agree once computed in float32 on the same inputs (:mod:`.half_check`: a sum
    added in another order, rfactor's, moves by more than float16 rounding allows)."""
    from .half_check import promoted, single

    mine_f, fresh_f = promoted(func), promoted(fresh)
    if mine_f is None or fresh_f is None:
        return False
    wide = single(arrays, func.buffers)
    mine = run_copies(mine_f, wide, scratch_fill=JUNK, max_steps=max_steps)
    given = [wide[a.param] if isinstance(a, Operand) else a for a in args]
    given = single(given, fresh.buffers[:len(args)])
    theirs = run_copies(fresh_f, given + [wide[k] for k in outs], max_steps=max_steps)[len(args):]
    return not saturated([mine[k] for k in outs]) and not any(differ(mine[k], t) for k, t in zip(outs, theirs))


def shapes_refute(func: PrimFunc, op: OpInfo, packed: "bool | None" = None) -> bool:
    """Whether ``op``, lowered afresh at ``func``'s (static) input shapes, makes an output of
    another shape than ``func``'s: its attributes then cannot be the function's. Nothing is
    run, so it holds for functions too large for :func:`verify_op` (a depthwise convolution
    read with a stride of 1 over 28 rows whose output has 14). Packed buffers as in
    :func:`verify_op`: an op not naming a packed layout refutes only when every logical
    reading refutes too."""
    if op.output is None or op.output.param is None or any(o.param is None for o in op.operands):
        return False
    if _shape_differs(func, op) is not True:
        return False
    logical = None if packed is False else _logical_readings(func, [op])
    return logical is None or all(_shape_differs(f, op) is True for f in logical)


def operands_refute(func: PrimFunc, op: OpInfo, packed: "bool | None" = None) -> bool:
    """Whether ``op``, lowered afresh at ``func``'s own parameter shapes (symbolic extents
    kept symbolic), cannot take its operands at all (:class:`tir.topi.ShapeError`: static
    extents that differ where the op needs them equal, a batch norm's 6 scales for 7
    channels). Nothing is run, and unlike :func:`verify_op` no binding of a symbolic extent
    is guessed: an extent the op needs equal to a symbolic one is not a refutation. Packed
    buffers as in :func:`shapes_refute`."""
    if _cannot_take(func, op) is not True:
        return False
    logical = None if packed is False else _logical_readings(func, [op])
    return logical is None or all(_cannot_take(f, op) is True for f in logical)


def _cannot_take(func: PrimFunc, op: OpInfo) -> "bool | None":
    found = _param_buffers(func, op)
    if found is None:
        return None
    params, operands = found
    try:
        inputs = [(tuple(b.shape), str(b.dtype)) for b in operands]
        inputs = _placed(op, inputs, lambda _: ((), inputs[0][1]))
        _lower(op.name, inputs, _given(op, params[op.output.param].dtype))
    except ShapeError:
        return True
    except Exception:  # not buildable from the answer alone
        return None
    return False


def _shape_differs(func: PrimFunc, op: OpInfo) -> "bool | None":
    """:func:`_built_shapes_differ` for an op reading and writing parameters of ``func``: its
    outputs from the one named, or the function's last parameters when fewer follow it (as
    :func:`_verify_plain` takes them). None over symbolic extents."""
    from .recognize.running import symbols

    found = None if symbols(func.buffers) else _param_buffers(func, op)
    if found is None:
        return None
    params, operands = found

    def outputs(count: int) -> "list | None":
        start = op.output.param if op.output.param + count <= len(params) else len(params) - count
        return params[start:start + count] if count >= 1 and start <= op.output.param < start + count else None

    return _built_shapes_differ(op, operands, params[op.output.param].dtype, outputs)


def _param_buffers(func: PrimFunc, op: OpInfo) -> "tuple | None":
    """(every parameter's buffer, None for a scalar parameter; the op's operand buffers) when
    the op reads and writes parameters that are buffers, else None."""
    if op.output is None or op.output.param is None or any(o.param is None for o in op.operands):
        return None
    params = [func.buffer_map.get(p) for p in func.params]
    operands = [params[o.param] for o in op.operands]
    if params[op.output.param] is None or any(b is None for b in operands):
        return None  # a scalar parameter where a buffer is meant
    return params, operands


def _built_shapes_differ(op: OpInfo, operands: list, out_dtype, outputs) -> "bool | None":
    """True/False: ``op`` lowered afresh at the shapes of the buffers ``operands`` (its
    arguments in call order with its scalar constants placed as :func:`_call_args` places
    them) makes outputs of other/the same shapes as ``outputs(count)`` (the buffers its
    ``count`` outputs must match, None when they cannot be told); None when it cannot be
    built from the answer alone."""
    shape = lambda b: tuple(int(e.value) for e in b.shape)  # noqa: E731
    try:
        inputs = [(shape(b), str(b.dtype)) for b in operands]
        inputs = _placed(op, inputs, lambda _: ((), inputs[0][1]))
        fresh = _lower(op.name, inputs, _given(op, out_dtype))
        outs = outputs(len(fresh.params) - len(inputs))
        if outs is None:
            return None
        return [shape(b) for b in outs] != [shape(b) for b in fresh.buffers[len(inputs):]]
    except ShapeError:
        return True  # the op cannot take these operands at all
    except Exception:  # not buildable from the answer alone
        return None


def fused_shapes_refute(func: PrimFunc, ops) -> bool:
    """Whether some op of a fused answer (several ops), built afresh at the static shapes of
    the buffers it reads (parameters or intermediates), makes an output of another shape than
    the buffer the answer says it writes. Nothing else checks a fused answer too large to
    run: a convolution read with a stride of 1 whose intermediate output has the rows a
    stride of 2 makes was named so. Over buffers that may hold a packed layout, an answer
    naming no packed layout is refuted only when every logical reading refutes it too (as
    :func:`verify_op`)."""
    if not _fused_shapes_differ(func, ops):
        return False
    logical = _logical_readings(func, ops)
    return logical is None or all(_fused_shapes_differ(f, ops) for f in logical)


def _names_packed(ops) -> bool:
    """Whether some op of ``ops`` names a packed layout (``NCHW4c``: a digit in a string)."""
    return any(isinstance(v, str) and any(ch.isdigit() for ch in v) for op in ops for v in dict(op.attrs).values())


def _logical_readings(func: PrimFunc, ops) -> "list | None":
    """The logical functions an answer naming no packed layout may have been read on (its
    buffers unpacked, :func:`.unpack.unpack_all`), None when it names one or none exist."""
    from .unpack import unpack_all

    if _names_packed(ops):
        return None
    readings = unpack_all(func)
    return [logical for logical, _, _ in readings] if readings else None


def _fused_shapes_differ(func: PrimFunc, ops) -> bool:
    from .recognize.running import symbols

    if symbols(func.buffers):
        return False
    bufs = list(func.buffers) + _allocated(func)
    for _, op, reads, writes in _plans(bufs, ops):
        out = bufs[writes]
        if _built_shapes_differ(op, [bufs[k] for k in reads], out.dtype,
                                lambda count: [out] if count == 1 else None) is True:
            return True
    return False


def _plans(bufs: list, ops) -> list:
    """(position in ``ops``, op, positions in ``bufs`` of the buffers it reads, of the one it
    writes) for each op of a fused answer whose operands and output each name exactly one
    buffer of ``bufs``."""
    index: dict = {}
    for k, buf in enumerate(bufs):
        index.setdefault(buf.name, []).append(k)
    plans = []
    for j, op in enumerate(ops):
        named = list(op.operands) + [op.output]
        if op.output is None or any(len(index.get(o.buffer, ())) != 1 for o in named):
            continue
        plans.append((j, op, [index[o.buffer][0] for o in op.operands], index[op.output.buffer][0]))
    return plans


def _allocated(func: PrimFunc) -> list:
    """The buffers the function's blocks allocate."""
    from tir.functor import pre_order_stmts
    from tir.stmt import Block

    found: list = []

    def visit(n):
        if isinstance(n, Block):
            found.extend(n.alloc_buffers)
    pre_order_stmts(func.body, visit)
    return found


def _constant_axes_differ(func: PrimFunc, fresh: PrimFunc, outs, n_args: int) -> tuple:
    """(output, axis, the fresh op's extent) for every axis of an output of ``func`` of
    constant extent where the fresh op's output has another (or another rank: a whole
    output)."""
    found = []
    for k, b in zip(outs, fresh.buffers[n_args:]):
        mine = func.buffers[k].shape
        theirs = [int(e.value) for e in b.shape]
        if len(mine) != len(theirs):
            found.append((k, None, tuple(theirs)))
            continue
        found += [(k, axis, t) for axis, (m, t) in enumerate(zip(mine, theirs))
                  if isinstance(m, IntImm) and int(m.value) != t]
    return tuple(found)


def _fresh(func: PrimFunc, op: OpInfo, args: list, rng, symbolic: int) -> "tuple | None":
    """(the op lowered from the answer, the binding of symbolic extents, inputs drawn at
    it), None when too large. A function whose symbolic extent fits one value only (a
    reshape of ``(n, 3)`` to 12 elements) is built at a smaller binding the op accepts."""
    from .recognize.running import symbols

    params = list(func.params)
    given = _given(op, func.buffer_map[params[op.output.param]].dtype)
    symbolic_shapes = bool(symbols(func.buffers))
    values = [symbolic] + (list(range(1, symbolic)) if symbolic_shapes else [])
    for k, value in enumerate(values):
        arrays = random_inputs(func, rng, symbolic=value)
        if sum(a.size for a in arrays) > MAX_ELEMENTS:
            return None
        inputs = _lowering_inputs(func, args, arrays)
        try:
            fresh = _lower(op.name, inputs, given)
        except ValueError as err:
            if k + 1 == len(values):
                # a ShapeError only over static shapes: TVM trusts a symbolic extent to take
                # the one value an op needs (a matmul of an (n,) vector by a (3, 4) matrix),
                # which the bindings tried may miss
                raise ValueError(str(err)) if symbolic_shapes else err
            continue
        return fresh, value, arrays
    return None


def _lowering_inputs(func: PrimFunc, args: list, arrays: list) -> list:
    """(shape, dtype) of each argument of the op as ``tir.topi.lower`` takes them: a
    parameter's at ``arrays`` (the function's inputs drawn at one binding), a scalar's ``()``."""
    params = list(func.params)
    return [(tuple(arrays[a.param].shape), str(func.buffer_map[params[a.param]].dtype))
            if isinstance(a, Operand) else ((), str(a.dtype)) for a in args]


def defined_at(func: PrimFunc, op: OpInfo, symbolic: int) -> "bool | None":
    """Whether ``op`` as named takes ``func``'s operands with every symbolic extent at
    ``symbolic`` (a reshape of an ``(n,)`` vector to 3 elements is defined at n = 3 only);
    None when that cannot be told (an operand not a parameter, an op the lowering library
    does not build)."""
    import tir.topi

    if op.output is None or op.output.param is None or any(o.param is None for o in op.operands):
        return None
    try:
        arrays = random_inputs(func, np.random.default_rng(0), symbolic=symbolic)
        inputs = _lowering_inputs(func, _call_args(func, op), arrays)
        tir.topi.lower(op.name, inputs, **_given(op, func.buffer_map[func.params[op.output.param]].dtype))
    except ValueError:  # ShapeError, or an attribute the shapes at this binding refuse
        return False
    except Exception:
        return None
    return True


def _given(op: OpInfo, out_dtype) -> dict:
    """The answer's attributes as ``tir.topi.lower`` takes them, ``out_dtype`` (the output's
    type) filled in where the op accepts one and the answer does not say."""
    import tir.topi

    given = {name: _listed(v) for name, v in dict(op.attrs).items()}
    if "out_dtype" not in given and "out_dtype" in tir.topi.accepted_attrs(op.name):
        given["out_dtype"] = str(out_dtype)
    return given


def _call_args(func: PrimFunc, op: OpInfo) -> list:
    """The op's arguments in call order: its operands, and a scalar constant operand
    (``multiply(x, R.const(0.5))``, TVM having folded it into the loops) as a 0-d array of
    the tensor operand's type, on its side (``lhs`` first, ``rhs`` last)."""
    if not op.operands:
        return []
    dtype = str(func.buffer_map[list(func.params)[op.operands[0].param]].dtype)
    return _placed(op, list(op.operands), lambda value: np.array(value, dtype=dtype))


def _placed(op: OpInfo, args: list, constant) -> list:
    """``args`` (the op's operands, or what stands for them) with ``constant(value)`` for each
    scalar constant operand of ``op`` on its side: ``lhs`` first, ``rhs`` last."""
    if not args:
        return args
    for role, value in op.constants:
        args = [constant(value)] + args if role == "lhs" else args + [constant(value)]
    return args


def verify(func: PrimFunc, info, rng=None) -> "list":
    """A verdict for each op of ``info`` (a :class:`.info.FuncInfo` of ``func``):
    :func:`verify_op` for a function named as one op, :func:`verify_fused` for the ops of a
    fused kernel."""
    if len(info.ops) == 1:
        return [verify_op(func, info.ops[0], rng)]
    return verify_fused(func, info.ops, rng)


def verify_fused(func: PrimFunc, ops, rng=None, symbolic: int = SYMBOLIC,
                 max_steps: "int | None" = None) -> list:
    """A verdict for each op of a fused answer (:func:`_verify_fused_on`). Over buffers that
    may hold a packed layout, an answer naming no packed layout is also run on each logical
    reading: an op is confirmed by one reading, refuted only when every reading refutes it
    (as :func:`verify_op`)."""
    rng = np.random.default_rng(0) if rng is None else rng
    verdicts = _verify_fused_on(func, ops, rng, symbolic, max_steps)
    if None in verdicts and _restored_names(func, ops):
        # an intermediate the answer names exists only once normalized (dlight's padded
        # accumulator restored over the output's extent, :mod:`.pad_einsum`): the ops are run
        # on the normalized function, which computes what ``func`` computes
        from .normalize import normalize

        norm = normalize(func)
        if norm is not None and norm is not func:
            again = _verify_fused_on(norm, ops, rng, symbolic, max_steps)
            verdicts = [a if v is None else v for v, a in zip(verdicts, again)]
    if False not in verdicts:
        return verdicts
    logical = _logical_readings(func, ops)
    if logical is None:
        return verdicts
    runs = [verdicts] + [_verify_fused_on(f, ops, rng, symbolic, max_steps) for f in logical]
    return [True if True in got else False if all(v is False for v in got) else None for got in zip(*runs)]


def _restored_names(func: PrimFunc, ops) -> bool:
    """Whether some operand or output of ``ops`` names a buffer ``func`` neither takes nor
    allocates."""
    known = {b.name for b in func.buffers} | {b.name for b in _allocated(func)}
    return any(o is not None and o.buffer not in known
               for op in ops for o in (*op.operands, op.output))


def _verify_fused_on(func: PrimFunc, ops, rng, symbolic: int, max_steps) -> list:
    """A verdict for each op of a fused answer, op by op: the function is run with the
    buffers its root block allocates made parameters (so their final values show), and each
    op, lowered afresh from its answer, is run on the values of the buffers it reads
    (parameters or intermediates) and compared with the buffer it writes. True/False per op
    as :func:`verify_op` (False only on ``DRAWS`` draws that all differ); None for an op
    that cannot be built or fed from the answer (an operand or output that is no parameter
    nor a root allocation, several outputs), and for every op when the function is too large
    or cannot be run."""
    from tir.interp import InterpError, StepLimit

    verdicts: list = [None] * len(ops)
    exposed = _exposed(func)
    if exposed is None:
        return verdicts
    plans = _plans(list(exposed.buffers), ops)
    if not plans:
        return verdicts
    misses = {j: 0 for j, *_ in plans}
    ok: set = set()
    near: set = set()  # ops whose every output value overflowed on the first draw
    first = len(func.buffers)  # the allocated buffers follow the parameters
    for draw in range(DRAWS):
        try:
            arrays = random_inputs(exposed, rng, symbolic=symbolic)
            if sum(a.size for a in arrays) > MAX_ELEMENTS:
                return verdicts
            runs = _junk_runs(exposed, arrays, first, max_steps)
        except (InterpError, StepLimit, ValueError):
            return verdicts
        for plan in plans:
            j, writes = plan[0], plan[3]
            if j in ok or (draw and misses[j] == 0):
                continue
            verdict = _plan_agrees(exposed, plan, runs, max_steps)
            if verdict is True:
                ok.add(j)
            elif verdict is False:
                misses[j] += 1
            elif not draw and saturated([runs[0][writes]]):
                near.add(j)
    near -= ok
    if near:
        # an op whose every value overflowed on the draws (a sum of logs of normal values is
        # NaN in every row) is run once more on values of magnitude near 1: agreeing there
        # confirms it; differing on one draw alone refutes nothing
        ok |= _agreeing_near_one(exposed, [p for p in plans if p[0] in near], rng, symbolic, first, max_steps)
    for j, *_ in plans:
        verdicts[j] = True if j in ok else False if misses[j] == DRAWS else None
    return verdicts


def _agreeing_near_one(exposed: PrimFunc, plans: list, rng, symbolic: int, first: int, max_steps) -> set:
    """The ops of ``plans`` that agree with the function run on inputs of magnitude near 1
    (:func:`random_inputs` ``near_one``), or failing that on positive ones (``gentle``: a log
    of a negative value is NaN whatever its magnitude), as :func:`_verify_fused_on` checks
    them."""
    from tir.interp import InterpError, StepLimit

    found: set = set()
    for kind in ({"near_one": True}, {"gentle": True}):
        try:
            runs = _junk_runs(exposed, random_inputs(exposed, rng, symbolic=symbolic, **kind), first, max_steps)
        except (InterpError, StepLimit, ValueError):
            continue
        found |= {plan[0] for plan in plans
                  if plan[0] not in found and _plan_agrees(exposed, plan, runs, max_steps) is True}
    return found


def _junk_runs(exposed: PrimFunc, arrays: list, first: int, max_steps) -> list:
    """The outputs of two runs of ``exposed`` on ``arrays``, its allocated buffers (from
    ``first`` on) filled with :data:`JUNK`, then :data:`OTHER_JUNK`: an element left
    unwritten differs between the two."""
    runs = []
    for junk in (JUNK, OTHER_JUNK):
        for k in range(first, len(arrays)):
            arrays[k][...] = (junk == JUNK) if arrays[k].dtype == np.bool_ else junk
        runs.append(run_copies(exposed, arrays, max_steps=max_steps))
    return runs


def _plan_agrees(exposed: PrimFunc, plan: tuple, runs: list, max_steps) -> "bool | None":
    """:func:`_op_agrees` for one op of a fused answer (``(index, op, buffers read, buffer
    written)``, positions in ``exposed``) on the runs :func:`_junk_runs` made."""
    _, op, reads, writes = plan
    return _op_agrees(op, [[ran[k] for k in reads] for ran in runs], [str(exposed.buffers[k].dtype) for k in reads],
                      [ran[writes] for ran in runs], exposed.buffers[writes].dtype, max_steps)


OTHER_JUNK = -5.0
"""A second fill of allocated storage for :func:`verify_fused`: an element whose value
changes with the fill was never written (or was computed from one never written)."""


def _op_agrees(op: OpInfo, reads: list, types: list, outs: list, out_dtype, max_steps) -> "bool | None":
    """Whether ``op`` lowered afresh, run on the arrays ``reads[r]`` (its operands in call
    order, of TIR types ``types``) of each run ``r``, gives ``outs[r]`` on every element
    both the function and the op settle (the same in every run); None when it cannot be
    built or run, or nothing is settled."""
    import tir.topi

    try:
        types = _placed(op, list(types), lambda _: types[0])
        args = [_placed(op, given, lambda value: np.array(value, dtype=given[0].dtype)) for given in reads]
        fresh = tir.topi.lower(op.name, [(tuple(a.shape), t) for a, t in zip(args[0], types)],
                               **_given(op, out_dtype))  # the runs' arrays have the same shapes
        if len(fresh.params) != len(args[0]) + 1:
            return None
        if tuple(int(e.value) for e in fresh.buffers[len(args[0])].shape) != outs[0].shape:
            return False
        mine = outs
        theirs = [run_copies(fresh, given + [out.copy()], max_steps=max_steps)[-1] for given, out in zip(args, outs)]
    except Exception:  # not buildable from the answer, or not runnable on these values
        return None
    settled = np.ones(mine[0].shape, dtype=bool)
    for a, b in ((mine[0], mine[1]), (theirs[0], theirs[1])):
        settled &= (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a == b
    if not settled.any():
        return None
    if differ(mine[0][settled], theirs[0][settled]):
        return False
    return None if saturated([mine[0][settled]]) else True


def _exposed(func: PrimFunc) -> "PrimFunc | None":
    """``func`` with the buffers its root block allocates appended as parameters (the
    interpreter then hands back their final values); None without a root block or without
    allocations."""
    import attrs

    from tir import dtype as dt
    from tir.expr import Var
    from tir.stmt import BlockRealize

    root = func.root_block
    if root is None or not root.alloc_buffers:
        return None
    params, bmap = list(func.params), dict(func.buffer_map)
    for buf in root.alloc_buffers:
        var = Var(buf.name, dt.handle)
        params.append(var)
        bmap[var] = buf
    body = BlockRealize(func.body.iter_values, func.body.predicate, attrs.evolve(root, alloc_buffers=()))
    return attrs.evolve(func, params=params, buffer_map=bmap, body=body)
