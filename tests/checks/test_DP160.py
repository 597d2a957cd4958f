"""DP160 device-plugin-config-key-not-read: the plugin's config file against api/config/v1 of the plugin."""

from gpu_case import run

# https://github.com/NVIDIA/k8s-device-plugin/issues/1433 (device plugin 0.17.4): renameByDefault and
# failRequestsGreaterThanOne written under flags; the replicas came out as nvidia.com/gpu, not nvidia.com/gpu.shared
ISSUE_1433 = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: kube-system
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
      renameByDefault: true
      failRequestsGreaterThanOne: false
    sharing:
      timeSlicing:
        resources:
          - name: nvidia.com/gpu
            replicas: 16384
"""

# https://github.com/NVIDIA/k8s-device-plugin/issues/615: a complete, valid config (flags, plugin flags, time-slicing)
ISSUE_615 = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config-all
  namespace: nvidia-device-plugin
data:
  any: |-
     version: v1
     flags:
       migStrategy: "none"
       failOnInitError: false
       nvidiaDriverRoot: "/"
       plugin:
         passDeviceSpecs: false
         deviceListStrategy: envvar
         deviceIDStrategy: uuid
     sharing:
       timeSlicing:
         renameByDefault: true
         resources:
         - name: nvidia.com/gpu
           replicas: 4
"""


def test_keys_under_flags_that_belong_to_time_slicing():
    (f,) = run("DP160", {"cm.yaml": ISSUE_1433})
    belongs = {p["path"]: p["belongs"] for p in f.facts["problems"]}
    assert belongs == {"flags.renameByDefault": "sharing.timeSlicing.renameByDefault",
                       "flags.failRequestsGreaterThanOne": "sharing.timeSlicing.failRequestsGreaterThanOne"}
    assert "belongs under sharing.timeSlicing" in f.title and f.severity.value == "warning"
    assert f.fixes[0].snippet.startswith("sharing:\n  timeSlicing:\n    renameByDefault: true")
    assert {e.line for e in f.evidence} == {7}  # the ConfigMap key holding the config
    assert any("line 4: renameByDefault: true" in e.text for e in f.evidence)


def test_values_outside_the_allowed_set_stop_the_plugin():
    cfg = "version: v1\nflags:\n  migStrategy: Mixed\n  plugin:\n    deviceListStrategy: [envvar, cdi]\n"
    (f,) = run("DP160", {"plugin-config.yaml": cfg})
    assert f.severity.value == "error"
    assert [e.line for e in f.evidence] == [3, 5]
    assert "did you mean 'mixed'" in f.explanation and "'cdi'" in f.explanation


def test_fields_the_running_plugin_does_not_have_yet():
    cfg = "version: v1\nflags:\n  plugin:\n    sharedDevicesAllocationPolicy: packed\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n"
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: nvidia-device-plugin-daemonset-x1\n  namespace: kube-system\nspec:\n  containers:\n"
           "  - name: nvidia-device-plugin-ctr\n    image: nvcr.io/nvidia/k8s-device-plugin:v0.17.4\n")
    (f,) = run("DP160", {"plugin-config.yaml": cfg, "pod.yaml": pod})
    assert f.facts["version"] == "v0.17.4" and "exists only since v0.20.0" in f.title
    assert run("DP160", {"plugin-config.yaml": cfg}) == []  # no version seen: the newest schema has it


def test_valid_real_config_is_silent():
    assert run("DP160", {"cm.yaml": ISSUE_615}) == []


def test_mps_on_a_plugin_older_than_mps():
    cfg = "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n"
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: nvidia-device-plugin-daemonset-x1\n  namespace: kube-system\nspec:\n  containers:\n"
           "  - name: nvidia-device-plugin-ctr\n    image: nvcr.io/nvidia/k8s-device-plugin:v0.14.5-ubi8\n")
    (f,) = run("DP160", {"plugin-config.yaml": cfg, "pod.yaml": pod})
    assert f.facts["version"] == "v0.14.5" and f.facts["problems"][0]["path"] == "sharing.mps" and [e.line for e in f.evidence] == [3]
