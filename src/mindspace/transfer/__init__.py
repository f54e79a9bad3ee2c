"""Export and import of whole assistants (``mindspace export`` / ``mindspace import``).

The format is specified in docs/export.md: JSON lines, a header, one line per record
of every kind the store keeps, an end line with the counts.
"""

from __future__ import annotations

from mindspace.transfer.exporter import ExportSummary, export_assistant, export_to_path
from mindspace.transfer.format import FORMAT, VERSION, TransferError
from mindspace.transfer.importer import ImportSummary, import_assistant, read_header

__all__ = [
    "FORMAT",
    "VERSION",
    "ExportSummary",
    "ImportSummary",
    "TransferError",
    "export_assistant",
    "export_to_path",
    "import_assistant",
    "read_header",
]
