"""Scoring texts on the Score and Demo pages: a draft's local preview and highlighting, the Perspective
migration, the Demo page's helpers.
"""
