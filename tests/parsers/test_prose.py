"""parsers/prose.py: facts and symptoms stated in sentences, with the line each sentence starts on."""

import re
import tomllib
from pathlib import Path

import pytest

from gpusleuth.knowledge import table
from gpusleuth.model.document import Document
from gpusleuth.model.layers import Layer
from gpusleuth.parsers import prose

CASES = Path(__file__).parent.parent / "cases" / "incidents"


def _doc(text: str, name: str = "ticket.txt") -> Document:
    return Document(name, tuple(text.splitlines()))


def _stated(p, kind):
    return {s.value for s in p.stated if s.kind == kind}


def test_versions_os_kernel_gpu_and_platform_from_a_ticket_header():
    p = prose.read(_doc(
        "### 1. Quick Debug Information\n"
        "* OS/Version(e.g. RHEL8.6, Ubuntu22.04): RHEL8.7\n"
        "* Kernel Version: 4.18.0-477.15.1.el8_8.x86_64\n"
        "* Container Runtime Type/Version: Containerd 1.7.11\n"
        "* K8s Flavor/Version: Vanila K8s, v1.26.3\n"
        "* GPU Operator Version: v23.3.2\n"
        "Nodes have 4x A100 and the NVIDIA driver 535.104.05 with CUDA 12.2.\n"
    ))
    assert _stated(p, "gpu-operator") == {"23.3.2"}
    assert "1.26.3" in _stated(p, "kubernetes")
    assert _stated(p, "driver") == {"535.104.05"} and "12.2" in _stated(p, "cuda")
    assert "4.18.0-477.15.1.el8_8.x86_64" in _stated(p, "kernel")
    assert "1.7.11" in _stated(p, "containerd")
    assert {s.detail for s in p.stated if s.kind == "platform"} == {"kubeadm"}
    drv = next(s for s in p.stated if s.kind == "driver")
    assert drv.evidence.line == 7 and "535.104.05" in drv.evidence.text


def test_a_wrapped_sentence_is_matched_whole_and_cites_its_first_line():
    p = prose.read(_doc("Single node k3s.\nI edited config.toml, and `crictl pods` still shows the pods running with the\n(default) runtime.\n"))
    [d] = [d for d in p.described if d.id == "pod-runs-default-runtime"]
    assert d.layer == "container-runtime" and d.evidence.line == 2
    assert d.evidence.text.endswith("(default) runtime.")


def test_it_worked_until_names_the_layer_of_the_change():
    p = prose.read(_doc("GPU jobs ran for months.\nIt worked until we upgraded the kernel to 5.15.0-91-generic last night.\n"))
    [d] = [d for d in p.described if d.id == "regression-after-change"]
    assert (d.event, d.layer, d.evidence.line) == ("kernel-update", "kernel-driver", 2)
    assert "5.15.0-91-generic" in _stated(p, "kernel")
    p = prose.read(_doc("After upgrading gpu-operator from 1.11.1 to 22.9.0, the plugin pods are no longer starting.\n"))
    assert [(d.event, d.layer) for d in p.described if d.id == "regression-after-change"] == [("operator-update", "operator")]


def test_it_worked_before_without_a_change_says_nothing():
    p = prose.read(_doc("It worked before, now it does not.\n"))
    assert not [d for d in p.described if d.id == "regression-after-change"]


def test_a_platform_name_inside_a_path_is_not_the_platform():
    p = prose.read(_doc("RKE2 cluster; the toolkit was given CONTAINERD_SOCKET=/run/k3s/containerd/containerd.sock.\n"))
    assert {s.detail for s in p.stated if s.kind == "platform"} == {"rke2"}


def test_only_prose_mode_skips_log_and_yaml_lines():
    doc = _doc(
        "The device plugin pod shows nvidia.com/gpu: 0 for hours and I do not know why.\n"
        "I0101 10:00:00.000000       1 main.go:256] Starting FS watcher for /var/lib/kubelet/device-plugins\n"
        "driver:\n"
        "  version: 535.104.05\n"
    )
    p = prose.read(doc, only_prose=True)
    assert [d.id for d in p.described] == ["no-gpu-capacity"] and not p.only_prose
    assert "535.104.05" not in _stated(p, "driver") and p.sentences == 1
    assert prose.is_prose_line("- [x] Are you running Kubernetes v1.13+?")
    assert not prose.is_prose_line('time="2024-01-01T00:00:00Z" level=error msg="failed"')


def test_nothing_stated_in_a_log():
    doc = _doc("E0101 10:00:00.000000 1 main.go:1] could not load NVML library\n" * 3)
    assert not prose.mostly_prose(doc)


