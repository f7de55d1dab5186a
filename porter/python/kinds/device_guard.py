"""Kind `device-guard`: CUDA availability checks and the code they guard.

Three cases, decided per `if` branch whose test calls a CUDA check (`checks`: qualified
names, or bare names for local helpers such as `is_torch_cuda_available`):

- the branch guards CUDA-only code (its test or body uses a module in `cuda_only_modules`
  or a literal in `cuda_only_strings`): it is kept as it is, every edit and report inside it is
  turned into an `info` finding (it never runs on the target: an nvidia-smi query there is
  nothing to port), and the guard itself is noted (`info`: keeping it is
  the port, nothing is left to do);
- the branch is part of a device dispatch chain (another branch tests a device named in
  `other_devices`): a target branch, a converted copy of the CUDA branch testing
  `target_check`, is inserted before it and the CUDA branch is kept;
- otherwise the guarded code is being ported: the check is converted in place.

A branch that runs only on another device (a test of `other_devices`, not negated, alone or
`and`-ed: `if env == "CUDA_VISIBLE_DEVICES" and is_torch_rocm():`) is that device's code, kept
whole; a check `and`-ed with such a test (`is_torch_cuda_available() and torch.version.hip is
not None`) detects that device and is kept too.

A check that chooses a value another rule keeps (`accelerator = "cuda"` where "cuda" is
Lightning's accelerator name: a finding without an edit at the literal) is kept with it, in an
`if` branch or a conditional expression. A method called on an object of a class of a
`cuda_only_modules` module (`bnb.nn.Params4bit(w).cuda()`, whose move to a CUDA device is what
quantizes it) is that library's own and is kept too.

Checks outside `if` tests (`x = npu() or cuda()`) are converted in place too. A module the
kernel-module kind keeps whole (Triton kernels, a CUDA extension's wrapper, a flash-attn
monkey patch: porter/python/kinds/kernel_module.py) is left as it is.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from dataclasses import replace

from porter.python.kinds import _guards as guards
from porter.python.kinds._span_queries import SpanSet, first_containing
from porter.python.kinds._target_code import beside_target_code
from porter.core.model import KEPT_MODULE, Edit, Finding
from porter.core.textio import line_ending
from porter.python.context import FileContext
from porter.rules import Rule
from porter.rules.kinds import DeviceGuardParams
from porter.python.kinds.base import PythonKind


def screen_words(rules: list[Rule]) -> set[str]:
    from porter.python.kinds.qualified_name import screen_word

    return {screen_word(c) for r in rules for c in DeviceGuardParams.of(r).checks}


def finalize(ctx: FileContext, rules: list[Rule], findings: list[Finding]) -> list[Finding]:
    if any(f.subject and f.subject.startswith(KEPT_MODULE) for f in findings):
        return findings  # kept whole (its one finding, kinds/kernel_module.py): nothing in it is ported
    for rule in rules:
        findings = _apply(ctx, rule, findings)
    return findings


def _apply(ctx: FileContext, rule: Rule, findings: list[Finding]) -> list[Finding]:
    p = DeviceGuardParams.of(rule)
    torch_name = ctx.imports.local_name_for("torch")
    target_check = p.target_check.format(torch=torch_name) if torch_name else None
    seen_elifs: set[int] = set()
    keep: list[tuple[int, int, str]] = []  # (start, end, why)
    # Regions that never run on the target (a guard of CUDA-only code, another device's
    # branch, a choice kept with its CUDA check): what is reported in them, an edit or not,
    # is a note.
    quiet: list[tuple[int, int, str]] = []
    extra: list[Finding] = []
    checked = guards.checked_ifs(ctx, rule)
    kept_value = guards.KeptValues(ctx, findings)
    edits: _EditsByStart | None = None  # made for the first target branch
    elsewhere = [d for d in p.other_devices if d != p.target_device]
    # Another device's branch (`if is_torch_rocm():`, `elif env == "X" and torch.version.hip`):
    # its code is that device's, CUDA names included (ROCm reads CUDA_VISIBLE_DEVICES).
    other_branches: set[int] = set()
    for branch in ctx.own_nodes(ast.If):
        device = guards.other_device_tested(branch.test, elsewhere)
        if device is not None:
            device = _DEVICE_NAMES.get(device, device.upper())
            other_branches.add(id(branch))
            keep.append(
                (
                    ctx.span(branch)[0],
                    ctx.span(branch.body[-1])[1],
                    f"is the {device} branch (`{_quoted(ctx, branch.test)}`), another device's code",
                )
            )
            quiet.append(keep[-1])
    # `is_torch_cuda_available() and torch.version.hip is not None`: ROCm's detection.
    for both in ctx.own_nodes(ast.BoolOp):
        if not isinstance(both.op, ast.And):
            continue
        check = next((v for v in both.values if guards.is_check(ctx, v, rule)), None)
        device = guards.other_device_tested(both, elsewhere) if check is not None else None
        if device is not None:
            device = _DEVICE_NAMES.get(device, device.upper())
            s, e = ctx.span(both)
            keep.append((s, e, f"detects {device}, another device (`{_quoted(ctx, both)}`)"))
            extra.append(
                ctx.finding(
                    rule,
                    check,
                    f"CUDA check kept: with the rest of `{_quoted(ctx, both)}` it detects {device}, another device",
                    severity="info",
                )
            )
    # CUDA code beside the target's own (`if is_torch_npu_available():` next to it): kept, or
    # porting it would make a second target path (porter/python/kinds/_target_code.py).
    beside = beside_target_code(ctx, rule, p.target_device)
    keep += beside
    quiet += beside
    beside_starts = {start for start, _, _ in beside}
    for top in ctx.own_nodes(ast.If) if checked else ():
        if id(top) in seen_elifs:
            continue
        chain = guards.chain(top)
        seen_elifs.update(id(b) for b in chain[1:])
        for i, branch in enumerate(chain):
            if id(branch) not in checked or id(branch) in other_branches:
                continue
            if guards.negated_check(ctx, branch.test, rule):
                continue  # `elif not cuda_available(): cpu`: converted in place below
            start = ctx.span(branch)[0]
            end = ctx.span(branch.body[-1])[1]
            if start in beside_starts:
                continue  # kept beside the target's own branch
            if guards.mentions(ctx, branch.test, rule, p.cuda_only_strings, p.cuda_only_modules) or any(
                guards.mentions(ctx, stmt, rule, p.cuda_only_strings, p.cuda_only_modules) for stmt in branch.body
            ):
                keep.append((start, end, "guards CUDA-only code"))
                quiet.append(keep[-1])
                # Keeping the check is the port (the guarded code cannot run on the target
                # either way): a note, outside the default set, not something to act on.
                extra.append(
                    ctx.finding(
                        rule,
                        branch.test,
                        "CUDA check kept: it guards CUDA-only code (a CUDA-only library or FlashAttention-2)",
                        severity="info",
                    )
                )
                continue
            chosen = kept_value(branch.body)
            if chosen is not None:
                keep.append((start, end, f"chooses {_quoted(ctx, chosen[0])}, which porter keeps: it stays CUDA's"))
                quiet.append(keep[-1])
                extra.append(_kept_choice_note(ctx, rule, branch.test, *chosen))
                continue
            others = [b for j, b in enumerate(chain) if j != i]
            if not any(guards.other_device(b.test, p.other_devices) for b in others):
                continue  # a plain guard: converted in place below
            if guards.imported_from_torch(ctx, branch.test, rule):
                continue  # its import is ported (torch.cuda -> torch.mlu): no CUDA branch can stay
            keep.append((start, end, "is the CUDA branch of a device dispatch chain"))
            if any(guards.other_device(b.test, [p.target_device]) for b in others):
                continue  # the chain already has a target branch
            if target_check is None:
                extra.append(
                    ctx.finding(
                        rule,
                        branch.test,
                        f"device dispatch chain without an {p.target_device.upper()} branch; porter cannot add one "
                        "here (torch is not imported by name)",
                        severity="warning",
                    )
                )
                continue
            if edits is None:
                edits = _EditsByStart(findings)
            extra.append(
                _target_branch(ctx, rule, branch, not guards.is_elif(ctx, branch), start, end, edits, target_check)
            )
    # A method of an object a CUDA-only library made (`bnb.nn.Params4bit(...).cuda()`): that
    # library's own method, whose CUDA device is what it acts on; the library is reported.
    for call, made_by, line in guards.calls_on_cuda_only_objects(ctx, p.cuda_only_modules):
        s, e = ctx.span(call)
        keep.append((s, e, f"calls a method of the {made_by} made on line {line}: the CUDA-only library's own method"))
    # `x = "cuda" if torch.cuda.is_available() else "cpu"` where "cuda" is kept (a value of
    # another stack, such as Lightning's accelerator name): the choice stays CUDA's as a whole.
    for choice in guards.checked_choices(ctx, rule):
        chosen = kept_value.choice(choice)
        if chosen is not None:
            s, e = ctx.span(choice)
            keep.append((s, e, f"chooses {_quoted(ctx, chosen[0])}, which porter keeps: it stays CUDA's"))
            quiet.append(keep[-1])
            extra.append(_kept_choice_note(ctx, rule, choice.test, *chosen))
    # In-place conversion of checks that are not renamed by another rule.
    edited = SpanSet([(f.edit.start, f.edit.end) for f in findings if f.edit])
    kept = SpanSet([(a, b) for a, b, _ in keep])
    for node in ctx.own_nodes(ast.Call):
        if not guards.is_check(ctx, node, rule):
            continue
        s, e = ctx.span(node)
        if edited.overlaps(s, e) or kept.contains(s, e):
            continue
        if target_check is None:
            extra.append(
                ctx.finding(
                    rule,
                    node,
                    f"{ctx.text[s:e]} is False on the target; this module does not import torch, so porter cannot write the target check here",
                    suggestion=f"Import torch{f' (and {p.target_module})' if p.target_module else ''} and test "
                    f"{p.target_check.format(torch='torch')}.",
                    severity="warning",
                )
            )
            continue
        extra.append(ctx.finding(rule, node, f"{ctx.text[s:e]} -> {target_check}", replacement=target_check))
    return _quiet_regions(ctx, rule, _keep_regions(ctx, rule, findings, keep), quiet) + extra


def _quiet_regions(
    ctx: FileContext, rule: Rule, findings: list[Finding], quiet: list[tuple[int, int, str]]
) -> list[Finding]:
    """The reports (without an edit) inside code that never runs on the target, as notes: an
    nvidia-smi query in a branch guarded by an NVML check that stays CUDA's (ms-swift's
    get_physical_device_count) is not something to port, as the edits kept there are not."""
    if not quiet:
        return findings
    reports = [f for f in findings if f.edit is None and f.severity != "info" and f.rule != rule.code]
    if not reports:
        return findings
    starts = ctx.index.starts

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + col - 1 if 0 < line <= len(starts) else len(ctx.text)

    spans = [(offset(f.line, f.col), offset(f.end_line or f.line, f.end_col or f.col)) for f in reports]
    holder = first_containing([(a, b) for a, b, _ in quiet], [(a, max(a, b)) for a, b in spans])
    region_of = {id(f): quiet[i] for f, i in zip(reports, holder) if i is not None}
    if not region_of:
        return findings
    return [
        replace(
            f, severity="info", suggestion=None, message=f"kept for CUDA: {f.message} (this code {region_of[id(f)][2]})"
        )
        if id(f) in region_of
        else f
        for f in findings
    ]


_DEVICE_NAMES = {"rocm": "ROCm", "hip": "ROCm"}


def _quoted(ctx: FileContext, literal: ast.AST) -> str:
    return ctx.text[slice(*ctx.span(literal))]


def _kept_choice_note(ctx: FileContext, rule: Rule, test: ast.AST, literal: ast.Constant, why: Finding) -> Finding:
    """The note on a check kept because what it chooses is kept (`if torch.cuda.is_available():
    accelerator = "cuda"` where "cuda" is Lightning's accelerator name): converting the check
    alone would hand the kept value to the target, and a target branch would have nothing of
    its own to choose."""
    return ctx.finding(
        rule,
        test,
        f"CUDA check kept: it chooses {_quoted(ctx, literal)} (line {literal.lineno}), a value "
        f"{why.rule} keeps (its finding there says why)",
        severity="info",
    )


def _keep_regions(
    ctx: FileContext, rule: Rule, findings: list[Finding], keep: list[tuple[int, int, str]]
) -> list[Finding]:
    if not keep:
        return list(findings)
    with_edit = [f for f in findings if f.edit]
    # The first kept region (in `keep`'s order) that holds each edit, found in one sweep: a
    # test of every edit against every region was quadratic.
    # (every one of with_edit has an edit: the test only tells the type checker so)
    spans = [(f.edit.start, f.edit.end) for f in with_edit if f.edit is not None]
    holder = first_containing([(a, b) for a, b, _ in keep], spans)
    region_of = {id(f): keep[i] for f, i in zip(with_edit, holder) if i is not None}
    kept_at = {(f.rule, f.line) for f in with_edit if id(f) in region_of}
    out: list[Finding] = []
    for f in findings:
        if f.edit is None and (f.rule, f.line) in kept_at:
            continue  # the note that went with an edit that is no longer made
        region = region_of.get(id(f))
        if region is None:
            out.append(f)
            continue
        # Kept on purpose: the rule's advice (rename, replace) would contradict the note.
        out.append(
            Finding(
                rule=f.rule,
                severity="info",
                path=f.path,
                line=f.line,
                col=f.col,
                message=f"kept for CUDA: {f.message} (this code {region[2]})",
                suggestion=None,
                end_line=f.end_line,
                end_col=f.end_col,
                subject=f.subject,
            )
        )
    return out


class _EditsByStart:
    """The findings' edits sorted by start (ties in the findings' order), so that the edits
    inside a branch are a slice found by bisection, not a pass over every finding per branch."""

    def __init__(self, findings: list[Finding]) -> None:
        self.edits = sorted((f.edit for f in findings if f.edit), key=lambda e: e.start)
        self.starts = [e.start for e in self.edits]

    def within(self, start: int, end: int) -> list[Edit]:
        """The edits inside [start, end], in the findings' order up to equal starts."""
        first, stop = bisect_left(self.starts, start), bisect_right(self.starts, end)
        return [e for e in self.edits[first:stop] if e.end <= end]


