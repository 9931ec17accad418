"""Estimators (scikit-learn API)."""

from .harmonic import HarmonicClassifier
from .laprls import LapRLSClassifier, LapRLSRegressor
from .lapsvm import LapSVC
from .nystrom_laprls import NystromLapRLSClassifier, NystromLapRLSRegressor
from .nystrom_lapsvm import NystromLapSVC
from .poisson import PoissonClassifier
from .slapcvm import SparseLapCVMClassifier, SparseLapCVMRegressor

__all__ = [
    "HarmonicClassifier",
    "LapRLSClassifier",
    "LapRLSRegressor",
    "LapSVC",
    "NystromLapRLSClassifier",
    "NystromLapRLSRegressor",
    "NystromLapSVC",
    "PoissonClassifier",
    "SparseLapCVMClassifier",
    "SparseLapCVMRegressor",
]
