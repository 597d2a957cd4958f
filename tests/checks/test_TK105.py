"""TK105 driver-unreachable-inside-container: nvidia-smi run in a container cannot reach the driver."""

from gpu_case import run

NO_LIB = ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
          "Driver is properly installed and present in your system.\n")
NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
             "NVIDIA driver is installed and running.\n")


def test_nvidia_smi_in_docker_run_is_about_the_injection_not_the_driver():
    paste = "root@banshee:~# docker run --rm --gpus=all nvidia/cuda:9.2-base nvidia-smi\n" + NO_LIB
    (f,) = run("TK105", {"paste.txt": paste})
    assert f.layer.value == "container-toolkit" and f.title == "nvidia-smi inside a container cannot find the NVML library"
    assert [e.cite() for e in f.evidence] == ["paste.txt:2"] and "`docker run --rm --gpus=all nvidia/cuda:9.2-base nvidia-smi`" in f.explanation
    assert run("UD005", {"paste.txt": paste}) == []


def test_kubectl_exec_counts_as_inside_a_container():
    (f,) = run("TK105", {"exec.txt": "$ kubectl exec -it cuda-test -n ml -- nvidia-smi\n" + NO_DRIVER})
    assert f.title.endswith("cannot talk to the NVIDIA driver") and f.facts["command"].startswith("kubectl exec")


def test_on_the_node_itself_it_is_the_driver():
    assert run("TK105", {"nvidia-smi.txt": "$ nvidia-smi\n" + NO_DRIVER}) == []
    assert run("TK105", {"nvidia-smi.txt": "$ sudo nvidia-smi -L\n" + NO_LIB}) == []


def test_silent_when_the_node_shows_its_driver_down_too():
    both = "$ nvidia-smi\n" + NO_DRIVER + "$ docker run --rm --gpus all ubuntu nvidia-smi\n" + NO_DRIVER
    assert run("TK105", {"paste.txt": both}) == []
    (ud,) = run("UD005", {"paste.txt": both})
    assert [e.cite() for e in ud.evidence] == ["paste.txt:2"]
    lsmod = "$ lsmod\nModule                  Size  Used by\ndrm_kms_helper        311296  0\n"
    assert run("TK105", {"paste.txt": "$ docker run --rm --gpus all ubuntu nvidia-smi\n" + NO_DRIVER, "lsmod.txt": lsmod}) == []


def test_a_working_container_is_silent():
    ok = ("$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi -L\n"
          "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5f8c2b1e-7c1d-4e8a-9f0b-3a2d1c4e5f60)\n")
    assert run("TK105", {"paste.txt": ok}) == []


def test_the_toolkits_own_error_line_is_cited_as_what_went_wrong():
    paste = ("$ docker run --rm --gpus=all nvidia/cuda:9.2-base nvidia-smi\n" + NO_LIB + "\n"
             "$ cat /var/log/nvidia-container-toolkit.log\n"
             "I0105 19:55:43.487585 13429 nvc_ldcache.c:353] executing /sbin/ldconfig from host at /var/lib/docker/x/rootfs\n"
             "E0105 19:55:43.488469 1 nvc_ldcache.c:384] could not start /sbin/ldconfig: process execution failed: no such file or directory\n")
    (f,) = run("TK105", {"paste.txt": paste})
    assert "paste.txt:6" in [e.cite() for e in f.evidence]
    assert 'The toolkit says what went wrong at paste.txt:6: "could not start /sbin/ldconfig' in f.explanation
