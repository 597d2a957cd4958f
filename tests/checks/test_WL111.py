"""WL111 object-rejected-by-api-validation: the API server refused a workload object; nothing reached a node."""

from failure_fixtures import cites, facts_from, run

# https://github.com/NVIDIA/k8s-device-plugin/issues/154
RANGE = ('$ kubectl apply -f multi-gpu-test.yaml\nThe Job "multi-gpu-test-0" is invalid: spec.template.spec.containers[0].resources.requests: '
         'Invalid value: "1": must be equal to nvidia.com/gpu limit\n')


def test_a_gpu_request_that_differs_from_its_limit_is_explained_by_the_rule_for_extended_resources():
    [f] = run("WL111", facts_from({"apply.txt": RANGE}))
    assert cites(f) == ["apply.txt:2"] and f.layer.value == "workload" and f.confidence >= 0.9
    assert "Job multi-gpu-test-0" in f.title and "never overcommits" in f.explanation
    assert f.fixes[0].description.startswith("Ask for a fixed number: set only resources.limits nvidia.com/gpu")
    assert f.facts["field"] == "spec.template.spec.containers[0].resources.requests" and f.facts["type"] == "Invalid value"


def test_a_field_error_no_rule_knows_is_still_reported_with_its_field():
    other = 'The Pod "trainer-0" is invalid: spec.containers[0].image: Required value\n'
    [f] = run("WL111", facts_from({"apply.txt": other}))
    assert f.confidence < 0.9 and "spec.containers[0].image" in f.title and f.facts["rule"] is None


def test_silent_on_the_gpu_stacks_own_objects_and_on_other_errors():
    policy = 'The ClusterPolicy "cluster-policy" is invalid: spec.driver.version: Invalid value: "": spec.driver.version in body should be at least 1 chars long\n'
    assert run("WL111", facts_from({"apply.txt": policy})) == []
    assert run("WL111", facts_from({"get.txt": 'Error from server (NotFound): pods "cuda-vectoradd" not found\n'})) == []
