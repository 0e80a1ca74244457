"""``evalcore winrate``: calibrated win rates of system pairs (BWRS, Bayesian Dawid-Skene), and with
``--accuracy`` each judge's accuracy against the humans' strict majority."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import DataError
from .options import add_engine_arg, add_input_args, engine_table, fit_width, load_table, records, text_table, wrap


def _print_results(source: str, args: argparse.Namespace, prior, results, t0: float) -> None:
    """The results as a terminal table, then the warnings and the time since ``t0``."""
    import time

    import pandas as pd

    w = sys.stdout.write
    name = {"bwrs": "BWRS", "ds": "Bayesian Dawid-Skene"}[args.method]
    w(wrap(f"calibrated win rates of {source}: {name}, prior {prior.label}, ties {args.ties}, seed {args.seed}") + "\n")
    w(wrap("p = share of items on which system_a is better; k = the judges' raw win rate; "
           "p_human = the humans' own win rate") + "\n\n")
    rows = []
    for r in results:
        rows.append({"system_a": r.system_a, "system_b": r.system_b, "k": r.k_observed, "p_mean": r.p_mean,
                     "p_mode": r.p_mode, "95% interval": f"[{r.ci_low:.3f}, {r.ci_high:.3f}]",
                     "p_human": r.p_human, "items": r.n_items, "labels used": r.n_human_labelled,
                     "rhat": r.rhat, "ess": r.ess})
    frame = pd.DataFrame(rows)
    fmt = {c: (lambda v: "" if v != v else f"{v:.3f}") for c in ("k", "p_mean", "p_mode", "p_human", "rhat")}
    fmt["ess"] = lambda v: "" if v != v else f"{v:.0f}"
    w(frame.to_string(index=False, formatters=fmt) + "\n")
    for r in results:
        for msg in r.warnings:
            w(wrap(f"warning ({r.system_a} vs {r.system_b}): {msg}", indent="  ") + "\n")
    w(f"\n{len(results)} pair(s) in {time.perf_counter() - t0:.1f} s\n")


def _run_accuracy(args: argparse.Namespace, ing) -> int:
    """``--accuracy``: each judge's three-class accuracy against the humans' strict majority."""
    from ..pairwise.accuracy import judge_accuracy

    if args.pair or args.baseline:
        raise DataError("--accuracy reports every item, not one pair", fix="leave out --pair and --baseline, or "
                                                                            "group with --by")
    res = judge_accuracy(ing.frame, invalid=args.invalid, by=args.by or (), judges=args.judge, n_boot=args.boot,
                         seed=args.seed, level=args.level)
    if args.json:
        json.dump(records(res), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    how = {"drop": "left out", "wrong": "counted as wrong"}[args.invalid]
    w(wrap(f"judge accuracy of {ing.source}: verdicts a / b / tie against the humans' strict majority; unparsed "
           f"outputs {how} (--invalid {args.invalid}); {args.level:.0%} item-bootstrap interval, {args.boot} "
           f"resamples, seed {args.seed}") + "\n\n")
    shown = res[[*(args.by or ()), "judge", "estimate", "ci_low", "ci_high", "n", "n_invalid", "note"]]
    w(text_table(fit_width(shown, undefined="undefined"), undefined="undefined") + "\n")
    return 0


def run(args: argparse.Namespace) -> int:
    """Fit the chosen pair, or every pair, and print the estimates or their JSON records."""
    import time

    from ..pairwise import winrate as wr

    if args.seed < 0:
        raise DataError(f"--seed {args.seed} is negative", fix="use a whole number, 0 or more (e.g. --seed 0)")
    engine = getattr(args, "engine", None)
    ing = None if engine else load_table(args, "comparisons")
    if args.accuracy and not engine:
        return _run_accuracy(args, ing)
    prior = wr.parse_prior(args.prior)
    if args.boot_samples < 100:
        raise DataError(f"--samples {args.boot_samples} is too few", fix="use at least 100 (default 10000)")
    t0 = time.perf_counter()
    kw = dict(method=args.method, prior=prior, ties=args.ties, seed=args.seed,
              n_samples=args.boot_samples, chains=args.chains, draws=args.draws, tune=args.draws)
    if engine:
        results = _run_engine(args, prior, kw)
    elif args.pair:
        results = [wr.estimate(ing.frame, args.pair[0], args.pair[1], judges=args.judge, **kw)]
    else:
        results = wr.estimate_all(ing.frame, baseline=args.baseline, judges=args.judge, **kw)
    if args.json:
        json.dump([r.to_record() for r in results], sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    _print_results(args.files[0] if engine else ing.source, args, prior, results, t0)
    return 0


def _engine_pair(data: dict, system_a: str, system_b: str):
    """The pair ``(system_a, system_b)`` of the engine's data, oriented so; the in-process message otherwise."""
    from ..pairwise.pairs import NotApplicable

    pair = data.get(frozenset((system_a, system_b)))
    if pair is None or system_a == system_b:
        names = "; ".join(f"{d.system_a} vs {d.system_b}" for d in data.values())
        raise NotApplicable(f"no comparisons of {system_a} against {system_b}", fix=f"pick one of: {names}")
    return pair if pair.system_a == system_a else pair.flipped()


