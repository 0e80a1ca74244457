"""Where evalcore keeps compiled code between processes: one user cache folder, set once.

numba compiles every kernel (the Dawid-Skene density, the agreement passes, the hashing bitmaps, the
length-controlled fits) on first use and caches the machine code on disk (``cache=True``), so that a later
process loads it in milliseconds instead of compiling for seconds. By default numba writes that cache next to
the source files, which fails for a read-only install (a system ``site-packages``, a container image); numba
then falls back to a folder of its own choosing, or compiles again in every process.

evalcore therefore names the folder itself: ``EVALCORE_CACHE_DIR`` if set, else the user cache folder
(``platformdirs.user_cache_dir("evalcore")`` when platformdirs is installed, ``~/.cache/evalcore``
otherwise), with numba's cache in its ``numba`` subfolder. :func:`use_numba_cache` hands that to numba
through ``NUMBA_CACHE_DIR``; ``import evalcore`` calls it, so it runs before any evalcore module imports
numba. A ``NUMBA_CACHE_DIR`` the user set is left as it is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path

__all__ = ["ENV_VAR", "cache_dir", "numba_cache_dir", "use_numba_cache"]

#: the environment variable naming evalcore's cache folder
ENV_VAR = "EVALCORE_CACHE_DIR"


def cache_dir(*, environ: Mapping[str, str] = os.environ) -> Path:
    """evalcore's cache folder: ``EVALCORE_CACHE_DIR``, else the user cache folder.

    Parameters
    ----------
    environ
        The environment to read (the process's own by default).

    Returns
    -------
    Path
        ``$EVALCORE_CACHE_DIR`` when set and not empty; otherwise ``platformdirs.user_cache_dir("evalcore")``
        (e.g. ``~/.cache/evalcore`` on Linux, ``~/Library/Caches/evalcore`` on macOS), or
        ``~/.cache/evalcore`` without platformdirs. The folder is not created here.

    Examples
    --------
    >>> str(cache_dir(environ={"EVALCORE_CACHE_DIR": "/srv/cache/evalcore"}))
    '/srv/cache/evalcore'
    >>> cache_dir(environ={}).name
    'evalcore'
    """
    named = environ.get(ENV_VAR, "").strip()
    if named:
        return Path(named).expanduser()
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # platformdirs is optional: the XDG default
        return Path.home() / ".cache" / "evalcore"
    return Path(user_cache_dir("evalcore", appauthor=False))


def numba_cache_dir(*, environ: Mapping[str, str] = os.environ) -> Path:
    """The folder numba caches evalcore's compiled kernels in: ``cache_dir() / "numba"``.

    Examples
    --------
    >>> str(numba_cache_dir(environ={"EVALCORE_CACHE_DIR": "/srv/cache/evalcore"}))
    '/srv/cache/evalcore/numba'
    """
    return cache_dir(environ=environ) / "numba"


def use_numba_cache(*, environ: MutableMapping[str, str] = os.environ) -> str:
    """Point numba's disk cache at :func:`numba_cache_dir`, unless ``NUMBA_CACHE_DIR`` is set already.

    Sets ``NUMBA_CACHE_DIR``, which numba reads when it is imported; if numba is imported already, it
    re-reads its configuration, so that the folder applies from the next kernel on.

    Parameters
    ----------
    environ
        The environment to set (the process's own by default; numba reads only that one).

    Returns
    -------
    str
        The folder numba caches in (the user's own ``NUMBA_CACHE_DIR`` when they set one).

    Examples
    --------
    >>> env = {"EVALCORE_CACHE_DIR": "/srv/cache/evalcore"}
    >>> use_numba_cache(environ=env)
    '/srv/cache/evalcore/numba'
    >>> env["NUMBA_CACHE_DIR"]
    '/srv/cache/evalcore/numba'
    >>> use_numba_cache(environ={"NUMBA_CACHE_DIR": "/home/me/numba"})  # the user's choice wins
    '/home/me/numba'
    """
    if environ.get("NUMBA_CACHE_DIR"):
        return environ["NUMBA_CACHE_DIR"]
    folder = str(numba_cache_dir(environ=environ))
    environ["NUMBA_CACHE_DIR"] = folder
    config = sys.modules.get("numba.core.config")
    if environ is os.environ and config is not None:  # numba was imported first: it reads its environment again
        config.reload_config()
    return folder
