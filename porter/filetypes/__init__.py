"""Pipelines for files other than Python: requirements, packaging, shell, configs, notebooks.

One public module per file type, each with a predicate (`is_x(rel, head)`) and a pipeline
(`find_x(path, data, rules)` returning a `Found`); porter/engine/registry.py lists them in
the order they are tried. Modules named `_x` are helpers, imported by their users (some
load their libraries only when a file of theirs is converted: the YAML parser, tree-sitter).
One public module is no file type: pins.py reads the tree's own requirement pins once per
run, for the tree runner (rules that a pin makes moot are turned off).
"""
