"""semiscale.model_selection"""
