"""Semi-supervised model selection: folds, scorers on labeled rows, CV and graph-reusing search.

- :class:`SSLKFold` splits labeled and unlabeled points separately (paper 004, §2), with
  transductive and inductive folds;
- :func:`make_ssl_scorer` / :func:`get_ssl_scorer` score on labeled rows only, so they are right
  in scikit-learn's ``GridSearchCV`` and ``cross_val_score`` too;
- :func:`ssl_cross_validate` / :func:`ssl_cross_val_score`: exact t-fold CV;
- :class:`SSLGridSearchCV`: grid search that builds each graph once per fold and graph setting;
- :func:`bif_cross_val_predict` / :func:`bif_cross_val_score`: t-fold CV approximated from one
  fit by the Bouligand influence function (paper 004), and :class:`BIFSearchCV`, the grid search
  scored by it (one fit per grid point).

User guide: ``docs/model_selection.md``.
"""

from .bif import bif_cross_val_predict, bif_cross_val_score
from .bif_search import BIFSearchCV
from .folds import SSLFold, SSLKFold
from .scoring import SSLScorer, get_ssl_scorer, make_ssl_scorer
from .search import SSLGridSearchCV
from .validation import ssl_cross_val_score, ssl_cross_validate

__all__ = [
    "BIFSearchCV",
    "SSLFold",
    "SSLGridSearchCV",
    "SSLKFold",
    "SSLScorer",
    "bif_cross_val_predict",
    "bif_cross_val_score",
    "get_ssl_scorer",
    "make_ssl_scorer",
    "ssl_cross_val_score",
    "ssl_cross_validate",
]
