"""`text_table` (evalcore.cli.options): the terminal table every command prints, its numbers to 3 decimals,
an undefined estimate written out, one line per row."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import agreement, bias, main, position, superficial, winrate
from evalcore.cli.options import text_table
from tests.helpers import HANNA, SAMPLE, SAMPLE_PAIRS, needs_datasets

#: An estimate cell: a number to 3 decimals, or empty / the "undefined" text.
_ESTIMATE = re.compile(r"-?\d+\.\d{3}")


@pytest.fixture
def printed(monkeypatch):
    """Every (frame, undefined) a command passes to text_table, recorded as the command runs."""
    seen: list[tuple[pd.DataFrame, str]] = []

    def spy(frame, *, undefined=""):
        seen.append((frame.copy(), undefined))
        return text_table(frame, undefined=undefined)

    for module in (agreement, bias, position, superficial, winrate):
        monkeypatch.setattr(module, "text_table", spy)
    return seen


def run(argv: list[str], printed, capsys, *, tables: int = 1) -> list[pd.DataFrame]:
    """Run the command; each table it printed is in its output, one line per row under the header."""
    assert main([str(a) for a in argv]) == 0
    out = capsys.readouterr().out
    assert len(printed) == tables
    for frame, undefined in printed:
        text = text_table(frame, undefined=undefined)
        assert text in out
        assert text.count("\n") == len(frame)  # the header, then one line per row: line breaks are escaped
    return [frame for frame, _ in printed]


SAMPLE_COMMANDS = {
    "agreement": (["agreement", SAMPLE, "--boot", "30", "--all"], 1),
    "leaderboard": (["agreement", SAMPLE, "--leaderboard", "--boot", "20"], 1),
    "pairs": (["agreement", SAMPLE, "--pairs", "--boot", "20"], 1),
    "bias": (["bias", SAMPLE, "--boot", "100"], 2),
    "accuracy": (["winrate", SAMPLE_PAIRS, "--accuracy", "--by", "subset", "--boot", "50"], 1),
    "superficial_pairwise": (["superficial", SAMPLE_PAIRS, "--q", "superficial", "--alphas", "0:1:0.25",
                              "--boot", "20"], 1),
    "position": (["position", SAMPLE_PAIRS, "--boot", "20"], 1),
}


@pytest.mark.parametrize("name", list(SAMPLE_COMMANDS))
def test_the_sample_tables_of_every_command(name, printed, capsys):
    argv, tables = SAMPLE_COMMANDS[name]
    frames = run(argv, printed, capsys, tables=tables)
    assert all(len(f) > 0 for f in frames)


def test_undefined_estimates_are_written_out(printed, capsys):
    (table,) = run(["agreement", SAMPLE, "--boot", "0", "--all"], printed, capsys)
    assert table["estimate"].isna().any()
    text = text_table(table, undefined="not defined")
    assert "not defined" in text and text.splitlines()[0].split() == list(table.columns)


def test_a_small_table_written_out():
    frame = pd.DataFrame({"judge": ["gpt-4", "a judge\nwith two lines"], "n": [120, 7],
                          "estimate": [0.51234, np.nan], "ci_low": [0.4, np.nan], "ci_high": [0.6049, np.nan]})
    assert text_table(frame, undefined="not defined").splitlines() == [
        "                  judge   n    estimate ci_low ci_high",
        "                  gpt-4 120       0.512  0.400   0.605",
        "a judge\\nwith two lines   7 not defined               ",
    ]
    assert all(_ESTIMATE.fullmatch(c) for c in text_table(frame.head(1)).splitlines()[1].split()[2:])


@pytest.mark.slow
@needs_datasets
def test_hanna_agreement_has_integer_counts_with_gaps(printed, capsys):
    """HANNA's agreement table with system-level rows: counts that a gap made floats are printed as whole
    numbers (not "360.0"), a missing count as nothing."""
    (table,) = run(["agreement", HANNA, "--preset", "hanna", "--by", "criterion", "--judge", "ChatGPT/prompt1",
                    "--boot", "20", "--all"], printed, capsys)
    counts = table["n_systems"].astype(str)
    assert (counts == "").any() and counts[counts != ""].str.fullmatch(r"\d+").all()
