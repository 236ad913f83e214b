"""Sphinx configuration of dlinear's documentation.

Build: python -m sphinx -W -b html docs docs/_build/html   (pip install -e ".[docs]")

Two small directives keep facts in one place:
- ``.. dlinear-help:: train`` prints a command's usage text as the program prints it
  (dlinear/cli/train_predict.py, dlinear/cli/jobs.py, dlinear/datasets/rcv1_like.py), so the options are written
  once, in the code;
- ``.. benchmarks-file::`` shows BENCHMARKS.md, the one copy of the measured figures, one
  section per ``##`` heading.
"""
import os
import re
import sys
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))           # document this checkout, not an installed copy
os.environ["COLUMNS"] = "92"            # argparse wraps its help to the terminal width

import dlinear  # noqa: E402

project = "dlinear"
author = "the dlinear developers"
copyright = "2026, the dlinear developers"
release = version = dlinear.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
]
exclude_patterns = ["_build"]
templates_path = ["_templates"]
html_theme = "alabaster"
html_theme_options = {"description": "LIBLINEAR on one core or a Dask cluster"}
html_static_path = []

autosummary_generate = True
autodoc_typehints = "none"              # the numpydoc Parameters sections say the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False     # the class template lists the members once
numpydoc_class_members_toctree = False


def _help_text(command: str) -> str:
    """The usage text `command` prints for -h."""
    if command == "train":
        from dlinear.cli.train_predict import TRAIN_USAGE
        return TRAIN_USAGE
    if command == "predict":
        from dlinear.cli.train_predict import PREDICT_USAGE
        return PREDICT_USAGE
    if command == "submit":
        from dlinear.cli.jobs import USAGE
        return USAGE
    if command == "status":
        from dlinear.cli.jobs import build_parser
        return build_parser().format_help()
    if command == "make-data":
        from dlinear.datasets.rcv1_like import _argument_parser
        return _argument_parser("python -m dlinear make-data").format_help()
    raise ValueError(f"dlinear-help: unknown command {command!r}")


class HelpDirective(SphinxDirective):
    """``.. dlinear-help:: COMMAND``: the command's usage text, as a literal block."""
    required_arguments = 1

    def run(self):
        text = _help_text(self.arguments[0]).expandtabs(8).rstrip("\n")
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


HEADING = re.compile(r"^(#{2,3}) (.+)$")


def benchmark_sections(text: str):
    """BENCHMARKS.md as (level, title, body) for each ## and ### heading (level 2, 3);
    the text before the first one has level 1. Headings inside ``` blocks are text."""
    sections, title, level, body, fenced = [], None, 1, [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if match:
            sections.append((level, title, "\n".join(body).strip("\n")))
            level, title, body = len(match.group(1)), match.group(2).strip(), []
        else:
            body.append(line)
    sections.append((level, title, "\n".join(body).strip("\n")))
    return sections


IMAGE = re.compile(r"^!\[([^\]]*)\]\(docs/([^)\s]+)\)$")


def _text_and_images(body: str) -> list:
    """Literal blocks of the text, and an image node for each ![alt](docs/...) line."""
    result, text = [], []

    def flush():
        chunk = "\n".join(text).strip("\n")
        if chunk:
            result.append(nodes.literal_block(chunk, chunk, language="text"))
        text.clear()

    for line in body.splitlines():
        match = IMAGE.match(line.strip())
        if match:
            flush()
            result.append(nodes.image(uri=match.group(2), alt=match.group(1)))
        else:
            text.append(line)
    flush()
    return result


class BenchmarksDirective(SphinxDirective):
    """``.. benchmarks-file::``: BENCHMARKS.md, a section per heading, its text verbatim."""

    def run(self):
        path = ROOT / "BENCHMARKS.md"
        self.env.note_dependency(str(path))
        result, parent, ids = [], None, set()
        for level, title, body in benchmark_sections(path.read_text()):
            if title is None:         # the file's own "# Benchmarks" is the page's title
                result += _text_and_images(re.sub(r"\A# .*\n", "", body))
                continue
            block = _text_and_images(body)
            anchor = nodes.make_id("bench-" + title)
            while anchor in ids:
                anchor += "-1"
            ids.add(anchor)
            section = nodes.section(ids=[anchor])
            section += nodes.title(title, title)
            section += block
            if level == 3 and parent is not None:
                parent += section
            else:
                result.append(section)
                parent = section
        return result


def _skip_metadata_routing(app, what, name, obj, skip, options):
    """scikit-learn's metadata-routing methods (set_fit_request & co) are scikit-learn's to
    document, not dlinear's."""
    if name == "get_metadata_routing" or (name.startswith("set_") and name.endswith("_request")):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_routing)
    app.add_directive("dlinear-help", HelpDirective)
    app.add_directive("benchmarks-file", BenchmarksDirective)
    return {"parallel_read_safe": True}
