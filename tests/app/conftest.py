"""The browser tests' shared fixtures: one headless Debian Chromium (``browser``) and one server (``app``) for the
whole session, as people share a real one. Under
pytest-xdist every browser test runs on the same worker (tests/conftest.py), so there is one server per run.

The server's workspace holds the datasets the tests open, stored before it starts: the sample (as its button
stores it, so the button finds it), a second dataset with other judges and systems, the hostile-names payload,
and, with the real data present, LLMBar's rating files alone, HANNA with two of them, and HANNA with human labels
on a fifth of its stories. A result one test
computes is cached for the next, as on a real server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.browsing import CHROMIUM_ARGS, SHOTS, Server, chromium
from tests.helpers import DATASETS, HANNA, LLMBAR
from tests.hostile.test_markup import NAME as PAYLOAD, store_payload


@pytest.fixture(scope="session")
def browser():
    exe = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _other_tables(tmp: Path) -> dict:
    """The second dataset: an unseen ratings file, and the sample's comparisons under other judge and system
    names, with everything the pairwise pages use (scores, both orders, probabilities), so that every selector's
    options change on a switch."""
    from evalcore.data.ingest import load, load_samples
    from tests.app.test_agreement_page import unseen_file

    comparisons = load_samples()["comparisons"].frame
    # A third of the sample's items: every page has what it needs, at a third of the cost.
    items = comparisons["item_id"].drop_duplicates()
    comparisons = comparisons[comparisons["item_id"].isin(items.iloc[::3])].copy()
    for col in ("system_a", "system_b"):
        comparisons[col] = "sys-" + comparisons[col].astype(str).str[0]
    judge = comparisons["rater_kind"] == "judge"
    comparisons["rater"] = comparisons["rater"].astype(str).where(~judge, "other/" + comparisons["rater"].astype(str))
    return {"ratings": load(unseen_file(tmp / "unseen.csv")).frame, "comparisons": comparisons}


#: HANNA with two judges, and the annotators' labels kept on a seeded random fifth of the stories.
HANNA_FIFTH = "HANNA, a fifth labelled"
HANNA_FIFTH_JUDGES = ("ChatGPT/prompt1", "Mistral-7B/prompt1")


def hanna_fifth(hanna):
    import numpy as np

    items = hanna["item_id"].drop_duplicates()
    keep = set(items.sample(frac=0.2, random_state=np.random.default_rng(5)))
    human = hanna["rater_kind"] == "human"
    rows = (human & hanna["item_id"].isin(keep)) | (~human & hanna["rater"].isin(HANNA_FIFTH_JUDGES))
    return hanna[rows].reset_index(drop=True)


def _store_datasets(path: Path, tmp: Path) -> dict[str, str]:
    """The shared workspace's datasets; their ids by name."""
    from evalcore.data.ingest import load, load_samples
    from evalcore.data.store import Workspace
    from evalcore.ui.loading import SAMPLE_NAME
    from evalcore.ui.state import SAMPLE_SOURCE

    ws = Workspace(path)
    samples = load_samples()
    ids = {SAMPLE_NAME: ws.save_dataset(SAMPLE_NAME, {k: v.frame for k, v in samples.items()}, source=SAMPLE_SOURCE,
                                        notes={k: list(v.notes) for k, v in samples.items()}),
           "Other": ws.save_dataset("Other", _other_tables(tmp)),
           PAYLOAD: store_payload(ws)}
    if DATASETS.exists():
        rating = [LLMBAR / sub / "evaluators" / judge / "Rating_NoRules" / "result.json"
                  for sub in ("Natural", "Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut",
                              "Adversarial/Manual") for judge in ("GPT-4", "ChatGPT")]
        llmbar = load(rating, preset="llmbar").frame
        ids["LLMBar Rating"] = ws.save_dataset("LLMBar Rating", {"comparisons": llmbar})
        # HANNA (11 systems, 6 criteria, 5 LLM judges) with LLMBar's GPT-4 rating files of Natural and
        # Adversarial/Neighbor (scores of both outputs, both orders).
        gpt4 = load([LLMBAR / f"{sub}/evaluators/GPT-4/Rating_NoRules/result.json"
                     for sub in ("Natural", "Adversarial/Neighbor")], preset="llmbar").frame
        hanna = load(HANNA, preset="hanna").frame
        ids["HANNA + LLMBar"] = ws.save_dataset("HANNA + LLMBar", {"ratings": hanna, "comparisons": gpt4})
        ids[HANNA_FIFTH] = ws.save_dataset(HANNA_FIFTH, {"ratings": hanna_fifth(hanna)})
    return ids


@pytest.fixture(scope="session")
def app(tmp_path_factory):
    """The shared server and its datasets' ids by name."""
    tmp = tmp_path_factory.mktemp("browser")
    ids = _store_datasets(tmp / "workspace.duckdb", tmp)
    # The pages wait for their intervals (fewer runs of each page); the test with its own server shows them late.
    server = Server(tmp / "workspace.duckdb", tmp / "streamlit.log", EVALCORE_POINTS_FIRST_AFTER="600").start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield server, ids
    server.stop()
