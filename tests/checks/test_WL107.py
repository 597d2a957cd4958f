"""WL107 tensorrt-engine-from-another-version: a Triton model.plan built with another TensorRT."""

from failure_fixtures import cites, facts_from, run

# https://github.com/triton-inference-server/server/issues/317
LOG = """\
$ kubectl logs -n serving triton-0
I0530 23:11:43.023085 1 plan_bundle.cc:206] Creating instance inception_plan_0_0_gpu0 on GPU 0 (7.0) using model.plan
E0530 23:11:46.299486 1 logging.cc:43] The engine plan file is not compatible with this version of TensorRT, expecting library version 5.1.2 got 5.1.5, please rebuild.
E0530 23:11:46.307403 1 retrier.cc:37] Loading servable: {name: inception_plan version: 1} failed: Internal: unable to create TensorRT engine
"""


def test_engine_from_another_tensorrt():
    [f] = run("WL107", facts_from({"triton.log": LOG}))
    assert cites(f) == ["triton.log:3"]
    assert "built with 5.1.5, server runs 5.1.2" in f.title
    assert f.fixes[0].commands[0] == "kubectl exec triton-0 -n serving -- sh -c 'dpkg -l | grep nvinfer'"


def test_silent_when_the_engine_loads():
    ok = LOG.splitlines()[0] + "\n" + LOG.splitlines()[1] + "\nI0530 23:11:47.1 1 model_repository_manager.cc:1] successfully loaded 'inception_plan' version 1\n"
    assert run("WL107", facts_from({"triton.log": ok})) == []
