"""The README and the documentation site's sources (docs/): what they promise holds.

The site's build itself (python -m sphinx -W, warnings as errors) runs in CI (.ci/run);
these checks need no Sphinx except the last two, which load docs/conf.py.
"""
import importlib.util
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.unit.test_benchmark_citations import headings

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def quick_start_commands() -> list:
    """The lines of the first ``` block after '## Quick start' (what .ci/run runs)."""
    after = README.split("\n## Quick start", 1)[1]
    block = after.split("```", 2)[1]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_is_at_most_200_lines():
    assert len(README.splitlines()) <= 200


def test_quick_start_is_two_commands_that_leave_nothing_in_the_repository():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert commands[1].endswith("python -m pytest -q")
    words = shlex.split(commands[0])
    for program in ("dlinear-train", "dlinear-predict"):
        i = words.index(program)
        arguments = words[i + 1:words.index("&&", i) if "&&" in words[i:] else None]
        written = [w for w in arguments if not w.startswith(("-", "examples/"))]
        assert written and all(os.path.isabs(w) for w in written), (program, written)


def test_readme_links_to_files_that_exist():
    targets = re.findall(r"\]\(([^)#\s]+)\)", README)
    local = [t for t in targets if "://" not in t]
    assert local
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing


def test_readme_does_not_offer_an_install_from_a_package_index():
    # dlinear is on no index: 'pip install dlinear' or 'pip install "dlinear[...]"' fails
    assert not re.search(r"pip install [\"']?dlinear\b", README)


TITLE = re.compile(r"(?:([=\-~#*^\"+])\1+\n)?(.+)\n([=\-~#*^\"+])\3+\n")


def test_every_guide_page_starts_with_a_title():
    # the guide's table of contents lists each page by its title
    assert TITLE.match("Solvers\n=======\n") and TITLE.match("=====\nJobs\n=====\n")
    assert not TITLE.match("Some text\nmore text\n")
    for page in sorted((ROOT / "docs" / "guide").glob("*.rst")):
        assert TITLE.match(page.read_text().lstrip("\n")), page.name


@pytest.fixture(scope="module")
def conf():
    """docs/conf.py as a module, with the process's sys.path and environment restored."""
    pytest.importorskip("sphinx")
    path, environ = list(sys.path), dict(os.environ)
    try:
        spec = importlib.util.spec_from_file_location("dlinear_docs_conf",
                                                      ROOT / "docs" / "conf.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
        os.environ.clear()
        os.environ.update(environ)
    return module


@pytest.mark.parametrize("command, option", [
    ("train", "--partition-rule"), ("predict", "-b probability_estimates"),
    ("submit", "--scheduler"), ("status", "--wait"), ("make-data", "--rows")])
def test_the_cli_page_shows_each_commands_own_help(conf, command, option):
    assert option in conf._help_text(command)
    cli_page = (ROOT / "docs" / "guide" / "cli.rst").read_text()
    assert f".. dlinear-help:: {command}\n" in cli_page


def test_the_benchmarks_page_has_a_section_per_heading(conf):
    text = (ROOT / "BENCHMARKS.md").read_text()
    sections = conf.benchmark_sections(text)
    assert [title for _, title, _ in sections[1:]] == headings(text)
    assert all(body for _, _, body in sections[1:])
