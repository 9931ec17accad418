"""Smoke test of the paper-000 benchmark protocol (``semiscale bench nystrom --quick``)."""

import json

import numpy as np
import pytest

from semiscale.bench import nystrom as nb
from semiscale.cli import main


def test_quick_benchmark_writes_tables_figures_and_speedup(tmp_path, capsys):
    out = tmp_path / "results"
    argv = ["bench", "nystrom", "--quick", "--datasets", "space_ga", "w7a", "--out", str(out)]
    assert main(argv) == 0
    names = [
        "nystrom_table2.json",
        "nystrom_table2.md",
        "nystrom_table3.json",
        "nystrom_table3.md",
        "nystrom_speedup.json",
        "nystrom_speedup.md",
        "nystrom_fig1.json",
        "nystrom_fig1.png",
        "nystrom_fig2.json",
        "nystrom_fig2.png",
    ]
    for name in names:
        assert (out / name).stat().st_size > 100, name

    table2 = json.loads((out / "nystrom_table2.json").read_text())
    assert table2["quick"] and table2["machine"]["cpu_count"] >= 1
    space_ga, w7a = table2["datasets"]
    assert w7a["available"] is False and w7a["paper"]["rmse"]["RLS-CG"] == [0.291, 0.002]
    assert space_ga["n_train"] + space_ga["n_test"] == space_ga["n"]
    assert space_ga["m"] == round(0.1 * space_ga["n_train"])
    assert set(space_ga["params"]["laprls"]) == {"gamma", "ambient_reg", "intrinsic_reg"}
    assert space_ga["paper_equivalents"]["laprls"]["lambda_A"] > 0
    methods = space_ga["methods"]
    for meth in nb.METHODS:
        assert methods[meth]["n_repeats"] == 1, meth
    # PCG on the Nyström system and the exact solve reach their own optima: the exact LapRLS
    # solvers agree with each other, and the semi-supervised fit beats supervised RLS here.
    assert np.isclose(methods["LapRLS-PCG"]["rmse_mean"], methods["LapRLS-direct"]["rmse_mean"])
    assert methods["Nyström-PCG"]["rmse_mean"] < methods["RLS-CG"]["rmse_mean"]
    assert methods["Nyström-PCG"]["converged_all"]

    table3 = (out / "nystrom_table3.md").read_text()
    assert "Summary:" in table3 and "QUICK MODE" in table3
    assert "| w7a |" in table3
    fig2 = json.loads((out / "nystrom_fig2.json").read_text())
    curve = fig2["datasets"]["space_ga"]["fig2"]["Nyström-PCG"]["mean"]
    assert len(curve) == len(fig2["proportions"]) and all(v > 0 for v in curve)
    assert "nystrom_table2.md" in capsys.readouterr().out


def test_minmax_scaler_maps_training_range_to_unit_box():
    X = np.array([[0.0, 5.0, 1.0], [10.0, 5.0, 3.0], [5.0, 5.0, 2.0]])
    f = nb.minmax_scaler(X)
    Z = f(X)
    assert np.allclose(Z.min(axis=0), [-1, 0, -1]) and np.allclose(Z.max(axis=0), [1, 0, 1])
    assert np.allclose(f(np.array([[20.0, 7.0, 2.0]])), [[3.0, 0.0, 0.0]])


def test_time_budget_plan():
    p = nb.Protocol()
    assert nb.method_repeats("LapRLS-direct", "a9a", 22792, 5, p)[0] == []
    assert nb.method_repeats("LapRLS-direct", "a8a", 15887, 5, p)[0] == [0]
    assert nb.method_repeats("LapRLS-direct", "phishing", 7738, 5, p)[0] == list(range(5))
    assert nb.method_repeats("Nyström-PCG", "skin_nonskin", 171540, 2, p)[0] == [0, 1]
    assert nb.method_repeats("Nyström-CG", "skin_nonskin", 171540, 2, p)[0] == []
    assert nb.n_centers("skin_nonskin", 171540, p) == 3000
    assert nb.n_centers("a9a", 22792, p) == 2280


def test_repeat_problem_and_fit_helper_for_benchmark_scripts(tmp_path):
    import json

    import numpy as np

    from semiscale.bench._nystrom_protocol import (
        fit_nystrom_pcg,
        fit_rls,
        quick_protocol,
        repeat_problem,
        write_jsonl,
    )

    protocol = quick_protocol()  # 500-point subsample
    problem = repeat_problem("ijcnn1", protocol)  # paper name -> ijcnn1_val
    split = problem.split
    assert problem.laplacian.shape == (split.n_train, split.n_train)
    assert problem.n_centers == int(np.ceil(0.1 * split.n_train))
    params = {"gamma": 0.05, "ambient_reg": 1e-4, "intrinsic_reg": 1.0}
    est, seconds = fit_nystrom_pcg(problem, params, protocol, max_iter=7)
    assert seconds > 0 and est.max_iter == 7 and est.solver_info_["converged"]
    rls, _ = fit_rls(problem, {"gamma": 0.05, "ambient_reg": 1e-4}, protocol)
    assert rls.intrinsic_reg == 0 and rls.kernel.gamma == 0.05 and rls.n_iter_ > 0
    labeled = np.flatnonzero(np.isfinite(split.y_observed))
    assert np.isin(labeled, est.center_index_).all()  # m <= s: labeled points are centers
    write_jsonl(tmp_path / "rows.jsonl", [{"a": 1}, {"b": 2.5}])
    lines = (tmp_path / "rows.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{"a": 1}, {"b": 2.5}]


def test_cv_refines_and_scores_inductively():
    import math
    from dataclasses import replace

    from semiscale.bench._nystrom_protocol import (
        _midpoints,
        cross_validate,
        quick_protocol,
        repeat_problem,
    )

    assert _midpoints([1e-3, 0.1, 10.0], 0.1) == pytest.approx([0.01, 1.0])
    assert _midpoints([1e-3, 0.1, 10.0], 10.0) == pytest.approx([1.0])
    assert _midpoints([1e-4], 1e-4) == []

    protocol = quick_protocol()  # gamma x 1, ambient_reg 1e-4, intrinsic_reg in {1, 10}
    split = repeat_problem("ijcnn1", protocol).split
    cv = cross_validate("ijcnn1", split, protocol)
    stage2 = [r for r in cv["grid"]["laprls"] if r["stage"] == 2]
    # intrinsic_reg's one midpoint; ambient_reg has no grid neighbour, RLS likewise.
    assert [r["intrinsic_reg"] for r in stage2] == pytest.approx([math.sqrt(10)])
    assert all(r["stage"] == 1 for r in cv["grid"]["rls"])
    best = min(cv["grid"]["laprls"], key=lambda r: r["cv_rmse"])
    assert cv["params"]["laprls"]["intrinsic_reg"] == best["intrinsic_reg"]

    plain = cross_validate("ijcnn1", split, replace(protocol, cv_refine=False))
    assert len(plain["grid"]["laprls"]) == 2
    inductive = cross_validate("ijcnn1", split, replace(protocol, cv_inductive=True))
    # RLS ignores the unlabeled points: both scorings agree; LapRLS's graph differs.
    assert inductive["cv_rmse"]["rls"] == pytest.approx(cv["cv_rmse"]["rls"], rel=1e-6)
    lap = [r["cv_rmse"] for r in cv["grid"]["laprls"][:2]]
    lap_inductive = [r["cv_rmse"] for r in inductive["grid"]["laprls"][:2]]
    assert not np.allclose(lap, lap_inductive, rtol=1e-6)
