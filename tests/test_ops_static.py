"""Static check: outside ``semiscale/linalg/`` no code does heavy linear algebra itself.

Every dense factorization, triangular/Cholesky/LU solve, GEMM on kernel-sized operands, thread
pool and block-size decision belongs to the array-operations layer
(:mod:`semiscale.linalg.ops`).  This test walks the AST of every module of ``src/semiscale``
outside ``linalg/`` and flags:

- ``scipy.linalg`` in any form (LAPACK/BLAS wrappers, ``cholesky``, ``solve``, ...), dense
  ``numpy.linalg`` solvers and factorizations, and ``scipy.sparse.linalg`` solvers;
- matrix products: ``@``, ``np.dot``/``np.matmul``/``np.inner``/``np.tensordot``, ``x.dot(...)``
  and ``np.einsum`` contractions shaped like a GEMM (``"ik,kj->ij"``);
- thread pools and block sizing: ``concurrent.futures``, ``threadpoolctl``,
  ``semiscale._parallel``, and ``block_rows``/``row_slices`` from ``semiscale._memory``.

A flagged site is allowed only by an entry of :data:`ALLOWED` (path and enclosing function,
with the reason it is not heavy or is the layer's own callee) or of :data:`TO_ROUTE` (known
sites still to move onto the layer, with where they go).  Entries that no longer match anything
fail the test too, so that both lists stay exact.
"""

from __future__ import annotations

import ast
from pathlib import Path

import semiscale

ROOT = Path(semiscale.__file__).parent

#: Modules the rules do not apply to: the layer itself, its two helpers and its other
#: implementations (backends/: the Dask and torch subclasses of ArrayOps).
LAYER = ("linalg/", "backends/", "_parallel.py", "_memory.py")

_KERNEL_BLOCK = (
    "the kernel formula's own product on one block: blocks are sized and streamed only by "
    "ArrayOps.kernel_* (Kernel._iter_blocks), which records them"
)

#: (path, scope, rule) -> why the flagged site is legitimate.
ALLOWED = {
    ("kernels/fixed.py", "RBF._block", "gemm"): _KERNEL_BLOCK,
    ("kernels/fixed.py", "Linear._block", "gemm"): _KERNEL_BLOCK,
    ("kernels/fixed.py", "Polynomial._block", "gemm"): _KERNEL_BLOCK,
    ("_pairs.py", "_Pair.dot", "gemm"): _KERNEL_BLOCK,
    ("_pairs.py", "_sq_dist_block", "gemm"): _KERNEL_BLOCK
    + "; also squared_distances, whose only library caller is the gamma='median' heuristic on "
    "at most MEDIAN_SAMPLE_SIZE = 1000 points",
    ("_validation.py", "_min_rayleigh_quotient", "lapack"): (
        "check_laplacian's PSD search: eigvalsh only below PSD_DENSE_MAX = 200 points, else "
        "LOBPCG on 4 vectors for PSD_SEARCH_ITER = 40 steps (sparse matvecs, O(nnz(L))), run "
        "only for non-diagonally-dominant Laplacians of at most PSD_SEARCH_MAX_N points"
    ),
    ("_validation.py", "_min_rayleigh_quotient", "gemm"): (
        "one sparse Laplacian product L·V with 4 columns, O(nnz(L))"
    ),
    ("graph/laplacian.py", "_matrix_power", "gemm"): (
        "sparse × sparse products of Laplacian powers (O(n·k^p) non-zeros), no dense GEMM"
    ),
    ("graph/diffusion.py", "label_diffusion_weights", "gemm"): (
        "sparse × sparse products of the random walk with the l labeled indicator columns "
        "(O(l·k^m) non-zeros for m steps), no dense GEMM"
    ),
    ("models/_fit_state.py", "labeled_prior", "gemm"): (
        "two dot products over the labeled rows' decision values: O(l·r)"
    ),
    ("solvers/newton.py", "_solve_with_intercept", "gemm"): (
        "vector dot products and one Laplacian matvec for the bias: O(n·r)"
    ),
    ("solvers/newton.py", "_bias_row_weights", "gemm"): (
        "one sparse Laplacian matvec L·1 for the bias's row weights: O(nnz(L))"
    ),
    ("solvers/newton.py", "_newton_column", "gemm"): (
        "the Newton line search's scalars fᵀLf: sparse matvecs and vector dots, O(nnz(L))"
    ),
    ("graph/knn.py", "<module>", "threads"): (
        "imports resolve_n_jobs only to turn n_jobs into a count handed to the layer"
    ),
    ("_progress.py", "<module>", "threads"): (
        "the ticking progress line's one daemon thread (a timer that prints, no work)"
    ),
    ("graph/_brute.py", "<module>", "threads"): (
        "row_slices: fixed 16-32 MiB chunks of O(n·d) elementwise passes (row norms, exact "
        "distances of the k chosen pairs), not a budgeted product"
    ),
}

