"""What paper 001 (Tsang & Kwok, NIPS 2006) publishes about its §4 experiments.

Transcribed from ``shared/papers/001_dba6459e14ba73da.txt``.  Figures 1-3 are images: their
plotted values are not in the text, so the only numbers beside ours are those the text states
(Table 1's sizes, "100 % accuracy", the machine) and its qualitative claims, each with where it
is said.
"""

from __future__ import annotations

#: The paper's machine (§4): "a 3.2GHz Pentium-4 PC with 1GB RAM".
MACHINE = "3.2 GHz Pentium-4, 1 GB RAM"

#: Table 1: attributes, labeled (+, −), unlabeled (+, −), test (+, −).
TABLE1 = {
    "two moons": {
        "attributes": 2,
        "labeled": (1, 1),
        "unlabeled": (500_000, 500_000),
        "test": (2_500, 2_500),
    },
    "extended usps": {
        "attributes": 676,
        "labeled": (1, 1),
        "unlabeled": (144_473, 121_604),
        "test": (43_439, 31_944),
    },
    "extended MIT face": {
        "attributes": 361,
        "labeled": (5, 5),
        "unlabeled": (408_067, 481_909),
        "test": (472, 23_573),
    },
}

#: Figure 1 (§4.1): test accuracy the text states, per method (None: not stated as a number).
FIG1_ACCURACY = {"SLapCVM": 1.0, "LapSVM": 1.0}

#: Claims of §4.1-4.2 (and the abstract), each (figure, what the paper says, where).
CLAIMS = (
    ("fig1", "LapSVM and SLapCVM always attain 100 % test accuracy, with two labels", "§4.1"),
    ("fig1", "SLapCVM is faster than LapSVM (Figure 1(c))", "§4.1"),
    ("fig1", "LapSVM's expansion uses every point; SLapCVM a small fraction (Figure 1(d))", "§4.1"),
    ("fig1", "SLapCVM's time and space are almost constant as u grows to 1,000,000", "§4.1"),
    ("fig1", "the reduced LapSVM (r = 200) is fast but slightly less accurate", "§4.1"),
    ("fig1", "LapSVM and the reduced LapSVM cannot run on the full set (1 GB of memory)", "§4.1"),
    (
        "fig2",
        "SLapCVM is faster (2(a)) and sparser (2(b)) than LapSVM; its time and expansions "
        "grow sublinearly with u",
        "§4.2",
    ),
    (
        "fig2",
        "SLapCVM is always more accurate than LapSVM; both beat the SVM on the two labeled "
        "points (2(c))",
        "§4.2",
    ),
    (
        "fig2",
        "the reduced LapSVM (r = 2,000) is as fast as SLapCVM but less accurate, and cannot "
        "handle large sets",
        "§4.2",
    ),
    ("all", "LapSVM can only handle several thousand patterns; SLapCVM a million", "abstract"),
)

#: §4's general settings, as the paper states them.
SETTINGS = (
    "graph: 6 nearest neighbours, weights exp(−‖x_u − x_v‖²/β_g), β_g the mean squared edge "
    "length, unnormalized Laplacian",
    "mμ = 1 always; the other parameters tuned on a small validation set",
    "Gaussian kernel exp(−‖x − z‖²/β), β the mean squared distance to the mean (two moons: "
    "β = 0.25)",
    "reduced LapSVM: r = 200 on two moons, 2,000 on USPS and MIT face",
)


def claims(figure: str) -> list[str]:
    """The claims about ``figure`` (``"fig1"`` or ``"fig2"``) and general ones, as lines."""
    return [f"- {text} ({where})" for fig, text, where in CLAIMS if fig in (figure, "all")]
