"""The public entry points: ``analyze(prim_func)`` and ``analyze_module(mod)``."""
from __future__ import annotations

import attrs
import numpy as np

from tir.devectorize import is_vector
from tir.buffer import Buffer
from tir.expr import Broadcast, IntImm, Ramp
from tir.function import PrimFunc
from tir.module import IRModule
from tir.functor import post_order_visit
from tir.stmt import AllocateBuffer, BufferStore, LaunchThread

from .block_loops import clip_copies, move_block_loops
from .blockize import unblockize
from .coverage import out_of_bounds_reads, partial_writes, reads_past_copies, same_index_copy
from .intermediate_check import stale_reads, uninitialised_reads
from .verify import (CHEAP_STEPS, cheap_binding, fused_shapes_refute, operands_refute, refuted_past_constants,
                     shapes_refute, verify_fused, verify_op)
from .realize_check import misrealized
from .loop_partition import merge_partitions
from .decompose import Decomposer
from .info import FuncInfo, OpInfo
from .kind import pattern_kind
from .time_limit import TimeLimitExceeded, limited
from .specialize import holds_at_every_extent, specialized_info
from .normalize import as_lowered, cache_scope, forward_fills, merge_inits, normalize, pads_cut_readings
from .rfactor_guarded import merge_guarded_rfactor, tails_as_identity
from .row_strays import clip_row_strays, row_strays
from .op_graph import folded_copies, folds_accounted, fusable, settle_copies, tags_agree
from .recognize import families
from .recognize.common import shape_of
from .recognize.pool_adaptive import recognize_adaptive_pool
from .opaque_prefix import recognize_opaque_prefix
from .recognize.scatter_nd import recognize_scatters
from .recognize.split import split_ops
from .semantic import Reduce, Semantics
from .packed_ops import recognize_packed
from .pad_einsum import pad_artifact, pad_einsum_left, unpad_einsum
from .partial_copy import read_through_copies
from .copies_in_place import read_through_in_place
from . import copy_tags
from .tags import cache_names, tags
from .attention import recognize_attention
from .attention_bias import recognize_attention_bias
from .reverse_sequence import recognize_reverse_sequence
from .meshgrid import recognize_meshgrid
from .roi import recognize_roi
from .grid_sample import recognize_grid_sample
from .graph_context import FuncContext, ModuleContext
from .graph_naming import name_in_context, sum_convention
from . import network_conventions
from .recognize.bucketize import recognize_bucketize
from .recognize.median import recognize_median
from .recognize.grad_ops import recognize_nll_loss_backward
from .recognize.grad_take import recognize_take_backward
from .recognize.vision_ops import recognize_get_valid_counts
from .recognize.vision_multibox import recognize_multibox_transform_loc
from .recognize.pool_grad import recognize_pool_grad
from .recognize.shape_tensor import recognize_shape_to_tensor

RECOGNIZER_ERRORS = (ValueError, TypeError, ArithmeticError, RecursionError, IndexError, KeyError)
"""What a recognizer may raise on a form it was not written for (an index past a short
list, a candidate formula dividing by zero): the function is then not named -- opinfo
abstains rather than stopping the analysis of everything else."""

WHOLE_FUNCTION = (recognize_attention, recognize_attention_bias, recognize_reverse_sequence, recognize_roi,
                  recognize_grid_sample, recognize_meshgrid, recognize_bucketize, recognize_median,
                  recognize_nll_loss_backward, recognize_take_backward, recognize_get_valid_counts,
                  recognize_pool_grad, recognize_multibox_transform_loc, recognize_shape_to_tensor)
"""Ops recognised from the whole function (most by running it on random inputs; meshgrid
from its several outputs together), tried when the structural decomposition found nothing."""


# Compute tags (block names) TVM gives only to ops opinfo does not recognise, whose loops
# can be exactly those of an op it does: ``einsum("ij,jk->ik")`` is matmul's loop nest,
# ``einsum("ij->ji")`` permute_dims'; Relax's ``layout_transform`` with a permuting index
# map is permute_dims' too, and its printed map (a lambda's parameter names) is not in the
# loops. The loops cannot tell them apart, the tag can: a function holding such a block is
# not named (the tag only ever makes opinfo abstain).
FOREIGN_TAGS = frozenset({"T_einsum", "te_layout_transform", "te_layout_transform_with_pad"})


