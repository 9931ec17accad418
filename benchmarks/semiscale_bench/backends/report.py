r"""The backends benchmark's report: ``results.json`` and ``summary.md`` from the records alone.

Per dataset and backend: the median fit seconds and the ratio to NumPy's, PCG iterations,
RMSE (accuracy), the largest prediction difference from NumPy, the peak resident memory of the
client and of each Dask worker, and the bytes moved per Hessian product ``H V`` (one PCG
iteration: a pass of ``K(X, C) V`` and one of ``K(X, C)ᵀ U`` over all of ``X``) against the
Dask backend's count

.. math::  B = 16\,n r + 8\,s r\,(1 + p)

(``u = K V`` back and ``v = λ_I L u + J u`` out, ``8 n r`` each; ``V`` out once and one
``s × r`` answer per chunk back; ``p`` chunks, ``r = 1`` output).  The scaling model for N
machines (:func:`scaling`) splits one measured Hessian product of the 1-worker run into its
passes over ``X`` (divided among N machines) and the client's serial rest, and adds ``B`` over
a network of stated bandwidth.
"""

from __future__ import annotations

import json

import numpy as np

from semiscale_bench.harness.records import jsonable
from semiscale_bench.harness.report import (
    MIB,
    Target,
    fmt,
    header,
    md_table,
    protocol_section,
    targets_section,
    write_text,
)

__all__ = ["NETWORK_BYTES_PER_SECOND", "model_bytes", "render", "scaling", "summarize"]

#: The network of the N-machine model: 10 Gb/s Ethernet (an assumption, not a measurement:
#: the measured transfers here go over the loopback interface of one machine).
NETWORK_BYTES_PER_SECOND = 1.25e9
#: Machines the scaling model is evaluated for.
MACHINES = (1, 2, 4, 8, 16, 32)
#: The targets' thresholds: prediction difference, Dask 2 workers / NumPy time, bytes / model.
MAX_DIFF, MAX_SLOWDOWN, MAX_BYTES_RATIO = 1e-8, 1.5, 1.1


def model_bytes(n: int, s: int, chunks: int, r: int = 1) -> int:
    """Bytes one Hessian product moves between the client and the workers (the formula above)."""
    return 16 * n * r + 8 * s * r * (1 + chunks)


def _median(values):
    values = [v for v in values if v is not None]
    return float(np.median(values)) if values else None


def summarize(records: list[dict], n: int, s: int) -> dict:
    """One backend's records on one dataset: medians, maxima, bytes; or why it did not run."""
    skipped = [r["skipped"] for r in records if "skipped" in r]
    if skipped:
        return {"skipped": skipped[0]}
    ok = [r for r in records if "error" not in r]
    out = {"errors": [r["error"] for r in records if "error" in r], "repeats": len(ok)}
    if not ok:
        return out
    first = ok[0]
    peaks = [r["worker_peak_rss"] for r in ok if r.get("worker_peak_rss")]
    out.update(
        fit_seconds=[r["fit_seconds"] for r in ok],
        fit_seconds_median=_median(r["fit_seconds"] for r in ok),
        fit_seconds_min=min(r["fit_seconds"] for r in ok),
        predict_seconds_median=_median(r["predict_seconds"] for r in ok),
        iterations=sorted({r["iterations"] for r in ok}),
        converged=all(r["converged"] for r in ok),
        rmse=first["rmse"],
        accuracy=first.get("accuracy"),
        max_abs_diff_vs_numpy=max(
            (r["max_abs_diff_vs_numpy"] for r in ok if r["max_abs_diff_vs_numpy"] is not None),
            default=None,
        ),
        client_peak_rss=max((r["client_peak_rss"] or 0) for r in ok),
        client_growth=max((r["client_peak_rss"] or 0) - (r["client_rss_before"] or 0) for r in ok),
        worker_peak_rss=[max(column) for column in zip(*peaks, strict=True)] if peaks else None,
        kns_cached=first.get("kns_cached"),
        cpu_seconds_median=_median(
            (r.get("client_cpu_seconds") or 0) + sum(r.get("worker_cpu_seconds") or [])
            for r in ok
            if "client_cpu_seconds" in r
        ),
        others_cpu_seconds=[r.get("others_cpu_seconds") for r in ok],
        phase_seconds=first.get("phase_seconds"),
        workers=first.get("workers"),
    )
    if first.get("bytes_moved"):
        out["bytes_moved"] = first["bytes_moved"]
    if first.get("n_chunks"):
        out.update(
            chunks=first["n_chunks"],
            model_bytes_per_product=model_bytes(n, s, first["n_chunks"]),
        )
    if (first.get("passes") or {}).get("rmatmul"):
        out.update(
            products=first["passes"]["rmatmul"],
            bytes_per_product=first["passes"]["bytes_per_product"],
            # medians over the repeats of each fit's median pass (seconds of one pass over X)
            matmul_seconds=_median(_median(r["passes"]["matmul_seconds"]) for r in ok),
            rmatmul_seconds=_median(_median(r["passes"]["rmatmul_seconds"]) for r in ok),
            # the client's serial work per product: the gaps after each kind of pass
            serial_seconds=_median(
                _median(r["passes"].get("after_matmul_seconds") or [0.0])
                + _median(r["passes"].get("after_rmatmul_seconds") or [0.0])
                for r in ok
            ),
        )
    return out


