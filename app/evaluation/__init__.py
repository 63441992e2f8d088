"""Versions and how good they are: version and metrics tables, the evaluation set and its results, the
calibration note.
"""
