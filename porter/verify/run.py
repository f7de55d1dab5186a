"""`porter verify OUT`: import every ported module under the emulator, run porter_lora's
entry point on 1 and 2 emulated devices, run the user's smoke command; collect findings."""

from __future__ import annotations

import json
import shlex
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from porter.core.model import Finding
from porter.core.tree import REPORT_DIR
from porter.emulator import environment
from porter.emulator.apis import versions
from porter.emulator.launch import prepare
from porter.emulator.targets import DEVICES, EmulatedDevice
from porter.verify.codes import by_code
from porter.verify.guards import needed_package
from porter.verify.imports import import_modules
from porter.verify.locate import innermost_frame
from porter.verify.bounded import run_bounded
from porter.verify.lora import ENTRY, LoraRun, build_tiny_model, run_lora
from porter.verify.modules import find_modules, own_top_names
from porter.verify.progress import Progress


class VerifyError(Exception):
    """OUT cannot be verified (no report, another target, no torch): exit 2."""


@dataclass(frozen=True)
class VerifyOptions:
    timeout: float = 60.0  # per module import, of its own time (owntime.py)
    jobs: int | None = None  # imports at a time (default: cores, at most 4)
    lora: bool = True
    lora_devices: tuple[int, ...] = (1, 2)
    run: str | None = None
    run_devices: int | None = None  # for --run; None: the caller's visible-devices variable, else 1
    run_timeout: float = 600.0


@dataclass
class VerifyResult:
    root: Path
    target: str
    version: str | None
    modules: list[dict] = field(default_factory=list)
    lora: list[LoraRun] = field(default_factory=list)
    lora_skipped: str | None = None
    smoke: dict | None = None
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds per part: imports, lora, run


def read_target(root: Path) -> tuple[str, str | None]:
    """Target and vendor package line (torch_mlu, torch_npu) from OUT/porter_report/report.json."""
    path = root / REPORT_DIR / "report.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VerifyError(f"{path}: no report; is {root} the output of `porter convert`?") from None
    except (OSError, ValueError) as exc:
        raise VerifyError(f"{path}: unreadable report ({exc})") from None
    if not isinstance(report, dict) or "target" not in report:
        raise VerifyError(f"{path}: not a porter report (no 'target')")
    target = report["target"]
    if target not in DEVICES:
        raise VerifyError(f"{path}: target is {target!r}; porter verify emulates {' and '.join(DEVICES)} only")
    version = report.get("target_version")
    known = versions(target)
    if version is not None and version not in known:
        package = DEVICES[target].package
        raise VerifyError(
            f"{path}: {package} line {version!r} has no API list here (known: {', '.join(known) or 'none'})"
        )
    return target, version


def _finding(target: str, code: str, path: str, line: int, message: str) -> Finding:
    rule = by_code(target)[code]
    return Finding(
        rule=code,
        severity=rule.severity,
        path=path,
        line=max(line, 1),
        col=1,
        message=message,
        suggestion=rule.suggestion,
    )


def classify(error: str, target: str = "mlu") -> str:
    """The code of an import failure on `target`'s emulator, from its message."""
    device = DEVICES[target]
    name = device.name
    if f"is not available in {device.package} for torch" in error:
        return "PRT702"
    if (
        "Expected all tensors to be on the same device" in error
        or "Torch not compiled with CUDA enabled" in error
        or "Found no NVIDIA driver" in error
    ):
        return "PRT703"  # a tensor left on another device, or a "cuda" the port missed
    if (
        f"device type at start of device string: {name}" in error
        or f"has no attribute '{name}'" in error
        or f"Invalid device string: '{name}" in error
    ):
        return "PRT704"
    return "PRT701"


def _module_findings(results: list[dict], own: set[str], device: EmulatedDevice) -> list[Finding]:
    target = device.name
    out = []
    for r in results:
        status = r["status"]
        if status == "missing" and r.get("missing", "").split(".")[0] not in own | {device.package, "porter"}:
            r["status"] = "missing-dependency"  # a third-party package this environment lacks
            continue
        guarded = needed_package(r)
        if guarded:  # the module's own check that an optional package is there
            r.update(status="missing-dependency", missing=guarded)
            continue
        if status in ("missing", "error"):
            code = classify(r.get("error", ""), target)
            where = r.get("file") or r["path"]
            message = f"importing {r['module']} failed: {r.get('error', '')}"
            out.append(_finding(target, code, where, r.get("line") or 1, message))
        elif status == "timeout":
            out.append(_finding(target, "PRT705", r["path"], 1, f"importing {r['module']}: {r['error']}"))
    return out


