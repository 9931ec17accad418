"""Defaults of ``PoissonMBOClassifier``: volume tolerance, iterations and fidelity, by measurement.

The few-labels benchmark's data and draws (:mod:`semiscale_bench.few_labels`): usps (7,291
training images), mnist's 10,000 test images and two moons (2,000 points, noise 0.1); per
dataset one shared ``KNNGraph(random_state=0)`` whose Laplacian every fit is given (so the graph
is excluded from the seconds); 1 and 5 labels per class, 5 draws (trial t with k labels per
class draws with ``numpy.random.default_rng([t, k])``, as the benchmark).  On every draw:

(a) ``volume_tolerance`` in {0, 0.1, 0.25, 0.5, 1, 1e12 (no constraint: bounds 0..n)} with
    the priors estimated from the labels (``class_prior=None``), and the oracle: the true
    class proportions of the whole dataset with exact volumes (``class_prior=<true>``,
    tolerance "auto" = 0);
(b) ``(n_outer, n_inner)`` in {(20, 40), (10, 20), (20, 80), (40, 40)} at the default
    tolerance;
(c) ``fidelity`` in {0.5, 1, 2} at the other defaults;

and ``PoissonClassifier()`` as the baseline.  Every other parameter is at its default.
Accuracy is ``transduction_`` on the unlabeled points (mean over draws); seconds are the wall
time of ``fit(X, y, laplacian=L)`` (median over draws), after one untimed warm-up fit per
dataset.  Writes ``results.json`` (one record per fit) and ``README.md`` (the tables; a
``reading.md`` in the output folder, if there, is included as the reading).  Run (timings: under
the machine's timing lock)::

    flock /tmp/w/timing.lock env SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/scripts/poisson_mbo_defaults.py \\
        --out benchmarks/results/poisson_mbo_defaults

``--render`` rewrites README.md from an existing results.json without fitting.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from semiscale.graph import KNNGraph
from semiscale.models import PoissonClassifier, PoissonMBOClassifier
from semiscale.models.poisson_mbo import ESTIMATED_PRIOR_VOLUME_TOLERANCE
from semiscale_bench.few_labels.data import draw_labels, load
from semiscale_bench.few_labels.protocol import PROTOCOL

DATASETS = ("usps", "mnist", "two moons")
PER_CLASS = (1, 5)
REPEATS = 5
#: 1e12 stands for an infinite tolerance (no volume constraint: bounds 0..n, as inf gives; the
#: estimator refused inf before 48217bb).
NO_CONSTRAINT = 1e12
TOLERANCES = (0.0, 0.1, 0.25, 0.5, 1.0, NO_CONSTRAINT)
ITERATIONS = ((20, 40), (10, 20), (20, 80), (40, 40))
FIDELITIES = (0.5, 1.0, 2.0)
#: The defaults the groups vary from (the tolerance: of priors estimated from the labels).
DEFAULT = {"volume_tolerance": ESTIMATED_PRIOR_VOLUME_TOLERANCE, "n_outer": 20, "n_inner": 40}
DEFAULT["fidelity"] = 1.0


def _settings():
    """(group, label, parameters) of every fit on a draw; ``"oracle"`` marks the true priors."""
    out = [("baseline", "PoissonClassifier()", None)]
    for tol in TOLERANCES:
        out.append(("tolerance", _tolerance_label(tol), {"volume_tolerance": tol}))
    out.append(("tolerance", "true priors, volume_tolerance=0", {"class_prior": "oracle"}))
    for n_outer, n_inner in ITERATIONS[1:]:
        label = f"n_outer={n_outer}, n_inner={n_inner}"
        out.append(("iterations", label, {"n_outer": n_outer, "n_inner": n_inner}))
    for mu in FIDELITIES:
        if mu != DEFAULT["fidelity"]:
            out.append(("fidelity", f"fidelity={mu:g}", {"fidelity": mu}))
    return out


def _tolerance_label(tol):
    if tol >= NO_CONSTRAINT:  # 1e12 and inf: the same bounds 0..n
        return "volume_tolerance=1e12 (no constraint)"
    return f"volume_tolerance={tol:g}"


def _estimator(params, prior):
    if params is None:
        return PoissonClassifier()
    params = dict(params)
    if params.get("class_prior") == "oracle":
        params["class_prior"] = prior
    return PoissonMBOClassifier(**params)


def _fit_all(args):
    records = []
    data_home = os.environ.get("SEMISCALE_DATA")
    warnings.simplefilter("ignore")  # unreached components of the kNN graphs are reported apart
    for name in args.datasets:
        X, y = load(PROTOCOL, name, data_home)
        prior = np.bincount(y) / y.size
        start = time.perf_counter()
        graph = KNNGraph(random_state=PROTOCOL.graph_seed).fit(X)
        print(f"{name}: n = {X.shape[0]}, graph {time.perf_counter() - start:.1f} s", flush=True)
        L = graph.laplacian_
        PoissonMBOClassifier().fit(X, draw_labels(y, 1, 0), laplacian=L)  # warm-up, untimed
        for k in args.per_class:
            for t in range(args.repeats):
                observed = draw_labels(y, k, t)
                free = observed == -1
                for group, label, params in _settings():
                    est = _estimator(params, prior)
                    start = time.perf_counter()
                    est.fit(X, observed, laplacian=L)
                    seconds = time.perf_counter() - start
                    rec = {
                        "dataset": name,
                        "per_class": k,
                        "trial": t,
                        "group": group,
                        "setting": label,
                        "accuracy": float(np.mean(est.transduction_[free] == y[free])),
                        "fit_seconds": seconds,
                    }
                    if params is not None:
                        rec["n_outer_run"] = int(est.n_outer_)
                        # the largest gap between a class's share and its true share
                        rec["volume_gap"] = float(np.max(np.abs(est.class_volumes_ - prior)))
                    records.append(rec)
                    print(
                        f"{name} {k}/class t{t} {label}: {100 * rec['accuracy']:.2f} %, "
                        f"{seconds:.2f} s",
                        flush=True,
                    )
        del graph, L
    return records


def _table(records, group, default_tolerance):
    names = [label for g, label, _ in _settings() if g in (group, "baseline")]
    if group != "tolerance":  # the default row, measured in group (a)
        names.insert(1, _tolerance_label(default_tolerance) + " (defaults)")
    cells = sorted({(r["dataset"], r["per_class"]) for r in records}, key=_order)
    head = "| setting | " + " | ".join(f"{d} {k}/class" for d, k in cells) + " |"
    lines = [head, "|---" * (len(cells) + 1) + "|"]
    for name in names:
        key = name.removesuffix(" (defaults)")
        row = [f"`{name}`"]
        for d, k in cells:
            sel = [
                r for r in records if (r["dataset"], r["per_class"], r["setting"]) == (d, k, key)
            ]
            acc = 100 * np.mean([r["accuracy"] for r in sel])
            sec = np.median([r["fit_seconds"] for r in sel])
            iters = [r["n_outer_run"] for r in sel if "n_outer_run" in r]
            extra = f", {np.mean(iters):.1f} it" if iters else ""
            row.append(f"{acc:.2f} ({sec:.2f} s{extra})")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _order(cell):
    return (DATASETS.index(cell[0]) if cell[0] in DATASETS else len(DATASETS), cell[1])


def _gaps(records):
    """Mean largest |class share − true share| per tolerance setting and cell."""
    cells = sorted({(r["dataset"], r["per_class"]) for r in records}, key=_order)
    names = [label for g, label, _ in _settings() if g == "tolerance"]
    head = "| setting | " + " | ".join(f"{d} {k}/class" for d, k in cells) + " |"
    lines = [head, "|---" * (len(cells) + 1) + "|"]
    for name in names:
        row = [f"`{name}`"]
        for d, k in cells:
            sel = [
                r for r in records if (r["dataset"], r["per_class"], r["setting"]) == (d, k, name)
            ]
            row.append(f"{100 * np.mean([r['volume_gap'] for r in sel]):.2f}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _render(results, out):
    records = results["records"]
    # the defaults of the code that ran (results.json), not of the code that renders
    default_tolerance = float(results["defaults"]["volume_tolerance"])
    m = results["machine"]
    parts = [
        "# Poisson-MBO's defaults: volume tolerance, iterations, fidelity",
        "",
        f"Produced by `{results['command']}` (code {results['commit']}, {results['seconds']:.0f} s"
        " in all); protocol in the script's docstring.  "
        f"Machine: {m['cpus']} cores, {m['platform']}, Python {m['python']}; shared with other "
        "jobs (their untimed work is outside the timing lock), so the seconds are noisy.",
        "",
        "Each cell: accuracy (%) on the unlabeled points, mean over "
        f"{results['repeats']} label draws; in brackets the median fit seconds (graph "
        "excluded: every fit is given the shared default graph's Laplacian) and, for "
        "Poisson-MBO, the mean number of MBO iterations run (`n_outer_`; they stop early "
        "when no label changes).  Every parameter not named is at its default "
        f"(`volume_tolerance='auto'` = {default_tolerance:g} with estimated priors, "
        "`n_outer=20`, `n_inner=40`, `fidelity=1`).",
        "",
        "## (a) volume tolerance (priors estimated from the labels) and the oracle priors",
        "",
        _table(records, "tolerance", default_tolerance),
        "",
        "Largest gap between a class's share of the points and its true share (percentage "
        "points, mean over draws), after the last threshold:",
        "",
        _gaps(records),
        "",
        "## (b) iterations (n_outer x n_inner), default tolerance",
        "",
        _table(records, "iterations", default_tolerance),
        "",
        "## (c) fidelity, default tolerance",
        "",
        _table(records, "fidelity", default_tolerance),
        "",
    ]
    reading = out / "reading.md"
    if reading.exists():
        parts += ["## Reading", "", reading.read_text().strip(), ""]
    (out / "README.md").write_text("\n".join(parts))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the results")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--per-class", nargs="+", type=int, default=list(PER_CLASS))
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--render", action="store_true", help="README.md from results.json")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "results.json"
    if not args.render:
        import subprocess

        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        start = time.perf_counter()
        records = _fit_all(args)
        results = {
            "command": "flock /tmp/w/timing.lock env SEMISCALE_DATA=/work/shared/datasets "
            "python benchmarks/scripts/poisson_mbo_defaults.py --out "
            "benchmarks/results/poisson_mbo_defaults",
            "argv": argv if argv is not None else __import__("sys").argv[1:],
            "commit": commit,
            "seconds": time.perf_counter() - start,
            "repeats": args.repeats,
            "defaults": {key: str(value) for key, value in DEFAULT.items()},
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": platform.python_version(),
                "numpy": np.__version__,
            },
            "records": records,
        }
        path.write_text(json.dumps(results, indent=1) + "\n")
    _render(json.loads(path.read_text()), args.out)


if __name__ == "__main__":
    main()
