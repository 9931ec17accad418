"""Proof that the fits route their heavy work through the array-operations layer.

A :class:`RecordingOps` implementation records every call (name, operand shapes, a flop
estimate) and delegates to NumPy.  A fit run under it must then show, on a problem big enough
for the heavy terms to dominate:

- every kernel block (counted by a spying kernel) computed inside a layer call;
- every LAPACK/BLAS call of SciPy (patched spies) made inside a layer call;
- the expected heavy calls: the kNN graph's distance GEMM, the kernel entries (n×s, or n×n for
  the exact problem), the Cholesky of K_ss;
- recorded flops covering an independent count of the fit's dominant terms.
"""

from __future__ import annotations

import functools
import inspect
import threading
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.linalg
import scipy.linalg.blas
import scipy.linalg.lapack

from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.linalg.ops import ArrayOps, use_ops
from semiscale.models import LapRLSRegressor, NystromLapRLSRegressor


def _cols(M):
    return 1 if np.ndim(M) < 2 else M.shape[1]


def _rows(A, B):
    return (A if B is None else B).shape[0]


def _kernel(kernel, A, B=None, *rest, **kw):
    return 2.0 * A.shape[0] * _rows(A, B) * A.shape[1]


def _kernel_product(kernel, A, B, V, *rest, **kw):
    return 2.0 * A.shape[0] * _rows(A, B) * (A.shape[1] + _cols(V))


def _solve(A, B, *, assume_a="gen", **kw):
    n = A.shape[0]
    return (n**3 / 3 if assume_a == "pos" else 2 * n**3 / 3) + 2.0 * n * n * _cols(B)


_ZERO = lambda *a, **k: 0.0  # noqa: E731 - sizing queries and containers (inner calls count)

#: Flop estimate of each layer method, from its arguments.
FLOPS = {
    "block_rows": _ZERO,
    "row_blocks": _ZERO,
    "blas_threads": _ZERO,
    "n_threads": _ZERO,
    "kernel_block_rows": _ZERO,
    "dense_from_matmat": _ZERO,
    # a container too: its kernel rows, triangular solve and SYRK updates are layer calls
    "nystrom_feature_gram": _ZERO,
    # the backend hooks: a scope for device copies, a yes/no on caching K_ns
    "resident": _ZERO,
    "kernel_cache_pays": _ZERO,
    "kernel_blocks": _kernel,
    "kernel_matrix": _kernel,
    "kernel_matmul": _kernel_product,
    "kernel_rmatmul": _kernel_product,
    # the tiles on and above the diagonal: about half of K(X, X)'s 2n²d
    "kernel_row_sums": lambda kernel, X, *a, **k: float(X.shape[0]) ** 2 * X.shape[1],
    "sq_distance_scan": lambda X, sq, queries, *a, **k: (
        2.0 * len(queries) * X.shape[0] * X.shape[1]
    ),
    "matmul": lambda A, B, **k: 2.0 * A.shape[0] * A.shape[-1] * _cols(B),
    "sparse_matmul": lambda S, D: 2.0 * S.nnz * _cols(D),
    # a sparse LU costs what its fill-in costs; nnz(S) is the floor it cannot go under
    "sparse_factorized": lambda S: float(S.nnz),
    "syrk": lambda C, A, alpha=1.0: float(C.shape[0] * C.shape[0] * A.shape[1]),
    "lauum": lambda L: L.shape[0] ** 3 / 3,
    "symmetrize": lambda K: float(K.size),
    "jittered_cholesky": lambda A, **k: A.shape[0] ** 3 / 3,
    "eigh": lambda A, **k: 4 * A.shape[0] ** 3 / 3,
    "lu_factor": lambda A, **k: 2 * A.shape[0] ** 3 / 3,
    "lu_factor_checked": lambda A, **k: 2 * A.shape[0] ** 3 / 3,
    "lu_solve": lambda factor, B: 2.0 * factor[0].shape[0] ** 2 * _cols(B),
    "solve_triangular": lambda L, B, side="left", **k: float(
        L.shape[0] ** 2 * (B.shape[0] if side == "right" else _cols(B))
    ),
    "cho_solve": lambda L, B: 2.0 * L.shape[0] ** 2 * _cols(B),
    "solve": _solve,
    "lstsq": lambda A, B: 2.0 * A.shape[0] ** 3,
    "laprls_system_inplace": lambda K, L, rows, *a, **k: 2.0 * L.nnz * K.shape[0],
}


