"""Exception types shared by the exporter (kept apart to avoid import cycles)."""


class UnsupportedOpError(NotImplementedError):
    """An aten op (or a use of it) that the wsc exporter cannot lower."""


class Unsupported(Exception):
    """Raised by a lowering when it rejects its arguments.

    The driver turns it into an :class:`UnsupportedOpError` that also names the
    op and the module it came from, so lowerings only state the reason.
    """
