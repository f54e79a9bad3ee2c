"""Writing an assistant to the export format, streamed kind by kind."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TextIO

from mindspace import __version__
from mindspace.clock import format_time
from mindspace.errors import AssistantNotFoundError
from mindspace.state.port import Store
from mindspace.transfer.format import (
    FORMAT,
    VERSION,
    TransferError,
    encode_record,
    kind_specs,
    schema_version,
)

__all__ = ["ExportSummary", "export_assistant"]

Progress = Callable[[str], None]


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
