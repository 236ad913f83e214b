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
    (threads.kernels_stop_on_ctrl_c), and ended in a KeyboardInterrupt whenever a Ctrl-C
    arrived during it: an error its interruption caused (a SystemError of Numba's wrapper,
    see interrupt_in; an error of a kernel's compilation that the Ctrl-C broke off) is
    raised as that KeyboardInterrupt, and so is a normal return after a Ctrl-C whose
    KeyboardInterrupt Python dropped (raised in a callback, where it can only be ignored;
    the kernels and the drivers' steps still stop on the watcher's flag). A caller's
    Ctrl-C is a prompt KeyboardInterrupt, wherever it landed."""
    import functools

    from .threads import kernels_stop_on_ctrl_c

    @functools.wraps(function)
    def run(*args, **kwargs):
        watch = kernels_stop_on_ctrl_c()
        try:
            with watch:
                result = function(*args, **kwargs)
        except KeyboardInterrupt:
            raise
        except Exception as e:
            interrupt = interrupt_in(e)
            if interrupt is not None:
                raise interrupt from None
            if watch.ctrl_c_arrived:
                raise KeyboardInterrupt from None
            raise
        if watch.ctrl_c_arrived:
            raise KeyboardInterrupt
        return result
    return run


class ConvergenceWarning(UserWarning):
    """A solver stopped at an iteration cap rather than at its tolerance.

    The message is LIBLINEAR's WARNING line, e.g. ``reaching max number of
    iterations``; the command line prints it, Python code gets this warning.
    """
