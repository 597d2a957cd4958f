"""CU104 forward-compat-on-unsupported-gpu: CUDA error 804."""

from failure_fixtures import cites, facts_from, run

LOG = """\
$ kubectl logs cuda-sample -n default
[CUDA Bandwidth Test] - Starting...
cudaGetDeviceProperties returned 804
-> forward compatibility was attempted on non supported HW
CUDA error at bandwidthTest.cu:256 code=804(cudaErrorCompatNotSupportedOnDevice) "cudaSetDevice(currentDevice)"
"""


def test_error_804():
    [f] = run("CU104", facts_from({"sample.log": LOG}))
    assert cites(f) == ["sample.log:4"]


def test_silent_without_804():
    assert run("CU104", facts_from({"sample.log": "$ kubectl logs cuda-sample\n[CUDA Bandwidth Test] - Starting...\nResult = PASS\n"})) == []
