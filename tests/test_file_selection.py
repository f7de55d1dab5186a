"""Which files a run scans: .gitignore (nested files, negations, ignored folders), --exclude,
never-scanned folders (virtualenvs, build outputs), and files named on the command line as
pre-commit passes them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from porter.cli import main
from porter.core.fileset import FileSelection

CUDA = "import torch\nx = torch.compile(torch.zeros(1).cuda())\n"  # an error on mlu: torch.compile


def make(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def scanned(src: Path, **kw) -> list[str]:
    return [e.rel for e in FileSelection(**kw).matcher(src).entries()]


def checked_paths(*args, cwd: Path | None = None) -> tuple[int, list[str]]:
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(
            main, ["check", *map(str, args), "-t", "mlu", "--format", "json", "--no-cache"], catch_exceptions=False
        )
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, sorted({f["path"] for f in json.loads(result.stdout)["findings"]})


def test_gitignore_nested_files_negations_and_ignored_folders(tmp_path):
    src = make(
        tmp_path / "repo",
        {
            ".gitignore": "*.log\ngenerated/\n/top_only.py\n!keep.log\n",
            "a.py": CUDA,
            "top_only.py": CUDA,
            "sub/top_only.py": CUDA,
            "x.log": "",
            "keep.log": "",
            "generated/gen.py": CUDA,
            "sub/.gitignore": "local.py\n!x.log\n",
            "sub/local.py": CUDA,
            "sub/x.log": "",
            "sub/deep/local.py": CUDA,
            # Nothing comes back from inside an ignored folder, even with a negation.
            "generated/.gitignore": "!gen.py\n",
        },
    )
    files = scanned(src)
    assert "a.py" in files and "sub/top_only.py" in files
    assert "top_only.py" not in files  # anchored to the root's folder
    assert "x.log" not in files and "keep.log" in files
    assert "sub/x.log" in files  # re-included by the deeper file
    assert "sub/local.py" not in files and "sub/deep/local.py" not in files
    assert not [f for f in files if f.startswith("generated/")]
    everything = scanned(src, respect_gitignore=False)
    assert {"top_only.py", "x.log", "sub/local.py", "generated/gen.py"} <= set(everything)


def test_gitignore_of_the_repository_above_the_tree_counts(tmp_path):
    repo = make(tmp_path / "repo", {".gitignore": "pkg/skip_me.py\n", "pkg/a.py": CUDA, "pkg/skip_me.py": CUDA})
    (repo / ".git").mkdir()
    assert scanned(repo / "pkg") == ["a.py"]
    # Outside a repository, the folders above are not the project's.
    (repo / ".git").rmdir()
    assert scanned(repo / "pkg") == ["a.py", "skip_me.py"]


def test_virtualenvs_build_outputs_and_vcs_are_never_scanned(tmp_path):
    src = make(
        tmp_path / "t",
        {
            "train.py": CUDA,
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/site.py": CUDA,
            "build/lib/x.py": CUDA,
            "dist/x.py": CUDA,
            "node_modules/x.py": CUDA,
            ".tox/x.py": CUDA,
            ".venv/x.py": CUDA,
            "__pycache__/x.py": CUDA,
            "pkg/build/y.py": CUDA,
        },
    )
    assert scanned(src, respect_gitignore=False) == ["train.py"]


def test_exclude_patterns_are_gitignore_style_and_repeatable(tmp_path):
    src = make(tmp_path / "t", {"a.py": CUDA, "third_party/b.py": CUDA, "nb/c.ipynb": "{}", "pkg/d.py": CUDA})
    assert scanned(src, exclude=("third_party/", "*.ipynb")) == ["a.py", "pkg/d.py"]
    code, paths = checked_paths(src, "--exclude", "third_party/", "--exclude", "pkg")
    assert paths == ["a.py"]


def test_check_takes_files_as_pre_commit_passes_them(tmp_path):
    src = make(
        tmp_path / "proj",
        {
            "porter.toml": 'target = "mlu"\nexclude = ["vendored/"]\n',
            "a.py": CUDA,
            "pkg/b.py": CUDA,
            "pkg/c.py": CUDA,
            "vendored/v.py": CUDA,
            "README.md": "cuda\n",
        },
    )
    code, paths = checked_paths("a.py", "pkg/b.py", "README.md", cwd=src)
    assert code == 1 and paths == ["a.py", "pkg/b.py"]  # relative to the project's root, c.py not checked
    # A folder among the paths is scanned as a tree would be.
    assert checked_paths("a.py", "pkg", cwd=src)[1] == ["a.py", "pkg/b.py", "pkg/c.py"]
    # A file named on the command line is checked even when excluded, unless --force-exclude.
    assert checked_paths("vendored/v.py", cwd=src)[1] == ["vendored/v.py"]
    assert checked_paths("vendored/v.py", "a.py", "--force-exclude", cwd=src)[1] == ["a.py"]
    # From below the root: paths stay the project's, so a baseline matches them.
    assert checked_paths("b.py", cwd=src / "pkg")[1] == ["pkg/b.py"]


def test_baseline_from_the_tree_accepts_the_files_pre_commit_passes(tmp_path):
    src = make(tmp_path / "proj", {"porter.toml": 'target = "mlu"\n', "a.py": CUDA, "pkg/b.py": CUDA})
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    base = [sys.executable, "-m", "porter", "check", "--no-cache"]
    assert subprocess.run(base + [".", "--write-baseline", "base.json"], cwd=src, env=env).returncode == 0
    done = subprocess.run(
        base + ["a.py", "pkg/b.py", "--baseline", "base.json"], cwd=src, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("flag", ["--no-respect-gitignore", None])
def test_cli_respects_gitignore_by_default(tmp_path, flag):
    src = make(tmp_path / "t", {".gitignore": "ignored.py\n", "a.py": CUDA, "ignored.py": CUDA})
    code, paths = checked_paths(src, *([flag] if flag else []))
    want = ["a.py", "ignored.py"] if flag else ["a.py"]
    assert paths == want


def test_git_info_exclude_counts_below_the_gitignore_files(tmp_path):
    repo = make(tmp_path / "repo", {"a.py": CUDA, "local.py": CUDA, "keep.py": CUDA, ".gitignore": "!keep.py\n"})
    (repo / ".git" / "info").mkdir(parents=True)
    (repo / ".git" / "info" / "exclude").write_text("local.py\nkeep.py\n")
    assert scanned(repo) == [".gitignore", "a.py", "keep.py"]  # .gitignore's negation wins over info/exclude
    (repo / "sub").mkdir()
    (repo / "sub" / "local.py").write_text(CUDA)
    assert scanned(repo / "sub") == []  # from a sub-folder of the repository too


def test_patterns_decide_as_pathspec_does_for_every_path():
    """The combined-regex screen in front of the patterns changes no verdict: on a pattern
    list with negations, anchors, folder-only patterns, `**` and character classes, every
    path gets what pathspec's GitIgnoreSpec says, matched or not."""
    import itertools

    import pathspec

    from porter.core.fileset import Patterns

    lines = [
        "# a comment",
        "*.pyc",
        "!keep.pyc",
        "/build",
        "logs/",
        "data/**/raw",
        "**/tmp-*",
        "out[0-9].txt",
        "!out7.txt",
        "docs/*.md",
        "!docs/README.md",
        "\\#hash",
        "a/**/b/",
        "*.sw?",
        "",
        "trailing\\ ",
    ]
    spec, patterns = pathspec.GitIgnoreSpec.from_lines(lines), Patterns(lines)
    parts = [
        "keep.pyc",
        "x.pyc",
        "build",
        "logs",
        "data",
        "raw",
        "tmp-1",
        "out3.txt",
        "out7.txt",
        "docs",
        "README.md",
        "guide.md",
        "#hash",
        "a",
        "b",
        "c.swp",
        "trailing ",
        "src",
    ]
    paths = [p for n in (1, 2, 3) for p in ("/".join(c) for c in itertools.product(parts, repeat=n))]
    paths += [p + "/" for p in paths[:400]]
    assert len(paths) > 5000
    verdicts = [patterns.verdict(p) for p in paths]
    assert verdicts == [spec.check_file(p).include for p in paths]
    assert {True, False, None} <= set(verdicts)  # the list exercises all three answers