@dataclass
class Call:
    name: str
    shapes: tuple
    flops: float


def _public_methods(cls):
    return sorted(
        name for name, f in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")
    )


class RecordingOps(ArrayOps):
    """Records each call's name, operand shapes and flop estimate, then delegates to NumPy.

    ``active`` counts the calls in progress (process-wide: the layer's worker threads compute
    inside a call of the main thread); a lazy ``kernel_blocks`` iterator counts while it runs.
    """

    name = "recording"

    def __init__(self):
        self.calls: list[Call] = []
        self.active = 0
        self._lock = threading.Lock()

    def _enter(self, delta):
        with self._lock:
            self.active += delta

    def _tracked(self, iterator):
        self._enter(1)
        try:
            yield from iterator
        finally:
            self._enter(-1)

    def total(self, name=None):
        return sum(c.flops for c in self.calls if name is None or c.name == name)

    def named(self, name):
        return [c for c in self.calls if c.name == name]


def _recorded(name):
    impl = getattr(ArrayOps, name)

    @functools.wraps(impl)
    def method(self, *args, **kwargs):
        shapes = tuple(getattr(a, "shape", None) for a in args)
        self.calls.append(Call(name, shapes, float(FLOPS[name](*args, **kwargs))))
        self._enter(1)
        try:
            result = impl(self, *args, **kwargs)
        finally:
            self._enter(-1)
        return self._tracked(result) if name == "kernel_blocks" else result

    return method


for _name in _public_methods(ArrayOps):
    setattr(RecordingOps, _name, _recorded(_name))


class SpyRBF(RBF):
    """RBF that counts the kernel entries it computes inside and outside layer calls."""

    recorder: RecordingOps | None = None
    inside = outside = 0

    def _block(self, pair, rows, state, out=None):
        entries = (rows.stop - rows.start) * pair.B.shape[0]
        if SpyRBF.recorder is not None and SpyRBF.recorder.active > 0:
            SpyRBF.inside += entries
        else:
            SpyRBF.outside += entries
        return super()._block(pair, rows, state, out)


#: SciPy LAPACK/BLAS entry points the library uses; each must be called inside the layer.
LAPACK = [
    (scipy.linalg, "cholesky"),
    (scipy.linalg, "cho_solve"),
    (scipy.linalg, "solve_triangular"),
    (scipy.linalg, "lu_factor"),
    (scipy.linalg, "lu_solve"),
    (scipy.linalg, "solve"),
    (scipy.linalg, "lstsq"),
    (scipy.linalg, "eigh"),
    (scipy.linalg.blas, "dsyrk"),
    (scipy.linalg.blas, "dtrsm"),
    (scipy.linalg.lapack, "dlauum"),
]


