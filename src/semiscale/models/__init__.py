"""Estimators (scikit-learn API)."""

from .graph_learning import HarmonicClassifier, PoissonClassifier
from .laprls import LapRLSClassifier, LapRLSRegressor
from .nystrom_laprls import NystromLapRLSClassifier, NystromLapRLSRegressor

__all__ = [
    "HarmonicClassifier",
    "LapRLSClassifier",
    "LapRLSRegressor",
    "NystromLapRLSClassifier",
    "NystromLapRLSRegressor",
    "PoissonClassifier",
]
