"""Issue 30: what the user wrote (a .gitignore, a configuration, a project rule or codemod,
a command for `porter run`) never makes porter crash, hang or exit with an internal error.
A bad configuration is a usage error (exit 2) naming the file and the problem; a bad
.gitignore line is skipped with a warning naming file:line, as git skips it; a codemod that
exits is that rule's failure on that file; a pattern with thousands of `*` is answered."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from porter.cli import main
from test_faults import CUDA, ROOT, _one_line_error, _porter, _repo


# --- 7. a .gitignore line pathspec refuses --------------------------------------------------


@pytest.mark.parametrize("bad", ["!", "[z-a]", "trailing\\"])
@pytest.mark.parametrize("command", ["convert", "check"])
def test_invalid_gitignore_line_is_skipped_with_a_warning_naming_file_and_line(tmp_path, bad, command):
    src = _repo(tmp_path)
    (src / "pkg" / "junk.pyc").write_bytes(b"x")
    (src / ".gitignore").write_text(f"# patterns\n{bad}\n*.pyc\n")
    args = ["--target", "mlu"] + (["-o", str(tmp_path / "out")] if command == "convert" else ["--format", "json"])
    code, stdout, err = _porter(command, str(src), *args)
    assert code in (0, 1) and "Traceback" not in err and "internal error" not in err, err
    assert f"{src / '.gitignore'}:2: pattern {bad!r}" in err and "skipped" in err
    if command == "convert":  # the other lines still count
        left_out = json.loads((tmp_path / "out" / "porter_report" / "report.json").read_text())["left_out"]
        assert [p["path"] for p in left_out["paths"]] == ["pkg/junk.pyc"]


def test_invalid_exclude_pattern_is_skipped_with_a_warning(tmp_path):
    src = _repo(tmp_path)
    code, _, err = _porter("check", str(src), "--target", "mlu", "--exclude", "!", "--exit-zero")
    assert code == 0 and "exclude pattern '!'" in err and "Traceback" not in err, err


# --- 8. [tool.porter] values of the wrong type ----------------------------------------------


@pytest.mark.parametrize(
    "text,needle",
    [
        ("[tool.porter]\ntarget = 3\n", "key 'target' must be one of 'mlu', 'hip', 'npu', got 3"),
        ('[tool.porter]\nexclude = "x"\n', "key 'exclude' must be a list of glob patterns, got 'x'"),
        ("[tool.porter]\nrespect-gitignore = 1\n", "key 'respect-gitignore' must be true or false"),
        ('[tool.porter]\nbaseline = ""\n', "key 'baseline' must be a path (a non-empty string)"),
    ],
)
@pytest.mark.parametrize("command", ["convert", "check"])
def test_wrong_type_in_tool_porter_is_a_usage_error_naming_the_key(tmp_path, text, needle, command):
    src = _repo(tmp_path)
    (src / "pyproject.toml").write_text(text)
    code, _, err = _porter(command, str(src), "--target", "mlu")
    line = _one_line_error(err)
    assert code == 2 and needle in line and str(src / "pyproject.toml") in line


# --- 9. a project rule whose regular expression does not compile ----------------------------

BAD_REGEX_RULE = """
[[rule]]
code = "PRT851"
name = "house-image"
kind = "container-image"
summary = "our CUDA image"
why = "w"
severity = "warning"
applicability = "manual"
image_patterns = ["^mycorp/(cuda"]
examples = [{ before = "FROM mycorp/cuda:1" }]
"""


@pytest.mark.parametrize("command", ["convert", "check", "rules"])
def test_project_rule_with_an_invalid_regex_is_a_usage_error_naming_rule_and_regex(tmp_path, command):
    src = _repo(tmp_path)
    (src / "Dockerfile").write_text("FROM mycorp/cuda:1\n")
    (src / "house.toml").write_text(BAD_REGEX_RULE)
    (src / "porter.toml").write_text('target = "mlu"\nrules = ["house.toml"]\n')
    code, _, err = _porter(command, *([str(src)] if command != "rules" else []), cwd=src)
    line = _one_line_error(err)
    assert code == 2, err
    assert str(src / "house.toml") in line and "PRT851" in line and "image_patterns" in line
    assert "'^mycorp/(cuda' is not a valid regular expression: missing )" in line


def test_rule_regex_fields_are_checked_when_rules_load(tmp_path):
    from porter.rules import RuleError, load_rule_files

    path = tmp_path / "r.toml"
    path.write_text(BAD_REGEX_RULE)
    with pytest.raises(RuleError, match="not a valid regular expression"):
        load_rule_files([path], "mlu", project=True)
    path.write_text(BAD_REGEX_RULE.replace('["^mycorp/(cuda"]', '["^mycorp/", 3]'))
    with pytest.raises(RuleError, match="must hold strings"):
        load_rule_files([path], "mlu", project=True)


# --- 10. a codemod that calls sys.exit --------------------------------------------------------

EXITS = """
import sys
from libcst.codemod import VisitorBasedCodemodCommand


