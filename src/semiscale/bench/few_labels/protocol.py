"""The few-labels benchmark's protocol (issue 12, part 5): every knob with its reason.

Transductive: each dataset's points are all given to every fit; on trial t with k labels per
class, ``numpy.random.default_rng([t, k])`` draws the labeled points (the same draw for every
method), and the accuracy is that of ``transduction_`` on the other points.
"""

from __future__ import annotations

import dataclasses

from ..harness import Cap, Dataset, Protocol, knob

#: The synthetic source of the two-moons rows (not a registered dataset).
MOONS = "make_two_moons"


@dataclasses.dataclass(frozen=True)
class FewLabelsProtocol(Protocol):
    """The generic knobs plus the label counts and the two-moons sizes."""

    repeats: int = knob(5, "trials: trial t draws k labels per class with seed [t, k]")
    per_class: tuple = knob((1, 3, 5, 10), "labeled points per class, drawn anew on each trial")
    moons_n: int = knob(2000, "two moons: make_two_moons(moons_n, noise=moons_noise, seed 0)")
    moons_noise: float = knob(0.1, "two moons' noise")
    graph_seed: int = knob(0, "random_state of the shared default KNNGraph (HNSW, if used)")


_EXACT = Cap(
    0,
    "not run (n > 8,000: the exact solve is O(n³) on a dense n x n kernel)",
    n_train_above=8000,
)

PROTOCOL = FewLabelsProtocol(
    paper="few_labels",
    datasets=(
        Dataset("usps", "usps", "all 7,291 training images (our copy: pixels in [0, 1])"),
        Dataset("letter", "letter", "the 15,000-row training split, LIBSVM's letter.scale"),
        Dataset("two moons", MOONS, "n = 2,000, noise 0.1, random_state 0"),
    ),
    methods=(
        "LapRLS (exact)",
        "Nyström LapRLS",
        "Harmonic",
        "Harmonic + CMN",
        "Poisson",
        "sklearn LabelSpreading",
    ),
    caps={"LapRLS (exact)": (_EXACT,)},
)

#: Seconds, not minutes: two moons only, 300 points, one trial, 1 and 5 labels per class.
QUICK = dataclasses.replace(
    PROTOCOL,
    quick=True,
    datasets=(Dataset("two moons", MOONS, "n = 300 (quick), noise 0.1, random_state 0"),),
    repeats=1,
    per_class=(1, 5),
    moons_n=300,
)
