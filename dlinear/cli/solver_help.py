"""The solver lists of the help texts, derived from the registry rows (dlinear.solver_table),
so a new row appears in them without editing any text."""
from __future__ import annotations

from ..solver_table import SOLVERS, solver_ids


def solver_lines(kind: str) -> str:
    """LIBLINEAR's lines "\\t 0 -- description" of every row of one kind of problem."""
    return "".join(f"\t{s.id:2d} -- {s.description}\n" for s in SOLVERS.values()
                   if s.kind == kind)


def ids(test) -> str:
    """The available solvers an option applies to, as the help text lists them: "0, 2, 11"."""
    return ", ".join(map(str, solver_ids(test)))
