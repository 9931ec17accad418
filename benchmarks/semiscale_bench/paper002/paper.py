"""What paper 002 (Lever, Diethe & Shawe-Taylor) publishes about its §5 experiments.

Transcribed from ``shared/papers/002_0e1df10753383ecc.txt``.  Figures 2-5 are images that the
text we have does not contain: no plotted value of the learning curves is available, so the
numbers beside ours are Table 1's sizes and the numbers the text states (Figure 4's clustering
errors, Figure 5's "64,000 points in 3 minutes"), with the claims each figure supports.  The
paper does not name its machine.
"""

from __future__ import annotations

#: Table 1: task -> (sample size n (labeled + unlabeled), subsample size n̂, test set size).
TABLE1 = {
    "letter D vs O": (1250, 250, 308),
    "letter O vs Q": (1250, 250, 286),
    "MNIST 2 vs 3": (2000, 250, 405),
    "MNIST 3 vs 8": (12_000, 250, 1966),
    "MNIST 4 vs 9": (12_000, 250, 1782),
    "MNIST Odd vs Even": (64_000, 500, 500),
}

#: Our task -> the Table 1 row it stands for (None: not in the paper).
OURS = {
    "letter D vs O": "letter D vs O",
    "letter O vs Q": "letter O vs Q",
    "usps 3 vs 8": None,
    "usps 4 vs 9": None,
    "mnist-test 2 vs 3": "MNIST 2 vs 3",
    "mnist-test 3 vs 8": "MNIST 3 vs 8",
    "mnist-test 4 vs 9": "MNIST 4 vs 9",
    "odd vs even": "MNIST Odd vs Even",
}

#: Trials the paper averages (§5.1: 50; Figure 3's odd vs even: 25).
TRIALS = {"default": 50, "MNIST Odd vs Even": 25}

#: Figure 4 (§5.2): 2-moons k-means error, 1,000 points.
FIG4_ERROR = {"Euclidean": 0.114, "full LapSVM kernel": 0.0, "efficient kernel (n̂ = 40)": 0.01}

#: Figure 5 (§5.3): seconds to compute the efficient kernel on 64,000 MNIST points.
FIG5_SECONDS_64K = 180.0

#: Statements of §5, each (figure, what the paper says, where), quoted or closely paraphrased.
CLAIMS = (
    (
        "fig2",
        "'The efficient kernel recovers the performance of the full LapSVM.' (letter D vs O, "
        "O vs Q, MNIST 2 vs 3; efficient kernel, LapSVM and RBF SVM; 50 trials)",
        "§5.1",
    ),
    (
        "fig3",
        '\'The efficient LapSVM substantially outperforms both the "budget" LapSVM approach and '
        "the Gaussian RBF SVM, learning much faster with, in particular, a very small labelled "
        "sample.' (MNIST 3 vs 8, 4 vs 9 on 12,000 points; odd vs even on 64,000; n̂ = 250, 500)",
        "§5.1",
    ),
    (
        "fig3",
        "'a significant advantage can be gained from the efficient method's ability to exploit "
        "all 64,000 unlabelled points in the Odd vs Even task'",
        "§5.1",
    ),
    (
        "fig3",
        "the full LapSVM is 'infeasible' on the full MNIST digits (12,000 and 64,000 points)",
        "§5.1",
    ),
    (
        "fig4",
        "k-means on 2-moons (1,000 points): Euclidean 11.4 % error, full LapSVM kernel 0 %, "
        "efficient kernel (n̂ = 40, p = 2) 1 %; the best kernels of a small grid over γ and η",
        "§5.2",
    ),
    (
        "fig5",
        "'the efficiently computable kernels can be computed on 64,000 MNIST data points in 3 "
        "minutes'; PCG 'approximately linear'; the cubic construction 'infeasible for just a few "
        "thousand data points'",
        "§5.3",
    ),
)

#: §5.1's settings, as stated.
SETTINGS = (
    "k-NN graph, k = 5, 0-1 weights; Q = L_norm^p with a small ridge; ambient Gaussian RBF K_σ",
    "subsample chosen at random 'except for a strong bias to the labeled data'; footnote 5: the "
    "labeled data should not lie exclusively in the subsample, so that CV is performed over some "
    "points outside the domain of the intrinsic kernel",
    "linear systems by PCG with Koutis' combinatorial/multigrid preconditioner",
    "model selection: 5-fold cross validation over p, η and σ",
    "n̂ = 250 (500 also on the large sets); averages over 50 trials (25 on odd vs even)",
)


def claims(figure: str | None = None) -> list[str]:
    """The claims (of one figure, or all) as Markdown bullet lines."""
    return [f"- {text} ({where})" for fig, text, where in CLAIMS if figure in (None, fig)]
