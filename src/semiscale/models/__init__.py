"""Estimators (scikit-learn API)."""

from .data_dependent_svc import DataDependentSVC
from .harmonic import HarmonicClassifier
from .kernel_kmeans import KernelKMeans
from .laprls import LapRLSClassifier, LapRLSRegressor
from .lapsvm import LapSVC
from .nearest_neighbors import NearestNeighborsClassifier
from .nystrom_laprls import NystromLapRLSClassifier, NystromLapRLSRegressor
from .nystrom_lapsvm import NystromLapSVC
from .poisson import PoissonClassifier
from .poisson_mbo import PoissonMBOClassifier
from .slapcvm import SparseLapCVMClassifier, SparseLapCVMRegressor
from .storage_fit import StorageFitClassifier
from .tsvm import TSVMClassifier

__all__ = [
    "DataDependentSVC",
    "HarmonicClassifier",
    "KernelKMeans",
    "LapRLSClassifier",
    "LapRLSRegressor",
    "LapSVC",
    "NearestNeighborsClassifier",
    "NystromLapRLSClassifier",
    "NystromLapRLSRegressor",
    "NystromLapSVC",
    "PoissonClassifier",
    "PoissonMBOClassifier",
    "SparseLapCVMClassifier",
    "SparseLapCVMRegressor",
    "StorageFitClassifier",
    "TSVMClassifier",
]
