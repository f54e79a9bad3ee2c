"""The ``mindspace`` command-line host (Typer + Rich); the entry point is ``app.main``."""