def _reads_an_output(ops) -> bool:
    """Some op takes as an operand a parameter that only it or a later op writes: in
    destination-passing style an output holds nothing before it is written, so a reading
    that feeds it back (``out[i] = take(out, ..)``) computes from garbage, whatever a
    data-dependent guard around the load hides from :func:`.intermediate_check.uninitialised_reads`.
    (A fused kernel whose intermediate is also returned reads it after the op writing it.)"""
    outs = {op.output.param for op in ops if op.output is not None and op.output.param is not None}
    written: set = set()
    for op in ops:
        if any(o.param in outs and o.param not in written for o in op.operands if o.param is not None):
            return True
        if op.output is not None and op.output.param is not None:
            written.add(op.output.param)
    return False


_LOWERED = (
    ("view", lambda n: isinstance(n, AllocateBuffer) and n.source is not None),  # buffers not distinct
    ("vector", is_vector),
    ("threads", lambda n: isinstance(n, LaunchThread)),
)
"""Forms of TIR after TVM's lowering passes that the analyses do not read, in the order their
refusal is given."""
_LOWERED_TYPES = (AllocateBuffer, Ramp, Broadcast, Buffer, LaunchThread)
"""The node classes a test of :data:`_LOWERED` may hold for (a cheap filter before them)."""


def _lowered_form(func: PrimFunc) -> "str | None":
    """The refusal for TIR after TVM's lowering passes (one walk of the body), or None."""
    seen = set()
    post_order_visit(func.body, lambda n: seen.update(k for k, test in _LOWERED if test(n))
                     if isinstance(n, _LOWERED_TYPES) else None)
    return next((REFUSALS[k] for k, _ in _LOWERED if k in seen), None)


def _foreign(func: PrimFunc) -> bool:
    return any(t in FOREIGN_TAGS for t in tags(func))


def recognize_ops(func: PrimFunc) -> tuple:
    """The ops of ``func`` in dataflow order, or () when any part is not understood, when
    several outputs need ops of their own (unless they are the pieces of one split, see
    :mod:`.recognize.split`), or when the ops could not be one fused kernel of TVM (see
    :func:`.op_graph.fusable`). Read after :func:`.normalize.normalize`; when that reading
    understands nothing, once more with ``pad_einsum``'s blocks cut to what the outputs need
    (:func:`.normalize.pads_cut_readings`)."""
    ops = _recognize_normalized(func, normalize(func))
    if ops:
        return ops
    for reading in pads_cut_readings(func):
        ops = _recognize_normalized(func, reading)
        if ops:
            return ops
    return ()


def _recognize_normalized(original: PrimFunc, func: "PrimFunc | None") -> tuple:
    """:func:`recognize_ops` of ``original`` read as ``func`` (its normalized form)."""
    if func is None or out_of_bounds_reads(func):
        return ()
    sem = Semantics(func)
    if sem.opaque:  # read by running it: the function as written (normalize can drop a T.where),
        # its element copies past an end of their buffers clipped (:func:`.block_loops.clip_copies`)
        run = clip_copies(original)
        return recognize_scatters(run) or recognize_adaptive_pool(run) or \
            recognize_opaque_prefix(original, recognize_ops)
    dec = Decomposer(sem, families.ALL)
    # in parameter order, which is the op's order of results (batch_norm's normalized data
    # before its moving statistics): a schedule may have moved a later result's block first
    position = {id(b): k for k, b in enumerate(func.buffers)}
    outputs = sorted(sem.outputs(), key=lambda s: position.get(id(s.buffer), len(position)))
    if not outputs:
        return ()
    decomposed = side = 0
    for stage in outputs:
        if dec.done and families.absorbed(stage, sem, dec, side):
            side += 1
            continue
        decomposed += 1
        if decomposed > 1 or not dec.output(stage):
            return split_ops(sem, outputs)
    if any(op.name == "nn.pad" for op in dec.ops) and pad_einsum_left(func):
        return ()  # pad_einsum's padded reduction: one op, not a pad and a reduction
    if fusable(sem, dec.links) and tags_agree(sem, dec.ops, dec.links) and folds_accounted(sem, dec.ops, dec.links):
        return settle_copies(sem, dec.ops, dec.links) or ()
    mean = _mean_of_one(sem, dec.ops)
    return (mean,) if mean is not None else ()


