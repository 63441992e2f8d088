"""The workbench's frame: which service it talks to and its start, sign-in settings, the session's cached
reads and the key's role, and the engine resources every session shares.
"""
