import json

import pytest

from semiscale.cli import main


def test_demo_laprls_beats_rls(tmp_path, capsys):
    png = tmp_path / "demo.png"
    assert main(["demo", "--plot", str(png), "--skip-real"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("  ")[0].strip(): line.split() for line in out.splitlines()}
    lap = float(rows["LapRLS (exact)"][2])
    rls = float(rows["RLS (supervised)"][2])
    assert lap >= 0.99
    assert rls < 0.9
    assert png.exists() and png.stat().st_size > 1000


def test_datasets_lists_embedded(capsys):
    assert main(["datasets", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    a9a = [r for r in rows if r["name"] == "a9a" and r["split"] == "train"][0]
    assert a9a["n_samples"] == 32561
    assert a9a["location"] == "embedded"


def test_graph_report(capsys):
    assert main(["graph", "housing", "-k", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_samples"] == 506
    assert report["degree_min"] >= 5
    assert report["n_components"] >= 1
    assert report["seconds"] >= 0


def test_bad_dataset_is_a_clear_error(capsys):
    assert main(["graph", "no-such-dataset"]) == 2
    assert "no-such-dataset" in capsys.readouterr().err


def test_usage_error():
    with pytest.raises(SystemExit):
        main(["nonsense"])


def test_real_demo_runs_on_a_shipped_dataset():
    from semiscale.bench.demo import run_real_demo

    result = run_real_demo(n_train=1200, n_labeled=60, random_state=0)
    names = [row["model"] for row in result["rows"]]
    assert names == ["RLS (supervised)", "LapRLS (exact, direct)", "Nyström-PCG"]
    for row in result["rows"]:
        assert 0.6 < row["test_accuracy"] <= 1.0
    assert result["rows"][2]["expansion_size"] == 120