class Quits(VisitorBasedCodemodCommand):
    CODE = "PRT814"
    DESCRIPTION = "exits on `quit_here`"
    NAMES = ["quit_here"]

    def visit_Name(self, node):
        if node.value == "quit_here":
            sys.exit({code})
"""


@pytest.mark.parametrize("code", ["3", "'bye'"])
def test_codemod_that_calls_sys_exit_is_that_rules_failure_and_the_run_goes_on(tmp_path, code):
    pytest.importorskip("libcst")
    src = tmp_path / "proj"
    (src / "rules").mkdir(parents=True)
    (src / "rules" / "quits.py").write_text(EXITS.format(code=code))
    (src / "porter.toml").write_text('target = "mlu"\ncodemods = ["rules/*.py"]\n')
    (src / "bad.py").write_text("import torch\nquit_here = torch.zeros(1).cuda()\n")
    (src / "good.py").write_text(CUDA)
    rc, stdout, err = _porter("check", str(src), "--format", "json", "--no-cache")
    assert rc == 1 and "Traceback" not in err, err
    [error] = [f for f in json.loads(stdout)["findings"] if f["rule"] == "PRT814"]
    assert error["path"] == "bad.py" and "SystemExit" in error["message"]
    rc, _, err = _porter("convert", str(src), "-o", str(tmp_path / "out"), "--no-cache")
    assert rc in (0, 1) and "Traceback" not in err, err
    assert "x.mlu()" in (tmp_path / "out" / "good.py").read_text()
    assert ".mlu()" in (tmp_path / "out" / "bad.py").read_text()  # porter's own rules went on


# --- 11. porter run of a file the system will not start ---------------------------------------


@pytest.mark.parametrize("kind", ["not-executable", "not-a-program", "folder", "missing-interpreter"])
def test_run_of_a_file_that_cannot_be_started_is_one_line(tmp_path, monkeypatch, kind):
    from porter.emulator import launch

    monkeypatch.setattr(launch, "prepare", lambda quiet=False: 0.0)  # no torch needed to refuse it
    target = tmp_path / "train.py"
    if kind == "folder":
        target = tmp_path / "folder"
        target.mkdir()
    else:
        target.write_text(
            {
                "not-executable": "print('hi')\n",
                "not-a-program": "\x00\x01binary data\n",
                "missing-interpreter": "#!/no/such/python\nprint('hi')\n",
            }[kind]
        )
        target.chmod(0o644 if kind == "not-executable" else 0o755)
    result = CliRunner().invoke(main, ["run", "--emulate", "mlu", "--", str(target)])
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith(f"porter: error: cannot run {target}: ") and "Traceback" not in result.output
    if kind == "not-executable":
        assert f"python {target}" in line  # what to do instead


# --- 12. glob patterns with many `*` ----------------------------------------------------------


def test_a_pattern_of_thousands_of_stars_is_answered(tmp_path):
    """Runs in its own process with a generous limit: before the fix, 28 stars took 10 s and
    3,000 never finished. The verdicts are git's."""
    code = textwrap.dedent("""
        from porter.core.fileset import Patterns
        name = "a" * 5000
        cases = [("*" * 3000 + "x", name, None), ("*a" * 1500 + "b", name, None), ("*a" * 1500, name, True),
                 ("x" + "*" * 3000, "x" + name, True), ("d/" + "*b" * 1000 + "c/e", "d/" + "b" * 3000 + "/e", None),
                 ("*" * 28 + "x", "a" * 60, None)]
        for pattern, path, verdict in cases:
            patterns = Patterns([pattern])
            assert patterns.verdict(path) is verdict, pattern[:20]
            assert patterns.spec.check_file(path).include is verdict, pattern[:20]  # pathspec itself
        print("ok")
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(ROOT)}
    )
    assert proc.stdout.strip() == "ok", proc.stderr


def test_exclude_of_thousands_of_stars_on_a_long_name_finishes(tmp_path):
    src = _repo(tmp_path)
    (src / ("a" * 200 + ".py")).write_text(CUDA)
    (src / ".gitignore").write_text("*" * 3000 + "x\n" + "*a" * 1000 + "z\n")
    code, _, err = _porter("check", str(src), "--target", "mlu", "--exclude", "*" * 3000 + "q", "--exit-zero")
    assert code == 0, err


def test_linear_regex_keeps_the_verdicts():
    """The rewritten regex matches exactly what the original does, on paths chosen to hit
    every choice (leftmost and later occurrences, slashes between, classes, escapes)."""
    import itertools
    import re

    from porter.core.fileset import linear_regex

    regexes = [
        r"^(?:.+/)?[^/]*a[^/]*a[^/]*b(?:(?P<ps_d>/)|$)",
        r"^[^/]*ab[^/]*b/c",
        r"(?:^|/)(?:[^/]*\.a[^/]*|x[^/]*[b-c][^/]*)(?:/|$)",
        r"^[^/]*[^/]*[^/]*$",
        r"^[^/]*[^a/][^/]*a$",
        r"^[^/]*a[^/]+b[^/]*c$",
        r"^[^/]*a(?:/.+)?/[^/]*b[^/]*$",
    ]
    paths = ["".join(p) for n in range(1, 7) for p in itertools.product("ab/.c", repeat=n)]
    for regex in regexes:
        old, new = re.compile(regex), re.compile(linear_regex(regex))
        assert [bool(old.search(p)) for p in paths] == [bool(new.search(p)) for p in paths], regex
    assert "(?>" in linear_regex(regexes[0]) and linear_regex(r"^a[^/]*b$") == r"^a[^/]*b$"


def test_codemod_class_whose_attribute_exits_is_a_problem_of_its_file(tmp_path):
    pytest.importorskip("libcst")
    src = tmp_path / "proj"
    (src / "rules").mkdir(parents=True)
    (src / "rules" / "odd.py").write_text(
        textwrap.dedent("""
        import sys
        from libcst.codemod import VisitorBasedCodemodCommand

        class Meta(type(VisitorBasedCodemodCommand)):
            def __getattr__(cls, name):
                sys.exit("no " + name)

        class Exits(VisitorBasedCodemodCommand, metaclass=Meta):
            CODE = "PRT816"
            DESCRIPTION = "exits when asked its names"
    """)
    )
    (src / "porter.toml").write_text('target = "mlu"\ncodemods = ["rules/*.py"]\n')
    (src / "good.py").write_text(CUDA)
    rc, _, err = _porter("convert", str(src), "-o", str(tmp_path / "out"), "--no-cache")
    assert rc == 1 and "Traceback" not in err and "internal error" not in err, err
    assert "Exits: cannot be read: SystemExit: no NAMES" in err
    assert "x.mlu()" in (tmp_path / "out" / "good.py").read_text()
