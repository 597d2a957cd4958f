"""CU106 cuda-error-in-log-points-below: a CUDA error in a job's log, named and read down to its layer."""

from gpu_case import dmesg, run

# https://github.com/vllm-project/vllm/issues/5222 and https://github.com/huggingface/accelerate/issues/1192
ECC = """\
$ kubectl logs -n inference vllm-llama-0
RuntimeError: CUDA error: uncorrectable ECC error encountered
CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
"""
# https://github.com/nagadit/DeepFaceLab_Linux/issues/89 (TensorFlow names the driver code)
TF_ECC = ("F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of handling error Internal: failed "
          "initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: "
          "CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered\n")
XID48 = dmesg("NVRM: Xid (PCI:0000:3b:00): 48, pid=40213, name=python3, Ch 00000010, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 1.")
XID13 = dmesg("NVRM: Xid (PCI:0000:3b:00): 13, pid=51822, name=python3, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address")


def test_ecc_error_with_xid_48_is_the_gpu():
    [f] = run("CU106", {"vllm.log": ECC, "dmesg.txt": XID48})
    assert f.facts["code"] == 214 and f.layer.value == "hardware" and f.severity.value == "critical"
    cited = [e.cite() for e in f.evidence]
    assert "vllm.log:2" in cited and any(c.startswith("dmesg.txt:") for c in cited)
    assert "Xid 48" in f.explanation
    assert any("nvidia-smi -q -d ECC,ROW_REMAPPER" in c for fx in f.fixes for c in fx.commands)


def test_driver_name_without_xid_still_points_at_the_hardware():
    [f] = run("CU106", {"tf.log": TF_ECC})
    assert f.facts["code"] == 214 and f.facts["driver"] == "CUDA_ERROR_ECC_UNCORRECTABLE"
    assert f.layer.value == "hardware" and f.confidence < 0.8 and "No Xid" in f.explanation


def test_unknown_error_with_only_application_xids_is_the_workload():
    # https://github.com/pytorch/pytorch/issues (the common "CUDA error: unknown error" shape)
    [f] = run("CU106", {"job.log": "RuntimeError: CUDA error: unknown error\n", "dmesg.txt": XID13})
    assert f.facts["code"] == 999 and f.layer.value == "workload"


def test_stub_library_points_at_the_injection():
    [f] = run("CU106", {"job.log": "cudaGetDeviceCount failed: CUDA driver is a stub library (cudaErrorStubLibrary)\n"})
    assert f.facts["code"] == 34 and f.layer.value == "container-toolkit"


def test_lines_a_dedicated_check_reads_and_clean_logs_are_left_alone():
    assert run("CU106", {"nb.log": "RuntimeError: No CUDA GPUs are available\n"}) == []  # CU102
    assert run("CU106", {"v.log": "Error 802: system not yet initialized\n"}) == []  # UD102
    assert run("CU106", {"ok.log": "cuda available: True, device: NVIDIA A100-SXM4-80GB\nepoch 1 loss 0.31\n"}) == []


def test_802_by_name_only_points_at_the_fabric_manager():
    # https://github.com/pytorch/pytorch/issues/35710 (a CUDA sample names the code and the runtime name only)
    log = ("$ kubectl logs -n bench bandwidth-test\n"
           "cudaGetDeviceProperties returned 802\n"
           "CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) \"cudaSetDevice(currentDevice)\"\n")
    hits = run("CU106", {"bw.log": log})
    [f] = [h for h in hits if h.facts["code"] == 802]
    assert f.layer.value == "userspace-driver" and f.facts["lines"] == 2
    assert any("systemctl status nvidia-fabricmanager" in c for fx in f.fixes for c in fx.commands)
    assert f.fixes[0].commands[0].startswith("kubectl debug node/<node>")


def test_routine_results_are_not_failures():
    assert run("CU106", {"job.log": "cudaEventQuery returned cudaErrorNotReady, polling again\n"}) == []