def _mean_of_one(sem, ops) -> "OpInfo | None":
    """``mean`` over extent-1 axes: TVM folds its division by the count (1) and leaves a copy
    tagged ``T_divide`` after the sum (read as ``sum`` then a ``divide`` by a folded constant,
    which FuseOps would not have put in one kernel)."""
    folded = folded_copies(sem)
    names = [op.name for op in ops]
    if names not in (["sum"], ["sum", "divide"]) or len(folded) != 1 or folded[0][1] != "divide":
        return None
    reds = [st for st in sem.stages if isinstance(st.expr, Reduce)]
    copy = folded[0][0].expr
    if (len(reds) != 1 or reds[0].expr.combiner != "sum" or copy.buffer is not reds[0].buffer
            or not sem.is_param(folded[0][0].buffer)
            or not all(isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1 for iv in reds[0].expr.axes)):
        return None
    return attrs.evolve(ops[0], name="mean", output=ops[-1].output)


def _cache_copy_block(block, caches: set) -> bool:
    """An element copy (same indices) into or out of a cache buffer named after the block but
    for scope suffixes (a ``shared`` cache set to ``local`` scope keeps its block
    ``x_shared`` while its buffer becomes ``x_shared_local``; a reindex of a cache copies
    ``T_reshape_local_reindex_shared`` in block ``T_reshape_local_reindex``)."""
    store = block.body
    if not isinstance(store, BufferStore) or not same_index_copy(store):
        return False
    return any(buf.name in caches and block.name in cache_names(buf.name)
               for buf in (store.buffer, store.value.buffer))


def _input_cache_name(name: str, inputs: set) -> bool:
    """A block named as a cache of an input (``x_shared`` for input ``x``): no op's tag."""
    stripped = cache_names(name)
    return len(stripped) > 1 and stripped[-1] in inputs


def _settle_copy(ops: tuple, func: PrimFunc) -> tuple:
    """A lone copy op checked against its compute tag (:mod:`.copy_tags`)."""
    if len(ops) != 1 or not ops[0].operands:
        return ops
    op = ops[0]
    bufs = {b.name: b for b in func.buffers}
    data = bufs.get(op.operands[0].buffer)
    out = bufs.get(op.output.buffer) if op.output is not None else None
    root = func.root_block
    caches = {b.name for b in root.alloc_buffers if cache_scope(b)} if root is not None else set()
    # loop_partition's copies are named after their loops; a cache primitive names its copy
    # block after the cache buffer (``x_shared``), whichever block computes: the op's tag is
    # on one of the others (reindex_cache_read leaves ``T_reshape`` copying ``x_shared``)
    # pad_einsum's pad and crop blocks (``x_pad``) are gone once it is undone, cache_index's
    # index blocks once read through or found dead, blockize's outer block (``x_local_o``)
    # once merged with the block it holds
    blocks = list(unpad_einsum(as_lowered(func)).blocks())
    inputs = {b.name for b in func.buffers} - ({op.output.buffer} if op.output is not None else set())
    names = [b.name for b in blocks
             if b.name not in caches and not _cache_copy_block(b, caches) and not pad_artifact(b)
             and not _input_cache_name(b.name, inputs)]
    if not names:
        # every block a cache copy (cache_write and cache_read of one copy op): their names
        # without scope suffixes, but for the caches of the inputs (``x_local``)
        names = sorted({cache_names(b.name)[-1] for b in blocks} - inputs)
    if not names:
        names = [b.name for b in (normalize(func) or func).blocks() if not _input_cache_name(b.name, inputs)]
    if not names and op.output is not None:
        # the op's block took the name of an input's cache (the op inlined into the cache
        # copy, pad_einsum's buffers then replacing the cache): TVM names the op's output
        # buffer as its compute, after the op's tag
        names = [op.output.buffer]
    settled = copy_tags.settle(op, shape_of(data) if data is not None else None,
                               shape_of(out) if out is not None else None, names)
    return (settled,) if settled is not None else ()


def _misrealized(merged: PrimFunc) -> bool:
    """:func:`.realize_check.misrealized`, judged after ``pad_einsum`` is undone when it is:
    a padded reduction whose split loop stops at the unpadded extent runs only part of its
    declared (padded) domain, and is restored to that part (:mod:`.pad_einsum`), which is
    what the recognizers read."""
    if not misrealized(merged):
        return False
    # a dlight row reduction: its rfactor's partial block runs part of its domain (the
    # split's tail is guarded), the merged reduction all of its own (:mod:`.rfactor_guarded`)
    inits = merge_inits(forward_fills(merged))
    guarded = merge_guarded_rfactor(inits)
    if guarded is inits:  # dlight's GEMV stages: the tail's guard moved into the sum
        guarded = tails_as_identity(inits)
    if guarded is not inits and not misrealized(guarded):
        return False
    # a pad producer whose padding no reader loads (the loops stop at the unpadded extent)
    # is read through first (:mod:`.partial_copy`)
    unpadded = read_through_copies(unpad_einsum(merged))
    return unpadded is merged or misrealized(unpadded)


