"""scikit-learn's own LogisticRegression and LogisticRegressionCV tests
(sklearn/linear_model/tests/test_logistic.py of the installed scikit-learn) with dlinear's
classes in place of scikit-learn's: copies the file into a temporary directory, rewrites
its imports, runs pytest on it and prints passed / failed / the pass rate (and, with
--failures, each failed test's one-line reason).

    python -m scripts.tools.sklearn_logistic_suite [--failures] [--cv] [--min-rate 85]
        [-- PYTEST_ARGS]

What is rewritten: the names `LogisticRegression` and `LogisticRegressionCV` of the test
module are dlinear.estimators'; so is the `LogisticRegression` that scikit-learn's private
_log_reg_scoring_path builds (some tests call it directly), in the pytest process only.
--cv runs only the tests that use LogisticRegressionCV (cv_tests). scikit-learn's file is
read from the installed package, never copied into this repository. Exit status 1 when the
pass rate is below --min-rate.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

IMPORT_LINE = ("from sklearn.linear_model import LogisticRegression, LogisticRegressionCV, "
               "SGDClassifier")
REPLACEMENT = ("from sklearn.linear_model import SGDClassifier\n"
               "from dlinear.estimators import LogisticRegression, LogisticRegressionCV")


def cv_tests(source: str) -> list:
    """The test functions of scikit-learn's file that use LogisticRegressionCV."""
    import ast
    tree = ast.parse(source)
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
            and "LogisticRegressionCV" in ast.get_source_segment(source, node)]

# pytest's conftest in the temporary directory: scikit-learn's fixtures and hooks
# (global_random_seed...), and dlinear's class where _log_reg_scoring_path builds one
CONFTEST = '''\
from sklearn.conftest import *  # noqa: F401,F403 (fixtures and hooks)
import sklearn.linear_model._logistic as _logistic
from dlinear.estimators import LogisticRegression as _DlinearLogisticRegression

_logistic.LogisticRegression = _DlinearLogisticRegression
'''


def sklearn_test_file() -> Path:
    import sklearn
    return Path(sklearn.__file__).parent / "linear_model" / "tests" / "test_logistic.py"


def rewritten_source(source: str) -> str:
    if IMPORT_LINE not in source:
        raise SystemExit(f"the import line to rewrite is not in {sklearn_test_file()}: "
                         f"{IMPORT_LINE!r} (another scikit-learn version?)")
    return source.replace(IMPORT_LINE, REPLACEMENT)


def run(pytest_args, directory: Path, control: bool = False, cv: bool = False) -> Path:
    """Runs pytest on the rewritten copy in directory (control: scikit-learn's file and
    classes unchanged; cv: only the tests using LogisticRegressionCV); the path of its
    JUnit XML."""
    source = sklearn_test_file().read_text()
    (directory / "test_logistic_dlinear.py").write_text(
        source if control else rewritten_source(source))
    if cv:
        pytest_args = ["-k", " or ".join(cv_tests(source)), *pytest_args]
    (directory / "conftest.py").write_text(CONFTEST.split("import sklearn.linear_model")[0]
                                           if control else CONFTEST)
    report = directory / "report.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
               "-p", "no:cacheprovider", "--rootdir", str(directory), "-c", os.devnull,
               f"--junitxml={report}", "-o", "junit_family=xunit1", *pytest_args,
               str(directory / "test_logistic_dlinear.py")]
    # the dlinear this process imports, also in pytest's (which runs in the temporary
    # directory)
    import dlinear
    package_root = str(Path(dlinear.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [package_root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    subprocess.run(command, cwd=directory, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False, env=env)
    if not report.exists():
        raise SystemExit(f"pytest wrote no report: {' '.join(command)}")
    return report


def results(report: Path):
    """(name, outcome, one-line message) of each test case: outcome "passed",
    "failed" (failures and errors) or "skipped"."""
    for case in ET.parse(report).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = (child.get("message") or "").splitlines()[0:1]
                message = message[0] if message else ""
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        yield case.get("name"), outcome, message


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", action="store_true",
                        help="print each failed test and its message")
    parser.add_argument("--min-rate", type=float, default=None,
                        help="exit 1 when the pass rate (percent) is below this")
    parser.add_argument("--control", action="store_true",
                        help="run scikit-learn's file and class unchanged (the yardstick)")
    parser.add_argument("--cv", action="store_true",
                        help="only the tests that use LogisticRegressionCV")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dlinear_sklearn_logistic_") as tmp:
        cases = list(results(run(args.pytest_args, Path(tmp), args.control, args.cv)))
    counts = {k: sum(1 for _, o, _ in cases if o == k) for k in ("passed", "failed", "skipped")}
    ran = counts["passed"] + counts["failed"]
    rate = 100.0 * counts["passed"] / ran if ran else 0.0
    if args.failures:
        for name, outcome, message in cases:
            if outcome == "failed":
                print(f"FAILED {name}: {' '.join(message.split())[:200]}")
    print(f"passed {counts['passed']}, failed {counts['failed']}, skipped "
          f"{counts['skipped']} (of {len(cases)}): {rate:.1f}% of the tests run pass")
    if args.min_rate is not None and rate < args.min_rate:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
