"""`gpusleuth cuda-error CODE...`: the CUDA error catalogue like `gpusleuth xid`."""

import json

from click.testing import CliRunner

from gpusleuth.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["cuda-error", *args])


def test_numbers_names_and_messages():
    r = run("35", "802", "CUDA_ERROR_NO_DEVICE", "cudaErrorNoKernelImageForDevice", "uncorrectable ECC error encountered")
    assert r.exit_code == 0, r.output
    out = r.output
    for head in ("CUDA error 35: cudaErrorInsufficientDriver", "CUDA error 802: cudaErrorSystemNotReady / CUDA_ERROR_SYSTEM_NOT_READY",
                 "CUDA error 100: cudaErrorNoDevice / CUDA_ERROR_NO_DEVICE", "CUDA error 209: cudaErrorNoKernelImageForDevice",
                 "CUDA error 214: cudaErrorECCUncorrectable"):
        assert head in out
    assert "nvidia-fabricmanager" in out and "Codes and messages from CUDA 12.9" in out


def test_json_and_unknown():
    data = json.loads(run("--format", "json", "35", "nonsense-code").output)
    assert data["cuda"] == "12.9"
    first, second = data["errors"]
    assert first["code"] == 35 and first["message"] == "CUDA driver version is insufficient for CUDA runtime version"
    assert {c["layer"] for c in first["causes"]} >= {"userspace-driver", "container-toolkit"}
    assert second["known"] is False and "not a CUDA error" in second["note"]
