"""The one exception type for user errors (bad file, bad option, bad model file)."""


class DlinearError(Exception):
    """A user error. Its message is one line naming the file/line or option at fault;
    the CLI prints it and exits 1 without a traceback."""


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap (LIBLINEAR prints a WARNING line)."""
