"""The one exception type for user errors (bad file, bad option, bad model file)."""


class DlinearError(Exception):
    """A user error. Its message is one line naming the file/line or option at fault;
    the CLI prints it and exits 1 without a traceback."""


class DataError(DlinearError):
    """A training set whose text is valid but whose content the solver cannot take (e.g. a
    label that is not an integer for classification). The message names the instance; the
    CLI adds the file's name."""


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap (LIBLINEAR prints a WARNING line)."""
