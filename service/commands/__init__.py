"""The command line's commands, a module per group; `python -m service` (service/__main__.py) parses them."""
