"""semiscale.graph"""
