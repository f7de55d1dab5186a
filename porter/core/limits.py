"""Limits every layer agrees on, in a module that costs nothing to import (`porter --help` reads it)."""

MAX_FILE_MB = 10  # default of --max-file-size: larger files are copied as they are, not converted
