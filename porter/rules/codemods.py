"""A repository's own Python rules: libcst codemods named by `codemods` in [tool.porter].

A codemod file defines one or more `libcst.codemod` classes (a `VisitorBasedCodemodCommand`
or a `ContextAwareTransformer`, the convention of libcst and Fixit) that declare, as class
attributes, what porter needs to run and report them as rules:

    CODE = "PRT811"                    # required: PRT and 3 digits, not a code of porter's
    DESCRIPTION = "..."                # required: what it does (the rule's summary)
    NAMES = ["cuda_sync"]              # required: words a file must contain for it to run
    SEVERITY = "warning"               # optional: error, warning (default) or info
    TARGETS = ["mlu"]                  # optional: default every target
    NAME = "mycorp-device-sync"        # optional: default the class name in kebab-case
    WHY = "..."                        # optional
    SUGGESTION = "..."                 # optional

Each such class becomes a `Rule` of kind `codemod` (its params: the file, the class, the
screen words and the file's digest, plain data a worker process can load it from again), so
selection, suppression, `porter rules` and the reports treat it as any rule. A file that
does not import, declares no codemod with a CODE, or declares a bad one adds no rule: it is
a *problem* of the rule set (the run goes on and says so, naming the file).

The file is imported only when it is configured, so libcst is never loaded otherwise.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from functools import lru_cache
from pathlib import Path
from collections.abc import Callable
from typing import Any

from porter.core.severity import Severity

from porter.rules.kinds import CODEMOD as KIND, CodemodParams
from porter.rules.model import Rule
from porter.rules.terms import SEVERITIES, TARGETS

INSTALL_HINT = 'pip install "cuda-porter[codemods]"'
_CODE = re.compile(r"^PRT\d{3}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class CodemodProblem(ValueError):
    """A codemod file or class porter cannot use: the file and why."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(f"codemod {path}: {why}")
        self.path, self.why = str(path), why


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


@lru_cache(maxsize=None)
def codemod_module(path: str, digest: str) -> object:
    """The imported codemod file (one module per file content: an edited file is imported
    again). Raises CodemodProblem naming the file."""
    name = f"porter_codemod_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CodemodProblem(path, "not a Python file porter can import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look classes up by their module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # whatever the user's file raises, SystemExit included
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt):  # the user's ^C stops porter, not the file
            raise
        raise CodemodProblem(path, f"cannot be imported: {type(exc).__name__}: {exc}") from exc
    return module


def codemod_class(rule: Rule) -> type:
    """The class a codemod rule runs (imported again in a process that has not yet)."""
    p = CodemodParams.of(rule)
    return getattr(codemod_module(p.file, p.digest), p.class_name)


def _codemod_classes(module: object) -> list[type]:
    """The libcst codemod classes the file itself defines (not the ones it imports)."""
    from libcst.codemod import Codemod

    return [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Codemod) and v.__module__ == getattr(module, "__name__", None)
    ]


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def _attr(cls: type, key: str, default: object, check: Callable[[Any], object], what: str, path: Path) -> Any:
    """The class attribute `key` (or `default`), which `check` accepts: of the type `what` says."""
    value = getattr(cls, key, default)
    if not check(value):
        raise CodemodProblem(path, f"{cls.__name__}: {key} must be {what}, got {value!r}")
    return value


