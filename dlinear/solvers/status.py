"""How a fit ended: a status on every FitResult, from which the log's WARNING lines and the
ConvergenceWarnings are both made.

scipy.optimize's convention: status 0 is converged and 1 the iteration cap reached; the
other caps and failures LIBLINEAR reports are further bits, since one fit can meet several
(a Newton step's CG cap, then the Newton iteration cap). A solver that meets one calls
`note`, which logs LIBLINEAR's line and returns the bit to add to its status; train turns
the statuses into warnings (dlinear.planning.class_plan.warn_about_status), so the
wording of a line can change without losing its warning.
"""
from __future__ import annotations

from enum import IntFlag
from typing import Optional


class Status(IntFlag):
    CONVERGED = 0
    MAX_ITER = 1                # the outer cap of the CD solvers and OWL-QN (-s 1, 3..7, 12, 13, 21)
    LINE_SEARCH_FAILED = 2      # Newton's or OWL-QN's line search found no decrease
    MAX_NEWTON_ITER = 4         # the Newton / TRON iteration cap (-s 0, 2, 11)
    MAX_CG_STEPS = 8            # one Newton step's CG iterations capped at max(n, 5)
    MAX_INNER_ITER = 16         # -s 6: the coordinate-descent passes of a Newton step capped
    MAX_UPDATES = 32            # --online: the update budget (--max-updates) spent


# Each bit's line, in LIBLINEAR's words where LIBLINEAR prints one; {budget} is filled with
# the run's budget in the log and with the option's name in the warning.
LINES = {
    Status.MAX_CG_STEPS: "WARNING: reaching maximal number of CG steps",
    Status.MAX_NEWTON_ITER: "WARNING: reaching max number of Newton iterations",
    Status.MAX_INNER_ITER: "WARNING: reaching max number of inner iterations",
    Status.MAX_ITER: "WARNING: reaching max number of iterations",
    Status.MAX_UPDATES: ("WARNING: reaching max number of updates ({budget}) before the "
                         "stopping tolerance"),
    Status.LINE_SEARCH_FAILED: "WARNING: line search fails",
}


def log_line(flag: Status, budget=None, detail: Optional[str] = None) -> str:
    """The log's WARNING line of one bit: with the update budget where it has one, and
    a parenthesised detail after it when given."""
    line = LINES[flag].format(budget=budget)
    return line if detail is None else f"{line} ({detail})"


def warning_text(flag: Status) -> str:
    """The ConvergenceWarning's message of one bit."""
    return LINES[flag].format(budget="--max-updates")


def note(log: list, flag: Status, budget=None, detail: Optional[str] = None) -> Status:
    """Logs the line of `flag` and returns it, for the caller's status: `status |= note(...)`."""
    log.append(log_line(flag, budget, detail))
    return flag


def warning_texts(status: Status) -> list:
    """The warnings of a status, in the order of LINES."""
    return [warning_text(flag) for flag in LINES if status & flag]
