"""Which operand a pod is, from its labels: a label several operands carry names none of them alone.

The labels are the GPU Operator's and NFD's own (assets/state-*/0500_daemonset.yaml; the NFD chart): the
operator and sandbox validators both carry app.kubernetes.io/part-of=gpu-operator, and every NFD pod carries
app.kubernetes.io/name=node-feature-discovery with a role label that tells them apart.
"""

from gpusleuth.facts.operands import spec_for
from gpusleuth.model.k8s import Pod


def _name(labels: dict, name: str = "some-pod-x7k2p") -> str | None:
    spec = spec_for(Pod(name, "gpu-operator", labels=labels))
    return spec.name if spec else None


def test_a_shared_label_alone_names_no_operand():
    assert _name({"app.kubernetes.io/name": "node-feature-discovery"}) is None
    assert _name({"app.kubernetes.io/part-of": "gpu-operator"}) is None


def test_the_label_that_tells_them_apart_does():
    assert _name({"app.kubernetes.io/name": "node-feature-discovery", "role": "worker"}) == "nfd-worker"
    assert _name({"app.kubernetes.io/name": "node-feature-discovery", "role": "gc"}) == "nfd-gc"
    assert _name({"app": "nvidia-sandbox-validator", "app.kubernetes.io/part-of": "gpu-operator"}) == "nvidia-sandbox-validator"
    assert _name({"app": "nvidia-operator-validator", "app.kubernetes.io/part-of": "gpu-operator"}) == "nvidia-operator-validator"
