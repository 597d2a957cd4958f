"""What the layer modules share to speak of the platform and of what a person wrote.

- ``stated_hits``: the "stated-*" checks (KD080, UD080, TK080, RT080, DP080, FD080, OP080, SC080) turn the
  symptoms a ticket describes (facts/prose.py, knowledge/phrases.toml [[symptom]]) into low-confidence findings
  of their layer: the sentence cited, what it implies, and the commands whose output would confirm it.
- ``platform_note`` / ``platform_fixes``: runtime and toolkit findings name the platform's real paths (its
  containerd config and socket, the template it is generated from, the toolkit settings it needs) and its known
  pitfalls (knowledge/runtimes.toml [[platform]]).
"""

from __future__ import annotations

from typing import Iterable

from gpusleuth.checks.classes import clip
from gpusleuth.facts.platform import Platform, PlatformRow
from gpusleuth.facts.prose import STATED_CONFIDENCE, Prose, event_row, symptom_row
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.layers import Layer

_ENGINE_LAYERS = ("container-runtime", "container-toolkit")


def platform_note(platform: Platform | None, handler: str = "nvidia") -> str:
    """One or two sentences: where this platform's engine keeps its config, whether it is generated, and the
    pitfall that bites GPU setups there."""
    if platform is None:
        return ""
    p = platform.row
    how = " (stated in the ticket, not seen in machine output)" if platform.stated else f" ({platform.how})"
    engine = "CRI-O" if p.runtime == "cri-o" else "containerd"
    text = f" The platform is {p.name}{how}: {engine} reads {p.config} and listens on {p.socket}"
    if p.generated:
        origin = f"from {p.template}" if p.template else f"({p.template_note})" if p.template_note else "by the platform"
        text += f"; that file is generated {origin}, so edits to it do not last"
    text += "."
    if (pit := platform.pitfall) is not None:
        text += f" Known pitfall on {p.name}: {pit['text']} ({pit['source']})"
    return text


def toolkit_env_snippet(p: PlatformRow, handler: str = "nvidia") -> str | None:
    """The values fragment of the platform's toolkit env; the same text for every finding of a run (TK001 gives
    one per failing node), so it is written once per platform row and handler."""
    known = _snippets.get((id(p), handler))
    if known is not None and known[0] is p:
        return known[1]
    text = _toolkit_env_snippet(p, handler)
    _snippets[(id(p), handler)] = (p, text)
    return text


_snippets: dict[tuple[int, str], tuple[PlatformRow, str | None]] = {}  # the knowledge table's rows live all run long


def _toolkit_env_snippet(p: PlatformRow, handler: str) -> str | None:
    import yaml
    if not p.toolkit_env:
        return None
    env = [{"name": k, "value": v} for k, v in p.toolkit_env.items()]
    if not any(e["name"] == "CONTAINERD_RUNTIME_CLASS" for e in env) and p.runtime == "containerd":
        env.append({"name": "CONTAINERD_RUNTIME_CLASS", "value": handler})
    return yaml.safe_dump({"toolkit": {"env": env}}, sort_keys=False, default_flow_style=False)


def platform_fixes(platform: Platform | None, handler: str = "nvidia") -> tuple[Fix, ...]:
    """Fixes in the platform's own terms: the toolkit settings it needs (as a values fragment), where a lasting
    change to the engine's config goes, and what it ships preinstalled."""
    if platform is None:
        return ()
    p = platform.row
    fixes: list[Fix] = []
    snippet = toolkit_env_snippet(p, handler)
    if snippet:
        extra = f" {p.toolkit_note}." if p.toolkit_note else ""
        fixes.append(Fix(
            FixKind.PERMANENT,
            f"Give the GPU Operator's toolkit the {p.name} paths ({p.toolkit_env_text()}) in the Helm values, then "
            f"`helm upgrade <release> nvidia/gpu-operator -n <namespace> --reuse-values -f toolkit-values.yaml`.{extra}",
            ("helm list -A --filter gpu-operator",), snippet, "yaml",
        ))
    elif p.toolkit_note:
        fixes.append(Fix(FixKind.PERMANENT, f"On {p.name}, {p.toolkit_note}.", ()))
    if p.generated and p.template and p.runtime == "containerd":
        fixes.append(Fix(
            FixKind.WORKAROUND,
            f"To change containerd by hand on {p.name}, edit {p.template}, not {p.config} (generated){'; ' + p.template_note if p.template_note else ''}; "
            f"then restart: {p.restart or 'the engine'}.",
            (f"sudo ls -la {p.config.rsplit('/', 1)[0]}", f"sudo head -5 {p.config}"),
        ))
    if p.preinstalled:  # last: what the platform ships is background to the settings above, not the fix itself
        fixes.append(Fix(FixKind.PERMANENT, f"On {p.name}: {p.preinstalled}.", ()))
    return tuple(fixes)


def _on_platform(command: str, platform: Platform | None) -> str:
    """A confirming command with the platform's real paths in place of its placeholders."""
    if platform is None or platform.row.runtime != "containerd":
        return command
    p = platform.row
    return (command.replace("<containerd config path>", p.config).replace("<config dir>", p.config.rsplit("/", 1)[0])
            .replace("<the file the toolkit wrote>", p.toolkit_env.get("CONTAINERD_CONFIG", p.config)))


def stated_hits(prose: Prose | None, layer: Layer, platform: Platform | None = None) -> Iterable[Hit]:
    """One low-confidence finding per symptom a ticket describes on this layer (none without sentences: a bundle
    that holds no ticket is not a gap)."""
    for d in prose.described_in(layer.value) if prose is not None else ():
        row = symptom_row(d.id)
        event = event_row(d.event) if d.event else None
        implies = event["implies"] if event else row["implies"]
        confirm = tuple(_on_platform(c, platform) for c in (event["confirm"] if event else row.get("confirm", ())))
        said = f"{d.evidence.cite()}: \"{d.evidence.text}\""
        title = f"Stated: {row['title'].lower() if event else row['title']}"
        if event:
            title = clip(f"Stated: it worked until {d.what}{f' ({d.when})' if d.when else ''}", 160)
        explanation = (f"The ticket says so ({said}). This is what a person wrote, not what a program printed, so it is a lead to "
                       f"confirm rather than a finding: {implies}.")
        if layer.value in _ENGINE_LAYERS:
            explanation += platform_note(platform)
        fixes = [Fix(FixKind.IMMEDIATE, "Confirm it from the node and the cluster: run these and read their output with gpusleuth.",
                     confirm)] if confirm else []
        if layer.value in _ENGINE_LAYERS:
            fixes.extend(platform_fixes(platform))
        yield Hit(
            title=title,
            explanation=explanation,
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=(d.evidence,),
            fixes=tuple(fixes),
            confidence=STATED_CONFIDENCE,
            facts={"stated": True, "symptom": d.id, **({"event": d.event, "change": d.what, "when": d.when} if d.event else {})},
        )
