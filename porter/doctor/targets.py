"""What `porter doctor` knows about each target: one record per target, so that the checks
hold no target's name and a fourth target is one more record.

The facts that other parts of porter already hold are read from there, not repeated: the
device type, the vendor package, the process-group backend, the visible-devices variable,
the card monitor and the toolkit's set-up line from porter/lora/targets.py, whether porter
emulates the target from porter/emulator/targets.py. What is doctor's own is here: how the
vendor package's version names the torch release it is built for, how to install the
line's torch and the vendor package, the variable that makes the collective library log,
the distributions that provide a library under another name, and the toolkit whose
environment must be loaded (Ascend's CANN).

Sources: Cambricon/torch_mlu (torch_mlu.__version__ "1.24.1-torch2.4.0", op_tables/mlu/
packages.toml's torch-mlu entry; CNCL_LOG_LEVEL), the PyTorch ROCm notes (torch.version.hip;
NCCL_DEBUG, which RCCL reads), Ascend/pytorch (torch_npu.__version__ "2.8.0.post2" is built
for torch 2.8.0, COMPATIBILITY.en.md; README.md: torch from the CPU index, then torch-npu, then
CANN's set_env.sh) and the CANN log reference (ASCEND_GLOBAL_LOG_LEVEL=1 is INFO,
ASCEND_SLOG_PRINT_TO_STDOUT=1 prints the logs instead of writing them under ~/ascend/log).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from porter.lora.targets import TargetFacts, target_facts
from porter.tables.plain_requirement import canonical_name

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
ROCM_INFO = Path("/opt/rocm/.info/version")


@dataclass(frozen=True)
class TorchBuild:
    """Where the vendor side is torch itself (ROCm): how its build says so."""

    attr: str
    """The torch.version attribute that is set on the vendor's build ("hip")."""
    name: str
    """How messages name the build: "ROCm"."""
    cards: str
    """The cards another build cannot drive, for the torch check's message."""


@dataclass(frozen=True)
class Toolkit:
    """A vendor toolkit whose environment the vendor package needs loaded (Ascend's CANN)."""

    check: str
    """The check's name: "cann"."""
    name: str
    """How messages name it: "CANN"."""
    variables: tuple[str, ...]
    """Variables its set-up script exports with its folder, the first one set is read."""
    info: str
    """The file under that folder whose `version=` line names the release ({arch}: the
    machine, x86_64 or aarch64)."""
    unset_means: str
    """What goes wrong when the variables are unset though the vendor package found the cards."""


