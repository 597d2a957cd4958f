"""DP103 device-plugin-config-rejected: the plugin (or GFD) refuses its config file."""

from failure_fixtures import cites, facts_from, pod, run

GFD = """\
$ kubectl logs -n gpu-operator gpu-feature-discovery-6w9rt -c gpu-feature-discovery-init
I0602 08:12:44.119821       1 main.go:163] Loading configuration.
E0602 08:12:44.120031       1 main.go:103] unable to load config: unable to finalize config: unable to parse config file: error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field PluginCommandLineFlags.flags.plugin.deviceListStrategy of type string
"""


def test_unmarshal_error_explains_the_device_list_strategy_change():
    facts = facts_from({"gfd.log": GFD}, pod("gpu-feature-discovery-6w9rt", status="Init:CrashLoopBackOff", ready="0/1", restarts=5))
    [f] = run("DP103", facts)
    assert cites(f) == ["pods.txt:2", "gfd.log:3"] and f.component == "gpu-feature-discovery"
    assert "#410" in f.explanation
    assert f.fixes[0].commands == ("kubectl logs gpu-feature-discovery-6w9rt -n gpu-operator --all-containers --previous",)


def test_silent_when_the_config_loads():
    ok = GFD.splitlines()[0] + "\n" + GFD.splitlines()[1] + "\nI0602 08:12:44.120500       1 main.go:191] Running with config:\n"
    assert run("DP103", facts_from({"gfd.log": ok})) == []


MPS_ROOT = """\
$ kubectl logs -n kube-system nvidia-device-plugin-daemonset-1-d4kvt
I0120 07:09:15.602427       1 main.go:257] Loading configuration.
E0120 07:09:15.605081       1 main.go:132] error starting plugins: unable to load config: unable to validate flags: using MPS requires --mps-root to be specified
"""


def test_with_no_hint_of_its_own_it_says_what_the_components_source_names_as_the_cause():
    [f] = run("DP103", facts_from({"dp.log": MPS_ROOT}))
    assert 'k8s-device-plugin prints "using MPS requires --mps-root to be specified"' in f.explanation
    assert "the Helm chart sets it (mps.root)" in f.explanation
    [g] = run("DP103", facts_from({"gfd.log": GFD}))  # its own hint speaks: the catalogue is not added
    assert "#410" in g.explanation and "causes its source names" not in g.explanation
