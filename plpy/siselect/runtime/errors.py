"""Errors that carry a SQLSTATE, so the server can raise them as PostgreSQL errors."""


class SiselectError(Exception):
    """An error a user can act on; ``sqlstate`` is reported by the server and the CLI."""

    sqlstate = "XX000"

    def __init__(self, message: str, sqlstate: str | None = None, detail: str | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail
        if sqlstate:
            self.sqlstate = sqlstate

    def __str__(self) -> str:
        return self.message


class InvalidInput(SiselectError):
    """Bad argument values (22023 invalid_parameter_value)."""

    sqlstate = "22023"


class NotASelect(SiselectError):
    """The text is not a single read-only SELECT (42601 or 25006 for writes)."""

    sqlstate = "42601"


class QueryFailed(SiselectError):
    """PostgreSQL rejected or aborted a query; ``sqlstate`` is PostgreSQL's own."""


class ConfigError(SiselectError):
    """Missing or wrong configuration (F0000 config_file_error family: 22023 here)."""

    sqlstate = "22023"


class JudgeError(SiselectError):
    """The judge could not answer (58000 system_error: the failure is outside PostgreSQL)."""

    sqlstate = "58000"


class JudgeUnavailable(JudgeError):
    """The judge's endpoint is down, too slow, or refuses the request; retrying is over."""


class JudgeReplyInvalid(JudgeError):
    """The endpoint answered, but not with a usable chat completion (garbage, too large)."""


class Cancelled(SiselectError):
    """The call's time is up (57014 query_canceled): its statement_timeout passed while
    Python was working. Unlike a pair's budget, it ends the whole call: handlers that
    keep going after one pair's failure let it through."""

    sqlstate = "57014"


class AnswerTooLarge(QueryFailed):
    """An answer passed the byte cap per answer (54000 program_limit_exceeded)."""

    sqlstate = "54000"
