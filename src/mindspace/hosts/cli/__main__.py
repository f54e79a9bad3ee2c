"""``python -m mindspace.hosts.cli`` runs the ``mindspace`` command."""

from mindspace.hosts.cli.app import main

main()