#: Known sites still to route through the layer: (path, scope, rule) -> where they go.
TO_ROUTE = {}

_NP = {"np", "numpy"}
_NP_LINALG_OK = {"norm", "LinAlgError"}
_SPARSE_LINALG_OK = {"LinearOperator", "aslinearoperator"}
_GEMM_FUNCS = {"dot", "matmul", "inner", "tensordot", "vdot"}
_THREAD_MODULES = ("concurrent.futures", "threadpoolctl", "threading")
_BLOCKING_NAMES = {"block_rows", "row_slices"}


def _is_gemm_einsum(call: ast.Call) -> bool:
    """``einsum`` whose subscripts contract an index between two operands into a 2-D result."""
    if not call.args or not isinstance(call.args[0], ast.Constant):
        return False
    spec = str(call.args[0].value).replace(" ", "")
    if "->" not in spec or spec.count(",") != 1:
        return False
    inputs, out = spec.split("->")
    a, b = (set(x) for x in inputs.split(","))
    summed = (a & b) - set(out)
    return len(out) >= 2 and bool(summed) and bool((a - b) & set(out)) and bool((b - a) & set(out))


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


class _Scanner(ast.NodeVisitor):
    def __init__(self):
        self.scope: list[str] = []
        self._in_class = False
        self.found: list[tuple[str, str, int, str]] = []  # scope, rule, line, what

    def _flag(self, node, rule, what):
        # The outermost function, or Class.method: nested helpers belong to their function.
        self.found.append((".".join(self.scope) or "<module>", rule, node.lineno, what))

    def _enter(self, node):
        outer = len(self.scope) == 0 or (len(self.scope) == 1 and self._in_class)
        if outer:
            self.scope.append(node.name)
        in_class, self._in_class = self._in_class, isinstance(node, ast.ClassDef)
        self.generic_visit(node)
        self._in_class = in_class
        if outer:
            self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _enter

    def visit_Import(self, node):
        for alias in node.names:
            self._check_module(node, alias.name, [])
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        module = ("." * node.level) + (node.module or "")
        names = [a.name for a in node.names]
        self._check_module(node, module, names)
        if module.lstrip(".") == "scipy" and "linalg" in names:
            self._flag(node, "lapack", "from scipy import linalg")
        self.generic_visit(node)

    def _check_module(self, node, module, names):
        bare = module.lstrip(".")
        if bare == "scipy.linalg" or bare.startswith("scipy.linalg."):
            self._flag(node, "lapack", f"import {module}")
        if bare == "scipy.sparse.linalg" and set(names) - _SPARSE_LINALG_OK:
            self._flag(node, "lapack", f"from {module} import {names}")
        if bare == "numpy.linalg" and set(names) - _NP_LINALG_OK:
            self._flag(node, "lapack", f"from {module} import {names}")
        if any(bare == m or bare.startswith(m + ".") for m in _THREAD_MODULES):
            self._flag(node, "threads", f"import {module}")
        if bare.endswith("_parallel"):
            self._flag(node, "threads", f"from {module} import {names}")
        if bare.endswith("_memory") and _BLOCKING_NAMES & set(names):
            self._flag(
                node, "threads", f"from {module} import {sorted(_BLOCKING_NAMES & set(names))}"
            )

    def visit_Attribute(self, node):
        path = _dotted(node)
        head = path.split(".")
        numpy_linalg = len(head) >= 3 and head[0] in _NP and head[1] == "linalg"
        if numpy_linalg and head[2] not in _NP_LINALG_OK:
            self._flag(node, "lapack", path)
        if path.startswith("scipy.linalg"):
            self._flag(node, "lapack", path)
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            self._flag(node, "gemm", "@")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if isinstance(node.op, ast.MatMult):
            self._flag(node, "gemm", "@=")
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute):
            receiver = _dotted(func.value)
            if receiver in _NP and func.attr in _GEMM_FUNCS:
                self._flag(node, "gemm", f"{receiver}.{func.attr}")
            elif func.attr == "dot" and receiver not in _NP:
                self._flag(node, "gemm", f"{receiver}.dot")
            elif receiver in _NP and func.attr == "einsum" and _is_gemm_einsum(node):
                self._flag(node, "gemm", "einsum GEMM")
        self.generic_visit(node)


