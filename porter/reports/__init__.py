"""Reports of a run: report.json (the contract), report.md, changes.patch."""
