"""The `cluster` marker is the tests/cluster folder (tests/conftest.py adds it there), so
`pytest -m cluster` (scripts/tools/repeat_cluster_tests.sh, run by .ci/run) and
`pytest tests/cluster` select the same tests."""
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
HAND_MARK = re.compile(r"pytest\.mark\.cluster\b")

# tests/smoke covers every solver and mode once, a cluster's among them: its cluster tests
# stay there, marked by hand; no other test outside tests/cluster is marked `cluster`.
MARKED_ELSEWHERE = {"smoke/test_smoke.py"}


def test_no_test_outside_tests_cluster_is_marked_cluster():
    marked = {str(path.relative_to(TESTS)) for path in TESTS.rglob("test_*.py")
              if "cluster" not in path.relative_to(TESTS).parts[:1]
              and HAND_MARK.search(path.read_text())}
    assert marked == MARKED_ELSEWHERE


def test_every_test_in_tests_cluster_is_marked_cluster(request):
    # the tests this run collected from tests/cluster (the whole suite's run holds them
    # all, markers applied); where it holds few, a collection of that folder alone
    folder = TESTS / "cluster"
    collected = [item for item in request.session.items
                 if folder in Path(str(item.path)).resolve().parents]
    if len(collected) > 50:
        assert [item.nodeid for item in collected
                if item.get_closest_marker("cluster") is None] == []
        return
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only",
                          "-p", "no:cacheprovider", "-m", "not cluster", "tests/cluster"],
                         cwd=TESTS.parent, capture_output=True, text=True, check=False).stdout
    assert [line for line in out.splitlines() if "::" in line] == []
    assert int(re.search(r"(\d+) deselected", out).group(1)) > 50
