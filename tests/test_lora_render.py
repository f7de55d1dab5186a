"""Rendering of porter_lora/ for every target (mlu, hip, npu), with and without LLaMA-Factory layouts.

Fast: nothing here imports torch. The LLaMA-Factory argument names the rendered configs
may use are data (tests/data/llamafactory_args.json, read from each version's source).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from porter.lora import TARGETS, detect_layout, plan_lora, render_lora, target_facts
from porter.lora.llamafactory import yaml_scalar
from porter.rules import TARGETS as RULE_TARGETS

# Targets `porter check` and `convert` take already: a LoRA target gets there with its rules.
CHECKED_TARGETS = sorted(set(TARGETS) & set(RULE_TARGETS))

LF_ARGS = json.loads((Path(__file__).parent / "data" / "llamafactory_args.json").read_text(encoding="utf-8"))


def make_tree(root: Path, layout: str | None) -> Path:
    """A minimal source tree with the files that identify each LLaMA-Factory layout."""
    root.mkdir(parents=True, exist_ok=True)
    if layout == "llamafactory":
        (root / "src" / "llamafactory").mkdir(parents=True)
        (root / "src" / "llamafactory" / "__init__.py").write_text("")
        (root / "pyproject.toml").write_text('[project.scripts]\nllamafactory-cli = "llamafactory.cli:main"\n')
    elif layout == "llmtuner":
        (root / "src" / "llmtuner").mkdir(parents=True)
        (root / "src" / "llmtuner" / "__init__.py").write_text("")
        (root / "src" / "train_bash.py").write_text("")
    else:
        (root / "train.py").write_text("")
    return root


def accepted_names(layout: str) -> set[str]:
    version = LF_ARGS["versions"][layout]
    names = set(version["transformers"]["names"])
    for classes in version["hparams"].values():
        for fields in classes.values():
            names.update(fields)
    return names


CASES = [
    pytest.param((target, layout, deepspeed), id=f"{layout or 'plain'}{'+ds' if deepspeed else ''}[{target}]")
    for target in TARGETS
    for layout in (None, "llmtuner", "llamafactory")
    for deepspeed in (False, True)
]
LF_CASES = [case for case in CASES if case.values[0][1]]


@pytest.fixture(params=CASES)
def rendered(tmp_path, request) -> tuple[str, str | None, bool, Path, list[Path]]:
    """Render one case into a fresh tree: (target, layout, deepspeed, out_dir, written)."""
    target, layout, deepspeed = request.param
    tree = make_tree(tmp_path / "out_tree", layout)
    out = tree / "porter_lora"
    return target, layout, deepspeed, out, render_lora(tree, out, target, deepspeed=deepspeed)


def test_files_written(rendered):
    target, layout, deepspeed, out, written = rendered
    names = {p.relative_to(out).as_posix() for p in written}
    expected = {"train_lora.py", "run_lora.sh", "README.md"}
    expected |= {"ds_config.json", "ds_config_zero3.json"} if deepspeed else set()
    expected |= {"llamafactory/run_sft.sh", "llamafactory/templates.json"} if layout else set()
    expected |= {"llamafactory/lora_sft.yaml"} if layout == "llamafactory" else set()
    assert names == expected
    for path in written:
        assert path.is_file()
        assert bool(path.stat().st_mode & 0o100) == path.name.endswith((".sh", ".py"))
        if path.suffix == ".json":
            json.loads(path.read_text())  # every rendered JSON file parses


def test_train_script_parses_and_fits_the_target(rendered):
    target, _, deepspeed, out, _ = rendered
    facts = target_facts(target)
    source = (out / "train_lora.py").read_text()
    ast.parse(source)
    compile(source, "train_lora.py", "exec")
    assert f'BACKENDS = {{"{facts.device_type}": "{facts.backend}", "cpu": "gloo"}}' in source
    options = parser_options(source)
    for name in (
        "deepspeed",
        "fsdp",
        "fsdp_config",
        "resume_from_checkpoint",
        "save_steps",
        "report_to",
        "eval_file",
        "val_size",
        "gradient_checkpointing",
        "merge_to",
        "data_format",
    ):
        assert name in options
    assert options["device"]["default"] == "auto"
    assert options["device"]["choices"] == ["auto", facts.device_type, "cpu"]
    assert options["ddp_backend"]["choices"] == ["auto", facts.backend, "gloo"]
    assert "local_files_only=True" in source
    assert "{{" not in source and "{%" not in source
    others = [t.device_type for t in TARGETS.values() if t.device_type not in ("cuda", facts.device_type)]
    assert not [word for word in others if re.search(rf"\b(torch_)?{word}\b", source)], others
    if facts.vendor_import:  # mlu, npu
        assert f"import {facts.vendor_import}" in source
        assert f"torch.{facts.device_module}.is_bf16_supported()" in source
        # A file for a vendor device must hold nothing porter's check would flag there.
        assert not re.search(r"cuda|nccl", source, re.IGNORECASE)
        assert (facts.device_setup or "") in source
    else:
        assert "torch.version.hip" in source


def test_shell_scripts(rendered):
    target, layout, deepspeed, out, written = rendered
    facts = target_facts(target)
    bash = shutil.which("bash")
    for path in (p for p in written if p.suffix == ".sh"):
        text = path.read_text()
        assert text.startswith("#!/usr/bin/env bash\n")
        assert f"export {facts.visible_devices_var}=" in text
        assert ("DTK" in text) == (target == "hip")
        assert ("set_env.sh" in text) == (target == "npu")  # CANN, loaded unless it is
        assert "CUDA_VISIBLE_DEVICES" not in text
        if bash:
            check = subprocess.run([bash, "-n", str(path)], capture_output=True, text=True)
            assert check.returncode == 0, check.stderr
    run = (out / "run_lora.sh").read_text()
    assert 'torchrun --nnodes 1 --nproc_per_node "$NPROC"' in run
    assert '--master_port "$MASTER_PORT"' in run and "MASTER_PORT=${MASTER_PORT:-" in run
    assert "DEVICE=${DEVICE:-auto}" in run and '--device "$DEVICE"' in run
    assert 'python "$HERE/train_lora.py"' in run
    # train_lora.py picks the backend per device (gloo on cpu), so the script must not fix it.
    assert "--ddp_backend" not in run
    assert ("DS_CONFIG" in run) == deepspeed


def test_ds_configs(rendered):
    _, _, deepspeed, out, _ = rendered
    names = {"ds_config.json": 2, "ds_config_zero3.json": 3}
    if not deepspeed:
        assert not [name for name in names if (out / name).exists()]
        return
    for name, stage in names.items():
        config = json.loads((out / name).read_text())
        assert config["zero_optimization"]["stage"] == stage
        # The Trainer fills "auto" from --bf16/--fp16, so one file serves cards with and without bf16.
        assert config["fp16"]["enabled"] == config["bf16"]["enabled"] == "auto"
        assert config["gradient_accumulation_steps"] == config["train_micro_batch_size_per_gpu"] == "auto"


def test_readme_explains_the_choices(rendered):
    target, layout, _, out, _ = rendered
    facts = target_facts(target)
    readme = (out / "README.md").read_text()
    for fact in (facts.backend, facts.visible_devices_var, facts.monitor_tool, "--max_steps 30"):
        assert fact in readme
    assert ("## LLaMA-Factory" in readme) == (layout is not None)


def parser_options(source: str) -> dict[str, dict]:
    """The ``--name`` options a rendered train_lora.py defines, read from its syntax tree."""
    options = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            name = ast.literal_eval(node.args[0])
            options[name.removeprefix("--")] = {
                kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg not in ("type",)
            }
    return options


OPTION_ROW = re.compile(r"^\| `--(\w+)` \| (.*?) \| .* \|$", re.MULTILINE)


def test_readme_lists_every_option_of_the_script(rendered):
    """The README's option table is the parser's option list: names, order and defaults."""
    _, _, _, out, _ = rendered
    options = parser_options((out / "train_lora.py").read_text())
    rows = OPTION_ROW.findall((out / "README.md").read_text())
    assert [name for name, _ in rows] == list(options)
    for name, default in rows:
        option = options[name]
        if option.get("required"):
            assert default == "required"
        elif option.get("action") == "store_true":
            assert default == "off"
        elif option["default"] is None:
            assert default == "—"
        else:
            assert default == f"`{option['default']}`", name


def rendered_lf_settings(layout: str, out: Path) -> dict[str, object]:
    """The keys and values of the LLaMA-Factory config, read back from the rendered file."""
    if layout == "llamafactory":
        yaml = pytest.importorskip("yaml")
        return yaml.safe_load((out / "llamafactory" / "lora_sft.yaml").read_text())
    script = (out / "llamafactory" / "run_sft.sh").read_text()
    command = script[script.index('"${launcher[@]}" src/train_bash.py') : script.rindex('"$@"')].replace("\\\n", " ")
    tokens = shlex.split(command)[2:]
    settings: dict[str, object] = {}
    for i, token in enumerate(tokens):
        if not token.startswith("--"):
            continue
        value = tokens[i + 1] if i + 1 < len(tokens) and not tokens[i + 1].startswith("--") else True
        if isinstance(value, str):
            default = re.fullmatch(r"\$\{\w+:-(.*)\}", value)  # "${DATASET:-name}": the default
            value = {"False": False}.get(value, default.group(1) if default else value)
        settings[token[2:]] = value
    return settings


@pytest.mark.parametrize("case", LF_CASES)
def test_llamafactory_config_uses_only_accepted_names(tmp_path, case):
    target, layout, deepspeed = case
    tree = make_tree(tmp_path / "tree", layout)
    render_lora(tree, tree / "porter_lora", target, deepspeed=deepspeed)
    settings = rendered_lf_settings(layout, tree / "porter_lora")
    version = LF_ARGS["versions"][layout]
    unknown = set(settings) - accepted_names(layout)
    assert not unknown, f"not accepted by LLaMA-Factory {version['version']}: {sorted(unknown)}"
    assert not [key for key in settings if "quantization" in key]
    assert settings["finetuning_type"] == "lora"
    assert settings["template"] in version["templates"]
    assert settings["dataset"] in version["demo_datasets"]
    assert settings["flash_attn"] in version["flash_attn_values"]
    facts = target_facts(target)
    if facts.name == "mlu":
        assert settings["flash_attn"] in ("disabled", False)
    if facts.name == "npu":  # no flash-attn package on NPU; LLaMA-Factory's sdpa runs there
        assert settings["flash_attn"] in ("sdpa", False)
    assert settings[facts.default_precision] is True
    assert ("deepspeed" in settings) == deepspeed


def test_plan_is_deterministic(tmp_path):
    tree = make_tree(tmp_path / "tree", "llamafactory")
    for target in TARGETS:
        assert plan_lora(tree, "porter_lora", target, deepspeed=True) == plan_lora(
            tree, "porter_lora", target, deepspeed=True
        )


@pytest.mark.parametrize(
    "layout,expected",
    [
        pytest.param("llamafactory", "llamafactory", id="fix/llamafactory"),
        pytest.param("llmtuner", "llmtuner", id="fix/llmtuner"),
        pytest.param(None, None, id="noop/plain"),
    ],
)
def test_detect_layout(tmp_path, layout, expected):
    assert detect_layout(make_tree(tmp_path / "tree", layout)) == expected


def test_detect_layout_needs_the_entry_point(tmp_path):
    (tmp_path / "a" / "src" / "llamafactory").mkdir(parents=True)  # no llamafactory-cli
    (tmp_path / "b" / "src" / "llmtuner").mkdir(parents=True)  # no train_bash.py
    assert detect_layout(tmp_path / "a") is None
    assert detect_layout(tmp_path / "b") is None


# Real LLaMA-Factory trees (fetched code never ships with porter): the current layout from the
# package index's source (tests/conftest.py, or PORTER_LF), the 0.6.0 llmtuner layout from a
# checkout named by PORTER_LF060 (the index has no source tree of it: its sdist does not build).
def test_detect_layout_on_a_real_tree(llama_factory):
    assert detect_layout(llama_factory) == "llamafactory"


def _lf060() -> Path:
    path = os.environ.get("PORTER_LF060")
    if not path or not Path(path, "src").is_dir():
        pytest.skip("needs a LLaMA-Factory 0.6.0 checkout in PORTER_LF060: the package index has no source tree of it")
    return Path(path)


def test_detect_layout_on_a_real_060_checkout():
    assert detect_layout(_lf060()) == "llmtuner"


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target 'musa'; expected one of: hip, mlu, npu"):
        target_facts("musa")


@pytest.mark.parametrize("target", CHECKED_TARGETS)
def test_rendered_script_passes_porter_check(tmp_path, target):
    if importlib.util.find_spec("porter.__main__") is None:
        pytest.skip("porter's CLI is not available")
    cli = subprocess.run([sys.executable, "-m", "porter", "check", "--help"], capture_output=True, text=True)
    if cli.returncode != 0:
        pytest.skip("porter check is not available yet")
    tree = make_tree(tmp_path / "tree", None)
    render_lora(tree, tmp_path / "check" / "porter_lora", target)
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "check", str(tmp_path / "check"), "--target", target],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("target", CHECKED_TARGETS)
def test_rendered_files_need_no_porter_edits(tmp_path, target):
    """porter convert --diff on the rendered files for their own target proposes nothing."""
    if importlib.util.find_spec("porter.__main__") is None:
        pytest.skip("porter's CLI is not available")
    tree = make_tree(tmp_path / "tree", "llamafactory")
    # Not named porter_lora: convert leaves its own output folder alone.
    render_lora(tree, tmp_path / "check" / "lora", target, deepspeed=True)
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "convert", str(tmp_path / "check"), "--target", target, "--diff"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "", proc.stdout


@pytest.mark.parametrize(
    "value",
    [
        "sdpa",
        "porter_lora/ds_config.json",
        "/path/to/model",
        "a b",
        "x: y",
        'q"uote',
        "on",
        "true",
        True,
        False,
        8,
        0.0001,
        3.0,
        180000000,
    ],
)
def test_yaml_scalar_reads_back_as_the_same_value(value):
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(f"key: {yaml_scalar(value)}")["key"] == value


@pytest.mark.parametrize("layout", [None, "llamafactory"])
def test_cached_render_is_identical_and_skips_jinja(tmp_path, monkeypatch, layout):
    tree = make_tree(tmp_path / "tree", layout)
    cache = tmp_path / "cache"
    first = plan_lora(tree, "porter_lora", "mlu", deepspeed=True, cache_dir=cache)
    monkeypatch.setattr("porter.lora.render._environment", lambda: pytest.fail("rendered again"))
    assert plan_lora(tree, "porter_lora", "mlu", deepspeed=True, cache_dir=cache) == first
    # Another context is another entry: a different target renders afresh.
    monkeypatch.undo()
    assert plan_lora(tree, "porter_lora", "hip", deepspeed=True, cache_dir=cache) != first


def add_lf_tables(tree: Path, layout: str) -> None:
    """A template.py and constants.py in the form LLaMA-Factory keeps them, with a few entries."""
    data, extras = tree / "src" / layout / "data", tree / "src" / layout / "extras"
    data.mkdir(parents=True, exist_ok=True)
    extras.mkdir(parents=True, exist_ok=True)
    (data / "template.py").write_text(
        "".join(
            f'register_template(\n    name="{name}",\n    format_user=None,\n)\n'
            for name in ("default", "qwen", "llama2", "llama3")
        )
    )
    (extras / "constants.py").write_text(
        'register_model_group(\n    models={\n        "Qwen2.5-7B-Instruct": {\n'
        '            DownloadSource.DEFAULT: "Qwen/Qwen2.5-7B-Instruct",\n        },\n    },\n'
        '    template="qwen",\n)\n'
        # A family whose template this version does not register is never chosen.
        'register_model_group(models={"Gemma-7B": {DownloadSource.DEFAULT: "google/gemma-7b"}}, template="gemma")\n'
    )


def fake_entry_points(tree: Path, bin_dir: Path) -> dict[str, str]:
    """llamafactory-cli and src/train_bash.py that print their arguments, one per line."""
    bin_dir.mkdir(exist_ok=True)
    cli = bin_dir / "llamafactory-cli"
    cli.write_text("#!/bin/sh\nprintf '%s\\n' \"$@\"\n")
    cli.chmod(0o755)
    (tree / "src" / "train_bash.py").write_text("import sys\nprint('\\n'.join(sys.argv[1:]))\n")
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {"PATH": path}


@pytest.mark.parametrize("layout", ["llamafactory", "llmtuner"])
@pytest.mark.parametrize(
    "folder,config,chosen,expected",
    [
        pytest.param("Qwen2.5-7B-Instruct", {"model_type": "qwen2"}, {}, "qwen", id="by-name"),
        pytest.param("my-sft", {"model_type": "llama", "vocab_size": 128256}, {}, "llama3", id="llama3-vocab"),
        pytest.param("my-sft", {"model_type": "llama", "vocab_size": 64000}, {}, "default", id="other-llama"),
        pytest.param("gemma-7b", {"model_type": "gemma"}, {}, "default", id="template-not-in-this-version"),
        pytest.param("my-sft", {"model_type": "qwen2"}, {"TEMPLATE": "llama2"}, "llama2", id="TEMPLATE-wins"),
    ],
)
def test_run_sft_picks_the_template_for_the_model(tmp_path, layout, folder, config, chosen, expected):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    tree = make_tree(tmp_path / "tree", layout)
    add_lf_tables(tree, layout)
    render_lora(tree, tree / "porter_lora", "hip")
    model = tmp_path / folder
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config))
    base = {key: value for key, value in os.environ.items() if key != "TEMPLATE"}
    env = {**base, **fake_entry_points(tree, tmp_path / "bin"), "MODEL": str(model), **chosen}
    proc = subprocess.run(
        [bash, str(tree / "porter_lora" / "llamafactory" / "run_sft.sh")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    args = proc.stdout.splitlines()
    if layout == "llamafactory":
        passed = [a.split("=", 1)[1] for a in args if a.startswith("template=")]
        assert passed == [expected]
        assert f"model_name_or_path={model}" in args
    else:
        assert args[args.index("--template") + 1] == expected
    if chosen:
        assert "run_sft.sh: template" not in proc.stderr  # TEMPLATE is used as given
    else:
        assert f"run_sft.sh: template {expected} (" in proc.stderr


def test_model_type_table_names_templates_the_current_version_has():
    from porter.lora.lf_templates import MODEL_TYPE_TEMPLATES

    known = set(LF_ARGS["versions"]["llamafactory"]["templates"])
    assert {template for _, _, template in MODEL_TYPE_TEMPLATES} <= known


@pytest.mark.parametrize("layout", ["llamafactory", "llmtuner"])
def test_template_table_of_real_trees(request, layout):
    from porter.lora.lf_templates import template_table

    path = request.getfixturevalue("llama_factory") if layout == "llamafactory" else _lf060()
    table = template_table(path, layout)
    qwen = {"llamafactory": "qwen2-7b-instruct", "llmtuner": "qwen1.5-7b-chat"}[layout]  # each version's own
    assert table["by_name"][qwen] == "qwen"
    assert table["by_name"]["llama-2-7b-chat-hf"] == "llama2"  # a hub id's basename
    assert set(LF_ARGS["versions"][layout]["templates"]) - {"default"} <= {t for _, _, t in table["by_model_type"]}


def test_porter_lora_keeps_edited_files_without_force(tmp_path):
    from click.testing import CliRunner

    from porter.cli import main

    tree = make_tree(tmp_path / "tree", None)
    run = lambda *extra: CliRunner().invoke(main, ["lora", str(tree), "--target", "mlu", *extra])  # noqa: E731
    assert run().exit_code == 0
    assert run().exit_code == 0  # what porter wrote is rewritten without asking
    script, readme = tree / "porter_lora" / "train_lora.py", tree / "porter_lora" / "README.md"
    edited = script.read_text() + "# my change\n"
    script.write_text(edited)
    readme.write_text("my notes\n")
    refused = run()
    assert refused.exit_code == 2
    assert f"{script} differs from what porter writes there" in refused.output
    assert f"{readme} differs" in refused.output and "--force" in refused.output
    assert "run_lora.sh" not in refused.output  # unchanged files are not named
    assert script.read_text() == edited and readme.read_text() == "my notes\n"  # nothing written
    assert run("--force").exit_code == 0
    assert "# my change" not in script.read_text() and readme.read_text() != "my notes\n"


@pytest.mark.parametrize("target", TARGETS)
def test_rendered_script_keeps_the_trainers_bar_on_a_terminal_and_shows_tokenizing(tmp_path, target):
    """The Trainer's own step bar is not switched off (only off a terminal, where it is noise
    in a log), and the tokenizing loop, minutes long on a large data set, has a bar too."""
    files = {f.relpath: f.text for f in plan_lora(make_tree(tmp_path / "t", None), "porter_lora", target)}
    tree = ast.parse(files["train_lora.py"])
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    disable = [k.value for c in calls for k in c.keywords if k.arg == "disable_tqdm"]
    assert len(disable) == 1 and ast.unparse(disable[0]) == "not bars_shown()"
    load = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "load_examples")
    loops = [n for n in ast.walk(load) if isinstance(n, ast.For)]
    assert any(isinstance(loop.iter, ast.Call) and ast.unparse(loop.iter.func) == "tqdm" for loop in loops)
    assert "sys.stderr.isatty()" in ast.unparse(next(n for n in tree.body if getattr(n, "name", "") == "bars_shown"))


@pytest.mark.parametrize("target", TARGETS)
def test_hub_kernels_are_off_where_the_kernels_library_lacks_the_device(tmp_path, target):
    """transformers 5.25+ kernelizes every model with Hugging Face's `kernels`, which has no
    "mlu" device (model.train(): "Unsupported device type 'mlu'"): the mlu script turns hub
    kernels off before transformers is imported, unless the user chose; ROCm's "cuda" is known."""
    files = {f.relpath: f.text for f in plan_lora(make_tree(tmp_path / "t", None), "porter_lora", target)}
    body = ast.parse(files["train_lora.py"]).body
    setting = [i for i, n in enumerate(body) if ast.unparse(n) == "os.environ.setdefault('USE_HUB_KERNELS', '0')"]
    imports = [i for i, n in enumerate(body) if isinstance(n, ast.Import) and n.names[0].name == "transformers"]
    if not target_facts(target).hub_kernels_know_device:  # mlu
        assert len(setting) == 1 and setting[0] < imports[0]
    else:
        assert setting == []
