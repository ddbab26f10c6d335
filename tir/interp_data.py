"""Storage of buffers for the interpreter: flat numpy arrays with checked, masked access."""
from __future__ import annotations

import attrs
import numpy as np

from .dtype import DataType

_SCALARS = (int, np.integer)


def _all(mask) -> bool:
    """Whether every lane of ``mask`` (an array, or a scalar truth value) holds."""
    return bool(mask.all()) if isinstance(mask, np.ndarray) else bool(np.all(mask))


class InterpError(RuntimeError):
    """A run-time error of the interpreter (out-of-bounds access, bad argument, ...)."""


class StepLimit(InterpError):
    """A run stopped after the number of loop iterations it was allowed to walk one by one
    (``interpret(..., max_steps=N)``)."""


_NP_DTYPES: dict = {}
"""DataType -> numpy dtype, asked for by every arithmetic node the interpreter evaluates."""


def np_dtype(d: DataType) -> np.dtype:
    """The numpy dtype holding values of ``d`` (bfloat16 is held as float32)."""
    hit = _NP_DTYPES.get(d)
    if hit is not None:
        return hit
    if d.lanes != 1:
        raise InterpError(f"vector type {d} is not supported by the interpreter")
    if d.is_handle:
        raise InterpError("handle values cannot be evaluated")
    out = _NP_DTYPES[d] = np.dtype(d.numpy)
    return out


def round_bfloat16(x):
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    out = np.where(np.isnan(a), a, out)
    return out if isinstance(x, np.ndarray) else np.float32(out)


