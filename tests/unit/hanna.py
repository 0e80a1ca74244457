"""HANNA read once per test process: a score of unit-test modules audit it, and reading and validating its
145,728 ratings costs about a second each time. Each call gets its own copy of the frame, free to change."""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import pandas as pd

from evalcore.data.ingest import Ingested, load
from tests.helpers import HANNA


@lru_cache(maxsize=1)
def _read_once() -> Ingested:
    return load(HANNA, preset="hanna")


def hanna() -> Ingested:
    """``load(HANNA, preset="hanna")``, read once; the frame is a fresh copy on every call."""
    ing = _read_once()
    return dataclasses.replace(ing, frame=ing.frame.copy())


def hanna_frame() -> pd.DataFrame:
    """``load(HANNA, preset="hanna").frame`` (the same as ``read(HANNA)``), read once; a fresh copy each call."""
    return hanna().frame


@lru_cache(maxsize=1)
def _preset_once() -> pd.DataFrame:
    from evalcore.data.presets import read_preset

    return read_preset("hanna", [HANNA]).frame


def hanna_preset_frame() -> pd.DataFrame:
    """``read_preset("hanna", [HANNA]).frame`` (the preset's table before validation), read once; a fresh copy
    each call."""
    return _preset_once().copy()
