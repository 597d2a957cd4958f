"""SC104 namespace-quota-refuses-pod: the ResourceQuota admission check refused the pod; nothing was created."""

from failure_fixtures import cites, facts_from, run

# The admission plugin's format as a real refusal prints it (hmcts/cnp-flux-config#2122), with GPU resources in it
GPU = ('$ kubectl create -f gpu-job.yaml -n ml-team\nError from server (Forbidden): error when creating "gpu-job.yaml": pods "train-7w6fz" is '
       'forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=3, limited: '
       'requests.nvidia.com/gpu=4\n')
# https://github.com/kubeflow/pipelines/issues/7699
MUST = ('This step is in Error state with this message: task \'example-pipeline-vlklw.print-and-return-number\' errored: pods '
        '"example-pipeline-vlklw-3223166133" is forbidden: failed quota: kf-resource-quota: must specify cpu,memory\n')


def test_a_gpu_quota_used_up_names_the_quota_and_its_namespace_from_the_command():
    [f] = run("SC104", facts_from({"create.txt": GPU}))
    assert cites(f) == ["create.txt:2"] and f.layer.value == "scheduler" and "gpu-quota" in f.title
    assert "requests.nvidia.com/gpu` is what limits them" in f.explanation  # the GPU hint
    assert f.fixes[0].commands == ("kubectl describe resourcequota gpu-quota -n ml-team",)


def test_a_pod_that_does_not_state_what_the_quota_limits():
    [f] = run("SC104", facts_from({"kfp.txt": MUST}))
    assert "kf-resource-quota" in f.title and "nvidia.com" not in f.explanation


def test_silent_when_the_pod_is_created():
    assert run("SC104", facts_from({"create.txt": "$ kubectl create -f gpu-job.yaml -n ml-team\njob.batch/train created\n"})) == []
