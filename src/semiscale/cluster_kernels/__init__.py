"""Cluster kernels as scikit-learn transformers: virtual samples that fit a memory budget.

Paper 003 (Hou, Zhang & Zhou, IJCAI 2017): the cluster kernel of Chapelle et al. (2002)
reshapes the spectrum of :math:`L = D^{-1/2} K D^{-1/2}` with a transfer function
(:mod:`~semiscale.cluster_kernels.transfer`); its virtual samples ``F`` (one row per point,
:math:`F F^\\top = \\tilde K`) turn a kernel SVM into a linear one.  The shared spectral step is
:mod:`semiscale.cluster_kernels._spectral`.
"""

from ._base import CutWarning
from .exact import ClusterKernel
from .nystrom import NystromClusterKernel
from .stochastic import StochasticClusterKernel
from .transfer import TRANSFERS, resolve_transfer

__all__ = [
    "ClusterKernel",
    "CutWarning",
    "NystromClusterKernel",
    "StochasticClusterKernel",
    "TRANSFERS",
    "resolve_transfer",
]
