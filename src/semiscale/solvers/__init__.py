"""semiscale.solvers: pure functions over matvec callables (CG/PCG) and preconditioners."""

from semiscale.solvers.cg import SolveResult, cg
from semiscale.solvers.preconditioners import PRECONDITIONERS, make_preconditioner

__all__ = ["PRECONDITIONERS", "SolveResult", "cg", "make_preconditioner"]
