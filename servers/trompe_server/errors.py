"""Errors a call can end in: the caller's bad input, or a fault of the server's own; both become MCP tool errors,
a fault marked as the server's doing (wire.FAILURE_META) so a client fails its task instead of blaming its input."""


class ToolInputError(ValueError):
    """Bad input from the caller: the message names the argument and the accepted range."""

    def __init__(self, argument: str, message: str):
        self.argument = argument
        super().__init__(f"{argument}: {message}")


class LimitError(ToolInputError):
    """A configured limit would be exceeded; nothing was stored."""


class ServerFault(RuntimeError):
    """The server's own state failed the call, whatever its arguments were: infrastructure, not caller input.

    `failure` is the kind sent in wire.FAILURE_META; the message starts with it, as a ToolInputError's starts
    with its argument."""

    failure: str

    def __init__(self, message: str):
        super().__init__(f"{self.failure}: {message}")


class SessionGone(ServerFault):
    """The session is unknown, closed, idle too long or evicted by a quota."""

    failure = "session"


class RegistryUnavailable(ServerFault):
    """The shared registry (Redis) cannot be reached or refused a write: this call fails, the server carries on."""

    failure = "registry"
