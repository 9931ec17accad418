"""semiscale.models"""
