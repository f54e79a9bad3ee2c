"""Hosts: where an assistant lives (the terminal CLI, the HTTP API, Evennia)."""
