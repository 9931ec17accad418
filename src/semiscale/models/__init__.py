"""Estimators (scikit-learn API)."""

from .laprls import LapRLSClassifier, LapRLSRegressor
from .nystrom_laprls import NystromLapRLSClassifier, NystromLapRLSRegressor

__all__ = [
    "LapRLSClassifier",
    "LapRLSRegressor",
    "NystromLapRLSClassifier",
    "NystromLapRLSRegressor",
]
