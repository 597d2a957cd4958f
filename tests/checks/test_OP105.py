"""OP105 helm-values-ignored-or-rejected: unknown/misplaced top-level keys and non-string env values."""

from failure_fixtures import cites, facts_from, run

VALUES = """\
$ helm get values gpu-operator-1758912452 -n gpu-operator
USER-SUPPLIED VALUES:
driver:
  enabled: true
  env:
  - name: DRIVER_DEBUG
    value: true
migStrategy: mixed
devicePlugins:
  config:
    name: time-slicing-config
toolkit:
  env:
  - name: CONTAINERD_SET_AS_DEFAULT
    value: "true"
"""


def _findings():
    return {f.facts.get("key") or f.facts.get("path"): f for f in run("OP105", facts_from({"values.txt": VALUES}))}


def test_misplaced_typo_and_non_string_env():
    found = _findings()
    assert set(found) == {"migStrategy", "devicePlugins", "driver.env"}
    assert found["migStrategy"].facts["expected"] == "mig.strategy" and cites(found["migStrategy"]) == ["values.txt:8"]
    assert "did you mean `devicePlugin`" in found["devicePlugins"].title
    assert cites(found["driver.env"]) == ["values.txt:7"] and 'value: "true"' in found["driver.env"].fixes[0].snippet


def test_silent_on_valid_values():
    ok = VALUES.replace("    value: true\n", '    value: "true"\n').replace("migStrategy: mixed\n", "mig:\n  strategy: mixed\n").replace("devicePlugins:", "devicePlugin:")
    assert run("OP105", facts_from({"values.txt": ok})) == []


def test_nested_keys_the_chart_does_not_have():
    # https://github.com/NVIDIA/gpu-operator/issues/861: `--set toolkit-version=...` for toolkit.version
    values = """\
$ helm get values gpu-operator -n gpu-operator
USER-SUPPLIED VALUES:
toolkit-version: 1.15.0-ubi8
driver:
  enabled: true
  migStrategy: mixed
devicePlugin:
  config:
    name: time-slicing-config
    defualt: any
"""
    found = _by_key(values)
    assert found["toolkit-version"].facts["expected"] == "toolkit.version"
    assert found["toolkit-version"].fixes[0].snippet == "toolkit:\n  version: 1.15.0-ubi8\n"
    assert found["driver.migStrategy"].facts["expected"] == "mig.strategy" and cites(found["driver.migStrategy"]) == ["values.txt:6"]
    assert found["devicePlugin.config.defualt"].facts["expected"] == "default"


def test_the_charts_own_defaults_are_silent():
    from pathlib import Path

    text = (Path(__file__).parent.parent / "fixtures" / "schemas" / "gpu-operator-values-v26.7.0.yaml").read_text()
    assert run("OP105", facts_from({"values.yaml": text})) == []


def _by_key(values: str):
    return {f.facts.get("key"): f for f in run("OP105", facts_from({"values.txt": values}))}


def test_driver_setting_written_at_the_top_level():
    # https://github.com/NVIDIA/cloud-native-docs/pull/165: the GPUDirect RDMA page told readers to pass
    # `--set useOpenKernelModules=true`; the chart read driver.useOpenKernelModules, today driver.kernelModuleType
    values = "$ helm get values gpu-operator -n gpu-operator\nUSER-SUPPLIED VALUES:\ndriver:\n  rdma:\n    enabled: true\nuseOpenKernelModules: true\n"
    found = _by_key(values)
    assert found["useOpenKernelModules"].facts["expected"] == "driver.kernelModuleType"
    assert cites(found["useOpenKernelModules"]) == ["values.txt:6"]


def test_real_values_from_a_thread_are_silent():
    # https://github.com/NVIDIA/gpu-operator/issues/1795 (GPU Operator v25.3.4): every key is the chart's
    values = """\
$ helm get values gpu-operator -n gpu-operator
USER-SUPPLIED VALUES:
driver:
  enabled: false
  version: "570.148.08"
  usePrecompiled: true
  kernelModuleType: "auto"
  nvidiaDriverCRD:
    enabled: true
    deployDefaultCR: true
    nodeSelector: {}
  upgradePolicy:
    autoUpgrade: true
    maxParallelUpgrades: 1
    gpuPodDeletion:
      force: false
      timeoutSeconds: 600
      deleteEmptyDir: true
"""
    assert run("OP105", facts_from({"values.txt": values})) == []


def test_validator_settings_of_an_older_chart_under_operator():
    # https://github.com/NVIDIA/gpu-operator/issues/164: the OpenShift install command that docs.nvidia.com gave,
    # pasted as a prompt line without output. `operator.validator` is the 1.x charts' place; since 1.7 the chart
    # reads the validator's settings at the top level (`validator.version`).
    command = ("$  helm install gpu-operator nvidia/gpu-operator --set platform.openshift=true,operator.validator.version=vectoradd-cuda10.2-ubi8,"
               "operator.defaultRuntime=crio,nfd.enabled=false,devicePlugin.version=v0.7.3-ubi8,dcgmExporter.version=2.0.13-2.1.2-ubi8,"
               "toolkit.version=1.4.0-ubi8 --wait\n")
    (f,) = run("OP105", facts_from({"install.txt": command}))
    assert f.facts == {"key": "operator.validator", "expected": "validator", "kind": "misplaced-key"}
    assert "belongs under the top level" in f.title and cites(f) == ["install.txt:1"]
    assert f.fixes[0].snippet == "validator:\n  version: vectoradd-cuda10.2-ubi8\n"


# https://github.com/NVIDIA/gpu-operator/issues/1982: the extra values file the reporter passes to `helm install`
# (RKE2). The chart's NFD subchart reads prometheus.enable, not prometheus.enabled (charts/node-feature-discovery/values.yaml).
ISSUE_1982 = """\
dcgmExporter:
  env:
  - name: DCGM_EXPORTER_INTERVAL
    value: "3000"
  serviceMonitor:
    additionalLabels:
      release: prometheus-operator
    enabled: true
    interval: 3s
driver:
  enabled: false
gds:
  enabled: false
node-feature-discovery:
  prometheus:
    enabled: true
    labels:
      release: prometheus-operator
toolkit:
  enabled: false
  env:
  - name: CONTAINERD_CONFIG
    value: /var/lib/rancher/rke2/agent/etc/containerd/config.toml
  - name: CONTAINERD_SOCKET
    value: /run/k3s/containerd/containerd.sock
  - name: CONTAINERD_RUNTIME_CLASS
    value: nvidia
  - name: CONTAINERD_SET_AS_DEFAULT
    value: "true"
"""


def test_subchart_key_with_the_wrong_name():
    (f,) = run("OP105", facts_from({"values.yaml": ISSUE_1982}))
    assert f.facts == {"key": "node-feature-discovery.prometheus.enabled", "expected": "enable", "kind": "unknown-key"}
    assert "did you mean `enable`?" in f.title and cites(f) == ["values.yaml:16"]
    assert f.fixes[0].snippet == "node-feature-discovery:\n  prometheus:\n    enable: true\n"
    # the subchart's keys as the chart's own values.yaml sets them are not reported
    assert run("OP105", facts_from({"values.yaml": ISSUE_1982.replace("    enabled: true\n    labels:", "    enable: true\n    labels:")})) == []
