"""`gpusleuth xid CODE...`: the catalogue's triage for the codes asked, then the remediation ladder.

Everything printed comes from knowledge/xid.toml; the wording here only arranges it: what each code means,
what to do now, whether it is the application's fault or the hardware's (who pays: the pod, the GPU, the
node), when the GPU must be reset, and the ladder every hardware Xid climbs.
"""

from __future__ import annotations

import json
import textwrap

from gpusleuth.knowledge import xid as xid_table

_WIDTH = 100


def _who(row: xid_table.Xid) -> str:
    """Application vs hardware, and what the distinction means for the next step."""
    if row.is_application:
        return "application fault: restart the workload and look at the code, not the card; the GPU stays usable"
    parts = [f"{row.category} fault" + (f" ({row.layer} layer)" if row.layer != row.category else "")]
    if row.reboot_node:
        parts.append("the node must be reset (rebooted) before the GPU comes back")
    elif row.reset_gpu and row.reset_timing == "when-convenient":
        parts.append("the other applications on the GPU are unaffected: drain politely and reset the GPU when convenient")
    elif row.reset_gpu:
        parts.append("the GPU is compromised until it is reset: nothing may restart on it before the reset")
    if row.rma_candidate and row.rma_rule:
        parts.append(f"RMA when: {row.rma_rule}")
    return "; ".join(parts)


def _entry(code: int) -> dict:
    row = xid_table.xid(code)
    if row is None:
        unused = xid_table.unused().get(code)
        return {"code": code, "known": False,
                "note": f"NVIDIA lists Xid {code} as unused on current GPUs ({unused})." if unused else f"Xid {code} is not in the catalogue."}
    return {
        "code": code, "known": True, "name": row.name, "mnemonic": row.mnemonic, "category": row.category, "layer": row.layer,
        "severity": row.severity, "meaning": row.meaning, "immediate_action": row.immediate_action, "investigation": row.investigation,
        "application_or_hardware": _who(row), "reset_timing": row.reset_timing, "follow_on_of": list(row.follow_on_of),
    }


def explain_json(codes: list[int]) -> str:
    ladder = [{"order": s.order, "scope": s.scope, "action": s.action, "applies_when": s.applies_when, "commands": list(s.commands)}
              for s in xid_table.ladder()]
    return json.dumps({"xids": [_entry(c) for c in codes], "ladder": ladder}, indent=2) + "\n"


def _para(label: str, text: str) -> list[str]:
    return textwrap.wrap(text, _WIDTH, initial_indent=f"  {label:<18}", subsequent_indent=" " * 20) or [f"  {label}"]


def explain_text(codes: list[int]) -> str:
    out: list[str] = []
    for code in codes:
        e = _entry(code)
        if not e["known"]:
            out += [f"Xid {code}", f"  {e['note']}", ""]
            continue
        out.append(f"Xid {code}: {e['name']}  [{e['category']} · {e['layer']} · {e['severity']}]")
        out += _para("What it means", e["meaning"])
        out += _para("Do now", e["immediate_action"])
        out += _para("App or hardware", e["application_or_hardware"])
        if e["investigation"]:
            out += _para("Investigate", e["investigation"])
        if e["follow_on_of"]:
            out += _para("Often follows", ", ".join(f"Xid {c}" for c in e["follow_on_of"]) + " on the same GPU: fix that one first.")
        out.append("")
    known = [xid_table.xid(c) for c in codes if xid_table.xid(c)]
    if len(known) > 1:
        out.append("How they differ")
        for row in known:
            out += textwrap.wrap(f"{row.code} ({row.name}): {_who(row)}.", _WIDTH, initial_indent="  - ", subsequent_indent="    ")
        out.append("")
    if any(not row.is_application for row in known) or not known:
        out.append("Remediation ladder (stop at the first step that clears it)")
        for s in xid_table.ladder():
            out += textwrap.wrap(f"{s.order}. {s.action}", _WIDTH, initial_indent="  ", subsequent_indent="     ")
            out += textwrap.wrap(f"when: {s.applies_when}", _WIDTH, initial_indent="     ", subsequent_indent="     ")
            out += [f"     $ {c}" for c in s.commands]
        out.append("")
    return "\n".join(out)
