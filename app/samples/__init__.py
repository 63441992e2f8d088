"""The Samples page's parts: the editable grid and its pending edits, importing a labelled file (read,
mapped, previewed), files out, the Flags tab and the quality picker.
"""
