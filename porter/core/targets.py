"""The targets porter ports to, for every layer (the rule model's words re-export them:
porter/rules/terms.py): core needs them for the names of porter's own files (requirements-<target>.txt)."""

TARGETS = ("mlu", "hip", "npu")