def analyze(prim_func: PrimFunc, name: "str | None" = None, context: "FuncContext | None" = None,
            conventions: "bool | None" = None, time_limit: "float | None" = None) -> FuncInfo:
    """Kind and recognized ops of one PrimFunc (``ops`` empty when not certain).

    ``context``: what the module's graph-level ``main`` shows about the function
    (:meth:`.graph_context.ModuleContext.for_function`); with it, ops whose legalization
    dropped an operand (``full_like``, ``eye_like``, ``collapse_sum_like``) and creation
    ops (``full``, ``eye``) can be named (:mod:`.graph_naming`). Without it they are not.

    ``conventions``: whether an op may be reported with attributes the loops leave open,
    filled in by the convention of framework importers (:attr:`.info.OpInfo.assumed`; a
    pool's ceil_mode). The default (None) allows it only when ``context`` shows a network
    (:func:`.graph_context.is_network`); a kernel of a smaller graph of several kernels
    only the name a forward op shares with a gradient op (:data:`GRAPH_CONVENTIONS`);
    otherwise the function abstains. Tools that
    work on imported networks (the layout planner, BYOC) pass True.

    ``time_limit``: seconds of processor time the recognition may take (None: no limit;
    see :mod:`.time_limit`); past it the function has its kind, no ops, and says so in
    :attr:`.info.FuncInfo.refused`."""
    kind = pattern_kind(prim_func)
    name = name if name is not None else prim_func.name
    try:
        with limited(time_limit):  # no limit armed for None or 0
            info = _analyze_or_rows_inside(prim_func, name, context, conventions, kind)
            if not (info.ops or info.undecided):
                info = _copies_in_place(prim_func, name, context, conventions, kind, info)
            if not info.ops and not info.undecided and (info.refused is None or info.refused in SYMBOLIC_GATES):
                # geometry over symbolic extents: read at concrete ones (:mod:`.specialize`);
                # a gate that could not follow symbolic extents (dlight's tiles pad them to
                # a multiple of the tile) is passed, or not, at each of them
                info = specialized_info(info, prim_func,
                                        lambda static: _analyze(static, name, context, conventions, kind))
            return info
    except TimeLimitExceeded:
        return FuncInfo(name, kind, (), refused=REFUSALS["time_limit"].format(seconds=time_limit))


def _analyze_or_rows_inside(prim_func: PrimFunc, name: str, context: "FuncContext | None",
                            conventions: "bool | None", kind: str) -> FuncInfo:
    """:func:`_analyze`, then :func:`_rows_inside` when that names nothing and refuses at
    most for a partial write."""
    info = _analyze(prim_func, name, context, conventions, kind)
    if not (info.ops or info.undecided) and info.refused in (None, REFUSALS["partial"]):
        info = _rows_inside(prim_func, name, context, conventions, kind, info)
    return info


def _rows_inside(prim_func: PrimFunc, name: str, context: "FuncContext | None", conventions: "bool | None",
                 kind: str, refused: FuncInfo) -> FuncInfo:
    """A function refused for storing outside a buffer (or not named), read restricted to the
    elements inside where its stores past the end of an axis change no element
    (:mod:`.row_strays`; the block loops moved out of their blocks first, so a blockized
    tile's outer variable meets the store): that reading, with a warning, when it names
    ops; ``refused`` otherwise."""
    moved = unblockize(move_block_loops(merge_partitions(prim_func)))
    clipped = clip_row_strays(moved)
    if clipped is moved:
        return refused
    info = _analyze(clipped, name, context, conventions, kind)
    if not (info.ops or info.undecided):
        return refused
    buffers = sorted({s.buffer.name for s in row_strays(moved)})
    warning = WARNINGS["row_strays"].format(buffers=", ".join(buffers))
    return attrs.evolve(info, warnings=(warning,) + tuple(info.warnings))