@attrs.define
class BufferData:
    """The memory behind one Buffer: a flat array plus the layout to index it."""

    name: str
    """The buffer's name, for error messages."""
    flat: np.ndarray
    """All elements, one dimension."""
    shape: tuple
    """Extent of each dimension (ints)."""
    strides: tuple
    """Stride of each dimension, in elements."""
    offset: int = 0
    """Element offset of index (0, ..., 0)."""
    bf16: bool = False
    """Values are bfloat16 held as float32: stores round."""
    scratch: bool = False
    """Storage the function allocated itself (not a parameter): it may hold poisoned elements."""
    poison: "np.ndarray | None" = None
    """Flat bool mask of elements computed from an out-of-bounds load (None: none are)."""
    poison_message: str = ""
    """The first such out-of-bounds load, reported if a poisoned element is ever used."""
    drop_strays: bool = False
    """Stores out of bounds land at their flat position, or nowhere past the storage,
    instead of an error (``tir.interpret``'s ``drop_strays``)."""

    @staticmethod
    def allocate(name: str, shape, dtype: np.dtype, strides=None, offset: int = 0, bf16=False) -> "BufferData":
        shape = tuple(int(s) for s in shape)
        strides = tuple(int(s) for s in strides) if strides else compact_strides(shape)
        size = offset + 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0
        return BufferData(name, np.zeros(max(size, 0), dtype=dtype), shape, strides, offset, bf16)

    def view(self) -> np.ndarray:
        """The logical n-d view of the storage (shares memory)."""
        item = self.flat.itemsize
        base = self.flat[self.offset:] if self.flat.size else self.flat
        return np.lib.stride_tricks.as_strided(base, self.shape, tuple(s * item for s in self.strides))

    def reshaped(self, name: str, shape: tuple, what: str, dtype: "np.dtype | None" = None) -> "BufferData":
        """The compact buffer ``name`` of ``shape`` over this storage from its first element
        (a flattened view, the array a runtime call describes); ``what`` names it in the
        error when this storage is not compact or too small. With another ``dtype`` the view
        reads the storage's bytes as that type (TVM's storage reuse)."""
        size = int(np.prod(shape)) if shape else 1
        flat, offset, poison = self.flat, self.offset, self.poison
        want = flat.dtype if dtype is None else np.dtype(dtype)
        if want != flat.dtype:
            start = offset * flat.itemsize
            if self.bf16 or start % want.itemsize or flat.nbytes % want.itemsize:
                raise InterpError(f"{what}: the storage of {self.name!r} cannot be read as {want}")
            flat, offset, poison = flat.view(want), start // want.itemsize, None
        if self.strides != compact_strides(self.shape) or offset + size > flat.size:
            raise InterpError(f"{what} of shape {tuple(shape)} does not fit the storage of {self.name!r}")
        # not scratch: a value read out of bounds may not be stored through it
        return BufferData(name, flat, tuple(shape), compact_strides(shape), offset, self.bf16,
                          poison=poison, poison_message=self.poison_message)

    def flat_index(self, indices, mask, where: str):
        """Flat positions of ``indices`` (broadcast arrays); lanes off ``mask`` point at 0."""
        if len(indices) != len(self.shape):
            raise InterpError(f"{where}: buffer {self.name!r} has rank {len(self.shape)}, indexed with {len(indices)}")
        flat = self.offset
        for dim, (idx, extent, stride) in enumerate(zip(indices, self.shape, self.strides)):
            idx = self._checked(idx, extent, mask, dim, indices, where)
            flat = flat + idx * stride if stride != 1 else flat + idx
        return flat

    def _checked(self, idx, extent, mask, dim, indices, where):
        if isinstance(idx, _SCALARS) and 0 <= idx < extent:
            # the common scalar index inside the buffer: every lane, off the mask or not,
            # points inside (stores keep the mask's lanes; loads broadcast)
            return idx
        if mask is not None and not _all(mask):
            idx = np.where(mask, idx, 0)
        bad = (idx < 0) | (idx >= extent)
        if bad.any() if isinstance(bad, np.ndarray) else bad:
            self._raise_oob(bad, indices, mask, dim, where)
        return idx

    def _raise_oob(self, bad, indices, mask, dim, where):
        raise InterpError(self._oob_message(bad, indices, dim, where))

    def _oob_message(self, bad, indices, dim, where) -> str:
        """Names the first out-of-bounds lane; an index may vary along more axes than ``bad``."""
        shape = np.broadcast_shapes(np.shape(bad), *(np.shape(i) for i in indices))
        bad = np.broadcast_to(bad, shape)
        first = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        point = tuple(int(np.broadcast_to(idx, shape)[first]) for idx in indices)
        return (f"{where}: index {point} is out of bounds for buffer {self.name!r} of shape "
                f"{self.shape} (dimension {dim})")

    def load(self, indices, mask, where: str):
        """Gather the elements at ``indices``; reading a poisoned element is an error."""
        if self.by_layout(indices):
            flat, bad = self.layout_flat(indices, mask)
            if bad is not None:
                raise InterpError(f"{where}: reads past the storage of {self.name!r}")
        else:
            flat = self.flat_index(indices, mask, where)
        if self.poison is not None:
            used = self.poison[flat]
            if np.any(used if mask is None else np.logical_and(used, mask)):
                raise InterpError(f"{where}: reads an element of {self.name!r} computed from an out-of-bounds "
                                  f"load ({self.poison_message})")
        return self.flat.take(flat) if isinstance(flat, np.ndarray) else self.flat[int(flat)]

    def load_poisoned(self, indices, mask, where: str):
        """(values, poisoned lanes, message): like :meth:`load`, but an out-of-bounds lane, or
        one reading a poisoned element, is poisoned instead of an error (and reads element 0)."""
        if self.by_layout(indices):
            return self._load_layout(indices, mask, where)
        if mask is None and len(indices) == len(self.shape):
            # the common scalar read inside the buffer (a data-dependent loop run point by point)
            flat = self.offset
            for idx, extent, stride in zip(indices, self.shape, self.strides):
                if not (isinstance(idx, _SCALARS) and 0 <= idx < extent):
                    break
                flat += idx * stride
            else:
                flat = int(flat)
                if self.poison is not None and self.poison[flat]:
                    return self.flat[flat], np.True_, self.poison_message
                return self.flat[flat], False, ""
        safe, lanes, message = [], False, ""
        for dim, (idx, extent) in enumerate(zip(indices, self.shape)):
            if mask is not None and not np.all(mask):
                idx = np.where(mask, idx, 0)
            bad = (idx < 0) | (idx >= extent)
            if np.any(bad):
                message = message or OobNote(self, (bad, indices, dim, where))
                lanes, idx = np.logical_or(lanes, bad), np.where(bad, 0, idx)
            safe.append(idx)
        return self._gather_poisoned(self.flat_index(safe, None, where), mask, lanes, message)

    def _gather_poisoned(self, flat, mask, lanes, message) -> tuple:
        """(values at ``flat``, ``lanes`` with those reading a poisoned element added, the
        first message)."""
        if self.poison is not None:
            used = self.poison[flat]
            used = used if mask is None else np.logical_and(used, mask)
            if np.any(used):
                message = message or self.poison_message
                lanes = np.logical_or(lanes, used)
        value = self.flat.take(flat) if isinstance(flat, np.ndarray) else self.flat[int(flat)]
        return value, lanes, message

    def store(self, indices, value, mask, where: str, poison=None) -> None:
        """Scatter ``value`` at ``indices`` where ``mask`` holds (later lanes win, as in loop order).

        ``poison`` (lanes, message) marks lanes whose value was computed from an out-of-bounds
        load: allowed only into scratch storage, whose elements then remember it.
        """
        if self.by_layout(indices):
            inside = self._flat_inside(indices, mask)
            if inside is None:
                return
            flat, mask = inside
        else:
            flat = self.flat_index(indices, mask, where)
        if self.bf16:
            value = round_bfloat16(value)
        lanes = poison[0] if poison is not None else False
        if lanes is False and self.poison is None and not isinstance(flat, np.ndarray) \
                and not isinstance(value, np.ndarray) and mask is None:
            self.flat[int(flat)] = value
            return
        if mask is not None:
            # the mask may vary along loops the index and value do not use (a predicate over a
            # loop the store is repeated by): every lane it keeps stores
            flat, value, lanes, keep = np.broadcast_arrays(flat, value, lanes, mask)
            flat, value, lanes = flat[keep], value[keep], lanes[keep]
        else:
            flat, value, lanes = np.broadcast_arrays(flat, value, lanes)
        if np.any(lanes):
            self._poison(flat[lanes], poison[1], where)
        if self.poison is not None:
            self.poison[flat[~lanes]] = False
        self.flat[flat.ravel()] = value.ravel()

    def by_layout(self, indices) -> bool:
        """Whether an access at ``indices`` is placed by the layout (:attr:`drop_strays`; an
        index tuple of another rank is left to :meth:`flat_index`'s error)."""
        return self.drop_strays and len(indices) == len(self.shape)

    def layout_flat(self, indices, mask) -> tuple:
        """(flat positions, lanes past the storage or None) of ``indices`` as the layout
        places them, whatever each index's own range (:attr:`drop_strays`); lanes off
        ``mask`` and past the storage point at 0."""
        flat = self.offset
        for idx, stride in zip(indices, self.strides):
            flat = flat + idx * stride
        size = self.flat.size
        if isinstance(flat, _SCALARS):
            if 0 <= flat < size or (mask is not None and not np.any(mask)):
                return (flat if 0 <= flat < size else 0), None
            return 0, True
        if mask is not None and not _all(mask):
            flat = np.where(mask, flat, 0)
        bad = np.logical_or(np.less(flat, 0), np.greater_equal(flat, size))
        if not np.any(bad):
            return flat, None
        return np.where(bad, 0, flat), bad

    def _load_layout(self, indices, mask, where: str):
        """:meth:`load_poisoned` of a buffer with :attr:`drop_strays`: lanes past the
        storage, or reading a poisoned element, poisoned."""
        flat, bad = self.layout_flat(indices, mask)
        lanes, message = (False, "") if bad is None else (bad, f"{where}: reads past the storage of {self.name!r}")
        return self._gather_poisoned(flat, mask, lanes, message)

    def _flat_inside(self, indices, mask) -> "tuple | None":
        """(flat positions, mask) of a store with :attr:`drop_strays`: lanes past the storage
        dropped; None when no lane is left."""
        flat, bad = self.layout_flat(indices, mask)
        if bad is None:
            return flat, mask
        if bad is True:
            return None
        keep = np.logical_not(bad) if mask is None else np.logical_and(mask, np.logical_not(bad))
        return (flat, keep) if np.any(keep) else None

    def _poison(self, flat, message: str, where: str) -> None:
        if not self.scratch:
            raise InterpError(f"{where}: stores into {self.name!r} a value read out of bounds: {message}")
        if self.poison is None:
            self.poison = np.zeros(self.flat.shape, dtype=bool)
            self.poison_message = message
        self.poison[flat] = True


class OobNote:
    """The message of an out-of-bounds load whose lanes are poisoned (:meth:`BufferData.load_poisoned`),
    written out only when an error shows it: a data-dependent loop run point by point may
    poison many loads whose values are discarded, and naming the first bad lane of each
    costs more than the run."""

    __slots__ = ("_data", "_args", "_text")

    def __init__(self, data, args):
        self._data, self._args, self._text = data, args, None

    def __str__(self) -> str:
        if self._text is None:
            self._text = self._data._oob_message(*self._args)
            self._data = self._args = None
        return self._text

    __repr__ = __str__

    def __bool__(self) -> bool:
        return True


def compact_strides(shape) -> tuple:
    """Row-major strides (in elements) of ``shape``."""
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= int(s)
    return tuple(reversed(strides))
