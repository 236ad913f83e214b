"""Sphinx configuration of dlinear's documentation.

Build: python -m sphinx -W -b html docs docs/_build/html   (pip install -e ".[docs]")

Facts are kept in one place:
- ``.. dlinear-help:: train`` prints a command's usage text as the program prints it
  (dlinear/cli/train_predict.py, dlinear/cli/jobs.py, dlinear/datasets/rcv1_like.py), so
  the options are written once, in the code;
- ``.. dlinear-solvers::`` is the solver table, made from the registry rows
  (dlinear/solver_table.py), so a new solver is listed without editing a page;
- docs/benchmarks.md includes BENCHMARKS.md, the one copy of the measured figures, parsed
  as Markdown by MyST (its tables become HTML tables).
"""
import os
import sys
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
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
    "myst_parser",                      # BENCHMARKS.md, included by docs/benchmarks.md
]
exclude_patterns = ["_build"]
templates_path = ["_templates"]
html_theme = "alabaster"
# wide enough for the usage text (COLUMNS below) and the benchmark tables; custom.css
# sets the literal blocks' font (alabaster loads _static/custom.css)
html_theme_options = {"description": "LIBLINEAR on one core or a Dask cluster",
                      "page_width": "1240px", "sidebar_width": "230px",
                      "body_max_width": "none"}
html_static_path = ["_static"]
# docutils' smart quotes turn "--seed" into an en dash and "..." into curly quotes, which
# breaks every command line and option name pasted from the site
smartquotes = False

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


# the options a registry flag allows, in the order the table lists them
_SOLVER_OPTIONS = (("probability", "``-b 1``"), ("search", "``-C``"), ("init_sol", "``-i``"),
                   ("regularize_bias_optional", "``-R``"), ("newton", "``--newton tron``"),
                   ("two_variable_cd", "``--cd-block 2``"), ("online", "``--online``"),
                   ("primal_cd", "``--primal-cd``"), ("multinomial", "``--multinomial``"),
                   ("elastic_net", "``--l1-ratio``"), ("partitioned", "``--partition``"))


def _solver_table() -> str:
    """The solver table (reStructuredText): one row per registry row, in its order."""
    from dlinear import Params
    from dlinear.solver_table import METHODS, SOLVERS
    default = Params().solver_type
    lines = [".. list-table::", "   :header-rows: 1", "",
             "   * - ``-s``", "     - solver", "     - model file", "     - method",
             "     - default ``-e``", "     - options"]
    for spec in SOLVERS.values():
        options = [text for flag, text in _SOLVER_OPTIONS if getattr(spec, flag)]
        lines += [f"   * - {spec.id}",
                  f"     - {spec.description}" + (", the default" if spec.id == default else "")
                  + ("" if spec.available else " (not available in this version)"),
                  f"     - ``{spec.name}``", f"     - {METHODS[spec.method]}",
                  f"     - {spec.default_eps:g}", f"     - {', '.join(options) or '-'}"]
    return "\n".join(lines) + "\n"


class SolverTableDirective(SphinxDirective):
    """``.. dlinear-solvers::``: the solver table made from the registry."""

    def run(self):
        container = nodes.container()
        self.state.nested_parse(StringList(_solver_table().splitlines(),
                                           source="dlinear/solver_table.py"),
                                self.content_offset, container)
        return container.children


def _skip_metadata_routing(app, what, name, obj, skip, options):
    """scikit-learn's metadata-routing methods (set_fit_request & co) are scikit-learn's to
    document, not dlinear's."""
    if name == "get_metadata_routing" or (name.startswith("set_") and name.endswith("_request")):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_routing)
    app.add_directive("dlinear-help", HelpDirective)
    app.add_directive("dlinear-solvers", SolverTableDirective)
    return {"parallel_read_safe": True}
