"""CU001 workload-cuda-newer-than-driver: CUDA 13 on R535 needs forward compatibility (with its limits);
a CUDA 12.8 wheel on R535 works through minor-version compatibility and is explained as such."""

from gpu_case import NODE, healthy_node, run

POD_CUDA13 = f"""\
$ kubectl describe pod vllm-serve-7d9c8b6f4-x2lqp -n inference
Name:             vllm-serve-7d9c8b6f4-x2lqp
Namespace:        inference
Priority:         0
Node:             {NODE}/10.0.12.7
Status:           Running
Containers:
  server:
    Container ID:   containerd://4f1e0c2b9a8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f
    Image:          nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04
    Image ID:       nvcr.io/nvidia/cuda@sha256:0b6c2e1f8a7d9c3b5e4f2a1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b
    State:          Waiting
      Reason:       CrashLoopBackOff
    Limits:
      nvidia.com/gpu:  1
    Environment:
      NVIDIA_REQUIRE_CUDA:  cuda>=13.0
Events:           <none>
"""

POD_TORCH = f"""\
$ kubectl describe pod llama-ft-0 -n ml-team
Name:             llama-ft-0
Namespace:        ml-team
Node:             {NODE}/10.0.12.7
Status:           Running
Containers:
  trainer:
    Image:          ghcr.io/acme/llama-ft:2025.10-cu128
    State:          Running
    Limits:
      nvidia.com/gpu:  8
Events:           <none>
"""


def test_cuda13_on_r535_needs_forward_compat():
    (f,) = run("CU001", {"pod.txt": POD_CUDA13, "smi.xml": healthy_node(8, driver="535.183.01", cuda="12.2")})
    assert f.severity.value == "error" and f.node == NODE
    assert "needs CUDA 13.0" in f.title and "supports up to 12.2" in f.title
    forward = next(fx for fx in f.fixes if fx.kind.value == "workaround")
    assert "cuda-compat-13-0" in forward.description and "Data Center GPUs" in forward.description
    assert "must be NEWER than the installed kernel-mode driver" in forward.description
    assert any("R580 LTS" in fx.description for fx in f.fixes if fx.kind.value == "permanent")


def test_cu128_wheel_on_r535_works_by_minor_version_compatibility():
    (f,) = run("CU001", {"pod.txt": POD_TORCH, "smi.xml": healthy_node(8, driver="535.183.01", cuda="12.2")})
    assert f.severity.value == "info" and "minor-version compatibility" in f.title
    assert "PTX" in f.explanation


def test_consumer_gpu_cannot_use_forward_compat():
    from gpu_case import gpu_xml, smi_xml

    smi = smi_xml(gpu_xml(0, name="NVIDIA GeForce RTX 4090", total=24564), driver="535.183.01", cuda="12.2")
    (f,) = run("CU001", {"pod.txt": POD_CUDA13, "smi.xml": smi})
    forward = next(fx for fx in f.fixes if fx.kind.value == "workaround")
    assert forward.description.startswith("Forward compatibility will NOT work here") and forward.commands == ()


def test_image_declaring_forward_compat_for_r535():
    pod = POD_CUDA13.replace("cuda>=13.0\n", "cuda>=13.0 brand=unknown,driver>=535,driver<536 brand=grid,driver>=535,driver<536 "
                                              "brand=tesla,driver>=535,driver<536\n")
    (f,) = run("CU001", {"pod.txt": pod, "smi.xml": healthy_node(8, driver="535.183.01", cuda="12.2")})
    assert f.severity.value == "warning" and "only through forward compatibility" in f.title
    assert f.facts["mechanism"] == "forward" and f.fixes[-1].kind.value == "permanent"


def test_driver_new_enough():
    assert run("CU001", {"pod.txt": POD_CUDA13, "smi.xml": healthy_node(8, driver="580.95.05", cuda="13.0")}) == []


def test_cuda_of_the_build_from_torch_collect_env():
    # torch.utils.collect_env prints "CUDA used to build PyTorch: X.Y" (vLLM and PyTorch issue templates carry it)
    pod = POD_TORCH.replace("llama-ft:2025.10-cu128", "llama-ft:2025.10")
    log = ("$ kubectl logs -n ml-team llama-ft-0\nPyTorch version: 2.9.0\nIs debug build: False\n"
           "CUDA used to build PyTorch: 13.0\nROCM used to build PyTorch: N/A\n")
    (f,) = run("CU001", {"pod.txt": pod, "env.log": log, "smi.xml": healthy_node(8, driver="535.183.01", cuda="12.2")})
    assert f.facts["how"] == "framework build" and f.facts["needs"] == "13.0" and f.severity.value == "error"
    assert any(e.cite() == "env.log:4" for e in f.evidence)
