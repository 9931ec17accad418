"""Estimators (scikit-learn API)."""

from .harmonic import HarmonicClassifier
from .laprls import LapRLSClassifier, LapRLSRegressor
from .nystrom_laprls import NystromLapRLSClassifier, NystromLapRLSRegressor
from .poisson import PoissonClassifier

__all__ = [
    "HarmonicClassifier",
    "LapRLSClassifier",
    "LapRLSRegressor",
    "NystromLapRLSClassifier",
    "NystromLapRLSRegressor",
    "PoissonClassifier",
]
