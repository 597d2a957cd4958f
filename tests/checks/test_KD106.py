"""KD106 nvidia-module-in-use-blocks-reload: the modules cannot be unloaded for a new driver."""

from failure_fixtures import cites, facts_from, pod, run

MANAGER = """\
$ kubectl logs -n gpu-operator nvidia-driver-daemonset-f482n -c k8s-driver-manager
Getting current value of the 'nvidia.com/gpu.deploy.operator-validator' node label
Current value of 'nvidia.com/gpu.deploy.operator-validator=true'
nvidia driver module is already loaded with refcount 236
Shutting down all GPU clients on the current node by disabling their component-specific nodeSelector labels
Unloading NVIDIA driver kernel modules...
nvidia_uvm           1507328  4
nvidia              56623104  236 nvidia_uvm
Could not unload NVIDIA driver kernel modules, driver is in use
Failed to uninstall nvidia driver components
"""
INSTALLER = """\
$ kubectl logs nvidia-driver-daemonset-x7c2d -n gpu-operator
ERROR: An NVIDIA kernel module 'nvidia' appears to already be loaded in your kernel.  This may be because it is in use (for example, by an X server, a CUDA program, or the NVIDIA Persistence Daemon), but this may also happen if your kernel was configured without support for module unloading.
"""


def test_unload_in_use_gives_drain_and_restart_commands_for_the_real_pod():
    facts = facts_from({"manager.log": MANAGER}, pod("nvidia-driver-daemonset-f482n", status="Init:CrashLoopBackOff", ready="0/1", restarts=7))
    [f] = run("KD106", facts)
    assert cites(f)[0] == "pods.txt:2" and "manager.log:9" in cites(f)
    assert f.fixes[1].commands == ("kubectl drain gpu-node-1 --ignore-daemonsets --delete-emptydir-data",
                                   "kubectl delete pod nvidia-driver-daemonset-f482n -n gpu-operator")


def test_already_loaded_says_the_host_has_its_own_driver():
    [f] = run("KD106", facts_from({"driver.log": INSTALLER}))
    assert "host has its own NVIDIA driver" in f.explanation
    assert f.fixes[0].kind.value == "permanent" and "driver.enabled=false" in f.fixes[0].description


def test_silent_after_a_clean_unload():
    ok = MANAGER.replace("Could not unload NVIDIA driver kernel modules, driver is in use\nFailed to uninstall nvidia driver components\n",
                         "Successfully uninstalled nvidia driver components\n")
    assert run("KD106", facts_from({"manager.log": ok})) == []
