"""Per-file test times from junit reports, into `tests/durations.json`: the order `tests/conftest.py` hands
files to the xdist workers (longest first).

    python -m tests.durations artifacts/junit.xml [more.xml ...]

Each report's testcase times are summed per file. With several reports, a later one replaces the times of
the files it ran and keeps the others (a CI run's report, then one file measured again on its own).
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DURATIONS = Path(__file__).resolve().parent / "durations.json"


def file_of(classname: str, root: Path = ROOT) -> str | None:
    """`tests.app.test_x.TestClass` -> `tests/app/test_x.py`: the longest dotted prefix that is a file."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end]) + ".py"
        if (root / path).is_file():
            return path
    return None


def per_file(report: Path, root: Path = ROOT) -> dict[str, float]:
    """Seconds per test file in one junit report; files no longer in the tree are left out."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        path = file_of(case.get("classname", ""), root)
        if path is not None:
            seconds[path] += float(case.get("time") or 0)
    return dict(seconds)


def merged(reports: list[Path], root: Path = ROOT) -> dict[str, float]:
    """Later reports replace the files they ran; longest first, rounded to a tenth of a second."""
    seconds: dict[str, float] = {}
    for report in reports:
        seconds.update(per_file(report, root))
    return {path: round(s, 1) for path, s in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))}


def load(path: Path = DURATIONS) -> dict[str, float]:
    """The committed timings; none when the file is missing (every file then counts as quick)."""
    if not path.is_file():
        return {}
    data: dict[str, float] = json.loads(path.read_text())
    return data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.durations", description="Per-file test times from junit reports."
    )
    parser.add_argument("reports", nargs="+", type=Path, help="junit XML reports, oldest first")
    parser.add_argument("--out", type=Path, default=DURATIONS, help="default: %(default)s")
    args = parser.parse_args(argv)
    seconds = merged(args.reports)
    args.out.write_text(json.dumps(seconds, indent=1) + "\n")
    print(f"{args.out}: {len(seconds)} files, {sum(seconds.values()):,.0f} s in all")


if __name__ == "__main__":
    main()
