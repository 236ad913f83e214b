"""The README and the documentation site's sources (docs/): what they promise holds.

The site's build itself (python -m sphinx -W, warnings as errors) runs in CI (.ci/run);
these checks need no Sphinx except the last two, which load docs/conf.py.
"""
import importlib
import importlib.util
import os
import re
import shlex
import textwrap
import sys
from pathlib import Path

import pytest

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
    assert commands[1].endswith("python -m pytest -q -n 2 --dist loadfile")
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


def test_the_solver_table_lists_exactly_the_registrys_solvers(conf):
    from dlinear.solver_table import SOLVERS
    table = conf._solver_table()
    assert [int(i) for i in re.findall(r"^   \* - (\d+)$", table, re.M)] == list(SOLVERS)
    for spec in SOLVERS.values():
        assert f"``{spec.name}``" in table and spec.description in table
    assert ".. dlinear-solvers::\n" in (ROOT / "docs" / "guide" / "solvers.rst").read_text()


def test_the_site_keeps_double_hyphens(conf):
    # docutils' smart quotes would print "--seed" as an en dash, which fails when pasted
    assert conf.smartquotes is False


OPTION = re.compile(r"(?<![\w-])--[a-z][\w-]*")


def prose_options(rst: str) -> list:
    """The --options written in an .rst text outside literals: not in ``...``, not in a
    literal block (the indented lines after a paragraph ending in '::' or a directive)."""
    prose, literal_indent = [], None
    for line in rst.splitlines():
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not line.strip() or indent > literal_indent:
                continue
            literal_indent = None
        stripped = line.strip()
        if stripped.endswith("::") or stripped.startswith((".. code-block::", ".. code::")):
            literal_indent = indent
        prose.append(line)
    return OPTION.findall(re.sub(r"``.*?``", "", "\n".join(prose), flags=re.S))


def test_prose_options_finds_options_outside_literals():
    text = ("Use --seed or ``--seed``::\n\n    dlinear-train --workers 2\n\n"
            "Then --wait, ``-s 1\n--float32``.\n\n.. code-block:: text\n\n   -s 1 --float32\n")
    assert prose_options(text) == ["--seed", "--wait"]


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT) for p in (ROOT / "docs").rglob("*.rst")
                                        if "_build" not in p.parts and "generated" not in p.parts),
                         ids=str)
def test_options_on_the_site_are_literals(page):
    # a literal shows an option as typed, whatever the typography settings
    assert prose_options((ROOT / page).read_text()) == []


def api_entries() -> set:
    """The names the API reference documents: autosummary entries and py:data directives."""
    text = (ROOT / "docs" / "api.rst").read_text()
    return (set(re.findall(r"^   ([A-Za-z_]\w*)$", text, re.M))
            | set(re.findall(r"^\.\. py:data:: (\w+)$", text, re.M)))


@pytest.mark.parametrize("module", ["dlinear", "dlinear.cluster", "dlinear.estimators"])
def test_every_public_name_has_an_api_page(module):
    if module == "dlinear.estimators":
        pytest.importorskip("sklearn")
    names = importlib.import_module(module).__all__
    missing = sorted(set(names) - api_entries())
    assert not missing, f"{module}.__all__ names without an entry in docs/api.rst: {missing}"


@pytest.mark.parametrize("module", ["dlinear", "dlinear.cluster", "dlinear.estimators"])
def test_module_docstrings_in_the_api_reference_read_as_a_users_page(module):
    # the API reference opens each section with the module's docstring (automodule)
    if module == "dlinear.estimators":
        pytest.importorskip("sklearn")
    doc = importlib.import_module(module).__doc__
    assert not re.search(r"\b\w+\.py\b", doc), "source files are for the code's comments"
    lines = doc.splitlines()
    for i, line in enumerate(lines[1:], 1):
        # an indented block after a blank line is a literal only after '::' or a directive
        if line.startswith("    ") and not lines[i - 1].strip():
            before = next(p for p in reversed(lines[:i]) if p.strip() and not p.startswith(" "))
            assert before.rstrip().endswith("::") or before.startswith(".. "), line


def test_the_readme_python_example_runs(tmp_path, monkeypatch):
    pytest.importorskip("sklearn")
    block = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    monkeypatch.chdir(ROOT)                 # its paths are the repository's examples/
    names = {}
    exec(compile(block, "README.md", "exec"), names)
    assert len(names["labels"]) == names["dlinear"].read_libsvm("examples/rcv1_small.test").n_samples
    assert list(names["clf"].classes_) == [-1, 1]


def test_the_benchmarks_page_is_benchmarks_md_as_markdown(conf):
    assert "myst_parser" in conf.extensions
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert re.search(r"```\{include\} \.\./BENCHMARKS\.md\n", page)


def test_benchmarks_md_is_a_report_of_current_figures():
    # the history is in git; each table comes with its date and the command that made it
    text = (ROOT / "BENCHMARKS").with_suffix(".md").read_text()   # (no citation-shaped literal)
    assert len(text.splitlines()) <= 500
    sections = re.split(r"^#{2,3} ", text, flags=re.M)[1:]
    tables = [s for s in sections if "| --- |" in s]
    assert len(tables) >= 10
    for section in tables:
        title = section.splitlines()[0]
        assert re.search(r"\b20\d\d-\d\d-\d\d\b", section), f"{title}: no date"
        assert re.search(r"(python -m|asv run|/usr/bin/time)", section), f"{title}: no command"


def documentation_sources() -> list:
    pages = [p for p in (ROOT / "docs").rglob("*.rst")
             if "_build" not in p.parts and "generated" not in p.parts]
    return sorted(pages) + [ROOT / "README.md", (ROOT / "BENCHMARKS").with_suffix(".md")]


def test_paths_named_in_the_docs_exist():
    # the package was reorganised once already: a page must not name a file that moved
    missing = []
    for page in documentation_sources():
        for path in set(re.findall(r"(?<![\w/.])((?:dlinear|scripts|tests)/[\w/.-]+\.(?:py|md|rst|png))",
                                   page.read_text())):
            if not (ROOT / path).exists():
                missing.append((page.name, path))
    assert not missing


def resolves(dotted: str) -> bool:
    """Whether a dotted name is a module, or an attribute of the longest module prefix."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        return True
    return False


def test_dotted_names_in_the_docs_resolve():
    pytest.importorskip("sklearn")          # dlinear.estimators
    assert resolves("dlinear.cluster.dataset.with_sample_weight")
    assert not resolves("dlinear.cluster.no_such_module")
    unresolved = []
    for page in documentation_sources():
        for name in set(re.findall(r"(?<![\w/.])(dlinear(?:\.[a-z_]\w*)+)", page.read_text())):
            if not resolves(name):
                unresolved.append((page.name, name))
    assert not unresolved


def test_the_estimators_guide_first_example_runs_and_says_what_ran():
    pytest.importorskip("sklearn")
    page = (ROOT / "docs" / "guide" / "estimators.rst").read_text()
    block = page.split(".. code-block:: python\n\n", 1)[1].split("\n\n", 1)[0] + "\n"
    block += page.split(".. code-block:: python\n\n", 1)[1].split("\n\n", 2)[1]
    names = {}
    exec(compile(textwrap.dedent(block), "estimators.rst", "exec"), names)
    comment = re.search(r"clf\.solver_type_ +# (\d+)", block).group(1)
    assert names["clf"].solver_type_ == int(comment)