@pytest.fixture
def recorder(monkeypatch):
    rec = RecordingOps()
    outside = []
    for module, name in LAPACK:
        original = getattr(module, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            if rec.active == 0:
                outside.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    monkeypatch.setattr(SpyRBF, "recorder", rec)
    monkeypatch.setattr(SpyRBF, "inside", 0)
    monkeypatch.setattr(SpyRBF, "outside", 0)
    rec.lapack_outside = outside
    with use_ops(rec):
        yield rec


def problem(n=500, d=20, m=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    y[m:] = np.nan
    return X, y


def graph():
    return KNNGraph(n_neighbors=8, method="exact", n_jobs=1)  # d = 20 > 15: brute force


def check_routed(rec, n, d):
    """Kernel blocks and LAPACK calls all inside the layer; the graph's GEMM recorded."""
    assert SpyRBF.inside > 0 and SpyRBF.outside == 0, (SpyRBF.inside, SpyRBF.outside)
    assert rec.lapack_outside == []
    scans = rec.named("sq_distance_scan")
    assert sum(c.flops for c in scans) >= 2.0 * n * n * d  # every row against every point


def test_recording_wraps_every_method_of_the_layer():
    assert sorted(FLOPS) == _public_methods(ArrayOps)
    assert all(getattr(RecordingOps, name) is not getattr(ArrayOps, name) for name in FLOPS)


def test_nystrom_pcg_fit_routes_its_heavy_work_through_the_layer(recorder, monkeypatch):
    from semiscale.solvers import preconditioners

    # The flop count below is that of a fit which fills the K_ns cache (enough PCG iterations
    # for the rent-or-buy rule); the smaller graph sample of a growth cap of 4 keeps it so.
    monkeypatch.setattr(preconditioners, "LAPLACIAN_ROWS_MAX_GROWTH", 4.0)
    X, y = problem()
    n, d = X.shape
    model = NystromLapRLSRegressor(
        kernel=SpyRBF(gamma=0.02), graph=graph(), n_centers=0.2, random_state=0, n_jobs=1
    ).fit(X, y)
    assert model.graph_.search_method_ == "brute" and model.solver_info_["cached"]
    s, r, n_iter = model.dual_coef_.shape[0], 1, model.n_iter_
    check_routed(recorder, n, d)
    # K_ns (n × s) is filled once by the layer; K_ss (s × s) too; both Choleskys are recorded.
    kernels = recorder.named("kernel_matrix")
    assert any(c.shapes[1:3] == ((n, d), (s, d)) for c in kernels)
    assert any(c.shapes[1:3] == ((s, d), (s, d)) for c in kernels)
    assert sum(c.shapes[0] == (s, s) for c in recorder.named("jittered_cholesky")) >= 2
    # Independent count of the dominant terms: graph GEMM, K_ns and K_ss, two s³/3 Choleskys,
    # K_ms products of z, each PCG iteration (two passes over the K_ns cache, L u, K_ss V, the
    # preconditioner's four triangular solves) and the final predictions K_ns α.
    laplacian_nnz = model.graph_.laplacian_.nnz
    m = int(np.isfinite(y).sum())
    estimate = (
        2.0 * n * n * d
        + 2.0 * n * s * d
        + 2.0 * s * s * d
        + 2 * s**3 / 3
        + 2.0 * m * s * r
        + n_iter * r * (4.0 * n * s + 2 * laplacian_nnz + 2.0 * s * s + 4.0 * s * s)
        + 2.0 * n * s * r
    )
    # The preconditioner's Gram matrix depends on its row sample: t sampled graph rows, each
    # with its neighbours' features (a triangular solve, s² each, unless a center) and Gram rows
    # (SYRK, s² each), plus the m labeled features: at most s²(m + 2t(deg + 2)) on top.
    t = model.solver_info_["laplacian_rows"]
    degree = laplacian_nnz / n - 1
    preconditioner = s * s * (m + 2 * t * (degree + 2))
    assert recorder.total("syrk") > 0 and recorder.named("solve_triangular")
    total = recorder.total()
    assert 0.95 * estimate <= total <= 1.2 * (estimate + preconditioner), (total, estimate)


def test_exact_laprls_fits_route_their_heavy_work_through_the_layer(recorder):
    X, y = problem(n=400)
    n, d = X.shape
    for solver in ("direct", "cg"):
        start = len(recorder.calls)
        model = LapRLSRegressor(kernel=SpyRBF(gamma=0.02), graph=graph(), solver=solver)
        model.fit(X, y)
        calls = recorder.calls[start:]
        check_routed(recorder, n, d)
        kernels = [c for c in calls if c.name == "kernel_matrix"]
        assert any(c.shapes[1:3] == ((n, d), None) for c in kernels)  # K (n × n)
        graph_gemm = 2.0 * n * n * d
        nnz = model.graph_.laplacian_.nnz
        if solver == "direct":
            # kNN GEMM, K, the assembly L K, the LU factorization of the system and the
            # predictions K α (K recomputed by blocks)
            assert any(c.name == "solve" and c.shapes[0] == (n, n) for c in calls)
            estimate = (
                graph_gemm + 2.0 * n * n * d + 2.0 * nnz * n + 2 * n**3 / 3 + 2.0 * n * n * (d + 1)
            )
        else:
            # kNN GEMM, K, z = K J y, and three n × n products per CG iteration (K α, Kᵀ v and
            # λ_A K α) plus L u, and the final predictions K α
            estimate = (
                graph_gemm + 2.0 * n * n * d + model.n_iter_ * (6.0 * n * n + 2 * nnz) + 4.0 * n * n
            )
        total = sum(c.flops for c in calls)
        assert 0.95 * estimate <= total <= 1.2 * estimate, (solver, total, estimate)


def test_exact_direct_assembles_its_system_in_the_layer(recorder):
    X, y = problem(n=300)
    LapRLSRegressor(kernel=SpyRBF(gamma=0.02), graph=graph(), solver="direct").fit(X, y)
    (call,) = recorder.named("laprls_system_inplace")
    assert call.shapes[0] == (300, 300)
