"""semiscale_bench"""
