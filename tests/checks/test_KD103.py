"""KD103 driver-build-fails-on-kernel: the module does not compile against a newer kernel."""

from failure_fixtures import cites, facts_from, run

BUILD = """\
$ kubectl logs pod/nvidia-driver-daemonset-pnm4f -n gpu-operator-resources --previous
Starting installation of NVIDIA driver version 535.104.05 for Linux kernel version 6.5.0-35-generic
Installing Linux kernel headers...
Installing Linux kernel module files...
Generating Linux kernel version string...
Compiling NVIDIA driver kernel modules...
ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'rcu_read_unlock_strict'
make[2]: *** [scripts/Makefile.modpost:144: /usr/src/nvidia-535.104.05/kernel/Module.symvers] Error 1
make[1]: *** [/usr/src/linux-headers-6.5.0-35-generic/Makefile:1991: modpost] Error 2
Stopping NVIDIA persistence daemon...
"""

HEADERS_MISSING = """\
$ kubectl logs nvidia-driver-daemonset-8fd2k -n gpu-operator
Compiling NVIDIA driver kernel modules...
make[2]: *** /lib/modules/6.2.0-26-generic/build: No such file or directory.  Stop.
make[1]: *** [Makefile:82: modules] Error 2
"""


def test_gpl_only_symbol_names_the_fixed_driver_release():
    [f] = run("KD103", facts_from({"driver.log": BUILD}))
    assert cites(f) == ["driver.log:7", "driver.log:8", "driver.log:9"]
    assert "535.183.08" in f.explanation
    assert f.fixes[0].commands == ("kubectl logs nvidia-driver-daemonset-pnm4f -n gpu-operator-resources --previous",)


def test_silent_when_missing_headers_explain_the_make_error():
    assert run("KD103", facts_from({"driver.log": HEADERS_MISSING})) == []
    assert run("KD102", facts_from({"driver.log": HEADERS_MISSING}))  # KD102 explains it instead
