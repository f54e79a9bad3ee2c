"""mindspace's log lines in Evennia's server log."""

from __future__ import annotations

import logging

__all__ = ["forward_logs", "log_error", "log_warning"]

logger = logging.getLogger("mindspace.evennia")


def log_error(message: str) -> None:
    """Log ``message`` as an error in Evennia's server log (or Python's, outside it)."""
    try:
        from evennia.utils import logger as evennia_logger

        evennia_logger.log_err(message)
    except ImportError:  # pragma: no cover - outside Evennia
        logger.error(message)


def log_warning(message: str) -> None:
    """Log ``message`` as a warning: trouble outside mindspace (the model failed)."""
    try:
        from evennia.utils import logger as evennia_logger

        evennia_logger.log_warn(message)
    except ImportError:  # pragma: no cover - outside Evennia
        logger.warning(message)


class _EvenniaLogHandler(logging.Handler):
    """Sends mindspace's own log records to Evennia's server log."""

    def emit(self, record: logging.LogRecord) -> None:
        from evennia.utils import logger as evennia_logger

        message = f"[{record.name}] {self.format(record)}"
        if record.levelno >= logging.ERROR:
            evennia_logger.log_err(message)
        elif record.levelno >= logging.WARNING:
            evennia_logger.log_warn(message)
        else:
            evennia_logger.log_info(message)


def forward_logs() -> None:
    """Send the ``mindspace`` loggers to Evennia's log (once; not under tests)."""
    from django.conf import settings

    root = logging.getLogger("mindspace")
    if getattr(settings, "TEST_ENVIRONMENT", False) or root.handlers:
        return
    root.addHandler(_EvenniaLogHandler())
    if root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
