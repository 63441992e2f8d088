"""Labelling and its review: the Label page's session, campaign, notes, chart and pool import, labels as
training data, buffered feedback, and the annotators' agreement and noted texts.
"""
