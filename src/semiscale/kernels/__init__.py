"""Kernel functions k(a, b): the :class:`Kernel` protocol and the fixed kernels.

:func:`resolve_kernel` turns a kernel's name (``"rbf"``, as scikit-learn's ``SVC(kernel="rbf")``)
into a kernel object.  The modules: :mod:`~semiscale.kernels._base` (the protocol, blocks,
width converters), :mod:`~semiscale.kernels.fixed` (RBF, Laplacian, linear, polynomial),
:mod:`~semiscale.kernels.data_dependent` (paper 002's :class:`DataDependentKernel`, fitted on
labeled and unlabeled points).
"""

import warnings

from semiscale.kernels._base import (
    LOCAL_NEIGHBOR,
    MEDIAN_SAMPLE_SIZE,
    Kernel,
    gamma_from_paper,
    gamma_from_sigma,
    result_dtype,
    sigma_from_gamma,
    squared_distances,
)
from semiscale.kernels.data_dependent import DataDependentKernel
from semiscale.kernels.fixed import (
    KERNEL_NAMES,
    RBF,
    LaplacianKernel,
    Linear,
    Polynomial,
    resolve_kernel,
)

# The protocol's public home: scikit-learn's parameter checks name the class by its module
# ("an instance of 'semiscale.kernels.Kernel'"), and pickles find it here too.
Kernel.__module__ = __name__

__all__ = [
    "KERNEL_NAMES",
    "LOCAL_NEIGHBOR",
    "DataDependentKernel",
    "MEDIAN_SAMPLE_SIZE",
    "Kernel",
    "LaplacianKernel",
    "Linear",
    "Polynomial",
    "RBF",
    "gamma_from_paper",
    "gamma_from_sigma",
    "resolve_kernel",
    "result_dtype",
    "sigma_from_gamma",
    "squared_distances",
]

#: Deprecated names (kept for one release): old name -> (new name, the object).
_DEPRECATED = {"Laplacian": ("LaplacianKernel", LaplacianKernel)}


def __getattr__(name):
    # Module-level __getattr__ runs only for names not defined here, so the old name warns at
    # every access (``from semiscale.kernels import Laplacian`` and ``semiscale.Laplacian``).
    if name in _DEPRECATED:
        new, obj = _DEPRECATED[name]
        warnings.warn(
            f"semiscale.kernels.{name} is deprecated and will be removed in the next release; use "
            f"semiscale.kernels.{new} (the same class: {name} was renamed so that it is not "
            "mistaken for the graph Laplacian)",
            FutureWarning,
            stacklevel=2,
        )
        return obj
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
