"""Kind `qualified-name`: rename or flag an API by the qualified name it resolves to.

`match` lists qualified names; a use matches the longest listed name that is it or a
dotted prefix of it (so `torch.cuda` covers `torch.cuda.synchronize`). With `replace`
(old prefix -> new prefix) the use is rewritten: inside attribute chains only the changed
components are replaced, and import statements are renamed so that their local names keep
working (`from torch import cuda` -> `from torch import mlu as cuda`). With
`add_keywords`, calls and bare decorators of the name gain those keywords
(`@custom_fwd` -> `@custom_fwd(device_type="mlu")`). Without `replace` it only reports: at
each use (not in a type annotation), and at an import only where the file shows no use of the
name: as a finding where the module hands the name on (`__init__.py`, `__all__`), else as a note.
With `note_when_switched_by` (setting names, globs), a reported use under a test of such a
setting read as it is (`if args.deepspeed_transformer_kernel:`) is a note: the module runs
while the switch is off, and what turns it on (a launch script's flag) is the finding.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from dataclasses import replace

from porter.python.kinds._name_table import NameTable, check_import, check_import_from
from porter.python.kinds._patch_targets import patched_member, string_targets
from porter.python.kinds.literal_text import literal_body
from porter.core.textio import line_ending
from porter.core.model import Finding
from porter.python.context import FileContext, StrConstant
from porter.rules import Rule
from porter.rules.kinds import QualifiedNameParams
from porter.python.kinds.base import PythonKind


# Components too common to tell anything about a file.
_COMMON = {"utils", "load", "version", "backends", "distributed", "amp", "profiler", "nn", "functional", "autograd"}


def screen_word(qualified: str) -> str:
    """A word every file that uses `qualified` must contain.

    Whatever the import form, each component after the top package is written somewhere
    in the file (in an import or an attribute chain), so any of them is a sound screen;
    the longest uncommon one is the most selective.
    """
    parts = qualified.split(".")[1:] or qualified.split(".")
    return max(parts, key=lambda p: (p not in _COMMON, len(p)))


def screen_words(rules: list[Rule]) -> set[str]:
    return {screen_word(name) for r in rules for name in QualifiedNameParams.of(r).match}


def find(ctx: FileContext, rules: list[Rule]) -> list[Finding]:
    table = NameTable(rules)
    imports: list[Finding] = []
    for statement in ctx.own_nodes(ast.Import):
        imports.extend(check_import(ctx, table, statement))
    for statement_from in ctx.own_nodes(ast.ImportFrom):
        imports.extend(check_import_from(ctx, table, statement_from))
    uses: list[Finding] = []
    for node, qual in ctx.own_import_chains:
        member = patched_member(ctx, node)
        if member is not None:
            uses.extend(_check_patched_member(ctx, table, node, qual, member))
            continue
        hit = table.lookup(qual)
        if hit is not None:
            uses.extend(_check_use(ctx, table, node, qual, hit[1]))
    for target in string_targets(ctx):
        uses.extend(_check_patch_target(ctx, table, target))
    out: list[Finding] = []
    reported = {(u.rule, u.subject) for u in uses if u.subject is not None}  # (rule, subject) of each use
    for f in imports:
        if f.edit is not None:  # a rename of the import: made whatever the uses are
            out.append(f)
        elif not _reported_at_a_use(f, reported):
            out.append(f if _exported(ctx, f) else _unused_note(ctx, f))
    if ctx.across_groups is not None:  # the uses in the module's other groups decide too (`settle`)
        pending = (_key(f) for f in imports if f.edit is None and not _reported_at_a_use(f, reported))
        ctx.across_groups.setdefault(_PENDING, set()).update(pending)
        ctx.across_groups.setdefault(_REPORTED, set()).update(reported)
    return out + uses


_PENDING = "qualified-name: the imports reported for want of a use in their group"
_REPORTED = "qualified-name: the (rule, subject) of every use reported"


def settle(ctx: FileContext, rules: list[Rule], findings: list[Finding]) -> list[Finding]:
    """A module analysed in groups: an import its own group reported for want of a use there
    is dropped where another group reports a use of it (as `find` decides in a whole module)."""
    pending, reported = (ctx.across_groups or {}).get(_PENDING), (ctx.across_groups or {}).get(_REPORTED, set())
    if not pending:
        return findings
    return [f for f in findings if _key(f) not in pending or not _reported_at_a_use(f, reported)]


def _key(finding: Finding) -> tuple[str, int, int, str | None]:
    return finding.rule, finding.line, finding.col, finding.subject


def _reported_at_a_use(finding: Finding, reported: set[tuple[str, str]]) -> bool:
    """An import that a flag-only rule reports says nothing the reports at the name's uses do
    not (`from transformers import BitsAndBytesConfig`, then `BitsAndBytesConfig(...)`): one
    thing to act on, so the import is reported only where the file shows no use of it
    (`reported`: the (rule, subject) of each use reported)."""
    if finding.subject is None:
        return False
    name = finding.subject
    return any(
        rule == finding.rule and (subject == name or subject.startswith(name + ".")) for rule, subject in reported
    )


def _exported(ctx: FileContext, finding: Finding) -> bool:
    """An import the module hands on (a package's `__init__.py`, a name in `__all__`): the
    code that uses it is elsewhere and reaches it through this module, so it is reported here."""
    name = (finding.subject or "").rsplit(".", 1)[-1]
    return ctx.path.rsplit("/", 1)[-1] == "__init__.py" or name in _dunder_all(ctx)


def _dunder_all(ctx: FileContext) -> set[str]:
    names: set[str] = set()
    for stmt in ctx.tree.body:
        if not isinstance(stmt, (ast.Assign, ast.AugAssign)):
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            names.update(
                e.value
                for e in getattr(stmt.value, "elts", ())
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
    return names


def _unused_note(ctx: FileContext, finding: Finding) -> Finding:
    """A flagged name imported and never used at run time in its module (only in a type
    annotation, as TRL's trainers import BitsAndBytesConfig): nothing there to act on, a note."""
    return replace(
        finding,
        severity="info",
        suggestion=None,  # nothing runs: nothing to replace
        message=f"{finding.message} (imported, but never used at run time in this module: an annotation, or nothing)",
    )


def _chain(node: ast.AST) -> tuple[ast.Name, list[ast.Attribute]]:
    attrs: list[ast.Attribute] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node)
        node = node.value
    assert isinstance(node, ast.Name)
    return node, list(reversed(attrs))


def _called_with(ctx: FileContext, node: ast.AST, keywords: Mapping[str, Any]) -> bool:
    """Whether `node` is called with one of `keywords` (name -> literal values) at a listed
    value: `L.Fabric(accelerator="cpu")` runs where it always ran."""
    call = ctx.parents.get(node)
    if not keywords or not isinstance(call, ast.Call) or call.func is not node:
        return False
    return any(
        kw.arg is not None  # (`**kwargs`: no name, so not one of them)
        and kw.arg in keywords
        and isinstance(kw.value, ast.Constant)
        and kw.value.value in keywords[kw.arg]
        for kw in call.keywords
    )


def _switched_by(ctx: FileContext, node: ast.AST, patterns: Sequence[str]) -> str | None:
    """The setting whose test `node` sits under (`if args.deepspeed_transformer_kernel:`, or the
    true branch of `x if args.random_ltd else y`) when its name matches one of `patterns`."""
    if not patterns:
        return None
    child, parent = node, ctx.parents.get(node)
    while parent is not None:
        test = None
        if isinstance(parent, ast.If) and any(child is s for s in parent.body):
            test = parent.test
        elif isinstance(parent, ast.IfExp) and child is parent.body:
            test = parent.test
        if isinstance(test, (ast.Attribute, ast.Name)):
            name = test.attr if isinstance(test, ast.Attribute) else test.id
            if any(fnmatch.fnmatchcase(name, p) for p in patterns):
                return ast.unparse(test)
        child, parent = parent, ctx.parents.get(parent)
    return None


def _check_use(ctx: FileContext, table: NameTable, node: ast.AST, qual: str, rule: Rule) -> Iterable[Finding]:
    if not QualifiedNameParams.of(rule).replace and not QualifiedNameParams.of(rule).add_keywords:
        # Not uses: a type named in an annotation runs nothing of it; nor does assigning to a
        # function or class (`callables`): `cpp_extension.load_inline = refuse` is a patch (a
        # setting such as `cudnn.deterministic = True` is a use: those rules are not `callables`).
        patched = QualifiedNameParams.of(rule).callables and type(getattr(node, "ctx", None)) is ast.Store
        if (
            not ctx.in_annotation(node)
            and not patched
            and not _called_with(ctx, node, QualifiedNameParams.of(rule).unless_called_with)
        ):
            switch = _switched_by(ctx, node, QualifiedNameParams.of(rule).note_when_switched_by)
            if switch is None:
                yield ctx.finding(rule, node, subject=qual)
            else:
                yield ctx.finding(
                    rule,
                    node,
                    f"{rule.message or rule.summary} (only when `{switch}` is on: "
                    f"leave it off on {ctx.target.upper()})",
                    subject=qual,
                    severity="info",
                )
        return
    if QualifiedNameParams.of(rule).report:
        yield ctx.finding(rule, node, subject=qual, message=rule.message or rule.summary)
    base, attrs = _chain(node)
    base_qual = ctx.imports.bindings[base.id]
    new_base = table.renamed(base_qual)
    new_qual = table.renamed(qual)
    old_tail = qual[len(base_qual) :].split(".")[1:]
    if new_qual == new_base:
        new_tail: list[str] | None = []
    elif new_qual.startswith(new_base + "."):
        new_tail = new_qual[len(new_base) + 1 :].split(".")
    else:
        new_tail = None
    if new_tail is None:
        yield ctx.finding(
            rule,
            node,
            subject=qual,
            message=f"{qual} should become {new_qual}, which its import cannot express; change it by hand",
            severity="warning",
        )
        return
    if new_tail != old_tail:
        yield _tail_edit(ctx, rule, base, attrs, old_tail, new_tail, qual, new_qual)
    keywords = QualifiedNameParams.of(rule).add_keywords
    if keywords:
        edit = _keyword_edit(ctx, rule, node, keywords, qual)
        if edit is not None:
            yield edit


def _check_patched_member(
    ctx: FileContext, table: NameTable, node: ast.AST, qual: str, member: StrConstant
) -> Iterable[Finding]:
    """`patch.object(torch.cuda, "is_available")`: the object and the member's name are one
    qualified name, renamed as the code's use of it is (porter/python/kinds/_patch_targets.py).
    A member without a counterpart (`torch.cuda._sleep`, kept and reported where the code uses
    it) keeps its mock on `torch.cuda`; a member renamed with its namespace (`"CUDAGraph"` ->
    `"MLUGraph"`, `setattr(torch, "cuda", ...)`) has its name rewritten beside the object's."""
    whole = f"{qual}.{member.value}"
    new_whole = table.renamed(whole)
    hit = table.lookup(qual)
    if hit is not None:
        if new_whole == whole and table.renamed(qual) != qual:
            return  # the code keeps the member on CUDA: so does the mock
        yield from _check_use(ctx, table, node, qual, hit[1])
    if new_whole == whole:
        return
    parent, new_name = new_whole.rsplit(".", 1)
    hit_whole = table.lookup(whole)
    assert hit_whole is not None  # a rule renames it (new_whole != whole), so one matches it
    rule = hit_whole[1]
    if parent != table.renamed(qual):  # the member moves to another module (custom_fwd -> torch.amp)
        yield ctx.finding(
            rule,
            member,
            f"a mock of {whole}, which becomes {new_whole}: patch {parent} by hand",
            subject=whole,
            severity="warning",
        )
    elif new_name != member.value:
        yield from _string_edit(ctx, rule, member, member.value, new_name, whole, new_whole)


def _check_patch_target(ctx: FileContext, table: NameTable, target: StrConstant) -> Iterable[Finding]:
    """`patch("torch.cuda.is_available")`, also through a module's own reference to torch
    (`patch("trainer.torch.cuda.is_available")`): the dotted name from the first component the
    rules know is renamed as the code's use of it is. A name a rule only reports stays: the code
    keeps it too."""
    parts = target.value.split(".")
    for i in range(len(parts)):
        name = ".".join(parts[i:])
        hit = table.lookup(name)
        if hit is not None:
            new = table.renamed(name)
            if new != name:
                yield from _string_edit(ctx, hit[1], target, name, new, name, new)
            return


def _string_edit(
    ctx: FileContext, rule: Rule, node: StrConstant, old: str, new: str, qual: str, new_qual: str
) -> Iterable[Finding]:
    """The edit of `old`, the end of the string `node` spells, to `new`."""
    start, end = ctx.span(node)
    body = literal_body(ctx.text[start:end])
    if body is None or ctx.text[start + body[0] : start + body[1]] != node.value:
        yield ctx.finding(
            rule,
            node,
            f"a mock of {qual}, which becomes {new_qual}: change it by hand",
            subject=qual,
            severity="warning",
        )
        return
    at = start + body[1] - len(old)
    yield ctx.finding(
        rule,
        (at, at + len(old)),
        f"mock target {qual} -> {new_qual} (it follows the ported code)",
        replacement=new,
        subject=qual,
        expect_old=old,
    )


def _tail_edit(ctx, rule, base, attrs, old_tail, new_tail, qual, new_qual) -> Finding:
    lo = 0
    while lo < min(len(old_tail), len(new_tail)) and old_tail[lo] == new_tail[lo]:
        lo += 1
    hi = 0
    while hi < min(len(old_tail), len(new_tail)) - lo and old_tail[-1 - hi] == new_tail[-1 - hi]:
        hi += 1
    old_mid, new_mid = old_tail[lo : len(old_tail) - hi], new_tail[lo : len(new_tail) - hi]
    if old_mid and new_mid:
        first, last = attrs[lo], attrs[lo + len(old_mid) - 1]
        start = ctx.span(first)[1] - len(first.attr)
        end = ctx.span(last)[1]
        replacement = ".".join(new_mid)
        expect: str | None = ".".join(old_mid)
    else:  # components added or removed: rewrite everything after the base name
        start = ctx.span(base)[1]
        end = ctx.span(attrs[-1])[1] if attrs else start
        replacement = "".join("." + part for part in new_tail)
        expect = None
    return ctx.finding(
        rule, (start, end), f"{qual} -> {new_qual}", replacement=replacement, subject=qual, expect_old=expect
    )


def _render_keywords(keywords: Mapping[str, Any]) -> list[str]:
    return [f'{k}="{v}"' if isinstance(v, str) else f"{k}={v!r}" for k, v in keywords.items()]


def _keyword_edit(
    ctx: FileContext, rule: Rule, node: ast.AST, keywords: Mapping[str, Any], qual: str
) -> Finding | None:
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        if parent.args:
            return None  # a positional argument may already be the keyword's parameter
        present = {kw.arg for kw in parent.keywords}
        if None in present:
            return None  # `**settings` may hold it already: added twice, the call would raise TypeError
        missing = _render_keywords({k: v for k, v in keywords.items() if k not in present})
        if not missing:
            return None
        end = ctx.span(parent)[1] - 1  # the closing parenthesis
        args = [*parent.args, *parent.keywords]
        if not args:
            return ctx.finding(
                rule, (end, end), f"{qual}: add {', '.join(missing)}", replacement=", ".join(missing), subject=qual
            )
        last_end = ctx.span(args[-1])[1]
        between = ctx.text[last_end:end]
        if "\n" in between:  # one argument per line: add ours as a line of its own, same indent
            last_line = ctx.index.line_col(ctx.span(args[-1])[0])[0]
            line_text = ctx.index.line_text(last_line)
            indent = line_text[: len(line_text) - len(line_text.lstrip())]
            newline = line_ending(ctx.text, last_end)
            comma = between.find(",")
            at = last_end + comma + 1 if comma >= 0 else last_end
            text = ("" if comma >= 0 else ",") + "".join(f"{newline}{indent}{kw}," for kw in missing)
            return ctx.finding(rule, (at, at), f"{qual}: add {', '.join(missing)}", replacement=text, subject=qual)
        return ctx.finding(
            rule,
            (last_end, last_end),
            f"{qual}: add {', '.join(missing)}",
            replacement="".join(f", {kw}" for kw in missing),
            subject=qual,
        )
    if _is_decorator(ctx, node):
        end = ctx.span(node)[1]
        rendered = ", ".join(_render_keywords(keywords))
        return ctx.finding(rule, (end, end), f"{qual}: call with {rendered}", replacement=f"({rendered})", subject=qual)
    return None


def _is_decorator(ctx: FileContext, node: ast.AST) -> bool:
    parent = ctx.parents.get(node)
    return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in parent.decorator_list


KIND = PythonKind("qualified-name", screen=screen_words, find=find, settle=settle)
