"""RT111 nvml-not-injected-into-operand: the device plugin cannot load NVML from its own container."""

from failure_fixtures import cites, facts_from, pod, run

# https://github.com/NVIDIA/k8s-device-plugin/issues/182 (microk8s runs its own containerd; docker's daemon.json
# made nvidia the default runtime of a docker the kubelet does not use)
LOG = """\
$ kubectl logs -n kube-system nvidia-device-plugin-daemonset-sbqjz
2020/10/14 18:04:53 Loading NVML
2020/10/14 18:04:53 Failed to initialize NVML: could not load NVML library.
2020/10/14 18:04:53 If this is a GPU node, did you set the docker default runtime to `nvidia`?
2020/10/14 18:04:53 You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites
"""


def test_plugin_without_nvml_is_a_runtime_fault_with_commands_for_its_pod():
    [f] = run("RT111", facts_from({"plugin.log": LOG}))
    assert cites(f) == ["plugin.log:3", "plugin.log:4"] and f.layer.value == "container-runtime"  # the line, and the plugin's own hint
    assert "pod nvidia-device-plugin-daemonset-sbqjz" in f.explanation and f.confidence < 0.7  # its spec was not given
    assert "did you set the docker default runtime" in f.explanation
    assert "kubectl get pod nvidia-device-plugin-daemonset-sbqjz -n kube-system -o jsonpath='{.spec.runtimeClassName}'" in f.fixes[0].commands
    assert f.fixes[1].commands == ("kubectl delete pod nvidia-device-plugin-daemonset-sbqjz -n kube-system",)


def test_silent_when_nvml_loads():
    ok = ("$ kubectl logs -n kube-system nvidia-device-plugin-daemonset-sbqjz\n2020/10/14 18:04:53 Loading NVML\n"
          "2020/10/14 18:04:53 Starting FS watcher.\n2020/10/14 18:04:53 Registered device plugin with Kubelet\n")
    assert run("RT111", facts_from({"plugin.log": ok})) == []


def test_silent_on_the_dra_kubelet_plugin_which_loads_nvml_from_the_driver_root():
    # https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/1272: not a runtime matter (no runtime injects it)
    dra = ("$ kubectl logs -n gpu-operator nvidia-dra-driver-gpu-kubelet-plugin-x7k2p -c gpus\n"
           "Error: error creating driver: error enumerating all possible devices: error enumerating GPUs and MIG devices: "
           "error initializing NVML: ERROR_LIBRARY_NOT_FOUND\n")
    assert run("RT111", facts_from({"gpus.log": dra})) == []


def test_a_known_pod_without_a_runtime_class_is_more_certain_and_names_its_node():
    p = pod("nvidia-device-plugin-daemonset-sbqjz", ns="kube-system", node="gpu-1", status="CrashLoopBackOff", ready="0/1", restarts=9)
    [f] = run("RT111", facts_from({"plugin.log": LOG}, p))
    assert f.node == "gpu-1" and f.confidence >= 0.8 and "pods.txt:2" in cites(f)
    assert f.fixes[0].commands[0] == "kubectl debug node/gpu-1 -it --image=busybox -- chroot /host sh -c 'crictl info | grep -i defaultRuntimeName'"


def test_silent_when_the_pod_asks_for_the_nvidia_runtime_class():
    # the runtime was requested: a library missing under it is a driver not installed or not ready (DP001's story)
    p = pod("nvidia-device-plugin-daemonset-sbqjz", ns="kube-system", status="CrashLoopBackOff", ready="0/1", runtime_class="nvidia")
    assert run("RT111", facts_from({"plugin.log": LOG}, p)) == []