def scaling(one: dict, two: dict | None, numpy: dict | None, n: int, s: int) -> dict:
    """The per-product time on N machines from the 1-worker run's measured parts.

    ``t(N) = t_serial + (t_matmul + t_rmatmul) / N + B(N) / β``: the passes over ``X`` (as
    measured with one worker, their loopback transfers included) split among N machines, the
    client's work between the passes (``L u``, PCG's vectors, the preconditioner: the measured
    gaps) unchanged, and
    ``B(N) = 16 n r + 8 s r (1 + max(p, N))`` bytes at β = :data:`NETWORK_BYTES_PER_SECOND`.
    """
    passes = one["matmul_seconds"] + one["rmatmul_seconds"]
    serial = one["serial_seconds"]
    rows = []
    for machines in MACHINES:
        moved = model_bytes(n, s, max(one["chunks"], machines))
        total = serial + passes / machines + moved / NETWORK_BYTES_PER_SECOND
        rows.append(
            {
                "machines": machines,
                "passes_seconds": passes / machines,
                "transfer_seconds": moved / NETWORK_BYTES_PER_SECOND,
                "serial_seconds": serial,
                "product_seconds": total,
                "bytes": moved,
            }
        )
    out = {
        "measured_1_worker": {
            "product_seconds": passes + serial,
            "passes_seconds": passes,
            "serial_seconds": serial,
        },
        "network_bytes_per_second": NETWORK_BYTES_PER_SECOND,
        "rows": rows,
    }
    if two and two.get("matmul_seconds"):
        out["measured_2_workers"] = {
            "product_seconds": two["matmul_seconds"]
            + two["rmatmul_seconds"]
            + two["serial_seconds"],
            "predicted_same_machine": serial + passes / 2,
        }
    if numpy and numpy.get("phase_seconds") and numpy.get("iterations"):
        # NumPy's PCG loop per iteration (its phase's seconds over its iterations)
        iterations = numpy["iterations"][0]
        out["numpy_iteration_seconds"] = numpy["phase_seconds"]["iterations"] / iterations
    return out


def _size(b) -> str:
    return "/" if b is None else f"{b / MIB:,.0f} MiB"


def _results(bench, protocol, store) -> dict:
    datasets = {}
    for name in [d.name for d in protocol.datasets]:
        problem = store.get("fits", name, "problem")
        if problem is None:
            continue
        s = protocol.n_centers[name]
        backends = {
            b: summarize(store.select("fits", name, b), problem["n"], s)
            for b in protocol.methods
            if store.select("fits", name, b)
        }
        entry = {"problem": {k: problem[k] for k in ("n", "d", "n_labeled", "chunk_rows", "graph")}}
        entry["problem"]["n_centers"] = s
        entry["backends"] = backends
        one, two = backends.get("dask-1", {}), backends.get("dask-2", {})
        if one.get("matmul_seconds") is not None:
            entry["scaling"] = scaling(one, two, backends.get("numpy"), problem["n"], s)
        datasets[name] = entry
    return {
        "benchmark": bench.name,
        "protocol": protocol.as_dict(),
        "protocol_digest": protocol.digest(),
        "runs": store.runs(),
        "datasets": datasets,
    }


