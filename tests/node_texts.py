"""A GPU node as pasted: `nvidia-smi` seeing eight H100s and `kubectl describe node` advertising none."""

from pathlib import Path

SMI = "$ nvidia-smi\n" + (Path(__file__).parent / "fixtures" / "nvidia_smi" / "h100_r535_table.txt").read_text()
NODE = "gpu-node-3"
DESCRIBE_NODE = """\
$ kubectl describe node gpu-node-3
Name:               gpu-node-3
Roles:              worker
Labels:             beta.kubernetes.io/arch=amd64
                    feature.node.kubernetes.io/pci-10de.present=true
                    kubernetes.io/hostname=gpu-node-3
                    nvidia.com/gpu.count=8
                    nvidia.com/gpu.present=true
                    nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3
Taints:             <none>
Unschedulable:      false
Capacity:
  cpu:                224
  memory:             2113567968Ki
  nvidia.com/gpu:     0
  pods:               110
Allocatable:
  cpu:                223
  memory:             2103082208Ki
  nvidia.com/gpu:     0
  pods:               110
System Info:
  Kernel Version:             5.15.0-126-generic
  Container Runtime Version:  containerd://1.7.24
"""
