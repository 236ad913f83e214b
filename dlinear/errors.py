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


def interrupt_in(error: BaseException):
    """The KeyboardInterrupt in error's chain (itself, its cause or context), or None.
    Numba's wrapper of a kernel runs Python code as it boxes the result
    (numba.core.serialize._numba_unpickle): a Ctrl-C pending then raises there, and the
    wrapper returns its result with the exception set, which CPython reports as
    "SystemError: CPUDispatcher(...) returned a result with an exception set", caused by
    the KeyboardInterrupt."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def surfacing_interrupts(function):
    """`function` (a fit, a search) stopped within a kernel's step by a Ctrl-C
    (threads.kernels_stop_on_ctrl_c), and with a SystemError that a Ctrl-C caused
    (interrupt_in) raised as that KeyboardInterrupt: a caller's Ctrl-C is a prompt
    KeyboardInterrupt, wherever it landed."""
    import functools

    from .threads import kernels_stop_on_ctrl_c

    @functools.wraps(function)
    def run(*args, **kwargs):
        try:
            with kernels_stop_on_ctrl_c():
                return function(*args, **kwargs)
        except SystemError as e:
            interrupt = interrupt_in(e)
            if interrupt is None:
                raise
            raise interrupt from None
    return run


class ConvergenceWarning(UserWarning):
    """A solver stopped at an iteration cap rather than at its tolerance.

    The message is LIBLINEAR's WARNING line, e.g. ``reaching max number of
    iterations``; the command line prints it, Python code gets this warning.
    """