def _copies_in_place(prim_func: PrimFunc, name: str, context: "FuncContext | None", conventions: "bool | None",
                     kind: str, refused: FuncInfo) -> FuncInfo:
    """A function refused or not named, read with its cache copies read through where they
    sit inside their readers' loops (:mod:`.copies_in_place`: confirmed by running both):
    that reading, with a warning, when it names ops; ``refused`` otherwise."""
    rewritten = read_through_in_place(prim_func)
    if rewritten is None:
        return refused
    info = _analyze_or_rows_inside(rewritten, name, context, conventions, kind)
    if not (info.ops or info.undecided):
        return refused
    return attrs.evolve(info, warnings=(WARNINGS["copies_in_place"],) + tuple(info.warnings))


def _analyze(prim_func: PrimFunc, name: str, context: "FuncContext | None", conventions: "bool | None",
             kind: str) -> FuncInfo:
    merged = merge_partitions(prim_func)
    # the loops inside a tile copy's block moved out (:mod:`.block_loops`), a blockized
    # block merged with its outer one (:mod:`.blockize`): plain indices show which part of
    # the buffer a block writes (``v_o * 4 + v_i`` is no plain index)
    moved = unblockize(move_block_loops(merged))
    refused = _refusal(prim_func, merged, moved)
    if refused is not None:
        return FuncInfo(name, kind, (), refused=refused)
    packed = False
    try:
        # Recognizers probe candidate formulas on sample data; a candidate that takes the square
        # root of a negative number is simply rejected, not worth a RuntimeWarning.
        with np.errstate(all="ignore"):
            ops = recognize_packed(prim_func, recognize_ops)
            packed = ops is not None
            ops = recognize_ops(prim_func) if ops is None else ops
    except RECOGNIZER_ERRORS:
        ops = ()
    ops = sum_convention(prim_func, _settle_copy(ops, prim_func))
    output_read = _reads_an_output(ops)
    if output_read:
        ops = ()
    # run with the element copies that pass an end of their buffers clipped where TVM's code
    # changes no element kept by doing so (:func:`.block_loops.clip_copies`): the interpreter
    # refuses an index out of range
    clipped = None
    for whole in WHOLE_FUNCTION:
        if ops:
            break
        try:
            clipped = clip_copies(prim_func) if clipped is None else clipped
            with np.errstate(all="ignore"):
                found = whole(clipped)
        except RECOGNIZER_ERRORS:
            found = None
        ops = (found,) if found is not None else ()
    if context is not None:
        try:
            with np.errstate(all="ignore"):
                ops = name_in_context(prim_func, ops, context)
        except RECOGNIZER_ERRORS:
            pass  # the context-free answer stands
    if conventions is None:
        conventions = context is not None and context.network
    if conventions and context is not None and context.network:
        ops = network_conventions.in_network(ops)  # where main shows the importer's network
    undecided = ()
    if not conventions and any(op.assumed for op in ops) and not _graph_convention(ops, context):
        # an attribute the loops leave open: abstain (a fused list stays whole or empty),
        # keeping the withheld reading to say why
        undecided, ops = ops, ()
    reading = ops or undecided
    # an op reading an output refuses the function unless a whole-function recognizer read it
    refused = REFUSALS["output_read"] if output_read and not reading else None
    symbolic = cheap_binding(prim_func) if len(reading) == 1 else None
    if len(reading) == 1 and operands_refute(prim_func, reading[0], packed=packed):
        ops = undecided = ()  # built afresh at the function's own shapes, the op cannot take them
        refused = REFUSALS["refuted_operands"]
    elif symbolic is not None and verify_op(prim_func, reading[0], packed=packed, symbolic=symbolic,
                                           max_steps=CHEAP_STEPS) is False:
        ops = undecided = ()  # lowered afresh from the answer, the op computes something else
        refused = REFUSALS["refuted"]
    elif symbolic is None and len(reading) == 1 and shapes_refute(prim_func, reading[0], packed=packed):
        ops = undecided = ()  # too large to run: built afresh, the op makes other shapes
        refused = REFUSALS["refuted_shape"]
    elif len(reading) > 1 and fused_shapes_refute(prim_func, reading):
        ops = undecided = ()  # a fused answer: each op built afresh, one makes other shapes
        refused = REFUSALS["refuted_shape"]
    elif len(reading) > 1 and _fused_refuted(prim_func, reading):
        ops = undecided = ()  # a fused answer run op by op: one computes something else
        refused = REFUSALS["refuted"]
    if len(ops) == 1 and symbolic is not None and refuted_past_constants(prim_func, ops[0], packed=packed):
        ops = undecided = ()  # confirmed at a small binding, it computes something else past the body's constants
        refused = REFUSALS["refuted"]
    if ops and not holds_at_every_extent(prim_func, ops):
        ops = undecided = ()  # over symbolic lengths: lowered afresh at some length, it computes something else
        refused = REFUSALS["refuted"]
    stale = stale_reads(prim_func) if ops or undecided else ()
    warnings = tuple(WARNINGS["stale"].format(buffer=buf, loops=", ".join(loops)) for buf, loops in stale)
    return FuncInfo(name, kind, ops, undecided, refused, warnings=warnings)