@dataclass(frozen=True)
class DoctorTarget:
    """What the checks need to know about one target besides its LoRA facts (`facts`)."""

    name: str
    check_name: str
    """The vendor check's name: the vendor package, or the build ("rocm")."""
    install_torch: str
    """The fix that installs the line's torch. Every install_* template may use {line},
    {torch} (torch and the line's releases: torch==2.8.0), {vendor} (the vendor package's
    distribution and the line's releases), {index} (pip_index) and, in install_pair,
    {built_for} (the line the vendor package is built for) and {release} (its torch)."""
    install_vendor: str = ""
    """The fix when the vendor package does not import."""
    install_pair: str = ""
    """The fix when the vendor package is built for another torch than the installed one."""
    install_line: str = ""
    """The fix when the vendor package is of a line porter has no table for."""
    torch_needed: str = ""
    """What the vendor package needs instead of a CUDA or ROCm build of torch."""
    torch_release: str | None = None
    """A pattern whose group 1 is the torch release the vendor package's __version__ is built
    for; None where it does not say."""
    build: TorchBuild | None = None
    """Set where the vendor side is torch's own build (no vendor package)."""
    monitor: str | None = None
    """The tool that lists the cards, where doctor names more than the LoRA facts' monitor_tool."""
    driver_fix: str = "Check the driver and the cards with {monitor}, and {visible} (unset, or naming cards that exist)"
    """The fix when the device module says no cards are there."""
    collective_debug: str = ""
    """Variables that make the process-group backend log, for the re-run command."""
    providers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Distributions that provide a library under its import name (deepspeed-mlu)."""
    pip_index: str = CPU_INDEX
    """Where the torch wheels for this target come from ({rocm}: the installed ROCm's minor)."""
    reinstall_note: str = ""
    """Said after the command that reinstalls torchvision/torchaudio ({name}: the package)."""
    rocm_builds: bool = False
    """Whether ROCm builds are this target's own (their hipified extensions keep *_cuda names)."""
    toolkit: Toolkit | None = None

    @property
    def facts(self) -> TargetFacts:
        return target_facts(self.name)

    @property
    def package(self) -> str | None:
        """The vendor package that registers the device (torch_mlu), None on a torch build."""
        return self.facts.vendor_import

    @property
    def distribution(self) -> str | None:
        """The vendor package's distribution name (torch-npu), as the package table has it."""
        return canonical_name(self.package) if self.package else None

    @property
    def device_type(self) -> str:
        return self.facts.device_type

    @property
    def backend(self) -> str:
        return self.facts.backend

    @property
    def visible_variable(self) -> str:
        return self.facts.visible_devices_var

    @property
    def monitor_tool(self) -> str:
        return self.monitor or self.facts.monitor_tool

    @property
    def porter_emulates(self) -> bool:
        """Whether porter emulates the target (`porter run --emulate NAME`)."""
        from porter.emulator.targets import DEVICES

        return self.name in DEVICES

    @property
    def label(self) -> str:
        """The device in capitals, as the vendors write it: MLU, NPU."""
        from porter.emulator.targets import DEVICES

        device = DEVICES.get(self.name)
        return device.label if device is not None else self.name.upper()

    def index(self) -> str:
        """The wheel index of pip_index, with the installed ROCm where it asks for it
        (/opt/rocm/.info/version; ROCm 6.2's where none is installed)."""
        if "{rocm}" not in self.pip_index:
            return self.pip_index
        return self.pip_index.format(rocm=_installed_rocm() or "6.2")

    def vendor_torch(self, version: str | None) -> str | None:
        """The torch release the vendor package of `version` is built for ("2.8.0" of
        torch_npu 2.8.0.post2, "2.4.0" of torch_mlu 1.24.1-torch2.4.0); None when it does not say."""
        if not version or self.torch_release is None:
            return None
        match = re.search(self.torch_release, version)
        return match.group(1) if match else None

    def vendor_deepspeed(self) -> str | None:
        """The distribution of the vendor's own DeepSpeed (deepspeed-mlu), if it has one."""
        return next((d for d in self.providers.get("deepspeed", ()) if d != "deepspeed"), None)


def torch_minor(version: str | None) -> str | None:
    """ "2.4" of "2.4.1+cpu"."""
    match = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _installed_rocm() -> str | None:
    try:
        return torch_minor(ROCM_INFO.read_text(encoding="utf-8"))
    except OSError:
        return None


MLU = DoctorTarget(
    name="mlu",
    check_name="torch_mlu",
    install_torch="Use Cambricon's PyTorch container for torch {line}: it has {torch} and the torch_mlu built for it",
    install_vendor="Use Cambricon's PyTorch container for torch {line} (torch and the torch_mlu built for it)",
    install_pair="Use Cambricon's PyTorch container for torch {built_for} (torch and torch_mlu of one release)",
    install_line="Use Cambricon's PyTorch container for torch {line}",
    torch_needed="Cambricon's torch",
    # torch_mlu.__version__ is "1.24.1-torch2.4.0" (the wheel's 1.24.1+torch2.4.0).
    torch_release=r"torch(\d+\.\d+(?:\.\d+)?)",
    collective_debug="CNCL_LOG_LEVEL=INFO",
    # Cambricon's DeepSpeed is imported as deepspeed.
    providers=MappingProxyType({"deepspeed": ("deepspeed", "deepspeed-mlu")}),
)

HIP = DoctorTarget(
    name="hip",
    check_name="rocm",
    install_torch="pip install torch --index-url {index} (AMD GPUs), or the torch wheel of your DTK release (Hygon DCU)",
    build=TorchBuild(attr="hip", name="ROCm", cards="a DCU or an AMD GPU"),
    monitor="rocm-smi (hy-smi on Hygon DCU)",
    driver_fix="Check the driver and the cards with {monitor}, that your user is in the render and video groups, "
    "and {visible}",
    collective_debug="NCCL_DEBUG=INFO",
    pip_index="https://download.pytorch.org/whl/rocm{rocm}",
    reinstall_note=" (Hygon DCU: the {name} wheel of your DTK release)",
    rocm_builds=True,
)

NPU = DoctorTarget(
    name="npu",
    check_name="torch_npu",
    install_torch='pip install "{torch}" --index-url {index}, then pip install "{vendor}" '
    "(the torch_npu release for your CANN version)",
    install_vendor='pip install "{vendor}" (the torch_npu release for your CANN version; torch {line} from {index})',
    install_pair='pip install "torch=={release}" --index-url {index} (torch and torch_npu of one release)',
    install_line='pip install "{torch}" --index-url {index} && pip install "{vendor}"',
    torch_needed="the CPU build of torch",
    # torch_npu.__version__ is "2.8.0.post2" (sometimes "+git<hash>"): built for torch 2.8.0.
    torch_release=r"^\s*(\d+\.\d+(?:\.\d+)?)",
    collective_debug="ASCEND_GLOBAL_LOG_LEVEL=1 ASCEND_SLOG_PRINT_TO_STDOUT=1",
    toolkit=Toolkit(
        check="cann",
        name="CANN",
        variables=("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"),
        info="{arch}-linux/ascend_toolkit_install.info",
        # deepspeedai/DeepSpeed op_builder/npu/builder.py: installed_cann_path() reads
        # os.environ["ASCEND_HOME_PATH"] (a KeyError where it is unset).
        unset_means="DeepSpeed's NPU op builder reads ASCEND_HOME_PATH and builds no NPU operator without it",
    ),
)

DOCTOR_TARGETS: Mapping[str, DoctorTarget] = MappingProxyType({t.name: t for t in (MLU, HIP, NPU)})


def doctor_target(name: str) -> DoctorTarget:
    """The record of `name`; ValueError naming the targets doctor knows."""
    try:
        return DOCTOR_TARGETS[name]
    except KeyError:
        raise ValueError(f"porter doctor does not know {name!r} (it knows: {', '.join(DOCTOR_TARGETS)})") from None
