"""containerd config.toml as found on nodes: versions 1/2/3, drop-ins, templates, broken pastes."""

from __future__ import annotations

import pytest

from conftest import doc_from_text, docs_from_text
from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.parsers.base import NO, SURE, WEAK
from gpusleuth.parsers.containerd_config import normalise_path, parse_config, sniff

V2_CAT = """\
root@gpu-node-1:~# cat /etc/containerd/config.toml
version = 2
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.8"
  enable_cdi = true
  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]

  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "nvidia"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
      privileged_without_host_devices = false
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
        BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
        SystemdCgroup = true
"""


def test_version2_with_cat_prompt():
    doc = doc_from_text(V2_CAT)
    assert sniff(doc) == SURE
    cfg = parse_config(doc)
    assert (cfg.path, cfg.path_source) == ("/etc/containerd/config.toml", "cat command")
    assert (cfg.version, cfg.version_declared, cfg.cri_plugin) == (2, True, "io.containerd.grpc.v1.cri")
    assert set(cfg.runtimes) == {"runc", "nvidia"}
    nv = cfg.runtimes["nvidia"]
    assert nv.binary == "/usr/local/nvidia/toolkit/nvidia-container-runtime" and nv.binary_key == "BinaryName"
    assert nv.evidence.line == 22 and nv.binary_evidence.line == 26
    assert cfg.default_runtime == "nvidia" and cfg.default_runtime_evidence.line == 15
    assert cfg.enable_cdi is True and cfg.cdi_spec_dirs == ("/etc/cdi", "/var/run/cdi")
    assert cfg.grpc_address == "/run/containerd/containerd.sock"
    assert cfg.cri_settings["sandbox_image"].line == 10
    assert cfg.cri_settings["containerd.runtimes.runc.options.SystemdCgroup"].line == 20
    assert cfg.problems == ()


K3S_V1 = """\
# /var/lib/rancher/k3s/agent/etc/containerd/config.toml
[plugins.opt]
  path = "/var/lib/rancher/k3s/agent/containerd"

[plugins.cri]
  stream_server_address = "127.0.0.1"
  stream_server_port = "10010"
  enable_selinux = false
  sandbox_image = "rancher/mirrored-pause:3.6"

[plugins.cri.containerd]
  snapshotter = "overlayfs"
  disable_snapshot_annotations = true

[plugins.cri.cni]
  bin_dir = "/var/lib/rancher/k3s/data/current/bin"
  conf_dir = "/var/lib/rancher/k3s/agent/etc/cni/net.d"

[plugins.cri.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins.cri.containerd.runtimes."nvidia"]
  runtime_type = "io.containerd.runc.v2"
[plugins.cri.containerd.runtimes."nvidia".options]
  BinaryName = "/usr/bin/nvidia-container-runtime"
"""


def test_version1_k3s_without_version_line_and_comment_path():
    cfg = parse_config(doc_from_text(K3S_V1, "k3s-config.txt"))
    assert (cfg.path, cfg.path_source) == ("/var/lib/rancher/k3s/agent/etc/containerd/config.toml", "leading comment")
    assert (cfg.version, cfg.version_declared, cfg.cri_plugin) == (1, False, "cri")
    assert cfg.runtimes["nvidia"].binary == "/usr/bin/nvidia-container-runtime"
    assert cfg.runtimes["nvidia"].evidence.line == 22
    assert not [p for p in cfg.problems if p.kind == "version-mismatch"]


V3 = """\
version = 3
root = '/var/lib/containerd'

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = 'registry.k8s.io/pause:3.10'

  [plugins.'io.containerd.cri.v1.runtime']
    enable_cdi = true
    cdi_spec_dirs = ['/etc/cdi', '/var/run/cdi']

    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'

      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]
        runtime_type = 'io.containerd.runc.v2'

        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
          BinaryName = '/usr/local/nvidia/toolkit/nvidia-container-runtime'
          SystemdCgroup = true
"""


