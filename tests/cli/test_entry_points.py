"""How the CLI is started: ``python -m evalcore.cli``, the console script's target, the package's API."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.helpers import ROOT

COMMANDS = ("validate", "agreement", "alt-test", "bias", "winrate", "superficial", "position", "report", "ppi",
            "leaderboard")


def test_python_m_evalcore_cli_help_runs_as_a_process():
    r = subprocess.run([sys.executable, "-m", "evalcore.cli", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: evalcore ")
    for command in COMMANDS:
        assert command in r.stdout
    assert r.stderr == ""


def test_python_m_evalcore_cli_without_a_command_prints_help_and_exits_2():
    r = subprocess.run([sys.executable, "-m", "evalcore.cli"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2
    assert r.stdout.startswith("usage: evalcore ")


def test_console_script_target_is_the_packages_main():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    module, _, name = meta["project"]["scripts"]["evalcore"].partition(":")
    assert (module, name) == ("evalcore.cli", "main")
    import evalcore.cli as cli

    assert callable(cli.main) and callable(cli.build_parser)
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    assert tuple(sub.choices) == COMMANDS