def _row(backend, summary, numpy_seconds) -> list:
    if "skipped" in summary:
        return [backend, f"not run: {summary['skipped']}"] + [""] * 10
    if not summary.get("repeats"):
        return [backend, f"ERROR {summary['errors'][0]}"] + [""] * 10
    seconds = summary["fit_seconds_median"]
    ratio = f"{seconds / numpy_seconds:.2f}x" if numpy_seconds else "/"
    acc = f" / {summary['accuracy']:.4f}" if summary.get("accuracy") is not None else ""
    workers = summary.get("worker_peak_rss")
    moved = summary.get("bytes_moved")
    per = summary.get("bytes_per_product")
    return [
        backend,
        summary["repeats"],
        f"{fmt(seconds)} ({ratio}; min {fmt(summary['fit_seconds_min'])})",
        ", ".join(map(str, summary["iterations"])),
        f"{summary['rmse']:.5f}{acc}",
        fmt(summary["max_abs_diff_vs_numpy"]),
        f"{_size(summary['client_peak_rss'])} (+{_size(summary['client_growth'])})",
        ", ".join(_size(w) for w in workers) if workers else "/",
        _size(sum(v for k, v in moved.items() if k != "calls")) if moved else "/",
        f"{per / MIB:.2f} MiB ({summary['model_bytes_per_product'] / MIB:.2f})" if per else "/",
        summary.get("chunks") or "/",
        _cpu(summary),
    ]


def _cpu(summary) -> str:
    others = [v for v in summary.get("others_cpu_seconds") or [] if v is not None]
    own = summary.get("cpu_seconds_median")
    if own is None:
        return "/"
    return f"{own:.1f} / {', '.join(f'{v:.1f}' for v in others) or '/'}"


_COLUMNS = [
    "backend",
    "fits",
    "fit s, median (x NumPy's median; the fastest repeat)",
    "PCG it.",
    "RMSE / acc.",
    "max abs diff vs NumPy",
    "client peak RSS (growth)",
    "peak RSS per worker",
    "bytes moved",
    "bytes per H V (model)",
    "chunks",
    "CPU s: the fit's processes (median) / others' per repeat",
]


def _scaling_lines(name, entry) -> list[str]:
    model = entry["scaling"]
    one = model["measured_1_worker"]
    p = entry["problem"]
    lines = [
        f"### {name}: the cost model for N machines",
        "",
        f"One Hessian product (one PCG iteration) with 1 worker: {one['product_seconds']:.3f} s, "
        f"of which the two passes over X {one['passes_seconds']:.3f} s (their loopback "
        f"transfers included) and the client's serial rest {one['serial_seconds']:.3f} s "
        "(the gaps between passes: L u, the PCG vectors, the preconditioner).  "
        f"n = {p['n']:,}, s = {p['n_centers']}, r = 1, "
        "X in max(p, N) chunks (p measured; at least one per machine), "
        f"B(N) = 16 n r + 8 s r (1 + max(p, N)) bytes at "
        f"{model['network_bytes_per_second'] / 1e9:g} GB/s (10 Gb/s Ethernet: an assumption).",
        "",
    ]
    if "measured_2_workers" in model:
        two = model["measured_2_workers"]
        lines += [
            f"Check on this machine: 2 workers measured {two['product_seconds']:.3f} s per "
            f"product, the model (serial + passes / 2, no network) says "
            f"{two['predicted_same_machine']:.3f} s; the client and both workers share 2 cores "
            "here, so the model holds only where the client's work does not compete.",
            "",
        ]
    if "numpy_iteration_seconds" in model:
        lines += [
            f"NumPy on this machine: {model['numpy_iteration_seconds']:.3f} s per PCG "
            "iteration (its iterations phase over its iterations).",
            "",
        ]
    rows = [
        [
            r["machines"],
            f"{r['passes_seconds']:.3f}",
            f"{r['transfer_seconds']:.3f}",
            f"{r['serial_seconds']:.3f}",
            f"{r['product_seconds']:.3f}",
            f"{r['bytes'] / MIB:.1f} MiB",
        ]
        for r in model["rows"]
    ]
    columns = ["N", "passes / N (s)", "transfer (s)", "serial (s)", "per product (s)", "bytes"]
    return lines + md_table(columns, rows) + [""]