def scan():
    """``{(path, scope, rule): [(line, what), ...]}`` for every module outside the layer."""
    sites = {}
    for file in sorted(ROOT.rglob("*.py")):
        path = file.relative_to(ROOT).as_posix()
        if path.startswith(LAYER):
            continue
        scanner = _Scanner()
        scanner.visit(ast.parse(file.read_text(), filename=str(file)))
        for scope, rule, line, what in scanner.found:
            sites.setdefault((path, scope, rule), []).append((line, what))
    return sites


def test_no_heavy_linear_algebra_outside_the_layer():
    sites = scan()
    unexplained = {
        key: hits for key, hits in sites.items() if key not in ALLOWED and key not in TO_ROUTE
    }
    assert not unexplained, (
        "heavy linear algebra, thread pools or block sizing outside semiscale/linalg/ — call "
        "the array-operations layer (semiscale.linalg.ops.get_ops()) instead, or add an entry "
        "with its reason to ALLOWED if the operands are small:\n"
        + "\n".join(
            f"  {p}:{ln} in {s} ({r}): {w}" for (p, s, r), h in unexplained.items() for ln, w in h
        )
    )


def test_allow_lists_are_exact():
    sites = scan()
    stale = [key for key in (*ALLOWED, *TO_ROUTE) if key not in sites]
    assert not stale, f"these entries match nothing any more; remove them: {stale}"
    assert all(reason.strip() for reason in (*ALLOWED.values(), *TO_ROUTE.values()))


def test_the_scanner_sees_what_it_forbids():
    source = """
import scipy.linalg as sla
from scipy.sparse.linalg import spsolve, LinearOperator
from concurrent.futures import ThreadPoolExecutor
from .._memory import block_rows
def f(A, B, x):
    np.linalg.cholesky(A)
    np.linalg.norm(x)
    C = A @ B
    D = np.dot(A, B) + A.dot(B)
    E = np.einsum("ik,kj->ij", A, B)
    F = np.einsum("ij,ij->i", A, B)
"""
    scanner = _Scanner()
    scanner.visit(ast.parse(source))
    found = sorted((rule, what) for _, rule, _, what in scanner.found)
    assert found == sorted(
        [
            ("lapack", "import scipy.linalg"),
            ("lapack", "from scipy.sparse.linalg import ['spsolve', 'LinearOperator']"),
            ("threads", "import concurrent.futures"),
            ("threads", "from .._memory import ['block_rows']"),
            ("lapack", "np.linalg.cholesky"),
            ("gemm", "@"),
            ("gemm", "np.dot"),
            ("gemm", "A.dot"),
            ("gemm", "einsum GEMM"),
        ]
    )
