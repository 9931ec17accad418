"""semiscale.datasets"""
