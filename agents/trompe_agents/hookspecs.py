"""Where plugins written before the kernel import `hookimpl` from; every hook is specified in
trompe_kernel/hookspecs.py (one namespace, `trompe`), and new plugins import it from `trompe_kernel`."""

from trompe_kernel.hookspecs import hookimpl

__all__ = ["hookimpl"]
