"""gpusleuth: why are the GPUs on this Kubernetes cluster not usable, from the silicon up."""

__version__ = "0.1.0"