def _fused_refuted(func: PrimFunc, reading: tuple) -> bool:
    """Whether some op of a fused answer, run afresh on the values the function's run leaves
    in the buffers it reads, disagrees with the buffer it writes (small functions only: see
    :func:`.verify.cheap_binding`)."""
    symbolic = cheap_binding(func)
    return symbolic is not None and False in verify_fused(func, reading, symbolic=symbolic, max_steps=CHEAP_STEPS)


GRAPH_CONVENTIONS = frozenset({"op"})
"""What an op of a graph of several kernels may assume short of a network: its name where
a forward op and a gradient op lower the same (``sum``, not ``collapse_sum_to``: graphs are
written with forward ops). The importers' attribute conventions (a pool's ceil_mode, ...)
stay a network's."""


def _graph_convention(ops: tuple, context: "FuncContext | None") -> bool:
    """Whether every assumption of ``ops`` holds in the graph ``context`` shows."""
    return context is not None and context.graph and all(set(op.assumed) <= GRAPH_CONVENTIONS for op in ops)


REFUSALS = {
    "foreign": "a compute tag of an op opinfo does not name has the loops of one it does",
    "view": "a buffer views another buffer's storage (TIR after TVM's FlattenBuffer)",
    "vector": "vector code (TVM's VectorizeLoop: T.Ramp, T.Broadcast): the analyses read scalar loops",
    "threads": "thread launches (T.launch_thread, TIR after TVM's lowering passes): the analyses read blocks and loops",
    "partial": "an output is written only in part (or a block writes outside a buffer)",
    "misrealized": "a block's loops do not run the iteration domain it declares",
    "read_outside": "a block reads past the end of a copy the function makes",
    "uninitialised": "storage is read before anything writes it (or while a reduction still accumulates into it, or before it adds any point)",
    "output_read": "an output is read before the function writes it",
    "refuted": "the reading, lowered again and run, computes something else",
    "refuted_shape": "the reading, lowered again, makes outputs of other shapes than the function's",
    "refuted_operands": "the op read cannot take the function's operands (their extents or types rule it out)",
    "time_limit": "the analysis took more than its time limit of {seconds:g} s of processor time (opinfo analyze --time-limit)",
}
"""Why :func:`analyze` refuses a function outright (:attr:`.info.FuncInfo.refused`)."""

SYMBOLIC_GATES = frozenset({REFUSALS["partial"], REFUSALS["misrealized"]})
"""Refusals after which a function over symbolic extents is still read at concrete ones
(:func:`.specialize.read_specialized`): every binding passes each gate on its own, and the
answer is checked afresh at every extent from 1 up (an output written only in part at some
extent differs there from the op lowered afresh, which writes all of it)."""

WARNINGS = {
    "row_strays": "TVM's code stores past the end of an axis of {buffers} (a tile's tail the loops do not "
                  "guard), where no element the function leaves changes (past the storage, or rewritten "
                  "later as its loops run in order); the ops are what the elements inside hold",
    "copies_in_place": "TVM's cache copies here (read_at/write_at tiles running past the end of their buffers, "
                       "cache_inplace round trips) are read through: the function as written (stores past the "
                       "end of a buffer dropped) and read through leave the same outputs when run; the ops are "
                       "what it computes read so",
    "stale": "TVM's build reads undefined storage here: {buffer} is read at a later iteration of a loop than "
             "the one that stored it, and TVM's lowering allocates it anew at each iteration of the loops "
             "around all its accesses ({loops}); the ops are what the loops compute as written",
}
"""What :func:`analyze` adds to an answer (:attr:`.info.FuncInfo.warnings`)."""


