"""Estimators (scikit-learn API)."""

from .laprls import LapRLSClassifier, LapRLSRegressor

__all__ = ["LapRLSClassifier", "LapRLSRegressor"]
