"""semiscale.solvers: pure functions over matvec callables (CG/PCG) and preconditioners."""

from semiscale.solvers.cg import SolveResult, cg
from semiscale.solvers.preconditioners import PRECONDITIONERS, make_preconditioner
from semiscale.solvers.sdd import SDDSolution, SDDSolver, solve_sdd

__all__ = [
    "PRECONDITIONERS",
    "SDDSolution",
    "SDDSolver",
    "SolveResult",
    "cg",
    "make_preconditioner",
    "solve_sdd",
]
