"""Why a plugin cannot be used: start-up errors every command shows as one line (exit 2)."""


class PluginError(RuntimeError):
    """A plugin cannot be used as configured (unknown name or tag, import failure): a start-up error."""


class PluginConflict(PluginError):
    """Two plugins register the same name: a start-up error naming both."""
