"""Errors a tool raises on bad input; the server turns them into MCP tool errors."""


class ToolInputError(ValueError):
    """Bad input from the caller: the message names the argument and the accepted range."""

    failure: str | None = None  # set by the errors that are the server's doing, not the caller's (wire.FAILURE_META)

    def __init__(self, argument: str, message: str):
        self.argument = argument
        super().__init__(f"{argument}: {message}")


class LimitError(ToolInputError):
    """A configured limit would be exceeded; nothing was stored."""


class SessionGone(ToolInputError):
    """The session is unknown, closed, idle too long or evicted by a quota."""

    failure = "session"


class RegistryUnavailable(ToolInputError):
    """The shared registry (Redis) cannot be reached or refused a write: this call fails, the server carries on."""

    failure = "registry"
