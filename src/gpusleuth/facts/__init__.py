"""Combined views over everything the parsers produced. Checks read these, never raw documents.

Each view module registers its builder with @combiner; importing it here is the registry.
"""

from gpusleuth.facts.store import COMBINERS, Facts, Recognised, combiner
from gpusleuth.facts.cluster import Cluster  # noqa: E402
from gpusleuth.facts import clock  # noqa: E402,F401  (today's date, GPUSLEUTH_TODAY)
from gpusleuth.facts.logs import Logs  # noqa: E402
from gpusleuth.facts.operands import OperandGraph  # noqa: E402,F401
from gpusleuth.facts.metrics import GpuMetrics  # noqa: E402
from gpusleuth.facts.gpus import GpuInventory, KernelEvents  # noqa: E402
from gpusleuth.facts.sharing import SharingConfigs  # noqa: E402
from gpusleuth.facts.configuration import Configuration  # noqa: E402
from gpusleuth.facts.runtime import RuntimeSetup  # noqa: E402
from gpusleuth.facts.configs import CdiSpecs  # noqa: E402,F401
from gpusleuth.facts.host import HostFacts  # noqa: E402
from gpusleuth.facts.plugin_config import PluginWiring  # noqa: E402,F401
from gpusleuth.facts.errors import ErrorLines, HealthSigns  # noqa: E402
from gpusleuth.facts.prose import Prose  # noqa: E402
from gpusleuth.facts.platform import Platform  # noqa: E402
from gpusleuth.facts.validation import PodSpecs, RuntimeClasses  # noqa: E402,F401  (pod specs, RuntimeClasses as written)

from gpusleuth.facts.timeline import Timeline  # noqa: E402
from gpusleuth.analysis.ordering import Ordering  # noqa: E402,F401  (its combiner reads Timeline)

__all__ = ["COMBINERS", "Cluster", "Configuration", "ErrorLines", "Facts", "GpuInventory", "HealthSigns", "GpuMetrics", "HostFacts", "KernelEvents", "Logs", "Platform", "Prose", "Recognised",
           "RuntimeSetup", "SharingConfigs", "Timeline", "combiner"]
