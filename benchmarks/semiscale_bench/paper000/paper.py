"""Published numbers of paper 000 (Li, Liu, Yin, Wang, IJCAI 2019), Tables 2 and 3.

Transcribed from ``shared/papers/000_862b45fa999e3eed.txt``; ``None`` is the paper's "/" (the
method ran out of memory).  Table 2: RMSE (mean, std); abalone's entries are printed "×10³" in
the extraction and are kept as printed.  Table 3: (PCG/CG iterations, seconds).
"""

from __future__ import annotations

#: The paper's methods, in its tables' column order.
METHODS = ("RLS-CG", "LapRLS-CG", "LapRLS-PCG", "Nyström-CG", "Nyström-PCG")

#: Dataset sizes as listed in Table 2 (before the 70/30 split).
SAMPLE_SIZE = {
    "madelon": 2000,
    "space_ga": 3107,
    "abalone": 4177,
    "phishing": 11055,
    "a8a": 22696,
    "w7a": 24692,
    "a9a": 32561,
    "ijcnn1": 49990,
    "cod-rna": 59535,
    "connect-4": 67757,
    "skin_nonskin": 245057,
    "YearPrediction": 463715,
}

_A = 1e3  # abalone's "×10³"

#: Table 2: RMSE (mean, std) per dataset, in :data:`METHODS` order.
TABLE2_RMSE = {
    "madelon": [(1.036, 0.009), (0.990, 0.007), (0.990, 0.007), (0.991, 0.009), (0.991, 0.009)],
    "space_ga": [(1.251, 0.004), (1.210, 0.004), (1.210, 0.004), (1.210, 0.004), (1.210, 0.004)],
    "abalone": [
        (4.55 * _A, 0.2 * _A),
        (4.17 * _A, 0.1 * _A),
        (4.17 * _A, 0.1 * _A),
        (4.18 * _A, 0.1 * _A),
        (4.18 * _A, 0.1 * _A),
    ],
    "phishing": [(0.426, 0.049), (0.294, 0.005), (0.273, 0.007), (0.295, 0.005), (0.275, 0.008)],
    "a8a": [(0.702, 0.002), (0.664, 0.002), (0.664, 0.002), (0.664, 0.002), (0.664, 0.002)],
    "w7a": [(0.291, 0.002), (0.283, 0.002), (0.283, 0.002), (0.284, 0.002), (0.284, 0.002)],
    "a9a": [(0.698, 0.005), (0.664, 0.000), (0.664, 0.002), (0.664, 0.000), (0.664, 0.002)],
    "ijcnn1": [(0.434, 0.005), (0.389, 0.002), (0.389, 0.002), (0.393, 0.001), (0.463, 0.001)],
    "cod-rna": [(0.686, 0.002), None, None, (0.614, 0.001), (0.614, 0.001)],
    "connect-4": [(0.781, 0.015), None, None, (0.739, 0.002), (0.739, 0.002)],
    "skin_nonskin": [(3.119, 0.023), None, None, (2.620, 0.043), (2.620, 0.043)],
    "YearPrediction": [(0.198, 0.001), None, None, (0.187, 0.001), (0.187, 0.001)],
}

#: Table 3: (iterations, seconds) per dataset, in :data:`METHODS` order.
TABLE3_ITER_TIME = {
    "madelon": [(32, 0.003), (13, 0.029), (6, 0.032), (12, 0.043), (1, 0.006)],
    "space_ga": [(11, 0.004), (23, 1.220), (5, 0.569), (23, 0.113), (2, 0.016)],
    "abalone": [(64, 0.053), (98, 26.50), (4, 0.903), (94, 0.363), (2, 0.067)],
    "phishing": [(74, 0.031), (300, 24.20), (56, 8.210), (300, 2.470), (3, 0.045)],
    "a8a": [(100, 0.068), (50, 189.1), (3, 20.98), (50, 44.71), (1, 4.370)],
    "w7a": [(13, 0.072), (32, 143.2), (2, 9.683), (213, 107.7), (1, 2.252)],
    "a9a": [(300, 0.529), (64, 1699), (3, 30.30), (65, 70.40), (1, 4.034)],
    "ijcnn1": [(242, 8.204), (57, 2154), (9, 72.41), (53, 108.8), (5, 4.186)],
    "cod-rna": [(96, 7.178), None, None, (55, 134.6), (7, 8.154)],
    "connect-4": [(103, 11.07), None, None, (154, 186.5), (10, 4.220)],
    "skin_nonskin": [(43, 91.39), None, None, (65, 1490), (3, 40.05)],
    "YearPrediction": [(37, 236.5), None, None, (94, 2479), (2, 116.1)],
}


def paper_value(table: dict, dataset: str, method: str):
    """The paper's entry of ``method`` on ``dataset`` in ``table``, or None ("/" or absent)."""
    if method not in METHODS:
        return None
    return table[dataset][METHODS.index(method)]
