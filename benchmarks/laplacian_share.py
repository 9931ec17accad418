"""Sampled-Hessian preconditioner: the graph term's trace share and the Laplacian sample.

Usage (both cores, as ``semiscale bench nystrom`` runs):

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/laplacian_share.py [dataset ...]   # default: all but skin_nonskin

Setting: repeat 0 of ``semiscale bench nystrom``'s protocol with the parameters in ``PARAMS``
(the CV choice of the 2026-11-22 03:58 full run), Nyström-PCG to relative residual 1e-6
(cap 50).  Part 1, per dataset: the share ``ρ`` of ``Ĝ``'s trace carried by the sampled graph
term (``solver_info_["graph_trace_share"]``), and PCG iterations and fit seconds with the
default rule (which grows the sample when ``ρ > GRAPH_SHARE_REFERENCE``) and with the fixed
``t = min(⌈s/8⌉, 256)`` (at least 32) it starts from.  Part 2, phishing, repeats 0 and 1,
intrinsic_reg 3.162 and 10 (the values its CV chooses with and without the midpoint stage):
iterations and fit seconds for t = s/8, s/4, s/2 and the default.  Fit seconds: median of 3
fits after one untimed warm-up fit.  Writes ``benchmarks/results/laplacian_share.{jsonl,md}``.
"""

import json
import math
import statistics
import sys
from pathlib import Path

from semiscale.bench._nystrom_protocol import Protocol, fit_nystrom_pcg, repeat_problem, write_jsonl
from semiscale.solvers import preconditioners

RESULTS = Path(__file__).parent / "results"
#: CV choice of the full ``semiscale bench nystrom`` run started 2026-11-22 03:58.
PARAMS = {
    "madelon": {"gamma": 0.02301, "ambient_reg": 1e-4, "intrinsic_reg": 0.001},
    "space_ga": {"gamma": 0.1307, "ambient_reg": 1e-6, "intrinsic_reg": 0.1},
    "abalone": {"gamma": 0.3003, "ambient_reg": 1e-4, "intrinsic_reg": 0.1},
    "phishing": {"gamma": 0.00625, "ambient_reg": 1e-4, "intrinsic_reg": 10.0},
    "a8a": {"gamma": 0.001953, "ambient_reg": 1e-4, "intrinsic_reg": 1.0},
    "a9a": {"gamma": 0.001953, "ambient_reg": 1e-4, "intrinsic_reg": 1.0},
    "ijcnn1": {"gamma": 0.05143, "ambient_reg": 1e-6, "intrinsic_reg": 0.1},
    "cod-rna": {"gamma": 0.06576, "ambient_reg": 1e-6, "intrinsic_reg": 0.001},
    "connect-4": {"gamma": 0.005208, "ambient_reg": 1e-6, "intrinsic_reg": 1.0},
    "skin_nonskin": {"gamma": 1.889, "ambient_reg": 1e-6, "intrinsic_reg": 10.0},
}
PHISHING_INTRINSIC = (3.162, 10.0)


def _fit(problem, params, protocol, n_rows=None):
    options = {} if n_rows is None else {"preconditioner_options": {"n_rows": n_rows}}
    fits = [fit_nystrom_pcg(problem, params, protocol, **options) for _ in range(4)]
    est = fits[-1][0]
    info = est.solver_info_
    return dict(
        t=info["laplacian_rows"],
        share=round(info["graph_trace_share"], 4),
        iterations=int(est.n_iter_),
        converged=bool(info["converged"]),
        fit_seconds=round(statistics.median(s for _, s in fits[1:]), 3),
    )


def _start_rows(s):
    # The rule's starting size for a cached K_ns (every dataset here but skin_nonskin).
    fraction = preconditioners.LAPLACIAN_ROWS_FRACTION
    t = min(math.ceil(s * fraction), preconditioners.LAPLACIAN_ROWS_CAP)
    return max(t, preconditioners.LAPLACIAN_ROWS_MIN)


def _cell(r):
    return f"{r['iterations']}{'' if r['converged'] else '*'} / {r['fit_seconds']}"


def main(names):
    protocol = Protocol()
    part1, part2 = [], []
    for name in names:
        problem = repeat_problem(name, protocol)
        default = _fit(problem, PARAMS[name], protocol)
        fixed = _fit(problem, PARAMS[name], protocol, _start_rows(problem.n_centers))
        row = dict(part=1, dataset=name, s=problem.n_centers, default=default, fixed=fixed)
        print(json.dumps(row), flush=True)
        part1.append(row)
    for seed in (0, 1):
        problem = repeat_problem("phishing", protocol, seed)
        s = problem.n_centers
        for intrinsic in PHISHING_INTRINSIC:
            params = {**PARAMS["phishing"], "intrinsic_reg": intrinsic}
            cells = {f"s/{k}": _fit(problem, params, protocol, math.ceil(s / k)) for k in (8, 4, 2)}
            cells["default"] = _fit(problem, params, protocol)
            row = dict(part=2, dataset="phishing", repeat=seed, intrinsic_reg=intrinsic, **cells)
            print(json.dumps(row), flush=True)
            part2.append(row)
    write_jsonl(RESULTS / "laplacian_share.jsonl", part1 + part2)
    lines = [
        "# Sampled-Hessian preconditioner: graph trace share and Laplacian sample",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        f"python benchmarks/laplacian_share.py {' '.join(names)}`",
        "",
        "Repeat 0 of the `semiscale bench nystrom` protocol, parameters pinned in the script "
        "(CV choice of the 03:58 run); PCG to 1e-6 (cap 50). Cells: iterations / fit wall "
        "seconds (median of 3 after a warm-up). ρ: the graph term's share of Ĝ's trace. "
        f"The default grows t when ρ > {preconditioners.GRAPH_SHARE_REFERENCE}.",
        "",
        "| dataset | s | ρ | t (fixed start) | fixed t | t (default) | default |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in part1:
        d, f = r["default"], r["fixed"]
        lines.append(
            f"| {r['dataset']} | {r['s']} | {d['share']} | {f['t']} | {_cell(f)} | {d['t']} | "
            f"{_cell(d)} |"
        )
    lines += [
        "",
        "## phishing: sample size against intrinsic_reg",
        "",
        "| repeat | intrinsic_reg | ρ | t = s/8 | t = s/4 | t = s/2 | default t | default |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in part2:
        d = r["default"]
        lines.append(
            f"| {r['repeat']} | {r['intrinsic_reg']:g} | {d['share']} | {_cell(r['s/8'])} | "
            f"{_cell(r['s/4'])} | {_cell(r['s/2'])} | {d['t']} | {_cell(d)} |"
        )
    lines += ["", "`*` = not converged within 50 iterations."]
    (RESULTS / "laplacian_share.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or [name for name in PARAMS if name != "skin_nonskin"])
