"""semiscale: scalable graph-based semi-supervised learning."""

__version__ = "0.1.0"
