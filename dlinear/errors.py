"""The one exception type for user errors (bad file, bad option, bad model file)."""


class DlinearError(Exception):
    """A user error: a bad file, option, parameter or model file.

    Its message is one line naming the file and line or the option at fault; the command
    line prints it and exits 1 without a traceback, writing nothing.
    """


class DataError(DlinearError):
    """A training set whose text is valid but whose content the solver cannot take (e.g. a
    label that is not an integer for classification). The message names the instance; the
    CLI adds the file's name."""


class WarmStartError(DlinearError):
    """A warm start that does not fit the data or the parameters (the CLI names the -i
    file)."""


class ConvergenceWarning(UserWarning):
    """A solver stopped at an iteration cap rather than at its tolerance.

    The message is LIBLINEAR's WARNING line, e.g. ``reaching max number of
    iterations``; the command line prints it, Python code gets this warning.
    """
