"""semiscale.linalg"""
