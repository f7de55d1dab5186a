"""`porter convert`: the ported tree in OUT (or SRC, in place), its report and LoRA files.

run.py runs it (`run_convert`) into a report.py `ConvertReport`; place.py says where the
report and the LoRA files go, and what porter refuses to write over.
"""