def test_every_row_is_complete_and_its_patterns_compile():
    rows = table("phrases")
    layers = {layer.value for layer in Layer}
    for row in rows["symptom"]:
        assert row["layer"] in layers or row["id"] == "regression-after-change", row["id"]
        assert row["examples"] and all(e["source"].startswith("https://github.com/") for e in row["examples"]), row["id"]
        assert row["implies"] and (row["confirm"] or row["id"] == "regression-after-change"), row["id"]
        for pat in row["patterns"]:
            re.compile(pat, re.I)
    for row in rows["fact"]:
        assert all("(?P<value>" in pat for pat in row["patterns"]), row["kind"]
        assert all(e["source"].startswith("https://github.com/") for e in row["examples"]), row["kind"]
    for row in rows["event"]:
        assert row["layer"] in layers and row["implies"] and row["confirm"], row["id"]


@pytest.mark.parametrize("slug, symptom", [
    ("k3s-config-toml-overwritten-pods-on-runc", "pod-runs-default-runtime"),
    ("toolkit-dropin-breaks-containerd2-on-aks", "toolkit-pod-fails"),
    ("microk8s-docker-daemon-json-not-used", "host-works-pod-does-not"),
])
def test_ticket_words_from_the_corpus(slug, symptom):
    inc = tomllib.loads((CASES / slug / "incident.toml").read_text())
    p = prose.read(_doc((CASES / slug / "words.txt").read_text(), "words.txt"))
    [d] = [d for d in p.described if d.id == symptom]
    assert d.layer in [inc["layer"], *inc.get("also_layers", [])]


@pytest.mark.parametrize("text, symptom, layer", [
    ("On k0s, installing GPU Operator v24.9.1 breaks the node's container runtime.", "toolkit-breaks-runtime", "container-toolkit"),
    ("The driver pod is stuck in ImagePullBackOff because nvcr.io/nvidia/driver:550.54.15-ubuntu24.04 does not exist.",
     "driver-image-missing", "operator"),
    ("The node's kernel crashes shortly after the nvidia-driver-daemonset pod comes up.", "kernel-crash-with-driver", "kernel-driver"),
    ("- `nouveau` is present on the machine.", "nouveau-loaded", "kernel-driver"),
])
def test_symptoms_whose_sentence_holds_versions(text, symptom, layer):
    p = prose.read(_doc(text))
    assert [(d.id, d.layer) for d in p.described if d.id == symptom] == [(symptom, layer)]


def test_an_issue_templates_questions_state_nothing():
    p = prose.read(_doc("- [x] Are you running Kubernetes v1.13+?\n- [ ] Are you running Docker (>= 18.06) or CRIO (>= 1.13+)?\n"
                        "K8s version is 1.27.3 on all nodes.\n"), only_prose=True)
    assert _stated(p, "kubernetes") == {"1.27.3"} and not _stated(p, "docker")


def test_the_change_is_named_up_to_its_versions():
    p = prose.read(_doc("After upgrading the GPU operator to 24.3.0 the validator pods are stuck.\n"
                        "It worked until we upgraded the kernel to 5.15.0-91-generic last night.\n"))
    changes = {d.event: d.what for d in p.described if d.id == "regression-after-change"}
    assert changes == {"operator-update": "upgrading the GPU operator to 24.3.0",
                       "kernel-update": "we upgraded the kernel to 5.15.0-91-generic"}
    assert {d.event: d.when for d in p.described if d.id == "regression-after-change"} == {"operator-update": None, "kernel-update": "last night"}


def test_every_example_is_read_by_its_own_row():
    """A row's examples are the sentences it was written for: one of its own patterns must read each (as
    knowledge/attribution.toml and runtimes.toml rows match their examples)."""
    for kind in ("fact", "symptom"):
        for row in table("phrases")[kind]:
            for ex in row["examples"]:
                assert any(re.search(p, ex["text"], re.I) for p in row["patterns"]), (row.get("id") or row["kind"], ex["text"])


def test_a_markdown_heading_is_a_sentence_and_a_root_prompt_is_not():
    """An issue's title pasted as `# [Bug]: ...` was taken for a root prompt, so a one-line report read as nothing."""
    assert prose.is_prose_line("# [Bug]: nvidia-container-toolkit exit 255 CrashLoopBackOff after ~18 minutes on AKS")
    assert prose.is_prose_line("## Driver pods never become ready on the new node pool")
    assert not prose.is_prose_line("# nvidia-smi -q -x > /tmp/smi.xml")
    assert not prose.is_prose_line("# ./install.sh --with-nvidia-container-toolkit --no-reboot")
