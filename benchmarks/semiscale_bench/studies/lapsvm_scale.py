"""The primal LapSVM on a9a-sized data (issue 13: "primal LapSVM fits 50,000 points in a minute").

Times the primal Laplacian SVMs at their defaults as the training set grows to all of a9a
(48,842 points, its training and test files pooled), beside scikit-learn's ``SVC`` on the
labeled points alone (the supervised baseline):

- ``LapSVC(formulation="primal")``: Melacci & Belkin's primal over the full span, each Newton step a
  dense LU of the n × n LapRLS system (``solver="direct"``, K kept across steps when
  three n × n arrays fit the memory budget), run while n ≤ ``EXACT_MAX_N``: its steps are
  O(n³) (one 10,000-point LU is about 0.7 TFLOP), and at 48,842 points one float64 n × n
  array is 19 GB;
- ``NystromLapSVC()``: the same objective on s = 1,000 uniform Nyström centers, each Newton
  step by PCG with the sampled-Hessian preconditioner (memory O(n·s)), with the squared hinge
  (its default) and with the Huber hinge of paper 004, the latter also with
  ``early_stopping=True`` (Melacci & Belkin's stability check: Newton stops once at most
  0.1 % of the training points change side between two steps).

Protocol: a9a's training and test files pooled (48,842 rows, 123 binary features, labels ±1
coded 1 / 0), one permutation (``default_rng(0)``); the training set of size n is the
permutation's first n rows (nested), its first ``N_LABELED`` rows labeled (the same at every n).
Accuracy: on the unlabeled training rows (``transduction_``; ``SVC``: its prediction on them).
Each estimator builds its default graph (``KNNGraph()``) inside ``fit``: fit seconds include it.
One fit per (method, n) after one small warm-up fit in the same process (imports, BLAS threads).

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench lapsvm_scale \\
        --out benchmarks/results/lapsvm_scale
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from semiscale_bench.harness.study import (
    DATA,
    SHARED_MACHINE,
    Study,
    legacy_command,
    produced_by,
    write_readme,
)

SIZES = (2_000, 5_000, 10_000, 20_000, 48_842)
N_LABELED = 500
#: The exact primal's largest n: beyond it one Newton step's LU takes minutes (O(n³)).
EXACT_MAX_N = 10_000
TARGET_N, TARGET_SECONDS = 48_842, 60.0


def _methods():
    from sklearn.svm import SVC

    from semiscale.models import LapSVC, NystromLapSVC

    return {
        "LapSVC(solver='primal')": (
            lambda: LapSVC(formulation="primal", random_state=0),
            EXACT_MAX_N,
        ),
        "NystromLapSVC()": (lambda: NystromLapSVC(random_state=0), None),
        "NystromLapSVC(loss='huber_hinge')": (
            lambda: NystromLapSVC(loss="huber_hinge", random_state=0),
            None,
        ),
        "NystromLapSVC(loss='huber_hinge', early_stopping=True)": (
            lambda: NystromLapSVC(loss="huber_hinge", early_stopping=True, random_state=0),
            None,
        ),
        "SVC on the labeled points": (lambda: SVC(), None),
    }


def _pool():
    from semiscale.datasets import load_dataset

    parts = [load_dataset("a9a", split=s, download=False, dense=True) for s in ("train", "test")]
    X = np.vstack([np.asarray(p[0], dtype=np.float64) for p in parts])
    # classes 0 / 1: a9a's label −1 is the estimators' unlabeled marker
    y = (np.concatenate([np.asarray(p[1]) for p in parts]) > 0).astype(np.int64)
    order = np.random.default_rng(0).permutation(X.shape[0])
    return X[order], y[order]


def _fit(name, model, X, y):
    """Fit ``model`` on ``X`` with the first ``N_LABELED`` labels; (seconds, accuracy, info)."""
    y_ssl = np.full_like(y, -1)
    y_ssl[:N_LABELED] = y[:N_LABELED]
    tic = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name.startswith("SVC"):
            model.fit(X[:N_LABELED], y[:N_LABELED])
            seconds = time.perf_counter() - tic
            predicted = model.predict(X[N_LABELED:])
        else:
            model.fit(X, y_ssl)
            seconds = time.perf_counter() - tic
            predicted = model.transduction_[N_LABELED:]
    steps = (getattr(model, "solver_info_", None) or {}).get("newton_iterations")
    steps = np.ravel(steps).tolist() if steps is not None else []
    return seconds, float(np.mean(predicted == y[N_LABELED:])), steps


def run(records, save):
    from semiscale._memory import MemoryBudgetError

    X, y = _pool()
    done = {(r["method"], r["n"]) for r in records}
    warmed = False
    for n in SIZES:
        n = min(n, X.shape[0])
        for name, (factory, max_n) in _methods().items():
            if (name, n) in done:
                continue
            record = {"method": name, "n": n, "n_labeled": N_LABELED}
            if max_n is not None and n > max_n:
                record["skipped"] = f"n > {max_n}: O(n³) Newton steps (see the docstring)"
                records.append(record)
                save()
                continue
            if not warmed:
                _fit(name, factory(), X[:1000], y[:1000])
                warmed = True
            try:
                seconds, accuracy, steps = _fit(name, factory(), X[:n], y[:n])
            except (MemoryError, MemoryBudgetError) as error:  # refused or out of memory
                record["error"] = f"{type(error).__name__}: {error}"
            else:
                record.update(seconds=seconds, accuracy=accuracy, newton_iterations=steps)
            records.append(record)
            save()


def summarize(records):
    return records


def write_report(results, out):
    lines = [
        "# The primal LapSVM on a9a-sized data (issue 13)",
        "",
        produced_by(results, legacy_command("lapsvm_scale", DATA), SHARED_MACHINE),
        "",
        f"a9a pooled (48,842 rows), the first n of one permutation, {N_LABELED} labeled; "
        "accuracy on the unlabeled training rows; fit seconds include the estimator's own graph.",
        "",
        "| method | n | accuracy | fit seconds | Newton steps | note |",
        "|---|---|---|---|---|---|",
    ]
    rows = sorted(results["summary"], key=lambda r: (r["n"], r["method"]))
    for r in rows:
        if "seconds" in r:
            steps = ", ".join(str(s) for s in r.get("newton_iterations", []))
            lines.append(
                f"| {r['method']} | {r['n']:,} | {100 * r['accuracy']:.2f} % | "
                f"{r['seconds']:.1f} | {steps} | |"
            )
        else:
            lines.append(
                f"| {r['method']} | {r['n']:,} | / | / | | {r.get('skipped') or r.get('error')} |"
            )
    lines += [
        "",
        f"Target: a primal LapSVM fits {TARGET_N:,} points in under {TARGET_SECONDS:g} s.",
    ]
    for r in rows:
        if r["n"] == TARGET_N and r["method"] != "SVC on the labeled points":
            if "seconds" in r:
                verdict = "PASS" if r["seconds"] < TARGET_SECONDS else "FAIL"
                lines.append(f"- {r['method']}: **{verdict}** ({r['seconds']:.1f} s)")
            else:
                lines.append(
                    f"- {r['method']}: **not measured** ({r.get('skipped') or r.get('error')})"
                )
    write_readme(out, lines)


BENCHMARK = Study("lapsvm_scale", (run,), summarize, write_report)
