"""DP152 sharing-config-not-in-effect: a time-slicing config exists, the device plugin runs without it."""

from failure_fixtures import cites, facts_from, node, pod, run

CONFIGMAP = """\
$ kubectl get cm time-slicing-config -n gpu-operator -o yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  a100-80gb: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
"""

PLUGIN_LOG = """\
$ kubectl logs -n kube-system nvidia-device-plugin-4kq7m -c nvidia-device-plugin-ctr
I0311 08:02:11.100012       1 main.go:278] Loading configuration.
I0311 08:02:11.100632       1 main.go:314]
Running with config:
{
  "version": "v1",
  "flags": {
    "migStrategy": "none",
    "failOnInitError": true
  },
  "resources": {
    "gpus": [
      {
        "pattern": "*",
        "name": "nvidia.com/gpu"
      }
    ]
  },
  "sharing": {
    "timeSlicing": {}
  }
}
I0311 08:02:11.100645       1 main.go:317] Retrieving plugins.
"""

SHARED_LOG = PLUGIN_LOG.replace('"timeSlicing": {}', '"timeSlicing": {\n      "resources": [\n        {\n          "name": "nvidia.com/gpu",\n'
                                '          "replicas": 4\n        }\n      ]\n    }')


def test_chart_value_config_default_holding_the_configmap_name():
    """k8s-device-plugin#990: `--set config.default=<ConfigMap>` and no config.name: the chart mounts nothing."""
    values = "$ helm get values nvdp -n kube-system\nUSER-SUPPLIED VALUES:\nconfig:\n  default: time-slicing-config\n"
    facts = facts_from({"cm.yaml": CONFIGMAP, "plugin.log": PLUGIN_LOG, "values.txt": values},
                       pod("nvidia-device-plugin-4kq7m", ns="kube-system", node="gpu-a100-3"),
                       node("gpu-a100-3", capacity={"nvidia.com/gpu": "1"}, allocatable={"nvidia.com/gpu": "1"}))
    [f] = run("DP152", facts)
    assert f.role.value == "root-cause" and f.layer.value == "device-plugin" and f.node == "gpu-a100-3"
    assert "plugin.log:3" in cites(f) and "values.txt:4" in cites(f)  # klog's bare stamp, the "Running with config:" below folded in
    assert "config.default=time-slicing-config, the name of the ConfigMap" in f.explanation
    assert "gpu-a100-3 advertises nvidia.com/gpu: 1" in f.explanation
    assert f.fixes[0].commands[0] == ("helm upgrade nvdp nvdp/nvidia-device-plugin -n kube-system --reuse-values "
                                      "--set config.name=time-slicing-config --set config.default=a100-80gb")


def test_operator_without_device_plugin_config():
    policy = ("$ kubectl get clusterpolicies.nvidia.com cluster-policy -o yaml\napiVersion: nvidia.com/v1\nkind: ClusterPolicy\n"
              "metadata:\n  name: cluster-policy\nspec:\n  devicePlugin:\n    enabled: true\n  driver:\n    enabled: true\n")
    facts = facts_from({"cm.yaml": CONFIGMAP, "plugin.log": PLUGIN_LOG, "cp.yaml": policy})
    [f] = run("DP152", facts)
    assert "devicePlugin.config.name is not set" in f.explanation
    assert f.fixes[0].commands == ("kubectl patch clusterpolicies.nvidia.com/cluster-policy --type merge -p "
                                   "'{\"spec\":{\"devicePlugin\":{\"config\":{\"name\":\"time-slicing-config\",\"default\":\"a100-80gb\"}}}}'",)


def test_capacity_equal_to_the_gpu_count_without_a_plugin_log():
    gpu_node = node("gpu-a100-3", labels={"nvidia.com/gpu.count": "8"}, capacity={"nvidia.com/gpu": "8"}, allocatable={"nvidia.com/gpu": "8"})
    [f] = run("DP152", facts_from({"cm.yaml": CONFIGMAP}, gpu_node))
    assert f.confidence == 0.7 and "node gpu-a100-3 advertises nvidia.com/gpu: 8, one per physical GPU" in f.explanation
    assert "do not show how the plugin is pointed at it" in f.explanation


def test_silent_when_the_plugin_runs_with_the_replicas():
    shared = node("gpu-a100-3", labels={"nvidia.com/gpu.count": "8"}, capacity={"nvidia.com/gpu": "32"}, allocatable={"nvidia.com/gpu": "32"})
    assert run("DP152", facts_from({"cm.yaml": CONFIGMAP, "plugin.log": SHARED_LOG}, shared)) == []


def test_plain_device_plugin_values_file_is_read_and_cited():
    """A values file pasted as-is (no `helm get values` header), recognised by the chart's own keys."""
    values = ("# helm upgrade -i nvdp nvdp/nvidia-device-plugin -n kube-system --version 0.17.0 -f values.yaml\n"
              "config:\n  name: time-slicing-config\n  default: a100-40gb\nfailOnInitError: false\n")
    facts = facts_from({"cm.yaml": CONFIGMAP, "plugin.log": PLUGIN_LOG, "values.yaml": values},
                       pod("nvidia-device-plugin-4kq7m", ns="kube-system", node="gpu-a100-3"),
                       node("gpu-a100-3", capacity={"nvidia.com/gpu": "1"}, allocatable={"nvidia.com/gpu": "1"}))
    [f] = run("DP152", facts)
    assert "values.yaml:4" in cites(f) and "a100-40gb" in f.explanation