def test_the_screen_finds_every_path_a_pattern_matches():
    """`screen_regex` may find more than git would, never less: for every pattern of a varied
    list (anchors, `**`, classes, escapes, folder-only, negations) and every path, where
    pathspec says the pattern matches, the screen finds the path."""
    import itertools

    import pathspec

    from porter.core.fileset import screen_regex

    lines = [
        "*.pyc",
        "!keep.pyc",
        "/build",
        "logs/",
        "data/**/raw",
        "**/tmp-*",
        "**/b",
        "out[0-9].txt",
        "[!a]x",
        "docs/*.md",
        "\\#hash",
        "\\!bang",
        "a/**/b/",
        "a/**",
        "*.sw?",
        "trailing\\ ",
        "x/y",
        "/a/b/",
        "?",
        "**",
        "*/b",
        "b[]]c",
        "te?t/**/deep",
        "data[",
        "sp ace",
        "a\\*b",
    ]
    parts = [
        "keep.pyc",
        "x.pyc",
        "build",
        "logs",
        "data",
        "raw",
        "tmp-1",
        "out3.txt",
        "bx",
        "ax",
        "docs",
        "guide.md",
        "#hash",
        "!bang",
        "a",
        "b",
        "c.swp",
        "trailing ",
        "x",
        "y",
        "b]c",
        "test",
        "deep",
        "data[",
        "sp ace",
        "a*b",
    ]
    paths = [p for n in (1, 2, 3) for p in ("/".join(c) for c in itertools.product(parts, repeat=n))]
    paths += [p + "/" for p in paths[:2000]]
    matching = 0
    for line in lines:
        pattern = pathspec.GitIgnoreSpec.from_lines([line]).patterns[0]
        if pattern.include is None:
            continue
        anchored, body = screen_regex(line)
        screen = re.compile(("^" if anchored else "(?:^|/)") + body + "(?:/|$)")
        matched = [p for p in paths if pattern.match_file(p) is not None]
        matching += bool(matched)
        missed = [p for p in matched if not screen.search(p)]
        assert not missed, (line, missed[:5])
    assert matching >= len(lines) - 3  # nearly every pattern matches some path


