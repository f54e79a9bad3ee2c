"""Writing an assistant to the export format, streamed kind by kind, to a stream or a path.

:func:`export_to_path` never replaces what a path is: a regular file (or a new one) is
written beside it and renamed over it once complete; a symbolic link is followed and
what it points to is written (the link stays); a character device (``/dev/null``) or a
FIFO is written through, as ``> PATH`` would; a directory, a block device or a socket
is refused.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO, Unpack

from mindspace import __version__
from mindspace.clock import format_time
from mindspace.errors import AssistantNotFoundError
from mindspace.state.port import Store
from mindspace.transfer.format import (
    FORMAT,
    VERSION,
    Progress,
    ProgressOptions,
    TransferError,
    encode_record,
    kind_specs,
    schema_version,
)

__all__ = ["ExportSummary", "export_assistant", "export_to_path"]


@dataclass
class ExportSummary:
    """What an export wrote."""

    assistant: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def records(self) -> int:
        """How many records in all."""
        return sum(self.counts.values())


def export_assistant(
    store: Store,
    key: str,
    out: TextIO,
    *,
    progress: Progress | None = None,
    progress_every: int = 10_000,
    batch: int = 1000,
) -> ExportSummary:
    """Write the assistant ``key`` to ``out``: a header, every record, the end line.

    Records are streamed ``batch`` at a time (:meth:`RecordStore.scan`), so an
    assistant of any size is exported in bounded memory. Each batch is its own read:
    export an assistant nothing is writing to (stop its server or worker) for a
    snapshot of one moment.

    Args:
        store: The store holding the assistant.
        key: The assistant to export.
        out: Where the lines go (text, UTF-8).
        progress: Called with a short line every ``progress_every`` records.
        progress_every: How often ``progress`` is called.
        batch: Records read per query.

    Raises:
        TransferError: no assistant ``key`` in the store.
    """
    try:
        info = store.open_assistant(key, create=False)
    except AssistantNotFoundError as exc:
        raise TransferError(str(exc)) from exc
    header = {
        "format": FORMAT,
        "version": VERSION,
        "mindspace_version": __version__,
        "assistant": info.key,
        "assistant_created_at": info.created_at,
        "exported_at": format_time(datetime.now(UTC)),
        "schema_version": schema_version(),
    }
    out.write(json.dumps(header, ensure_ascii=False) + "\n")
    summary = ExportSummary(assistant=info.key)
    written = 0
    for kind, spec in kind_specs().items():
        count = 0
        for record in store.scan(info.id, kind, list(spec.fields), batch=batch):
            out.write(encode_record(spec, record) + "\n")
            count += 1
            written += 1
            if progress is not None and written % progress_every == 0:
                progress(f"exported {written} records ({kind})")
        summary.counts[kind] = count
    out.write(json.dumps({"end": FORMAT, "counts": summary.counts}) + "\n")
    out.flush()
    return summary


def export_to_path(
    store: Store, key: str, path: Path, **reporting: Unpack[ProgressOptions]
) -> ExportSummary:
    """Export ``key`` to ``path`` without ever replacing what ``path`` is.

    ``reporting`` is passed on to :func:`export_assistant` (its ``progress`` and
    ``progress_every``).

    A regular file (or a path that does not exist yet) is written to a temporary file in
    the same directory, flushed to disk and renamed over the target, so a failed export
    leaves the old file as it was and no partial file behind. A symbolic link is
    followed: its target is written that way and the link itself is kept. A character
    device or a FIFO is opened and written through (nothing is renamed over it).

    Raises:
        TransferError: no assistant ``key``; ``path`` is a directory, a block device or a
            socket; or it cannot be written (the message says why).
    """
    target = Path(os.path.realpath(path))  # through every symlink, to what gets written
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise TransferError(_cannot(path, exc)) from exc
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        try:
            with target.open("w", encoding="utf-8") as out:
                return export_assistant(store, key, out, **reporting)
        except OSError as exc:
            raise TransferError(_cannot(path, exc)) from exc
    if mode is not None and not stat.S_ISREG(mode):
        what = "a directory" if stat.S_ISDIR(mode) else "a block device or a socket"
        raise TransferError(
            f"{str(path)!r} is {what}; export to a regular file, a FIFO or a character "
            "device (or to stdout without -o)."
        )
    return _atomic(store, key, target, path, mode, reporting)


def _atomic(
    store: Store,
    key: str,
    target: Path,
    named: Path,
    mode: int | None,
    reporting: ProgressOptions,
) -> ExportSummary:
    """Write beside ``target`` under a unique name, then rename it over ``target``."""
    try:
        handle, partial = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".partial", dir=target.parent
        )
    except OSError as exc:
        raise TransferError(_cannot(named, exc)) from exc
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            summary = export_assistant(store, key, out, **reporting)
            out.flush()
            os.fsync(out.fileno())
        # An existing file keeps its permissions; a new one gets the usual (umask) ones.
        os.chmod(partial, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        os.replace(partial, target)
    except OSError as exc:
        raise TransferError(_cannot(named, exc)) from exc
    finally:
        Path(partial).unlink(missing_ok=True)
    return summary


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _cannot(path: Path, exc: OSError) -> str:
    return f"Cannot write {str(path)!r}: {exc.strerror or exc}; choose a writable path."