def _lora(root: Path, version: str | None, opts: VerifyOptions, result: VerifyResult, progress: Progress) -> None:
    target = result.target
    if not (root / ENTRY).is_file():
        result.lora_skipped = f"no {ENTRY} in the tree"
        return
    with tempfile.TemporaryDirectory(prefix="porter-verify-") as tmp:
        work = Path(tmp)
        progress.show("LoRA: building a tiny model", part="lora")
        error = build_tiny_model(work, version, timeout=300, target=target)
        if error:
            result.lora_skipped = error
            progress.drop("lora")
            return
        for devices in opts.lora_devices:
            progress.show(f"LoRA on {devices} emulated device(s)", part="lora")
            run = run_lora(root, work, devices, version, timeout=600, target=target)
            progress.drop("lora")
            result.lora.append(run)
            where = run.file or ENTRY
            if run.returncode != 0:
                tail = " | ".join(run.output_tail[-4:])
                ended = "did not finish" if run.returncode is None else f"exited with {run.returncode}"
                message = f"train_lora.py on {devices} emulated device(s) {ended}: {tail}"
                result.findings.append(_finding(target, "PRT706", where, run.line, message))
            elif not run.loss_fell:
                message = f"on {devices} emulated device(s) the loss did not fall: {run.losses}"
                result.findings.append(_finding(target, "PRT707", ENTRY, 1, message))


def _smoke(root: Path, command: str, version: str | None, opts: VerifyOptions, result: VerifyResult) -> None:
    env = environment(opts.run_devices, version, target=result.target)
    start = time.perf_counter()
    proc = run_bounded(command, opts.run_timeout, env=env, cwd=root, shell=True)
    code, output = proc.returncode, proc.stdout + "\n" + proc.stderr
    if proc.timed_out:
        output += f"\ntimed out after {opts.run_timeout:g} s: {proc.stuck_summary()}"
    tail = [ln for ln in output.strip().splitlines() if ln.strip()][-12:]
    result.smoke = {
        "command": command,
        "returncode": code,
        "seconds": round(time.perf_counter() - start, 2),
        "output_tail": tail,
    }
    if code != 0:
        file, line = innermost_frame(output, root)
        first = shlex.split(command)[0] if command.strip() else command
        message = f"`{command}` exited with {code}: {' | '.join(tail[-4:])}"
        result.findings.append(_finding(result.target, "PRT708", file or first, line, message))


def _timed(result: VerifyResult, phase: str, work, *args):
    began = time.perf_counter()
    try:
        return work(*args)
    finally:
        result.phases[phase] = time.perf_counter() - began


def verify_tree(root: Path, opts: VerifyOptions, progress: Progress | None = None) -> VerifyResult:
    """Verify OUT; `progress` shows where it is (a terminal line), if given."""
    progress = progress or Progress(enabled=False)
    start = time.perf_counter()
    root = root.resolve()  # subprocesses run elsewhere (the LoRA run in a temporary folder)
    target, version = read_target(root)
    result = VerifyResult(root, target, version)
    prepare()
    modules = find_modules(root)
    # The LoRA runs go on beside the imports: each leaves a core idle at times (one parent
    # importing what the children share, a single-process run, a retry alone), which the
    # other fills. Time limits count a module's own time, so sharing the CPU times nothing out.
    with ThreadPoolExecutor(1) as beside:
        lora = (
            beside.submit(_timed, result, "lora", _lora, root, version, opts, result, progress) if opts.lora else None
        )
        if modules:
            result.modules = _timed(
                result, "imports", import_modules, root, modules, version, opts.timeout, opts.jobs, progress, target
            )
            result.findings.extend(_module_findings(result.modules, own_top_names(modules), DEVICES[target]))
        if lora is not None:
            lora.result()
    if opts.run:
        began = time.perf_counter()
        progress.show(f"running {opts.run}")
        _smoke(root, opts.run, version, opts, result)
        result.phases["run"] = time.perf_counter() - began
    progress.close()
    result.findings.sort(key=lambda f: (f.path, f.line, f.rule))
    result.seconds = time.perf_counter() - start
    return result
