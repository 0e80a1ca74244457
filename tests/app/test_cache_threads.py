"""The in-memory result store is shared by every session and the background threads (it was once
mutated without a lock, so an eviction between one thread's lookup and its read raised KeyError)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from evalcore.ui import cache


class _SlowLookups(OrderedDict):
    """A store whose lookups yield to the other threads: the window where an unlocked store breaks."""

    def __contains__(self, key) -> bool:
        found = super().__contains__(key)
        time.sleep(0.0002)  # another thread may evict the key now
        return found

    def get(self, key, default=None):
        found = super().get(key, default)
        time.sleep(0.0002)
        return found


def test_results_in_memory_survive_many_threads(tmp_path, monkeypatch):
    store = _SlowLookups()
    monkeypatch.setattr(cache, "_memory", lambda stored: store)
    monkeypatch.setattr(cache, "MEMORY_ENTRIES", 4)  # constant eviction
    data = cache.Dataset(str(tmp_path / "ws.duckdb"), "d1", "s1")
    cache.workspace_at(data.path)  # opened once, before the threads
    errors: list[BaseException] = []

    def hammer(t: int) -> None:
        try:
            for i in range(400):
                key = f"k{(i * 7 + t) % 6}"
                got = cache.cached_result(data, key, lambda progress, key=key: key.upper(), label=None, stored=False)
                if got != key.upper():
                    raise AssertionError(f"{key} gave {got}")
        except BaseException as e:  # noqa: BLE001 - every error of a thread is the test's
            errors.append(e)

    threads = [threading.Thread(target=hammer, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, repr(errors[0])