def _engine_todo(data: dict, args: argparse.Namespace, prior) -> list[tuple[str, str]]:
    """The pairs to fit, oriented, as :func:`evalcore.pairwise.winrate.estimate_all` chooses them."""
    from ..pairwise.pairs import NotApplicable

    if args.pair:
        _engine_pair(data, args.pair[0], args.pair[1])
        return [(args.pair[0], args.pair[1])]
    todo = []
    for d in data.values():
        a, b = d.system_a, d.system_b
        if args.baseline is not None:
            if args.baseline not in (a, b):
                continue
            a, b = (b, a) if a == args.baseline else (a, b)
        if prior.kind == "ood" and {a, b} == set(prior.ood):
            continue
        todo.append((a, b))
    if not todo:
        raise NotApplicable(f"no pair includes {args.baseline}" if args.baseline else "no system pairs to compare",
                            fix="pick a baseline that appears in system_a or system_b")
    return todo


def _run_engine(args: argparse.Namespace, prior, kw: dict) -> list:
    """``--engine``: each pair's verdict patterns counted where the data is (:mod:`evalcore.engines.pairwise`),
    expanded into items (:func:`evalcore.pairwise.pairs.pair_from_patterns`) and fitted by the same
    :func:`evalcore.pairwise.winrate.estimate`. Only the counts come back; ties are dropped (a coin flip per
    item needs the items' order, which engines do not have)."""
    from ..engines.pairwise import engine_pair_data
    from ..pairwise import winrate as wr
    from ..pairwise.pairs import select_judges

    if args.accuracy:
        raise DataError("--accuracy needs the rows in memory (its interval is an item bootstrap)",
                        fix="run evalcore winrate FILE --accuracy without --engine")
    if args.ties != "drop":
        raise DataError(f"--ties {args.ties} needs the rows in memory (a seeded coin flip per item in file order)",
                        fix="use --ties drop (the default) with --engine, or run without --engine")
    data = {frozenset((d.system_a, d.system_b)): d for d in engine_pair_data(engine_table(args))}
    ood_pair = _engine_pair(data, *prior.ood) if prior.kind == "ood" else None
    results = []
    for a, b in _engine_todo(data, args, prior):
        pair = _engine_pair(data, a, b)
        if args.judge is not None and not args.pair:
            use = [j for j in args.judge if j in pair.judges]
            if not use:
                continue
            pair = select_judges(pair, use)
        else:
            pair = select_judges(pair, args.judge)
        results.append(wr.estimate(None, a, b, pair=pair, ood_pair=ood_pair, **kw))
    return results


def add_parser(sub) -> None:
    """Declare ``winrate`` on the subcommand parsers ``sub``."""
    w = sub.add_parser("winrate", help="calibrated win rates of system pairs (BWRS, Bayesian Dawid-Skene)",
                       description="Gao et al.'s calibrated win rate p of system A over B from imperfect judges: "
                                   "BWRS or a Bayesian Dawid-Skene model with the true labels marginalised, with "
                                   "no prior, a share of the human labels (ratio:R) or another pair's labels "
                                   "(ood:A2,B2). Without --pair, every pair in the file.")
    add_input_args(w)
    w.add_argument("--pair", nargs=2, metavar=("A", "B"), help="the two systems; p is A's win rate over B")
    w.add_argument("--baseline", metavar="SYSTEM",
                   help="without --pair: only pairs with this system, each as (other, baseline) (1 vs n)")
    w.add_argument("--method", choices=["bwrs", "ds"], default="ds",
                   help="bwrs (Algorithm 1) or ds (Bayesian Dawid-Skene, Model 1); default ds")
    w.add_argument("--prior", default="none", metavar="none|ratio:R|ood:A2,B2",
                   help="judges' accuracy prior: none (Beta(2,1)), ratio:R (human labels on a random share R of "
                        "the labelled items), ood:A2,B2 (another pair's human labels); default none")
    w.add_argument("--ties", choices=["drop", "random"], default="drop",
                   help="a tied verdict or human majority: drop it (default) or break it by a seeded coin flip")
    w.add_argument("--judge", action="append", metavar="NAME", help="use only this judge (repeatable)")
    w.add_argument("--seed", type=int, default=0, help="seed of the label subset, coin flips and sampler")
    w.add_argument("--samples", dest="boot_samples", type=int, default=10_000, metavar="N",
                   help="BWRS: samples of p per judge (default 10000)")
    w.add_argument("--chains", type=int, default=4, help="DS: MCMC chains (default 4)")
    w.add_argument("--draws", type=int, default=1000, help="DS: draws per chain, and as many tuning steps (default 1000)")
    w.add_argument("--json", action="store_true", help="print JSON records (one per pair, or per judge with "
                                                        "--accuracy)")
    a = w.add_argument_group("judge accuracy", "--accuracy reports each judge's accuracy (a / b / tie) against "
                                               "the humans' strict majority instead of the win rates")
    a.add_argument("--accuracy", action="store_true", help="report the judges' accuracy instead of the win rates")
    a.add_argument("--invalid", choices=["drop", "wrong"], default="drop",
                   help="unparsed judge outputs: leave them out (default; their count is shown) or count them as "
                        "wrong, as the PandaLM authors do")
    a.add_argument("--by", nargs="+", metavar="COL", help="break the accuracy down by these per-item columns")
    a.add_argument("--boot", type=int, default=1000, metavar="N",
                   help="item-bootstrap resamples of the accuracy interval (default 1000; 0: none)")
    a.add_argument("--level", type=float, default=0.95, help="level of the accuracy interval (default 0.95)")
    add_engine_arg(w)
    w.set_defaults(func=run)
