"""numpy and pandas values between the judge and the worker (KodCode's tests pass them to the program and compare
what it returns, as in one process): see :mod:`.values`, which passes itself as ``codec`` (its ``encode``,
``decode``, ``_items``...: this module imports nothing of the harness's values).

An array of plain numbers crosses as its bytes with its dtype and shape; one of objects, and pandas' indexes and
columns, as lists of values; a pandas column keeps its dtype (a categorical as its categories, codes and order,
another extension dtype as its name and values). Decoding untrusted data builds only arrays of plain dtypes (never
objects from bytes) and pandas objects from decoded values.
"""

import importlib
import sys

from .base import _getattr, _isinstance, _type


def encode_array_like(value, t, peer, depth, path, codec):
    """numpy arrays and pandas ``Series``/``DataFrame``/``Index`` as values (KodCode's tests pass them to the program
    and compare what it returns, as in one process), else None. An array of plain numbers crosses as its bytes with
    its dtype and shape; one of objects, and pandas' indexes and columns, as lists of values."""
    t = _type(value) if t is None else t
    module = _getattr(t, "__module__", "") or ""
    if module == "numpy" and t.__name__ == "ndarray":
        if value.dtype.hasobject:
            return ["npo", list(value.shape), codec._items(value.ravel().tolist(), peer, depth, path)]
        return ["np", value.dtype.str, list(value.shape), value.tobytes().hex()]
    if module != "pandas" and not module.startswith("pandas."):
        return None
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return None
    if t is pandas.Series:
        return ["pdS", codec.encode(value.name, peer, depth + 1), _index(value.index, peer, depth, path, codec),
                _column(value, peer, depth, path, codec)]
    if t is pandas.DataFrame:
        columns = [_column(value[c] if value.columns.is_unique else value.iloc[:, i], peer, depth, path, codec)
                   for i, c in enumerate(value.columns)]
        return ["pdF", _index(value.columns, peer, depth, path, codec), _index(value.index, peer, depth, path, codec),
                columns]
    if _isinstance(value, pandas.Index):
        return _index(value, peer, depth, path, codec)
    return None


def _column(series, peer, depth, path, codec):
    """A pandas column's values with their dtype: a numpy array as a value (never a twin: it may be the frame's own
    memory); a categorical as its categories, codes and order (``["pdc", ...]``); another extension dtype
    (``Int64``, ``string``, a timezone's datetimes) as its name and values (``["pdx", ...]``)."""
    dtype = series.dtype
    if _type(dtype).__name__ == "CategoricalDtype":
        return ["pdc", codec._items(list(dtype.categories), peer, depth, path),
                encode_array_like(series.cat.codes.to_numpy(), None, peer, depth + 1, path, codec),
                bool(dtype.ordered)]
    if not (_getattr(_type(dtype), "__module__", "") or "").startswith("numpy"):
        return ["pdx", str(dtype), codec._items(series.tolist(), peer, depth, path)]
    array = series.to_numpy()
    return encode_array_like(array, _type(array), peer, depth + 1, path, codec)


def _index(index, peer, depth, path, codec):
    return ["pdI", codec.encode(index.name, peer, depth + 1), codec._items(index.tolist(), peer, depth, path)]


def decode_array_like(tag, data, peer, codec):
    """Inverse of :func:`encode_array_like` (numpy and pandas must be importable here). Untrusted data builds only
    arrays of plain dtypes (never objects from bytes) and pandas objects from decoded values."""
    numpy = importlib.import_module("numpy")  # optional: only data that holds arrays needs it
    if tag == "np":
        dtype = numpy.dtype(codec.strict_str(data[1]))
        if dtype.hasobject:
            raise ValueError("object arrays cross as lists")
        shape = tuple(codec._int(n) for n in data[2])
        return numpy.frombuffer(bytes.fromhex(codec.strict_str(data[3])), dtype=dtype).reshape(shape).copy()
    if tag == "npo":
        shape = tuple(codec._int(n) for n in data[1])
        flat = [codec.decode(v, peer) for v in data[2]]
        array = numpy.empty(len(flat), dtype=object)
        array[:] = flat
        return array.reshape(shape)
    pandas = importlib.import_module("pandas")
    if tag == "pdc":
        categories = [codec.decode(v, peer) for v in data[1]]
        codes = codec.decode(data[2], peer)
        return pandas.Categorical.from_codes(codes, categories=categories, ordered=bool(data[3]))
    if tag == "pdx":
        return pandas.array([codec.decode(v, peer) for v in data[2]],
                            dtype=pandas.api.types.pandas_dtype(codec.strict_str(data[1])))
    if tag == "pdI":
        return pandas.Index([codec.decode(v, peer) for v in data[2]], name=codec.decode(data[1], peer))
    if tag == "pdS":
        return pandas.Series(codec.decode(data[3], peer), index=codec.decode(data[2], peer),
                             name=codec.decode(data[1], peer))
    columns, index = codec.decode(data[1], peer), codec.decode(data[2], peer)
    decoded = [codec.decode(v, peer) for v in data[3]]
    if len(decoded) != len(columns):
        raise ValueError("bad DataFrame")
    frame = pandas.DataFrame({i: v for i, v in enumerate(decoded)}, index=index)
    frame.columns = columns
    return frame


def numpy_scalar_types():
    """numpy's scalar types (``numpy.generic``) when numpy is loaded, else ()."""
    numpy = sys.modules.get("numpy")
    return (numpy.generic,) if numpy is not None else ()


#: The dtype kinds whose scalars cross as themselves (bool, integers, floats, complex, datetimes, bytes, text).
_SCALAR_KINDS = "biufcmMSU"


def encode_numpy_scalar(value):
    """``["ng", dtype, bytes]`` for a numpy scalar of a plain dtype (``np.int64(6)``, ``np.True_``), else None."""
    if value.dtype.kind not in _SCALAR_KINDS:
        return None
    return ["ng", value.dtype.str, value.tobytes().hex()]


def decode_numpy_scalar(data):
    """Inverse of :func:`encode_numpy_scalar`: a scalar of that dtype, built from its bytes. Raises ValueError."""
    numpy = importlib.import_module("numpy")
    if _type(data[1]) is not str or _type(data[2]) is not str:
        raise ValueError("bad numpy scalar")
    dtype = numpy.dtype(data[1])
    raw = bytes.fromhex(data[2])
    if dtype.kind not in _SCALAR_KINDS or len(raw) != dtype.itemsize:
        raise ValueError("bad numpy scalar")
    return numpy.frombuffer(raw, dtype=dtype)[0]