def test_version3_single_quoted_keys_containerd2():
    doc = doc_from_text(V3, "node-a/etc/containerd/config.toml")
    assert sniff(doc) == SURE
    cfg = parse_config(doc)
    assert (cfg.path, cfg.path_source) == ("/etc/containerd/config.toml", "file name (weak)")
    assert (cfg.version, cfg.cri_plugin) == (3, "io.containerd.cri.v1.runtime")
    assert cfg.runtimes["nvidia"].binary_evidence.line == 20
    assert cfg.enable_cdi is True and cfg.default_runtime == "runc"


DROP_IN = """\
root@gpu-node-1:~# cat /etc/containerd/conf.d/99-nvidia.toml
version = 2

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]

    [plugins."io.containerd.grpc.v1.cri".containerd]

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
          privileged_without_host_devices = false
          runtime_engine = ""
          runtime_root = ""
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
            BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-cdi]
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-cdi.options]
            BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime.cdi"
root@gpu-node-1:~# cat /etc/containerd/config.toml
version = 2
imports = ["/etc/containerd/conf.d/*.toml"]
"""


def test_drop_in_and_imports_only_main_file():
    drop, main = (parse_config(d) for d in docs_from_text(DROP_IN))
    assert drop.path == "/etc/containerd/conf.d/99-nvidia.toml"
    assert set(drop.runtimes) == {"nvidia", "nvidia-cdi"}
    assert drop.runtimes["nvidia-cdi"].binary.endswith("nvidia-container-runtime.cdi")
    assert main.imports == ("/etc/containerd/conf.d/*.toml",) and main.imports_evidence.line == 28
    assert main.runtimes == {}


def test_binaryname_and_binaryname_lowercase_side_by_side():
    text = V2_CAT.replace(
        '        BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n',
        '        BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n        binaryName = "/usr/bin/nvidia-container-runtime"\n',
    )
    cfg = parse_config(doc_from_text(text))
    nv = cfg.runtimes["nvidia"]
    assert nv.binary == "/usr/bin/nvidia-container-runtime" and nv.binary_key == "binaryName"
    amb = [p for p in cfg.problems if p.kind == "ambiguous-key"]
    assert len(amb) == 1 and "different values" in amb[0].message and "26, 27" in amb[0].message


def test_miscased_other_key_and_misspelt_binaryname():
    text = V2_CAT.replace(
        '        BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n        SystemdCgroup = true\n',
        '        BinaryNmae = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n        SystemdCgroup = true\n        systemdCgroup = false\n',
    )
    cfg = parse_config(doc_from_text(text))
    assert cfg.runtimes["nvidia"].binary is None
    kinds = {p.kind: p for p in cfg.problems}
    assert "did you mean BinaryName" in kinds["misspelt-key"].message and kinds["misspelt-key"].evidence.line == 26
    assert "SystemdCgroup" in kinds["ambiguous-key"].message and kinds["ambiguous-key"].evidence.line == 28


def test_duplicate_table_is_reported_and_the_rest_still_read():
    text = V2_CAT + (
        '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
        '      runtime_type = "io.containerd.runc.v2"\n'
    )
    cfg = parse_config(doc_from_text(text))
    dup = [p for p in cfg.problems if p.kind == "duplicate"]
    assert len(dup) == 1 and "lines 22 and 28" in dup[0].message
    assert not [p for p in cfg.problems if p.kind == "syntax"]
    assert cfg.runtimes["nvidia"].binary == "/usr/local/nvidia/toolkit/nvidia-container-runtime"


def test_malformed_toml_line_number_and_tolerant_scan():
    text = V2_CAT.replace('sandbox_image = "registry.k8s.io/pause:3.8"', 'sandbox_image = "registry.k8s.io/pause:3.8')
    cfg = parse_config(doc_from_text(text))
    syntax = [p for p in cfg.problems if p.kind == "syntax"]
    assert len(syntax) == 1 and "at line 10" in syntax[0].message and syntax[0].evidence.line == 10
    assert cfg.runtimes["nvidia"].binary == "/usr/local/nvidia/toolkit/nvidia-container-runtime"
    assert cfg.default_runtime == "nvidia"


