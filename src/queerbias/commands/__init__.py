"""Subcommands of the `queerbias` CLI; every module here defines `register(subparsers)`."""
