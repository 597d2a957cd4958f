"""DP107 inotify-instances-exhausted: the device plugin cannot create its filesystem watcher (EMFILE)."""

from failure_fixtures import cites, facts_from, pod, run

# https://github.com/NVIDIA/gpu-operator/issues/441 (GPU Operator v22.9.0, containerd)
LOG = """\
$ kubectl logs -n gpu-operator nvidia-device-plugin-daemonset-vwxgt
2022/11/14 14:40:53 Starting FS watcher.
2022/11/14 14:40:53 Error: failed to create FS watcher: too many open files
"""


def test_the_plugin_that_cannot_watch_gets_the_sysctl_fix_for_its_node():
    p = pod("nvidia-device-plugin-daemonset-vwxgt", node="gpu-node-3", status="CrashLoopBackOff", ready="0/1", restarts=7)
    [f] = run("DP107", facts_from({"plugin.log": LOG}, p))
    assert cites(f)[-1] == "plugin.log:3" and f.node == "gpu-node-3" and f.layer.value == "device-plugin"
    assert f.fixes[0].commands == ("kubectl debug node/gpu-node-3 -it --image=busybox -- chroot /host sysctl fs.inotify.max_user_instances "
                                   "fs.inotify.max_user_watches",)
    assert "max_user_instances = 8192" in f.fixes[1].snippet and f.fixes[1].commands == ("kubectl delete pod nvidia-device-plugin-daemonset-vwxgt -n gpu-operator",)


def test_a_ticket_title_quoting_the_line_is_the_same_finding_as_the_pods_log():
    ticket = "Error: failed to create FS watcher: too many open files\n\nThe plugin keeps restarting.\n\n" + LOG
    p = pod("nvidia-device-plugin-daemonset-vwxgt", node="gpu-node-3", status="CrashLoopBackOff", ready="0/1", restarts=7)
    found = run("DP107", facts_from({"issue.md": ticket}, p))
    assert len(found) == 1 and {"issue.md:1", "issue.md:7"} <= set(cites(found[0]))


def test_silent_when_the_watcher_fails_for_another_reason_or_starts():
    other = LOG.replace("too many open files", "permission denied")
    assert run("DP107", facts_from({"plugin.log": other})) == []
    ok = "2022/11/14 14:40:53 Starting FS watcher.\n2022/11/14 14:40:53 Starting OS watcher.\n2022/11/14 14:40:53 Registered device plugin with Kubelet\n"
    assert run("DP107", facts_from({"plugin.log": ok})) == []


def test_a_node_name_masked_in_the_paste_fills_no_command():
    """Reporters mask host names (`*****/10.0.0.1` in gpu-operator#441): a command with the mask in it names nothing.
    The engine leaves such commands out of every check's fixes (analysis/engine.py `_unmasked`)."""
    p = pod("nvidia-device-plugin-daemonset-vwxgt", node="*****************************", status="CrashLoopBackOff", ready="0/1")
    [f] = run("DP107", facts_from({"plugin.log": LOG}, p))
    assert f.fixes[0].commands == () and "masked in the artifacts" in f.fixes[0].description
    assert f.fixes[1].commands == ("kubectl delete pod nvidia-device-plugin-daemonset-vwxgt -n gpu-operator",)


def test_a_masked_name_is_left_out_of_a_python_checks_commands_too():
    from gpusleuth.analysis.engine import _unmasked
    from gpusleuth.model.finding import Fix, FixKind

    fixes = (Fix(FixKind.IMMEDIATE, "Look at the node.", ("kubectl debug node/***** -it --image=busybox", "kubectl get pods -A")),
             Fix(FixKind.PERMANENT, "Fix it.", ("kubectl describe node xxxxx",)), Fix(FixKind.PERMANENT, "Keep.", ("helm list -A",)))
    first, second, third = _unmasked(fixes)
    assert first.commands == ("kubectl get pods -A",) and "masked" in first.description
    assert second.commands == () and third == fixes[2]
