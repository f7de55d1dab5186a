"""`porter doctor`: check the installed environment of a target machine (torch and the
vendor extension, cards, dtypes, the process-group backend, library versions against
porter's package table, CUDA builds and known hacks), one result per check with a fix.

torch is imported only by the checks that need it (porter/doctor/runtime.py), when the
command runs: `porter convert` and `porter check` never load it.
"""
