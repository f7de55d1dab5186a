"""Which files of a tree a run scans: the file selection, as ruff and git choose files.

- Never scanned: version control internals, virtual environments (any folder holding a
  `pyvenv.cfg`), and build outputs and caches (`NEVER_SCANNED`).
- `.gitignore` files are respected by default, as git reads them: one in every folder,
  each pattern relative to its own folder, later and deeper patterns winning, `!` negations,
  and nothing inside an ignored folder coming back. The `.gitignore` files of the folders
  above the tree up to its repository's root (the folder holding `.git`) count too, and so
  does that root's `.git/info/exclude` (below every .gitignore, as git orders them).
- `exclude` patterns (gitignore syntax) are matched against each path relative to `anchor`
  (the folder of the configuration file, else the tree).
- `per_file_ignores`: (glob, codes) pairs, matched the same way; the codes are ignored for
  the files that match.
- `only`: explicit files (paths relative to the tree), as pre-commit passes them: those are
  scanned and nothing else; exclusions apply to them only with `force_exclude` (as ruff's
  `--force-exclude`), `.gitignore` never does (a file named on the command line is wanted).

A leaf module: pathspec is imported only when there is a pattern to match.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from porter.core.tree import Entry, signature, walk

NEVER_SCANNED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        "node_modules",
        "build",
        "dist",
        ".eggs",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        "__pypackages__",
        ".direnv",
    }
)


@dataclass(frozen=True)
class FileSelection:
    """What a run was asked to scan (see the module's docstring)."""

    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    anchor: Path | None = None
    only: tuple[str, ...] | None = None
    force_exclude: bool = False

    def matcher(self, src: Path) -> TreeFilter:
        return TreeFilter(self, Path(src))


def never_scanned(name: str, path: str) -> bool:
    """A folder no run looks into: by its name, or a virtual environment."""
    return name in NEVER_SCANNED or os.path.isfile(os.path.join(path, "pyvenv.cfg"))


class Patterns:
    """Patterns in gitignore syntax, matched as git does (pathspec's GitIgnoreSpec: last match
    wins, `!` negations), behind one screen: most paths match no pattern at all, and one
    search of a regex that matches wherever any pattern could (`screen_regex`) says so at C
    speed. Only a path the screen finds is decided by pathspec, pattern by pattern, and only
    then is pathspec loaded and are its patterns compiled (~20 ms a run: in a clean checkout
    no path the walk meets is ignored)."""

    def __init__(self, lines: list[str], source: str | None = None) -> None:
        self.lines = [collapse_stars(line) for line in lines]
        self.source = source  # the .gitignore file the lines are from, for the warning of a bad one
        for number, line in enumerate(self.lines, 1):
            if line.rstrip() == "!":  # no path reaches pathspec for it (the screen finds none): said now
                _warn_skipped(source, number, line, ValueError("a `!` with no pattern"))
        screens = [s for s in map(screen_regex, self.lines) if s is not None]
        # One start for all: `(?:^|/)` once, then the alternatives (each tried only where a
        # segment starts), and the anchored ones at the start of the path.
        anywhere = [body for anchored, body in screens if not anchored]
        at_start = [body for anchored, body in screens if anchored]
        parts = ([f"(?:^|/)(?:{'|'.join(anywhere)})(?:/|$)"] if anywhere else []) + (
            [f"^(?:{'|'.join(at_start)})(?:/|$)"] if at_start else []
        )
        try:
            self._any: re.Pattern | None = re.compile(linear_regex("|".join(parts)) or "(?!)")
        except re.error:  # not expected; then every path is asked
            self._any = None

    @cached_property
    def spec(self):
        """pathspec's GitIgnoreSpec of the lines, each compiled alone: a line pathspec refuses
        (`!` alone, a trailing backslash, a class `[z-a]`) is skipped with a warning naming
        its file and line, as git skips it, instead of stopping the run; each pattern's regex
        is made linear (`linear_regex`)."""
        import pathspec

        patterns = []
        for number, line in enumerate(self.lines, 1):
            try:
                compiled = pathspec.GitIgnoreSpec.from_lines([line]).patterns
            except (ValueError, re.error) as exc:  # pathspec's GitIgnorePatternError is a ValueError
                _warn_skipped(self.source, number, line, exc)
                continue
            for pattern in compiled:
                if pattern.regex is not None:
                    pattern.regex = re.compile(linear_regex(pattern.regex.pattern), pattern.regex.flags)
                patterns.append(pattern)
        try:  # pathspec 1.x: the plain `re` backend (the others do not take atomic groups)
            return pathspec.GitIgnoreSpec(patterns, backend="simple")
        except TypeError:  # pathspec 0.12
            return pathspec.GitIgnoreSpec(patterns)

    def verdict(self, path: str) -> bool | None:
        """True: ignored; False: re-included by a `!` pattern; None: no pattern matches."""
        if self._any is not None and self._any.search(path.replace(os.sep, "/")) is None:
            return None
        return self.spec.check_file(path).include

    def matches(self, path: str) -> bool:
        return bool(self.verdict(path))


_warned: set[tuple[str | None, int, str]] = set()


def _warn_skipped(source: str | None, number: int, line: str, exc: Exception) -> None:
    """Say once per process that a pattern line is skipped: `FILE:LINE` of a .gitignore, or
    the pattern itself for an exclude pattern of the configuration or the command line."""
    if (source, number, line) in _warned:
        return
    _warned.add((source, number, line))
    where = f"{source}:{number}: pattern" if source else "exclude pattern"
    print(f"porter: warning: {where} {line!r} is not a valid gitignore pattern ({exc}); skipped", file=sys.stderr)


def collapse_stars(line: str) -> str:
    """`line` with every run of three or more unescaped `*` written as `**`: git reads any run
    of two or more stars as `**` (wildmatch), and each star pathspec translates is one more
    quantifier in its regex."""
    if "***" not in line:
        return line
    out: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            out.append(line[i : i + 2])
            i += 2
        elif ch == "*":
            end = i
            while end < len(line) and line[end] == "*":
                end += 1
            out.append("**" if end - i >= 2 else "*")
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# A `*` of a glob within one path segment, as pathspec and `screen_regex` write it.
_SEGMENT_STAR = "[^/]*"


def linear_regex(regex: str) -> str:
    """`regex` (a glob translated: pathspec's, or `screen_regex`'s) matching the same paths
    without backtracking exponentially on a pattern with many `*` in one segment.

    In a run `S F1 S F2 ... S Fk` (S a segment star `[^/]*`, each F a sequence of atoms that
    match exactly one character and never a slash) the leftmost place of each F but the last
    is as good as any other: an S after it takes up the characters between (they are not
    slashes). So each `S Fi` but the last is written `(?>[^/]*?Fi)`, an atomic group that
    finds Fi's leftmost place and never tries another, and the regex takes time linear in the
    path's length per star instead of a power of it (28 stars took 10 s on a 60-character
    name; 3,000 never finished)."""
    if regex.count(_SEGMENT_STAR) < 2:
        return regex
    out: list[str] = []
    open_chunk: list[str] | None = None  # atoms after the last star of the current run
    i = 0
    while i < len(regex):
        if regex.startswith(_SEGMENT_STAR, i) and not regex.startswith(("?", "+"), i + len(_SEGMENT_STAR)):
            if open_chunk is not None:
                out.append(f"(?>[^/]*?{''.join(open_chunk)})")
            open_chunk = []
            i += len(_SEGMENT_STAR)
            continue
        end, one = _token(regex, i)
        if one and open_chunk is not None:
            open_chunk.append(regex[i:end])
        else:
            if open_chunk is not None:  # the run ends: its last star stays as it was
                out.append(_SEGMENT_STAR + "".join(open_chunk))
                open_chunk = None
            out.append(regex[i:end])
        i = end
    if open_chunk is not None:
        out.append(_SEGMENT_STAR + "".join(open_chunk))
    return "".join(out)


def _token(regex: str, i: int) -> tuple[int, bool]:
    """(end, one character) of the token at `i`: an escape, a whole character class or one
    character; `one character` when it matches exactly one character and never a slash (a
    plain or escaped character, a class without a slash or a negated one with it, not
    quantified), not for a group, an anchor, `.` or a quantifier."""
    ch = regex[i]
    if ch == "\\":
        end = i + 2
        one = i + 1 < len(regex) and not regex[i + 1].isalnum() and regex[i + 1] != "/"  # not \d, \Z, \1
    elif ch == "[":
        j = i + 1
        negated = regex.startswith("^", j)
        j += negated
        j += regex.startswith("]", j)
        while j < len(regex) and regex[j] != "]":
            j += 2 if regex[j] == "\\" else 1
        end = min(j + 1, len(regex))
        body = regex[i + 1 : j]
        one = j < len(regex) and (
            ("/" in body) if negated else ("/" not in body and "-" not in body.strip("-") and "\\" not in body)
        )
    else:
        end = i + 1
        one = ch not in "\\[]().*+?{}|^$/"
    if end < len(regex) and regex[end] in "*+?{":
        one = False  # quantified: not one character
    return end, one


def screen_regex(line: str) -> tuple[bool, str] | None:
    """(anchored, body): a regex that finds every path (posix, relative to the pattern's
    folder, a folder with a trailing `/`) that the gitignore pattern `line` matches, and some
    more, as `^body(?:/|$)` when anchored, else `(?:^|/)body(?:/|$)`; None for a line that is
    no pattern. Looser than git on purpose, never stricter: a character class and the rest of
    its segment match any characters but a slash, a folder-only pattern matches files too; a
    `!` pattern is found like any other (it decides too)."""
    if not line.endswith("\\ "):
        line = line.rstrip()
    if not line or line.startswith("#") or line == "/":
        return None
    if line.startswith("!"):
        line = line[1:]
        if not line:
            return None  # `!` alone is no pattern (git skips it; Patterns.spec warns)
    if line.endswith("/"):
        line = line.rstrip("/")
        if not line:
            return None
    # A slash at the start or in the middle anchors the pattern at its folder; else it is
    # found at the start of any path segment.
    anchored = "/" in line
    line = line.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if line.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif line.startswith("/**", i) and i + 3 == len(line):
            out.append("/.*")
            i += 3
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            # A class is one character (never a slash); with the rest of its segment, one or more.
            out.append("[^/]+")
            end = line.find("/", i)
            i = len(line) if end < 0 else end
        elif ch == "\\" and i + 1 < len(line):
            out.append(re.escape(line[i + 1]))
            i += 2
        else:
            out.append(re.escape(ch))
            i += 1
    return anchored, "".join(out)


GITIGNORE, EXCLUDE = ".gitignore", "exclude"  # why the selection left a path out


@dataclass
class LeftOut:
    """What the file selection left out of a walk, and why (GITIGNORE, EXCLUDE): each folder
    once (with a trailing slash: nothing below it is looked at), each file. The report says
    it, as a file .gitignore matches may still be one git tracks, the project's own code.
    Porter's fixed never-scanned folders (NEVER_SCANNED, virtual environments) are not here:
    the documentation names them. Paths beyond KEPT are counted, not kept."""

    KEPT = 10_000

    counts: dict[str, int] = field(default_factory=dict)
    paths: list[tuple[str, str]] = field(default_factory=list)  # (path, why), in walk order

    def add(self, rel: str, why: str) -> None:
        self.counts[why] = self.counts.get(why, 0) + 1
        if len(self.paths) < self.KEPT:
            self.paths.append((rel, why))

    def plain(self) -> dict:
        return {"counts": self.counts, "paths": [list(p) for p in self.paths]}

    @classmethod
    def from_plain(cls, data: object) -> LeftOut:
        if not isinstance(data, dict):
            return cls()
        return cls(dict(data.get("counts", {})), [(str(rel), str(why)) for rel, why in data.get("paths", [])])


@dataclass
class TreeFilter:
    """A `FileSelection` applied to one tree."""

    selection: FileSelection
    src: Path
    left_out: LeftOut = field(default_factory=LeftOut)  # what this walk left out, and why
    _gitignores: dict[str, Patterns | None] = field(default_factory=dict)  # folder rel ("" root) -> spec or None
    # Every file the selection read or looked for (.gitignore files, .git), by path: its
    # signature then (None: absent). While they and the walked folders keep their
    # signatures, the selection would choose the same files.
    consulted: dict[str, list[int] | None] = field(default_factory=dict)

    @cached_property
    def _prefix(self) -> str:
        """The tree's path relative to the anchor ("" when they are the same or unrelated)."""
        anchor = self.selection.anchor
        if anchor is None:
            return ""
        rel = os.path.relpath(self.src.resolve(), anchor.resolve())
        return "" if rel == "." or rel.startswith("..") else rel.replace(os.sep, "/") + "/"

    @cached_property
    def _exclude(self):
        return Patterns(list(self.selection.exclude)) if self.selection.exclude else None

    @cached_property
    def _per_file(self):
        return [(Patterns([glob]), codes) for glob, codes in self.selection.per_file_ignores]

    @cached_property
    def _outer(self) -> list[tuple[str, Patterns]]:
        """(prefix of the tree's paths as seen from that folder, spec) of the .gitignore files
        above the tree, up to its repository's root; outermost first."""
        if not self.selection.respect_gitignore:
            return []
        src = self.src.resolve()
        out = []
        for folder in (src, *src.parents):
            prefix = "" if folder == src else src.relative_to(folder).as_posix() + "/"
            spec = self._read_gitignore(folder / ".gitignore") if folder != src else None  # the tree's own: walked
            if spec is not None:
                out.append((prefix, spec))
            git = str(folder / ".git")
            self.consulted[git] = signature(git)
            if os.path.exists(git):
                # The repository's root: its .git/info/exclude counts as a .gitignore there, below
                # every .gitignore file (git's order).
                exclude = self._read_gitignore(folder / ".git" / "info" / "exclude")
                if exclude is not None:
                    out.append((prefix, exclude))
                break
        else:
            return []  # not in a repository: the folders above are not the project's
        return out[::-1]

    def _gitignore(self, folder_rel: str) -> Patterns | None:
        if folder_rel not in self._gitignores:
            path = self.src / folder_rel / ".gitignore" if folder_rel else self.src / ".gitignore"
            self._gitignores[folder_rel] = self._read_gitignore(path)
        return self._gitignores[folder_rel]

    def _listed(self, folder_rel: str, names: set[str]) -> None:
        """A folder the walk listed: without a .gitignore it has no patterns, and nothing needs
        recording in `consulted` (the folder's own signature changes when one is added)."""
        if ".gitignore" not in names:
            self._gitignores[folder_rel] = None

    def _read_gitignore(self, path: Path) -> Patterns | None:
        self.consulted[str(path)] = signature(str(path))
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        lines = text.splitlines()
        return Patterns(lines, str(path)) if any(line.strip() and not line.startswith("#") for line in lines) else None

    def gitignored(self, rel: str, is_dir: bool) -> bool:
        """Whether git ignores `rel` (its parent folders are known not to be ignored)."""
        if not self.selection.respect_gitignore:
            return False
        name = rel + "/" if is_dir else rel
        verdict = None
        for prefix, spec in self._outer:
            found = spec.verdict(prefix + name)
            verdict = found if found is not None else verdict
        parts = rel.split("/")
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            spec = self._gitignore(folder)
            if spec is not None:
                sub = name[len(folder) + 1 :] if folder else name
                found = spec.verdict(sub)
                verdict = found if found is not None else verdict
        return bool(verdict)

    def excluded(self, rel: str, is_dir: bool) -> bool:
        if self._exclude is None:
            return False
        name = self._prefix + rel + ("/" if is_dir else "")
        return self._exclude.matches(name)

    def skip_dir(self, rel: str, path: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return never_scanned(name, path) or self._leaves_out(rel, True)

    def skip_file(self, rel: str) -> bool:
        return self._leaves_out(rel, False)

    def _leaves_out(self, rel: str, is_dir: bool) -> bool:
        """Whether the selection leaves `rel` out; recorded in `left_out` with why."""
        why = EXCLUDE if self.excluded(rel, is_dir) else GITIGNORE if self.gitignored(rel, is_dir) else None
        if why is not None:
            self.left_out.add(rel + "/" if is_dir else rel, why)
        return why is not None

    def ignores(self, rel: str) -> tuple[str, ...]:
        """The codes per-file-ignores turns off for `rel`."""
        name = self._prefix + rel
        return tuple(c for spec, codes in self._per_file if spec.matches(name) for c in codes)

    def entries(self, exclude: Path | None = None, dirs: dict[str, list[int] | None] | None = None) -> Iterator[Entry]:
        """The files to scan, sorted (explicit files, or the walk without what is left out;
        `dirs` as porter/core/tree.walk's)."""
        if self.selection.only is not None:
            for rel in sorted(set(self.selection.only)):
                if self.selection.force_exclude and (self.in_skipped_dir(rel) or self.excluded(rel, False)):
                    continue
                path = self.src / rel
                if path.is_symlink() or not path.is_file():
                    continue
                yield Entry(rel, False)
            return
        for entry in walk(self.src, exclude, prune=self.skip_dir, dirs=dirs, listed=self._listed):
            if not self.skip_file(entry.rel):
                yield entry

    def in_skipped_dir(self, rel: str) -> bool:
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if never_scanned(parts[depth - 1], str(self.src / folder)) or self.excluded(folder, True):
                return True
        return False


def explicit_files(src: Path, selection: FileSelection, paths: list[Path]) -> tuple[str, ...]:
    """The files (relative to `src`) that command-line `paths` name: a file as it is, a
    folder as the files a scan of it would take."""
    root = Path(src).resolve()
    chooser = FileSelection(selection.exclude, selection.respect_gitignore, (), selection.anchor).matcher(root)
    out: list[str] = []
    for path in paths:
        rel = os.path.relpath(Path(path).resolve(), root).replace(os.sep, "/")
        if not Path(path).is_dir():
            out.append(rel)
            continue
        prefix = "" if rel == "." else rel + "/"
        if prefix and chooser.in_skipped_dir(prefix + "x"):
            continue

        def prune(sub: str, full: str, prefix: str = prefix) -> bool:
            return chooser.skip_dir(prefix + sub, full)

        out.extend(
            prefix + e.rel
            for e in walk(Path(path), None, prune=prune)
            if not e.is_symlink and not chooser.skip_file(prefix + e.rel)
        )
    return tuple(out)
