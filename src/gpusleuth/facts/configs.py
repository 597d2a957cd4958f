"""CDI specs found in the artifacts, as a view checks can ask for."""

from __future__ import annotations

from dataclasses import dataclass

from gpusleuth.facts.store import Facts, combiner
from gpusleuth.model.configs import CdiSpec


@dataclass
class CdiSpecs:
    specs: list[CdiSpec]

    def nvidia(self) -> list[CdiSpec]:
        return [s for s in self.specs if (s.kind or "").startswith("nvidia.com/")]


@combiner(CdiSpecs)
def build_cdi_specs(facts: Facts) -> CdiSpecs:
    return CdiSpecs(facts.present(CdiSpec, "no CDI spec (/etc/cdi, /var/run/cdi) in the artifacts"))