def test_truncated_paste_keeps_what_was_read():
    lines = V2_CAT.splitlines()[:25] + ['        BinaryName = "/usr/local/nvidia/too']
    cfg = parse_config(doc_from_text("\n".join(lines)))
    assert "nvidia" in cfg.runtimes and [p for p in cfg.problems if p.kind == "syntax"]


K3S_TEMPLATE = """\
root@k3s-gpu:~# cat /var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl
{{ template "base" . }}

{{- if .NodeConfig.AgentConfig.Snapshotter }}
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "{{ .NodeConfig.AgentConfig.Snapshotter }}"
{{ end }}

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
  BinaryName = "/usr/bin/nvidia-container-runtime"
  SystemdCgroup = {{ .SystemdCgroup }}
"""


def test_k3s_go_template_is_reported_and_still_read():
    doc = doc_from_text(K3S_TEMPLATE)
    assert sniff(doc) == SURE
    cfg = parse_config(doc)
    assert cfg.template and cfg.path.endswith("config.toml.tmpl")
    tmpl = [p for p in cfg.problems if p.kind == "template"]
    assert len(tmpl) == 1 and "3 template line(s) skipped and 2 templated value(s)" in tmpl[0].message and "base template" in tmpl[0].message and tmpl[0].evidence.line == 2
    assert cfg.runtimes["nvidia"].binary == "/usr/bin/nvidia-container-runtime"
    assert cfg.runtimes["nvidia"].evidence.line == 9


def test_no_version_line_with_full_plugin_uri_is_ignored_by_containerd1():
    text = "\n".join(ln for ln in V2_CAT.splitlines() if not ln.startswith("version"))
    cfg = parse_config(doc_from_text(text))
    assert cfg.version == 1 and cfg.runtimes == {}
    assert set(cfg.ignored_runtimes) == {"runc", "nvidia"}
    mismatch = [p for p in cfg.problems if p.kind == "version-mismatch"]
    assert len(mismatch) == 1 and "no `version` line" in mismatch[0].message


def test_version3_file_with_v2_keys_is_a_mismatch():
    text = V2_CAT.replace("version = 2", "version = 3")
    cfg = parse_config(doc_from_text(text))
    assert cfg.runtimes == {} and "nvidia" in cfg.ignored_runtimes
    assert any("io.containerd.cri.v1.runtime" in p.message for p in cfg.problems if p.kind == "version-mismatch")


def test_grep_fragment_judges_version_by_keys():
    text = """\
root@gpu-node-1:~# cat /etc/containerd/config.toml | grep -A4 nvidia
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
      runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
      BinaryName = "/usr/bin/nvidia-container-runtime"
"""
    cfg = parse_config(doc_from_text(text))
    assert cfg.version == 2 and "nvidia" in cfg.runtimes and not cfg.problems


def test_config_dump_command():
    text = "root@gpu-node-1:~# containerd --config /etc/containerd/config.toml config dump\n" + V2_CAT.split("\n", 1)[1]
    doc = doc_from_text(text)
    assert sniff(doc) == SURE
    cfg = parse_config(doc)
    assert cfg.dump and (cfg.path, cfg.path_source) == ("/etc/containerd/config.toml", "config dump --config")
    plain = parse_config(doc_from_text("$ containerd config dump\n" + V2_CAT.split("\n", 1)[1]))
    assert plain.path is None and plain.path_source == "config dump"


def test_unknown_path_is_said():
    cfg = parse_config(Document("pasted.txt", tuple(V3.splitlines())))
    assert cfg.path is None and cfg.path_source == "unknown"


def test_garbage_is_unusable_with_a_reason():
    doc = Document("x/etc/containerd/config.toml", ("this is not = = toml [[[", "{{{"))
    with pytest.raises(UnusableData):
        parse_config(doc)


