"""The ``aau`` command line."""
