"""How SLapCVM's tube width trades sparsity for how far two labels travel (issue 13).

Paper 001's μ sets the ε̄-insensitive tube of the sparsified manifold regularizer (eq. 4–5):
edges whose difference stays inside the tube carry no dual weight (sparsity), but inside it
the decision may also decay away from the labeled points at no cost.  This study measures both
sides on the paper's two-moons setting.

Protocol: ``make_two_moons(1000, noise=0.1, random_state=0)`` for training with the first point
of each class labeled, 2,000 test points (``random_state=1``); the paper's kernel for two moons
``RBF(gamma=4.0)`` (β = 0.25) and graph preset (6-NN, weights exp(−d²/β_g));
``SparseLapCVMClassifier(C=100, theta=100·|E|/m, mu=mμ/m, random_state=0)`` — θ scaled so
that the edge slacks weigh 100 times the labeled ones per unit (``Cθ/(|E|μ)`` against
``C/(mμ)``) — for mμ ∈ {1 (the paper's), 3, 10, 30, 100}, each with the default CVM
tolerance ``tol=1e-4`` and with ``tol=1e-6``.  Recorded: test accuracy, core set and support
sizes, |f| at the labeled points, the 99th percentile and maximum of the weighted
edge differences ``|√w_e (f(x_u) − f(x_v))|`` (a read-out of ε̄: edges inside the tube are
free), and seconds.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    semiscale-bench slapcvm_tube --out benchmarks/results/slapcvm_tube
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from semiscale_bench.harness.study import (
    SHARED_MACHINE,
    Study,
    legacy_command,
    produced_by,
    write_readme,
)
from semiscale_bench.studies._common import labeled_moons

N_TRAIN = 1000
N_TEST = 2000
C = 100.0
EDGE_WEIGHT_RATIO = 100.0
M_MU = (1.0, 3.0, 10.0, 30.0, 100.0)
TOLS = (1e-4, 1e-6)


def run(records, save):
    from semiscale.graph import KNNGraph
    from semiscale.kernels import RBF
    from semiscale.models import SparseLapCVMClassifier
    from semiscale.solvers.slapcvm_kernel import graph_edges

    done = {(r["m_mu"], r["tol"]) for r in records}
    if all((m_mu, tol) in done for m_mu in M_MU for tol in TOLS):
        return
    X, y, labeled, y_ssl, X_test, y_test = labeled_moons(N_TRAIN, N_TEST)
    m = labeled.size
    for m_mu, tol in ((m_mu, tol) for tol in TOLS for m_mu in M_MU):
        if (m_mu, tol) in done:
            continue
        graph = KNNGraph(n_neighbors=6, bandwidth="mean-square", random_state=0)
        n_edges = graph_edges(graph.fit(X).adjacency_)[0].size
        model = SparseLapCVMClassifier(
            kernel=RBF(gamma=4.0),
            graph=graph,
            C=C,
            theta=EDGE_WEIGHT_RATIO * n_edges / m,
            mu=m_mu / m,
            tol=tol,
            random_state=0,
        )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y_ssl)
        seconds = time.perf_counter() - start
        f = model.decision_function(X)
        u, v, w, _ = graph_edges(model.graph_.adjacency_)
        diff = np.abs(np.sqrt(w) * (f[u] - f[v]))
        records.append(
            {
                "m_mu": m_mu,
                "tol": tol,
                "accuracy": float(np.mean(model.predict(X_test) == y_test)),
                "core_set": int(model.core_set_size_[0]),
                "n_support": model.n_support_,
                "n_items": int(m + 2 * n_edges),
                "f_labeled": float(np.abs(f[labeled]).mean()),
                "edge_diff_q99": float(np.quantile(diff, 0.99)),
                "edge_diff_max": float(diff.max()),
                "seconds": round(seconds, 2),
                "converged": model.converged_,
            }
        )
        save()


def summarize(records):
    return sorted(records, key=lambda r: (-r["tol"], r["m_mu"]))


def write_report(results, out):
    lines = [
        "# SLapCVM's tube: sparsity against how far the labels travel (issue 13)",
        "",
        produced_by(results, legacy_command("slapcvm_tube"), SHARED_MACHINE),
        "",
        f"Two moons, {N_TRAIN} training points, one label per class, {N_TEST} test points; "
        f"C = {C:g}, θ = {EDGE_WEIGHT_RATIO:g}·|E|/m, `RBF(gamma=4.0)`.",
        "",
        "| CVM tol | mμ | test accuracy (%) | core set | support points | items m + 2\\|E\\| "
        "| mean \\|f\\| at the labels | edge \\|Δf\\| q99 | edge \\|Δf\\| max | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["summary"]:
        lines.append(
            f"| {r['tol']:g} | {r['m_mu']:g} | {100 * r['accuracy']:.1f} | {r['core_set']} "
            f"| {r['n_support']} "
            f"| {r['n_items']} | {r['f_labeled']:.3g} | {r['edge_diff_q99']:.3g} "
            f"| {r['edge_diff_max']:.3g} | {r['seconds']:.1f} |"
        )
    write_readme(out, lines)


BENCHMARK = Study("slapcvm_tube", (run,), summarize, write_report)