def _rule(path: Path, digest: str, cls: type, target: str) -> Rule | None:
    """The rule a codemod class declares (None: not for `target`), or CodemodProblem."""
    code = _attr(cls, "CODE", None, lambda v: isinstance(v, str) and _CODE.match(v), 'a code such as "PRT811"', path)
    # libcst's base classes have a DESCRIPTION of their own ("No description."): only the file's counts.
    description = next(
        (vars(c)["DESCRIPTION"] for c in cls.__mro__ if "DESCRIPTION" in vars(c) and c.__module__ == cls.__module__),
        None,
    )
    if not isinstance(description, str) or not description.strip():
        raise CodemodProblem(path, f"{cls.__name__}: DESCRIPTION must say what it does (a non-empty string)")
    names = _attr(
        cls,
        "NAMES",
        None,
        lambda v: isinstance(v, (list, tuple)) and v and all(isinstance(n, str) and re.fullmatch(r"\w+", n) for n in v),
        "a non-empty list of words (identifiers)",
        path,
    )
    severity: Severity = _attr(
        cls, "SEVERITY", "warning", lambda v: v in SEVERITIES, f"one of {', '.join(SEVERITIES)}", path
    )
    targets = _attr(
        cls,
        "TARGETS",
        TARGETS,
        lambda v: isinstance(v, (list, tuple)) and v and all(t in TARGETS for t in v),
        f"a list of {', '.join(TARGETS)}",
        path,
    )
    name = _attr(cls, "NAME", _kebab(cls.__name__), lambda v: isinstance(v, str) and _NAME.match(v), "kebab-case", path)
    why = _attr(
        cls,
        "WHY",
        f"The project's own codemod {cls.__name__} ({path.name}).",
        lambda v: isinstance(v, str),
        "a string",
        path,
    )
    suggestion = _attr(cls, "SUGGESTION", None, lambda v: v is None or isinstance(v, str), "a string", path)
    if target not in targets:
        return None
    return Rule(
        code=code,
        name=name,
        kind=KIND,
        target=target,
        summary=description.strip(),
        why=why,
        severity=severity,
        applicability="safe",
        examples=(),
        suggestion=suggestion,
        fix=f"rewrites the file with {cls.__name__} (libcst codemod in {path})",
        params=CodemodParams(file=str(path), class_name=cls.__name__, names=tuple(names), digest=digest),
        source=str(path),
    )


def load_codemods(
    paths: tuple[Path, ...], target: str, taken: dict[str, str], names: frozenset[str] = frozenset()
) -> tuple[list[Rule], list[tuple[str, str]], str]:
    """(rules, problems, digest) of codemod files for `target`. `taken`: code -> where it is
    declared already (porter's codes, the project's TOML rules), `names`: rule names in use; a
    codemod that reuses one is a problem. A file that cannot be used is a problem naming it;
    the others still load."""
    rules: list[Rule] = []
    problems: list[tuple[str, str]] = []  # (file, why)
    digest = hashlib.sha256()
    taken = dict(taken)
    in_use = set(names)
    for path in paths:
        try:
            file_hash = file_digest(path)
        except OSError as exc:
            problems.append((str(path), f"cannot read: {exc.strerror or exc}"))
            continue
        digest.update(f"{path}\0{file_hash}\0".encode())
        try:
            module = codemod_module(str(path), file_hash)
            classes = [c for c in _codemod_classes(module) if "CODE" in vars(c)]
            if not classes:
                raise CodemodProblem(
                    path,
                    "declares no codemod with a CODE (a libcst.codemod VisitorBasedCodemodCommand "
                    'or ContextAwareTransformer subclass with CODE = "PRT8..")',
                )
        except CodemodProblem as exc:
            problems.append((exc.path, exc.why))
            continue
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the user's code (a metaclass, sys.exit): a problem of the file
            problems.append((str(path), f"cannot be read: {type(exc).__name__}: {exc}"))
            continue
        for cls in classes:
            try:
                rule = _rule(path, file_hash, cls, target)
            except CodemodProblem as exc:
                problems.append((exc.path, exc.why))
                continue
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # an attribute the user's class computes raised
                problems.append((str(path), f"{cls.__name__}: cannot be read: {type(exc).__name__}: {exc}"))
                continue
            if rule is None:
                continue
            if rule.code in taken:
                problems.append(
                    (
                        str(path),
                        f"{cls.__name__}: CODE {rule.code} is taken by {taken[rule.code]} "
                        "(give each project rule its own code, e.g. in the unused PRT8xx band)",
                    )
                )
                continue
            if rule.name in in_use:
                problems.append((str(path), f"{cls.__name__}: NAME {rule.name} is the name of another rule (set NAME)"))
                continue
            taken[rule.code] = f"{path} ({cls.__name__})"
            in_use.add(rule.name)
            rules.append(rule)
    return rules, problems, digest.hexdigest()[:16]
