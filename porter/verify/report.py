"""What `porter verify` prints and writes: porter_report/verify.json and the text and
GitHub renderings (annotations escaped as `porter check --format github` does)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from porter import __version__
from porter.checker.github import escape_data, escape_property
from porter.core.files import write_beneath
from porter.core.tree import REPORT_DIR
from porter.reports.json_report import finding_dict
from porter.emulator.apis import default_version
from porter.emulator.targets import emulated
from porter.verify.codes import by_code
from porter.verify.run import VerifyResult

SCHEMA_VERSION = 1


def to_dict(result: VerifyResult) -> dict:
    statuses = Counter(m["status"] for m in result.modules)
    return {
        "schema_version": SCHEMA_VERSION,
        "porter_version": __version__,
        "target": result.target,
        "target_version": result.version,
        "tree": str(result.root),
        "seconds": round(result.seconds, 2),
        "phases": {name: round(seconds, 2) for name, seconds in result.phases.items()},
        "summary": {
            "modules": len(result.modules),
            "modules_by_status": dict(sorted(statuses.items())),
            "missing_dependencies": sorted(
                {m.get("missing", "") for m in result.modules if m["status"] == "missing-dependency"}
            ),
            "needs_setup": sorted(m["module"] for m in result.modules if m["status"] == "needs-setup"),
            "findings": len(result.findings),
            "findings_by_severity": {
                s: sum(f.severity == s for f in result.findings) for s in ("error", "warning", "info")
            },
            "findings_by_rule": dict(sorted(Counter(f.rule for f in result.findings).items())),
        },
        "modules": [{k: v for k, v in m.items() if k != "traceback"} for m in result.modules],
        "lora": {
            "skipped": result.lora_skipped,
            "runs": [
                {
                    "devices": r.devices,
                    "command": r.command,
                    "returncode": r.returncode,
                    "losses": r.losses,
                    "loss_fell": r.loss_fell,
                    "output_tail": r.output_tail,
                }
                for r in result.lora
            ],
        },
        "smoke": result.smoke,
        "findings": [finding_dict(f) for f in result.findings],
        "rules": {
            code: {"name": rule.name, "summary": rule.summary}
            for code in sorted({f.rule for f in result.findings})
            for rule in (by_code(result.target)[code],)
        },
    }


def write_report(result: VerifyResult) -> Path:
    """Write OUT/porter_report/verify.json; never through a link (a porter_report planted as
    one raises LinkRefused, an OSError naming it)."""
    data = (json.dumps(to_dict(result), indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    return write_beneath(result.root, f"{REPORT_DIR}/verify.json", data)


def summary_lines(result: VerifyResult) -> list[str]:
    data = to_dict(result)["summary"]
    by = data["modules_by_status"]
    package = emulated(result.target).package
    line = result.version or default_version(result.target)
    lines = [
        f"Imported {data['modules']} module(s) on the emulated {result.target} "
        f"({package} {line or 'without an API list'}): " + ", ".join(f"{n} {status}" for status, n in by.items()) + "."
    ]
    if data["missing_dependencies"]:
        lines.append("Not installed here (not counted as failures): " + ", ".join(data["missing_dependencies"]) + ".")
    if data["needs_setup"]:
        lines.append(
            "Scripts that assert their own setup when imported (not counted as failures): "
            + ", ".join(data["needs_setup"])
            + "."
        )
    if result.lora_skipped:
        lines.append(f"LoRA smoke run skipped: {result.lora_skipped}.")
    for run in result.lora:
        if run.losses:
            state = "fell" if run.loss_fell else "did not fall"
            lines.append(
                f"LoRA on {run.devices} emulated device(s): exit {run.returncode}, loss {run.losses[0]:.3f} -> "
                f"{run.losses[-1]:.3f} over {len(run.losses)} logged steps ({state})."
            )
        else:
            lines.append(f"LoRA on {run.devices} emulated device(s): exit {run.returncode}, no loss logged.")
    if result.smoke:
        lines.append(
            f"--run `{result.smoke['command']}`: exit {result.smoke['returncode']} in {result.smoke['seconds']} s."
        )
    sev = data["findings_by_severity"]
    lines.append(
        f"Found {data['findings']} finding(s): {sev['error']} error, {sev['warning']} warning, {sev['info']} info."
    )
    for code, n in data["findings_by_rule"].items():
        lines.append(f"  {n:5d}  {code}  {by_code(result.target)[code].name}")
    return lines


def render_text(result: VerifyResult) -> str:
    lines = [f"{f.path}:{f.line}:{f.col}: {f.rule} {f.message}" for f in result.findings]
    if lines:
        lines.append("")
    return "\n".join(lines + summary_lines(result)) + "\n"


def render_github(result: VerifyResult) -> str:
    kinds = {"error": "error", "warning": "warning", "info": "notice"}
    lines = []
    for f in result.findings:
        name = by_code(result.target)[f.rule].name
        props = {"file": f.path, "line": str(f.line), "col": str(f.col), "title": f"{f.rule} {name}"}
        message = f.message if not f.suggestion else f"{f.message}\nSuggestion: {f.suggestion}"
        lines.append(
            f"::{kinds[f.severity]} "
            + ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
            + f"::{escape_data(message)}"
        )
    return "\n".join(lines + summary_lines(result)) + "\n"


def render_json(result: VerifyResult) -> str:
    return json.dumps(to_dict(result), indent=1, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "github": render_github}
