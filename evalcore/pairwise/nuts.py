"""nutpie's NUTS sampler driven on a compiled log density through nutpie's compiled core alone.

:func:`evalcore.pairwise.dawid_skene.dawid_skene` samples its numba density (:mod:`._dskernel`) with nutpie.
``import nutpie`` imports ArviZ, which imports matplotlib, xarray and scipy.stats and compiles its numba helpers:
1.5-3 s of a 5 s command, spent on building an ``InferenceData`` the fit only reads draws from. This module
loads nutpie's compiled core (the extension module ``nutpie._lib``) without nutpie's Python package and makes
the same calls ``nutpie.sample`` makes for a ``CompiledPyMCModel`` with diagonal mass-matrix adaptation: the
same sampler, settings and seed, so the same draws (the tests compare them draw for draw with
``nutpie.sample``). It is used for the nutpie versions it was checked against (:data:`CHECKED`);
:func:`sample` returns None for any other, and the caller takes ``nutpie.sample``.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

__all__ = ["CHECKED", "core", "sample"]

#: nutpie releases (major.minor) whose ``sample`` makes exactly the calls :func:`sample` makes
CHECKED = ("0.16",)

_LOCK = threading.Lock()


def _load_extension():
    """``nutpie._lib`` from its file, registered under its own name, nutpie's ``__init__`` not run."""
    spec = importlib.util.find_spec("nutpie")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(folder.glob("_lib.*"))
    files = [f for f in files if f.suffix in (".so", ".pyd")]
    if len(files) != 1:
        return None
    lib_spec = importlib.util.spec_from_file_location("nutpie._lib", files[0])
    if lib_spec is None or lib_spec.loader is None:
        return None
    lib = importlib.util.module_from_spec(lib_spec)
    lib_spec.loader.exec_module(lib)
    # a later ``import nutpie`` finds it here (``from nutpie import _lib``) and does not load it twice
    sys.modules["nutpie._lib"] = lib
    return lib


def core():
    """nutpie's compiled core, loaded once (milliseconds); None when nutpie is missing or not a checked version.

    Returns
    -------
    module or None
        ``nutpie._lib``: the one nutpie imported, if it was, else loaded from its file alone.
    """
    with _LOCK:
        lib = sys.modules.get("nutpie._lib")
        if lib is None:
            lib = _load_extension()
    if lib is None or ".".join(str(getattr(lib, "__version__", "")).split(".")[:2]) not in CHECKED:
        return None
    return lib


def _no_transform_adapter(*args, **kwargs):
    raise NotImplementedError("transform adaptation is not used with the diagonal mass matrix")


def _arrays(batch, names: Sequence[str], shapes: Sequence[tuple[int, ...]]) -> dict[str, np.ndarray]:
    """One chain's columns as float arrays, ``(rows, *shape)`` (list columns flattened, as nutpie reads them)."""
    import pyarrow as pa

    rb = pa.record_batch(batch)
    out = {}
    for name, shape in zip(names, shapes):
        col = rb.column(name)
        if hasattr(col, "flatten"):
            col = col.flatten()
        out[name] = np.asarray(col.to_numpy(zero_copy_only=False), dtype=float).reshape((rb.num_rows, *shape))
    return out


def _trace(result, names: Sequence[str], shapes: Sequence[tuple[int, ...]]) -> tuple[dict[str, np.ndarray], int]:
    """The draws after tuning, ``(chains, draws, *shape)`` (NaN-padded as nutpie pads a short chain), and the
    number of divergent transitions among them."""
    import pyarrow as pa

    draw_batches, stat_batches = result.get_arrow_trace()
    kept, divergences = [], 0
    for draw, stat in zip(draw_batches, stat_batches):
        st = pa.record_batch(stat)
        tuning = int(np.asarray(st.column("tuning").to_numpy(zero_copy_only=False), bool).sum())
        divergences += int(np.asarray(st.column("diverging").to_numpy(zero_copy_only=False), bool)[tuning:].sum())
        kept.append({k: v[tuning:] for k, v in _arrays(draw, names, shapes).items()})
    length = max(len(c[names[0]]) for c in kept)
    post = {}
    for name, shape in zip(names, shapes):
        a = np.full((len(kept), length, *shape), np.nan)
        for i, c in enumerate(kept):
            a[i, :len(c[name])] = c[name]
        post[name] = a
    return post, divergences