def _refusal(func: PrimFunc, merged: PrimFunc, moved: PrimFunc) -> "str | None":
    """The reason the function is not read at all (soundness gates), or None."""
    if _foreign(func):
        return REFUSALS["foreign"]
    lowered = _lowered_form(func)
    if lowered is not None:
        return lowered
    if partial_writes(func) or (merged is not func and partial_writes(merged)) \
            or (moved is not merged and partial_writes(moved)):
        return REFUSALS["partial"]
    if _misrealized(merged) or (moved is not merged and _misrealized(moved)):
        return REFUSALS["misrealized"]
    if reads_past_copies(func):
        return REFUSALS["read_outside"]
    if uninitialised_reads(func):
        return REFUSALS["uninitialised"]
    return None


def analyze_in_network(prim_func: PrimFunc, name: "str | None" = None,
                       context: "FuncContext | None" = None) -> FuncInfo:
    """:func:`analyze` for tools that work on networks imported from a framework (the
    layout planner, BYOC, the demo): ops whose open attributes follow the importers'
    convention are reported (``conventions=True``)."""
    return analyze(prim_func, name, context, conventions=True)


def analyze_module(mod: IRModule, time_limit: "float | None" = None) -> dict:
    """``{name: FuncInfo}`` for every PrimFunc of ``mod``, in module order, each with the
    context of the module's graph-level ``main``.

    A small graph (``main`` calls a few distinct PrimFuncs, not a network: the kernels
    FuseOps leaves for a handful of ops) is read as a whole: when one of its kernels is not
    recognised, the others' ops are withheld (:attr:`.info.FuncInfo.withheld`), since the
    graph's op sequence they would give is incomplete. A network's kernels stand alone.
    ``time_limit`` bounds each function's analysis (see :func:`analyze`)."""
    graph = ModuleContext(mod)
    contexts = {name: graph.for_function(name) for name, _ in mod.prim_funcs()}
    infos = {name: analyze(f, name, contexts[name], time_limit=time_limit) for name, f in mod.prim_funcs()}
    infos, absorbed = _sizes(infos, contexts)
    return _whole_graph(infos, {name: ctx for name, ctx in contexts.items() if name not in absorbed})


def _sizes(infos: dict, contexts: dict) -> tuple:
    """(``infos`` with Relax's ``size`` read where its legalization left it: a kernel writing
    a shape as a tensor (``shape_to_tensor``, called once, no operands) whose only use is a
    kernel taking the product of that whole 1-D tensor (``prod`` over axis 0). The pair is
    one op, the number of elements (one Relax op explains both kernels, as ``std`` is not
    read as a variance and a sqrt): ``size`` on the product's kernel, the shape's kernel
    left with no op of its own; the names of those shape kernels). Not in a network (its
    kernels stand alone)."""
    out, absorbed = dict(infos), set()
    for a, ca in contexts.items():
        ops = infos[a].ops
        if ca is None or ca.network or len(ca.calls) != 1 or [op.name for op in ops] != ["shape_to_tensor"]:
            continue
        var = ca.calls[0].var
        users = [b for b, cb in contexts.items() if cb is not None and b != a and
                 any(any(arg is var for arg in call.args) for call in cb.calls)]
        if len(users) != 1 or len(ca.calls[0].consumers) != 1:
            continue
        b = users[0]
        (prod,) = infos[b].ops or (None,)
        cb = contexts[b]
        if prod is None or prod.name != "prod" or len(cb.calls) != 1 or list(cb.calls[0].args) != [var] \
                or list(prod.attrs.get("axis") or ()) != [0] or prod.attrs.get("keepdims") is not False:
            continue
        out[a] = attrs.evolve(infos[a], ops=(), part_of=b)
        out[b] = attrs.evolve(infos[b], ops=(attrs.evolve(prod, name="size", attrs={}, operands=()),))
        absorbed.add(a)
    return out, absorbed


def _whole_graph(infos: dict, contexts: dict) -> dict:
    """``infos`` with the ops of a small graph's kernels withheld when one kernel abstains
    (``contexts``: each function's FuncContext, None where main does not call it)."""
    called = [name for name, ctx in contexts.items() if ctx is not None]
    if len(called) < 2 or any(contexts[name].network for name in called):
        return infos
    if all(infos[name].ops for name in called) or not any(infos[name].ops for name in called):
        return infos
    out = dict(infos)
    for name in called:
        if infos[name].ops:
            out[name] = attrs.evolve(infos[name], ops=(), withheld=infos[name].ops)
    return out
