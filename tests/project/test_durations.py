"""`python -m tests.durations` turns junit reports into the per-file timings that order the xdist run."""

from __future__ import annotations

import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests import durations

ROOT = Path(__file__).resolve().parents[2]
DURATIONS = durations.load()  # the timings tests/conftest.py orders the run by
FILES = ("tests/a/test_one.py", "tests/a/test_two.py", "tests/b/test_three.py")
# (file index, class or none, seconds) per testcase
CASES = st.lists(
    st.tuples(st.integers(0, len(FILES) - 1), st.booleans(), st.floats(0, 500, allow_nan=False)), max_size=12
)


def junit(path: Path, cases: list[tuple[int, bool, float]]) -> Path:
    suite = ET.Element("testsuite")
    for i, (file, in_class, seconds) in enumerate(cases):
        module = FILES[file].removesuffix(".py").replace("/", ".")
        classname = f"{module}.TestThing" if in_class else module
        ET.SubElement(suite, "testcase", classname=classname, name=f"test_{i}", time=f"{seconds:.3f}")
    ET.SubElement(suite, "testcase", classname="tests.gone.test_removed", name="test_x", time="99")
    ET.ElementTree(suite).write(path)
    return path


@settings(max_examples=30, deadline=None)
@given(first=CASES, second=CASES)
def test_seconds_are_summed_per_file_and_a_later_report_replaces_the_files_it_ran(first, second) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in FILES:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("")
        got = durations.merged([junit(root / "1.xml", first), junit(root / "2.xml", second)], root)

    def sums(cases: list[tuple[int, bool, float]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for file, _, seconds in cases:
            out[FILES[file]] = out.get(FILES[file], 0.0) + round(seconds, 3)
        return out

    want = {**sums(first), **sums(second)}
    assert set(got) == set(want)  # the removed file is left out
    for path, seconds in want.items():
        assert abs(got[path] - seconds) <= 0.05 + 1e-9 * seconds
    assert list(got.values()) == sorted(got.values(), reverse=True)


def test_the_committed_timings_name_files_that_exist_longest_first() -> None:
    assert DURATIONS, "tests/durations.json is missing or empty: `make durations` after a full run"
    missing = [path for path in DURATIONS if not (ROOT / path).is_file()]
    assert not missing, f"tests/durations.json names files that are not there (refresh it): {missing}"
    assert list(DURATIONS.values()) == sorted(DURATIONS.values(), reverse=True)
