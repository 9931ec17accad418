"""Paper 000's methods: the paper's five and three references, as estimator factories.

Every LapRLS variant reads the ``"laprls"`` parameters (gamma, ambient_reg, intrinsic_reg) that
CV chose with Nyström-PCG; RLS-CG reads ``"rls"`` (gamma, ambient_reg), chosen with itself.
CG and PCG stop at relative residual 1e-6 (the estimators' default).  A method's iteration cap
is a protocol knob (``cg_max_iter`` or ``pcg_max_iter``).
"""

from __future__ import annotations

from functools import partial

from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import LapRLSRegressor, NystromLapRLSRegressor
from semiscale_bench.harness import MethodRegistry

METHODS = MethodRegistry()


def make_graph(protocol, seed: int = 0) -> KNNGraph:
    """The protocol's kNN graph (heat weights), unfitted."""
    return KNNGraph(
        n_neighbors=protocol.n_neighbors,
        weights="heat",
        bandwidth=protocol.graph_bandwidth,
        symmetrize="union",  # the paper's symmetric kNN graph (and KNNGraph's default before)
        random_state=seed,
    )


def _rls(params, sizes, *, protocol, dataset, seed):
    # K_ll (m x m) is dense: 2.2 GiB on skin_nonskin, so never the 1 GB low budget.
    return LapRLSRegressor(
        kernel=RBF(gamma=params["gamma"]),
        ambient_reg=params["ambient_reg"],
        intrinsic_reg=0.0,
        solver="cg",
        memory_budget=protocol.nystrom_budget,
    )


def _laprls(params, sizes, *, protocol, dataset, seed, model, cap, **options):
    """LapRLS ``model`` (exact or Nyström) with the protocol's budgets and iteration cap."""
    common = {
        "kernel": RBF(gamma=params["gamma"]),
        "ambient_reg": params["ambient_reg"],
        "intrinsic_reg": params["intrinsic_reg"],
        "random_state": seed,
        **({"max_iter": getattr(protocol, cap)} if cap else {}),
        **options,
    }
    if model is LapRLSRegressor:
        return model(**common, memory_budget=protocol.exact_budget)
    budget = protocol.low_memory_budget.get(dataset, protocol.nystrom_budget)
    return model(
        **common, n_centers=sizes.s, memory_budget=budget, graph=make_graph(protocol, seed)
    )


_EXACT, _NYS = LapRLSRegressor, NystromLapRLSRegressor
#: name -> (estimator class, options, iteration cap knob, description)
_LAPRLS = {
    "LapRLS-CG": (_EXACT, {"solver": "cg"}, "cg_max_iter", "exact LapRLS by CG"),
    "LapRLS-PCG": (
        _EXACT,
        {"solver": "pcg"},
        None,
        "exact LapRLS by PCG (sampled-Hessian P, s = n)",
    ),
    "Nyström-CG": (_NYS, {"solver": "cg"}, "cg_max_iter", "Nyström LapRLS by CG"),
    "Nyström-PCG": (
        _NYS,
        {"solver": "pcg"},
        "pcg_max_iter",
        "Nyström LapRLS by PCG, sampled-Hessian preconditioner; the labeled points are centers",
    ),
    "LapRLS-direct": (_EXACT, {"solver": "direct"}, None, "exact LapRLS, direct: the reference"),
    "Nyström-PCG (paper P)": (
        _NYS,
        {"solver": "pcg", "preconditioner": "paper"},
        "cg_max_iter",
        "Nyström-PCG with the paper's eq. (5)/(6) preconditioner (a graph on the centers)",
    ),
    "Nyström-PCG (uniform centers)": (
        _NYS,
        {"solver": "pcg", "labeled_centers": False},
        "pcg_max_iter",
        "Nyström-PCG with the paper's centers: uniform, independent of the labels",
    ),
}

METHODS.register("RLS-CG", params="rls", description="supervised RLS: intrinsic_reg = 0, CG")(_rls)
for _name, (_model, _options, _cap, _description) in _LAPRLS.items():
    _factory = partial(_laprls, model=_model, cap=_cap, **_options)
    METHODS.register(_name, params="laprls", description=_description)(_factory)