def _targets(results) -> list[str]:
    data = results["datasets"]

    def backends(name):
        return data[name]["backends"]

    def same(name):
        diffs = {
            key: b["max_abs_diff_vs_numpy"]
            for key, b in backends(name).items()
            if key not in ("numpy", "numpy-2jobs") and b.get("max_abs_diff_vs_numpy") is not None
        }
        if not diffs:
            return None
        text = ", ".join(f"{key} {value:.2g}" for key, value in diffs.items())
        floor = backends(name).get("numpy-2jobs", {}).get("max_abs_diff_vs_numpy")
        text += "" if floor is None else f" (floor: numpy-2jobs {floor:.2g})"
        return text, max(diffs.values()) <= MAX_DIFF

    def speed(name):
        two, numpy = backends(name).get("dask-2", {}), backends(name).get("numpy", {})
        if not (two.get("fit_seconds_median") and numpy.get("fit_seconds_median")):
            return None
        ratio = two["fit_seconds_median"] / numpy["fit_seconds_median"]
        return f"{ratio:.2f}x", ratio <= MAX_SLOWDOWN

    def moved(name):
        cells = []
        for key in ("dask-1", "dask-2"):
            b = backends(name).get(key, {})
            if b.get("bytes_per_product"):
                cells.append((key, b["bytes_per_product"] / b["model_bytes_per_product"]))
        if not cells:
            return None
        text = ", ".join(f"{key} {ratio:.3f}" for key, ratio in cells)
        return text, all(ratio <= MAX_BYTES_RATIO for _, ratio in cells)

    targets = [
        Target("max diff vs NumPy", f"every backend predicts as NumPy to {MAX_DIFF:g}", same),
        Target(
            "Dask 2 workers / NumPy",
            f"Dask with 2 local workers at most {MAX_SLOWDOWN}x NumPy's fit time",
            speed,
        ),
        Target(
            "bytes per H V / model",
            f"bytes per PCG iteration at most {MAX_BYTES_RATIO}x 16 n r + 8 s r (1 + p): "
            "O(n + s x chunks)",
            moved,
        ),
    ]
    return targets_section(targets, list(data))


def _how_lines(store) -> list[str]:
    fits = [r for r in store.select("fits") if r["method"] != "problem" and "fit_seconds" in r]
    blas = sorted({b for r in fits for b in r.get("worker_blas_threads", [])})
    torch = sorted({(r["torch"], r["torch_threads"]) for r in fits if "torch" in r})
    lines = [
        "## How it was measured",
        "",
        "- Fit seconds: `fit` alone (wall clock, median of the repeats); the Dask fits include "
        "making X's chunks on the workers (synthetic: generated by tasks; skin: the client's "
        "NumPy X sent as one graph literal per chunk) but not starting the cluster.",
        "- Peak RSS: Linux `VmHWM` read after the fit, reset before it with "
        "`/proc/self/clear_refs` (in each worker through `client.run`); the client's includes "
        "the LocalCluster's scheduler, which runs in the client process.",
        "- Bytes moved: what `DaskOps` sent and received as the client sees them "
        "(`bytes_moved`); per Hessian product, one pass of K(X, C) V and one of K(X, C)ᵀ U over "
        "all of X (a logging subclass of `DaskOps` in `semiscale_bench.backends.runs`).",
        "- CPU seconds: user + system time of the client and of each worker during the fit "
        "(`getrusage`), and what the rest of the machine used meanwhile (`/proc/stat` less "
        "those): other jobs on the 2 cores slow a fit down by about their share.",
        "- Dask workers: LocalCluster worker processes on 127.0.0.1, 1 thread each, BLAS "
        f"threads per worker {blas or '/'}; NumPy and torch use the machine's threads "
        f"(torch, threads: {torch or '/'}).",
        "",
    ]
    return lines


def render(bench, protocol, store, out) -> list[str]:
    """``results.json`` and ``summary.md`` in ``out``."""
    results = _results(bench, protocol, store)
    json_path = write_text(out, "results.json", json.dumps(jsonable(results), indent=1))
    lines = header(
        "Backends: one Nyström-PCG LapRLS fit on NumPy, Dask and torch", protocol, results["runs"]
    )
    lines += _targets(results) + [""]
    for name, entry in results["datasets"].items():
        p = entry["problem"]
        graph = p["graph"]
        lines += [
            f"## {name}",
            "",
            f"n = {p['n']:,}, d = {p['d']}, {p['n_labeled']:,} labeled, s = {p['n_centers']} "
            f"centers; graph: {graph['kind']} ({graph['nnz']:,} Laplacian entries, built once in "
            f"{graph['seconds']:.1f} s, the same for every backend).",
            "",
        ]
        notes = [
            f"- {backend}: {reason}"
            for backend in protocol.methods
            for reason in [protocol.plan(backend, name, None)[1]]
            if reason
        ]
        repeats, why = protocol.repeats_for(name)
        notes += [f"- {repeats} repeat(s): {why}"] if why else []
        lines += notes + ([""] if notes else [])
        numpy_seconds = entry["backends"].get("numpy", {}).get("fit_seconds_median")
        rows = [_row(b, summary, numpy_seconds) for b, summary in entry["backends"].items()]
        lines += md_table(_COLUMNS, rows) + [""]
        if "scaling" in entry:
            lines += _scaling_lines(name, entry)
    lines += _how_lines(store) + protocol_section(protocol, bench.methods)
    return [json_path, write_text(out, "summary.md", lines)]
