"""CU107 no-kernel-image-for-gpu-architecture: the wheel's architectures against the GPU's compute capability."""

from gpu_case import run

# https://github.com/sconlyshootery/FeatDepth/issues/68
FEATDEPTH = """\
UserWarning:
NVIDIA GeForce RTX 3060 Laptop GPU with CUDA capability sm_86 is not compatible with the current PyTorch installation.
The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.
If you want to use the NVIDIA GeForce RTX 3060 Laptop GPU GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/
Traceback (most recent call last):
  File "./infer.py", line 27, in transform
    im_tensor = im_tensor.permute(0, 3, 1, 2).contiguous()
RuntimeError: CUDA error: no kernel image is available for execution on the device
"""

# https://github.com/ostris/ai-toolkit/issues/530 (a Blackwell GPU, a wheel without sm_120)
BLACKWELL = """\
CUDA error: no kernel image is available for execution on the device CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
NVIDIA GeForce RTX 5060 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.
The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.
"""

SMI = """\
$ nvidia-smi -L
GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b)
"""


def test_wheel_without_the_gpus_architecture():
    [f] = run("CU107", {"infer.log": FEATDEPTH})
    assert f.facts["gpu_sm"] == "sm_86" and f.facts["built_for"] == ["sm_37", "sm_50", "sm_60", "sm_70"]
    assert f.layer.value == "cuda-runtime" and f.confidence >= 0.9
    assert {e.cite() for e in f.evidence} >= {"infer.log:2", "infer.log:8"}


def test_blackwell_sm_120():
    [f] = run("CU107", {"train.log": BLACKWELL})
    assert f.facts["gpu_sm"] == "sm_120" and "sm_120" in f.title and "TORCH_CUDA_ARCH_LIST=12.0" in f.fixes[1].description


def test_gpu_model_from_nvidia_smi_when_the_log_names_none():
    [f] = run("CU107", {"job.log": "RuntimeError: CUDA error: no kernel image is available for execution on the device\n", "smi.txt": SMI})
    assert f.facts["gpu_sm"] == "sm_90" and "H100" in f.title


def test_silent_when_the_gpu_is_in_the_list_or_nothing_failed():
    ok = BLACKWELL.splitlines()[2] + "\nepoch 1 loss 0.2\n"
    assert run("CU107", {"train.log": ok}) == []