def test_sniff_rejects_other_toml_and_text():
    crio = Document("crio.conf", ("[crio.runtime]", 'default_runtime = "runc"', '[plugins."io.containerd.grpc.v1.cri"]'))
    assert sniff(crio) == NO
    assert sniff(Document("notes.txt", ("hello", "world"))) == NO
    assert sniff(Document("etc/containerd/config.toml", ("# empty",))) == WEAK


def test_normalise_path_undoes_host_mount_and_var_run():
    assert normalise_path("/host/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml") == \
        "/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml"
    assert normalise_path("unix:///var/run/containerd/containerd.sock") == "/run/containerd/containerd.sock"
    assert normalise_path("/hostpath/x") == "/hostpath/x"


RKE2_GENERATED = """\
root@gpu-worker-1:~# cat /var/lib/rancher/rke2/agent/etc/containerd/config.toml

# File generated by rke2. DO NOT EDIT. Use config.toml.tmpl instead.
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia"]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia".options]
  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""


def test_rendered_k3s_rke2_config_says_who_generated_it():
    cfg = parse_config(doc_from_text(RKE2_GENERATED))
    assert cfg.generated_by == "rke2" and cfg.generated_evidence.line == 3
    assert cfg.default_runtime is None and "nvidia" in cfg.runtimes
    k3s = parse_config(doc_from_text(RKE2_GENERATED.replace("rke2", "k3s")))
    assert k3s.generated_by == "k3s"
    assert parse_config(doc_from_text(V2_CAT)).generated_by is None


def test_a_config_quoted_between_a_tickets_sentences_is_read_from_its_first_table():
    """A Markdown issue: sentences, a code block (its fences already blank lines), a sentence after. The config is the
    block; the sentences around it are not invalid TOML."""
    from gpusleuth.parsers.containerd_config import parse

    text = ("The device plugin reports that it cannot initialize NVML on this node.\n\n"
            "This is the config.toml that k3s generated on the node for us:\n\n"
            "[plugins.cri.containerd.runtimes.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n\n"
            "[plugins.cri.containerd.runtimes.\"nvidia\"]\n  runtime_type = \"io.containerd.runc.v2\"\n"
            "[plugins.cri.containerd.runtimes.\"nvidia\".options]\n  BinaryName = \"/usr/bin/nvidia-container-runtime\"\n\n"
            "The pods show the default runtime in crictl, not the nvidia one.\n")
    (cfg,) = parse.parse(doc_from_text(text, "issue.md"))
    assert not [p for p in cfg.problems if p.kind == "syntax"], cfg.problems
    assert cfg.runtimes["nvidia"].binary == "/usr/bin/nvidia-container-runtime"
    assert cfg.runtimes["nvidia"].evidence.line == 8  # the file's own line numbers
    commented = "# Use config version 2 to enable new configuration fields here.\nversion = 2\n# The default runtime stays runc for all the pods.\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  default_runtime_name = \"runc\"\n"
    (whole,) = parse.parse(doc_from_text(commented, "config.toml"))
    assert whole.version == 2 and not [p for p in whole.problems if p.kind == "syntax"]


def test_a_quoted_dump_is_read_from_its_top_level_keys():
    """`containerd config dump` opens with top-level keys (disabled_plugins, imports) before `version` and its first
    table: a ticket that quotes it between sentences keeps them."""
    from gpusleuth.parsers.containerd_config import parse

    text = ("Environment: k0s v1.30, GPU Operator v24.9.0\n\nHere is what the toolkit left on the node:\n"
            "disabled_plugins = [\"cri\"]\nimports = [\"/etc/containerd/config.toml\"]\nversion = 2\n\n"
            "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  default_runtime_name = \"nvidia\"\n\n"
            "Anything else I should collect?\n")
    (cfg,) = parse.parse(doc_from_text(text, "issue.md"))
    assert cfg.disabled_plugins == ("cri",) and cfg.disabled_plugins_evidence.line == 4
    assert not [p for p in cfg.problems if p.kind == "syntax"], cfg.problems