def _target_branch(ctx, rule, branch, is_first, start, end, edits: _EditsByStart, target_check) -> Finding:
    """Insert a converted copy of `branch` (test replaced by the target check) before it."""
    inner = edits.within(start, end)
    inside = SpanSet([(x.start, x.end) for x in inner])
    # Checks that no other rule rewrites (is_torch_cuda_available()) become the target check,
    # in the test and in the copied body alike.
    added: list[Edit] = []
    for node in (n for part in [branch.test, *branch.body] for n in ast.walk(part)):
        if guards.is_check(ctx, node, rule):
            s, e = ctx.span(node)
            if not inside.overlaps(s, e) and not any(s < x.end and x.start < e for x in added):
                added.append(Edit(rule.code, s, e, target_check))
    inner += added
    inner.sort(key=lambda e: (e.start, e.end))
    pieces, pos = [], start
    for edit in inner:
        if edit.start < pos:
            continue
        pieces.append(ctx.text[pos : edit.start] + edit.replacement)
        pos = edit.end
    pieces.append(ctx.text[pos:end])
    copy = "".join(pieces)
    line_start = ctx.index.starts[branch.lineno - 1]
    indent = ctx.text[line_start:start]
    newline = line_ending(ctx.text, end)
    if is_first:  # the new branch takes the `if`; the CUDA branch becomes an `elif`
        replacement = copy + newline + indent + "elif"
        return ctx.finding(
            rule,
            (start, start + 2),
            f"device dispatch chain: added a {DeviceGuardParams.of(rule).target_device} branch before the CUDA branch",
            replacement=replacement,
        )
    return ctx.finding(
        rule,
        (start, start),
        f"device dispatch chain: added a {DeviceGuardParams.of(rule).target_device} branch before the CUDA branch",
        replacement=copy + newline + indent,
    )


KIND = PythonKind("device-guard", screen=screen_words, finalize=finalize)
