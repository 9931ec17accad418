"""semiscale.solvers"""
