"""scikit-learn ``Pipeline`` objects in semi-supervised model selection.

A pipeline of transformers followed by a semi-supervised estimator (``make_pipeline(
StandardScaler(), LapRLSClassifier())``) reads the labels in its final step only: every earlier
step maps the rows of ``X`` to as many transformed rows, so the final step's ``transduction_``
(its labels for the training points) is the pipeline's.  Transductive folds score it
(:func:`transduction_of`); an estimator without one is refused at its first fit with the fix
(:class:`NoTransductionError`) instead of failing every grid point.

:class:`~semiscale.model_selection.BIFSearchCV` expands the final step's fit and applies the
earlier steps once per setting of theirs (:func:`split_pipeline`, :func:`fit_transform_steps`).
"""

from __future__ import annotations

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags

__all__ = [
    "NoTransductionError",
    "final_estimator",
    "fit_transform_steps",
    "is_pipeline",
    "split_pipeline",
    "transduction_of",
]


class NoTransductionError(TypeError):
    """The estimator has no ``transduction_``, so transductive folds cannot score it.

    Raised at the first fit of a search or a cross-validation instead of a ``FitFailedWarning``
    per fit: no grid point can succeed.
    """


def is_pipeline(estimator) -> bool:
    """True for a scikit-learn ``Pipeline`` (or a subclass)."""
    return isinstance(estimator, Pipeline)


def _is_passthrough(step) -> bool:
    return step is None or (isinstance(step, str) and step == "passthrough")


def final_estimator(estimator):
    """The estimator that reads ``y``: a pipeline's last step (nested pipelines unwrapped)."""
    while is_pipeline(estimator):
        estimator = estimator.steps[-1][1]
    return estimator


def _describe(estimator) -> str:
    final = final_estimator(estimator)
    if final is estimator:
        return type(estimator).__name__
    last = "'passthrough'" if _is_passthrough(final) else type(final).__name__
    return f"{type(estimator).__name__} (final step {last})"


def transduction_of(estimator, n_rows=None):
    """The labels (or targets) ``estimator`` inferred for its ``n_rows`` training points.

    ``estimator.transduction_`` when it has one, else the final step's of a pipeline: its
    earlier steps are transformers, which map the training rows one to one.

    Raises
    ------
    NoTransductionError
        Neither the estimator nor a pipeline's final step has ``transduction_``.
    ValueError
        The final step's ``transduction_`` has another number of rows than the training set
        (a step that adds or drops rows).
    """
    owner = estimator
    if not hasattr(owner, "transduction_"):
        owner = final_estimator(estimator)
    if not hasattr(owner, "transduction_"):
        raise NoTransductionError(
            f"{_describe(estimator)} has no transduction_ (labels inferred for the training "
            "points), so transductive folds cannot score it and no grid point can succeed; pass "
            "cv=SSLKFold(n_splits, transductive=False) to score predict on held-out points "
            "instead, or wrap a supervised classifier (which would read the unlabeled marker as "
            "a class) in sklearn.semi_supervised.SelfTrainingClassifier, which has one"
        )
    transduction = np.asarray(owner.transduction_)
    if n_rows is not None and transduction.shape[0] != n_rows:
        raise ValueError(
            f"the final step {type(owner).__name__} of {type(estimator).__name__} inferred "
            f"{transduction.shape[0]} labels for {n_rows} training points: a step before it "
            "changed the number of rows, so its transduction_ cannot be matched to the rows; "
            "use SSLKFold(transductive=False)"
        )
    return transduction


def split_pipeline(pipeline):
    """``(steps before the last, (name, last step))`` of a pipeline, passthrough steps dropped."""
    *before, last = pipeline.steps
    return [(name, step) for name, step in before if not _is_passthrough(step)], last


def check_unsupervised(steps, owner: str) -> None:
    """Refuse, before any fit, a step whose scikit-learn tags say its ``fit`` needs ``y``."""
    for name, step in steps:
        if get_tags(step).target_tags.required:
            raise TypeError(
                f"{owner} fits the steps before the pipeline's last one on all rows without "
                f"labels, but step {name!r} ({type(step).__name__}) needs y to fit; take it out "
                "of the pipeline: fit it on the labeled rows yourself and search on its output"
            )


def fit_transform_steps(steps, X, owner: str):
    """Fit each step on the output of the previous one, without labels; the transformed ``X``.

    The steps see every row, labeled and unlabeled, and no label: in semi-supervised learning
    the unlabeled points are part of the training data, and an unsupervised transform (a scaler,
    a projection) fitted on them uses no held-out label.
    """
    Xt = X
    for name, step in steps:
        try:
            Xt = step.fit_transform(Xt)
        except Exception as exc:
            raise ValueError(
                f"{owner} fits the steps before the pipeline's last one on all rows without "
                f"labels, and step {name!r} ({type(step).__name__}) failed: "
                f"{type(exc).__name__}: {exc}; if the step reads y, take it out of the "
                "pipeline: fit it on the labeled rows yourself and search on its output"
            ) from exc
    return Xt
