"""`porter check`: what `convert` would change and which torch APIs the target cannot run,
reported without writing anything (text, JSON, SARIF or GitHub annotations).

run.py runs it (`run_check`) into a report.py `CheckReport`; model.py numbers the findings
(fingerprints) and counts them; baseline.py accepts recorded ones; shown.py is what the
output formats (formats.py: text.py, sarif.py, github.py and JSON) are given.
"""
