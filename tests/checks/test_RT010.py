"""RT010 containerd-cri-plugin-disabled: a containerd config that switches off the CRI plugin the kubelet needs."""

from failure_fixtures import cites, facts_from, run

# https://github.com/NVIDIA/gpu-operator/issues/1323: the config the toolkit wrote back on k0s (head of it)
DUMPED = """\
$ cat /etc/containerd/config.toml
disabled_plugins = ["cri"]
imports = ["/etc/containerd/config.toml"]
oom_score = 0
root = "/var/lib/containerd"
state = "/run/containerd"
version = 2

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "nvidia"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
        runtime_type = "io.containerd.runc.v2"
"""


def test_a_rebuilt_config_that_disables_cri_and_imports_itself():
    [f] = run("RT010", facts_from({"config.toml": DUMPED}))
    assert f.layer.value == "container-runtime" and f.severity.value == "critical" and f.confidence >= 0.85
    assert cites(f)[:2] == ["config.toml:2", "config.toml:3"] and "config.toml:7" in cites(f)  # the line, the import, the version
    assert "invalid disabled plugin URI" in f.explanation and "imports itself" in f.explanation
    assert f.fixes[0].commands[0] == "sudo grep -n disabled_plugins /etc/containerd/config.toml"


def test_dockers_packaged_config_alone_is_a_weaker_claim_and_names_no_invented_path():
    # /etc/containerd/config.toml as the containerd.io package (Docker's repository) installs it: one line not commented
    docker = ("#   Copyright 2018-2022 Docker Inc.\n\n#   Licensed under the Apache License, Version 2.0 (the \"License\");\n\n"
              'disabled_plugins = ["cri"]\n\n#root = "/var/lib/containerd"\n#state = "/run/containerd"\n#subreaper = true\n#oom_score = 0\n\n'
              '#[grpc]\n#  address = "/run/containerd/containerd.sock"\n#  uid = 0\n#  gid = 0\n')
    [f] = run("RT010", facts_from({"paste.txt": docker}))
    assert f.severity.value == "error" and f.confidence < 0.7 and "rejects" not in f.explanation  # a version 1 file: starts without CRI
    assert f.fixes[0].commands == ("ps -o args= -C containerd",)


def test_silent_when_cri_is_enabled():
    ok = DUMPED.replace('disabled_plugins = ["cri"]', 'disabled_plugins = ["io.containerd.internal.v1.opt"]')
    assert run("RT010", facts_from({"config.toml": ok})) == []