def sample(logp, expand, user_data: np.ndarray, *, n_dim: int, names: Sequence[str],
           shapes: Sequence[tuple[int, ...]], dims: dict[str, tuple[str, ...]], coords: dict[str, list],
           initial_point: Callable[[int], np.ndarray], chains: int, draws: int, tune: int, seed: int,
           cores: int) -> tuple[dict[str, np.ndarray], int] | None:
    """NUTS draws of a density given as numba C functions, as ``nutpie.sample`` draws them; None if unsupported.

    Parameters
    ----------
    logp, expand
        numba ``cfunc`` objects with nutpie's C signatures (log density and gradient; the values stored).
    user_data
        The float buffer both functions read (kept alive by the sampler).
    n_dim, names, shapes, dims, coords
        The unconstrained dimension and the stored variables, as a ``CompiledPyMCModel`` holds them.
    initial_point
        ``seed -> x0`` for each chain.
    chains, draws, tune, seed, cores
        As ``nutpie.sample`` takes them (diagonal mass-matrix adaptation).

    Returns
    -------
    (dict, int) or None
        Each variable's draws after tuning, ``(chains, draws, *shape)``, and the number of divergent
        transitions; None when :func:`core` is None (then use ``nutpie.sample``).

    Examples
    --------
    A standard normal in two dimensions, with its C functions from nutpie's signatures:

    >>> import numba
    >>> from numba import types as nt
    >>> dbl = nt.CPointer(nt.double)
    >>> @numba.cfunc(nt.int64(nt.uint64, dbl, dbl, dbl, nt.voidptr))
    ... def logp(dim, x_, out_, lp_, data_):
    ...     x, out, lp = numba.carray(x_, (dim,)), numba.carray(out_, (dim,)), numba.carray(lp_, (1,))
    ...     lp[0] = 0.0
    ...     for i in range(dim):
    ...         lp[0] -= 0.5 * x[i] * x[i]
    ...         out[i] = -x[i]
    ...     return 0
    >>> @numba.cfunc(nt.int64(nt.uint64, nt.uint64, dbl, dbl, nt.voidptr))
    ... def expand(dim, n_out, x_, out_, data_):
    ...     x, out = numba.carray(x_, (dim,)), numba.carray(out_, (dim,))
    ...     for i in range(dim):
    ...         out[i] = x[i]
    ...     return 0
    >>> post, divergences = sample(logp, expand, np.zeros(1), n_dim=2, names=["x"], shapes=[(2,)], dims={},
    ...                            coords={}, initial_point=lambda seed: np.random.default_rng(seed).uniform(-1, 1, 2),
    ...                            chains=2, draws=500, tune=500, seed=0, cores=1)
    >>> post["x"].shape, divergences
    ((2, 500, 2), 0)
    >>> bool(abs(post["x"].std() - 1) < 0.1)
    True
    """
    lib = core()
    if lib is None:
        return None
    sizes = {name: len(values) for name, values in coords.items()}
    keep = (user_data, logp, expand)  # what the compiled functions read, alive while the sampler runs
    model = lib.PyMcModel(
        lib.LogpFunc(logp.address, user_data.ctypes.data, keep),
        lib.ExpandFunc(n_dim, n_dim, expand.address, user_data.ctypes.data, keep),
        lib.PyVariable.new_variables(list(names), ["float64"] * len(names), [tuple(s) for s in shapes], sizes,
                                     dict(dims)),
        n_dim, sizes, dict(coords), initial_point, _no_transform_adapter)
    settings = lib.PyNutsSettings.Diag(seed)
    settings.num_tune, settings.num_draws, settings.num_chains = tune, draws, chains
    sampler = lib.PySampler.from_pymc(settings, cores, model, lib.ProgressType.none(), lib.PyStorage.arrow())
    try:
        sampler.wait(None)
    except BaseException:  # e.g. Ctrl-C: stop the sampler threads before leaving
        sampler.abort()
        raise
    return _trace(sampler.take_results(), names, shapes)
