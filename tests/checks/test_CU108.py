"""CU108 framework-cannot-load-cuda-libraries: TensorFlow without its CUDA/cuDNN libraries runs on the CPU."""

from failure_fixtures import cites, facts_from, run

# https://github.com/JdeRobot/BehaviorMetrics/issues/385
LOG = """\
$ kubectl logs -n ml tf-train-0
2022-07-10 15:08:09.276131: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/nvidia/lib:/usr/local/nvidia/lib64
2022-07-10 15:08:09.276917: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU. Follow the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required libraries for your platform.
Skipping registering GPU devices...
"""


def test_missing_cudnn():
    [f] = run("CU108", facts_from({"tf.log": LOG}))
    assert "tf.log:2" in cites(f) and f.layer.value == "cuda-runtime"
    assert "ldconfig -p" in f.fixes[0].commands[0]


def test_silent_when_the_libraries_load():
    ok = ("$ kubectl logs -n ml tf-train-0\n2020-10-15 12:44:11.883542: I tensorflow/stream_executor/platform/default/dso_loader.cc:48] "
          "Successfully opened dynamic library libcuda.so.1\n")
    assert run("CU108", facts_from({"tf.log": ok})) == []