def test_pathspec_is_not_loaded_when_no_path_is_ignored(tmp_path):
    """A clean checkout's walk meets no ignored path: the screen says so for each, and the
    pattern library is never loaded."""
    repo = make(tmp_path / "repo", {"a.py": CUDA, "sub/b.py": CUDA, ".gitignore": "*.pyc\n/build/\n**/tmp-*\n"})
    code = (
        "import sys; from pathlib import Path; from porter.core.fileset import FileSelection; "
        "from porter.engine.tree_index import TreeIndex; "
        f"src = Path({str(repo)!r}); "
        "print(len(list(TreeIndex(None, src).listing(FileSelection().matcher(src), None))), 'pathspec' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["3", "False"]
    (repo / "x.pyc").write_text("")
    assert scanned(repo) == [".gitignore", "a.py", "sub/b.py"]


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_paths_git_tracks_are_read_from_its_index(tmp_path, version):
    """What .gitignore leaves out may be tracked (porter/core/git_index.py reads .git/index:
    entries padded in versions 2 and 3, paths compressed in version 4); below a subfolder, the
    paths are relative to it; a split index (entries kept elsewhere) says nothing."""
    from porter.core.git_index import tracked_among, tracked_below

    make(tmp_path, {"a.py": "", "src/pkg/b.py": "", "src/pkg/data/c.json": "", "src/notes.txt": ""})
    git = ["git", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "a.py", "src/pkg"], check=True)
    subprocess.run([*git, "update-index", "--index-version", version], check=True)
    assert tracked_below(tmp_path) == {"a.py", "src/pkg/b.py", "src/pkg/data/c.json"}
    below = tracked_below(tmp_path / "src")
    assert below == {"pkg/b.py", "pkg/data/c.json"}
    assert tracked_among(["pkg/data/", "notes.txt", "pkg/b.py", "other/"], below) == ["pkg/data/", "pkg/b.py"]
    subprocess.run([*git, "update-index", "--split-index"], check=True)
    assert tracked_below(tmp_path) is None
