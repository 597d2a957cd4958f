"""knowledge/cuda_errors.toml: codes from the CUDA 12.9 headers, and the shapes in which logs name them."""

import re

import pytest

from gpusleuth.knowledge import cuda_errors
from gpusleuth.model.layers import Layer

LAYERS = {layer.value for layer in Layer}


def test_every_code_is_complete_and_points_to_a_layer():
    rows = cuda_errors.catalog()
    assert len(rows) >= 130  # 131 runtime codes and 99 driver codes of CUDA 12.9, most sharing a number
    for row in rows.values():
        assert row.names and row.meaning and row.header, row.code
        assert row.layer in LAYERS and all(c.layer in LAYERS for c in row.causes), row.code
        assert not row.runtime or row.runtime.startswith("cudaError")
        assert not row.driver or row.driver.startswith("CUDA_ERROR_")


@pytest.mark.parametrize("code,runtime,driver,message", [
    (35, "cudaErrorInsufficientDriver", "", "CUDA driver version is insufficient for CUDA runtime version"),
    (100, "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"),
    (209, "cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"),
    (214, "cudaErrorECCUncorrectable", "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"),
    (802, "cudaErrorSystemNotReady", "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"),
    (804, "cudaErrorCompatNotSupportedOnDevice", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"),
    (999, "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", "unknown error"),
])
def test_codes_names_and_messages_from_the_headers(code, runtime, driver, message):
    row = cuda_errors.lookup(code)
    assert (row.runtime, row.driver, row.message) == (runtime, driver, message)
    assert cuda_errors.lookup(runtime) is row and (not driver or cuda_errors.lookup(driver.lower()) is row)


def test_the_layers_the_common_codes_point_to():
    assert cuda_errors.lookup(802).layer == "userspace-driver"
    assert cuda_errors.lookup(214).layer == "hardware" and cuda_errors.lookup(220).layer == "hardware"
    assert cuda_errors.lookup(100).layer == "container-toolkit"
    assert {c.layer for c in cuda_errors.lookup(35).causes} >= {"userspace-driver", "container-toolkit"}
    assert cuda_errors.lookup(1).layer == "workload" and cuda_errors.lookup(202).deprecated


def test_source_names_the_release():
    assert cuda_errors.source()["cuda"] == "12.9"
    assert "CUDA 12.9" in (cuda_errors.__file__ and open(cuda_errors.__file__.replace(".py", ".toml")).read(3000))


@pytest.mark.parametrize("line,code", [
    # https://github.com/sconlyshootery/FeatDepth/issues/68
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", 209),
    # https://github.com/nagadit/DeepFaceLab_Linux/issues/89
    ("F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of handling error Internal: failed initializing "
     "StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE: "
     "uncorrectable ECC error encountered", 214),
    # https://github.com/NVIDIA/semantic-segmentation/issues/33 (an old runtime numbered it 39; the message decides)
    ("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265", 214),
    ("Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA runtime version)!", 35),
    ("Error 802: system not yet initialized", 802),
    ("cudaGetDeviceCount returned 35", 35),
    ("CUDA error 700 at kernel.cu:12", 700),
    ("RuntimeError: CUDA error: unknown error", 999),
    ("check failed: cudaErrorInsufficientDriver", 35),
])
def test_find_in_reads_every_shape(line, code):
    assert [e.code for e, _ in cuda_errors.find_in(line)] == [code]


@pytest.mark.parametrize("line", ["out of memory", "I have 35 GPUs and an error", "exit code 100", "Error 1 in step 3",
                                  "invalid argument: --foo"])
def test_find_in_ignores_prose_and_bare_numbers(line):
    assert cuda_errors.find_in(line) == []


def test_messages_are_one_line_and_only_200_and_300_share_one():
    msgs = [e.message for e in cuda_errors.catalog().values() if e.message]
    shared = {m for m in msgs if msgs.count(m) > 1}
    assert shared == {"device kernel image is invalid"}  # libcudart 12.9 prints it for cudaErrorInvalidKernelImage and cudaErrorInvalidSource
    assert all(re.fullmatch(r"[^\n]+", m) for m in msgs)
