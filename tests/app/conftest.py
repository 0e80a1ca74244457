"""The browser tests' shared fixture: one headless Debian Chromium per test module."""

from __future__ import annotations

import pytest

from tests.app.browsing import CHROMIUM_ARGS, chromium


@pytest.fixture(scope="module")
def browser():
    exe = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
