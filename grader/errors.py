"""Errors the grader reports to its user as one clear message and an exit code."""

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2       # bad arguments, missing submission or files
EXIT_NO_GPU = 3      # built (maybe), but no GPU: no GPU points awarded
EXIT_BUILD = 4       # a submission did not build (results still written, 0 for that lab)


class GraderError(Exception):
    """A problem with the input or the machine, explained in `message`."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
