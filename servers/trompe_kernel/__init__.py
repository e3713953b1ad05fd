"""The plugin kernel, at the bottom of the house: version, exit statuses, plugin errors, every hook (hookspecs.py),
the built-in plugins (builtins.py), the one manager (manager.py) and the registry that refuses a name registered
twice (registry.py). It imports nothing of trompe's; everything else may import it."""

from .hookspecs import hookimpl
from .version import __version__

__all__ = ["__version__", "hookimpl"]
