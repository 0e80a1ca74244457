"""The CLI runs whose JSON is pinned by ``test_golden.py`` (a refactor changes no number).

Each case is a name and the ``evalcore`` arguments after the file; the outputs live next to this file
as ``<name>.json``. ``python tests/golden/cases.py`` (re)records them: do that only for a deliberate
change, and say which and why in the commit message.
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SAMPLE = ROOT / "sample_data"
DATASETS = ROOT.parent / "shared" / "datasets"

_RATINGS = str(SAMPLE / "ratings_multilingual.csv")
_PAIRS = str(SAMPLE / "comparisons_pairwise.csv")
_HANNA = str(DATASETS / "hanna" / "hanna_metric_scores_llm.csv")
_PANDALM = str(DATASETS / "pandalm")
_LLMBAR = str(DATASETS / "llmbar")
_BOOT = ["--boot", "200", "--seed", "7"]
_DS = ["--seed", "3", "--chains", "2", "--draws", "300"]

#: name -> (needs ../shared/datasets, argv)
CASES: dict[str, tuple[bool, list[str]]] = {
    "validate_sample_ratings": (False, ["validate", _RATINGS, "--json"]),
    "validate_sample_comparisons": (False, ["validate", _PAIRS, "--json"]),
    "validate_hanna": (True, ["validate", _HANNA, "--json"]),
    "validate_pandalm": (True, ["validate", _PANDALM, "--json"]),
    "validate_llmbar": (True, ["validate", _LLMBAR, "--json"]),
    "agreement_sample": (False, ["agreement", _RATINGS, *_BOOT, "--json"]),
    "agreement_sample_by_task": (False, ["agreement", _RATINGS, "--by", "task", "--boot", "200", "--seed", "1",
                                         "--level", "0.9", "--json"]),
    "agreement_hanna": (True, ["agreement", _HANNA, *_BOOT, "--json"]),
    "bias_sample": (False, ["bias", _RATINGS, *_BOOT, "--json"]),
    "bias_sample_by_language": (False, ["bias", _RATINGS, "--by", "language", *_BOOT, "--json"]),
    "bias_hanna": (True, ["bias", _HANNA, *_BOOT, "--json"]),
    "winrate_sample_bwrs": (False, ["winrate", _PAIRS, "--method", "bwrs", "--prior", "ratio:0.3",
                                    "--samples", "2000", "--seed", "5", "--json"]),
    "winrate_sample_ds": (False, ["winrate", _PAIRS, "--method", "ds", "--prior", "ratio:0.3", *_DS, "--json"]),
    "winrate_pandalm_bwrs": (True, ["winrate", _PANDALM, "--method", "bwrs", "--prior", "ratio:0.5",
                                    "--samples", "2000", "--seed", "5", "--json"]),
    "winrate_pandalm_ds": (True, ["winrate", _PANDALM, "--method", "ds", "--prior", "none", *_DS, "--json"]),
}

#: Fields that measure the machine, not the data (wall-clock seconds).
VOLATILE = frozenset({"seconds"})


def run(argv: list[str]):
    """The parsed JSON that ``evalcore <argv>`` prints, run in this process."""
    from evalcore.cli import main

    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(list(argv))
    if code != 0:
        raise RuntimeError(f"evalcore {' '.join(argv)} exited {code}")
    return scrub(json.loads(buf.getvalue()))


def scrub(obj):
    """Drop volatile fields and make paths relative, so that outputs compare across machines."""
    if isinstance(obj, dict):
        return {k: scrub(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [scrub(v) for v in obj]
    if isinstance(obj, str):
        return obj.replace(str(DATASETS), "<datasets>").replace(str(SAMPLE), "<sample>")
    return obj


def record(names: list[str] | None = None) -> None:
    for name, (needs, argv) in CASES.items():
        if names and name not in names:
            continue
        if needs and not DATASETS.exists():
            print(f"skip {name}: {DATASETS} not found", file=sys.stderr)
            continue
        out = run(argv)
        (HERE / f"{name}.json").write_text(json.dumps(out, indent=0, ensure_ascii=False, sort_keys=True) + "\n")
        print(f"recorded {name}", file=sys.stderr)


if __name__ == "__main__":
    record(sys.argv[1:] or None)
