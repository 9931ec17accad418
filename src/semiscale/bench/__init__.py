"""semiscale.bench"""
