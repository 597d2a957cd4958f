import pytest

from gpusleuth.serve.synthetic import build


@pytest.fixture
def small_cluster():
    """12 GPU nodes (every 5th driver restarted), a CPU node, workloads, the operator's objects."""
    return build(12, log_lines=8, restart_every=5)
