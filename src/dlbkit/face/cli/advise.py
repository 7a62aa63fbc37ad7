"""``dlbkit advise RUN.json``: the chunking balancers ranked, best first, by their predicted makespan
for another run of a recorded loop's last step (:mod:`dlbkit.face.advise`)."""

from __future__ import annotations

import argparse
import json

from dlbkit.face.cli.options import add_candidates, add_import, add_json, check_balancer_arg, image_file
from dlbkit.face.cli.output import jsonable

__all__ = ["HELP", "DESCRIPTION", "arguments", "command"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit advise --help``
HELP = "rank the chunking balancers for another run of a recorded loop"
DESCRIPTION = ("Predict, by simulating it on what the recorded run's last step of items measured "
               "(item costs, worker speeds, latency), each candidate chunking balancer's makespan "
               "for another run of that step, best first; the balancer that ran it gets its "
               "measured makespan beside the prediction. --json prints a list, best first.")


def arguments(ad: argparse.ArgumentParser) -> None:
    """``advise``'s arguments."""
    ad.add_argument("trace", metavar="RUN.json", help="a recorded run (dlbkit run --record, run_map(record=), Loop.save)")
    add_candidates(ad, "a candidate (repeatable, or comma-separated; default: the 20 rules auto chooses among, "
                       "every self-scheduling rule but rnd, sanchez and proportional)")
    ad.add_argument("--plot", metavar="FILE.png", help="also draw the run's auto choices and predictions per step")
    add_json(ad, "a JSON list, best first")
    add_import(ad)
    ad.set_defaults(func=command)


def command(args) -> int:
    """``dlbkit advise``: the candidates ranked, as a table or JSON (and ``--plot``'s figure)."""
    from dlbkit.face.advise import advise, format_advice, plot_auto

    names = [n.strip() for b in args.balancer for n in b.split(",") if n.strip()]
    if args.balancer and not names:  # -b '' asked for candidates and named none: an error, not "every rule"
        names = [",".join(args.balancer)]
    for n in names:
        check_balancer_arg(n, "chunking", exclude=("auto",))
    plot = image_file(args.plot, "--plot")
    rows = advise(args.trace, candidates=names or None)
    if plot is not None:
        import matplotlib.pyplot as plt
        ax = plot_auto(args.trace)
        ax.figure.savefig(plot, dpi=110)
        plt.close(ax.figure)
    if args.json:
        print(json.dumps(jsonable(rows)))
        return 0
    print(format_advice(rows, str(args.trace)))
    return 0
