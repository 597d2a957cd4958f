"""The failure-class table and its loader: every row becomes a documented Check; bad rows fail at import;
conditions (failing, unless, components, in) and fix templates behave as the table header says."""

import pytest
from failure_fixtures import facts_from, pod, waiting

from gpusleuth.checks import all_checks
from gpusleuth.checks.classes import CHECKS, _load_row, evaluate, failure_classes
from gpusleuth.facts import Cluster, Logs
from gpusleuth.facts.logs import signatures
from gpusleuth.facts.operands import operand_table
from gpusleuth.knowledge import table

ROW = {
    "code": "WL199", "name": "test-class", "layer": "workload", "summary": "s", "what": "w", "why": "y", "fix": "f",
    "references": ["https://github.com/NVIDIA/gpu-operator/issues/1"], "severity": "error", "role": "root-cause", "confidence": 0.7,
    "signatures": ["cuda.oom"], "explanation": "{where}: {line}",
    "fixes": [{"kind": "immediate", "description": "d", "commands": ["kubectl exec {pod} -n {namespace} -- nvidia-smi", "echo {node}"]}],
}


def _load(**changes):
    sigs = {s.id: s for s in signatures()[0]}
    return _load_row({**ROW, **changes}, sigs, {s.name for s in operand_table()[0]})


def test_every_row_is_a_registered_documented_check():
    codes = {c.code for c in all_checks()}
    rows = table("failure_classes")["class"]
    assert {r["code"] for r in rows} <= codes and len(CHECKS) == len(rows) == len(failure_classes())
    for c in CHECKS:
        assert c.what and c.why and c.fix and c.references and c.detects
        assert int(c.code[2:]) >= 100


@pytest.mark.parametrize("changes, message", [
    ({"signatures": ["no.such-signature"]}, "unknown signature"),
    ({"layer": "operator"}, "does not match the code's prefix"),
    ({"explanation": "{where} {nonsense}"}, "unknown placeholder"),
    ({"references": ["NVIDIA/gpu-operator#1"]}, "public URLs"),
    ({"fixes": [{"kind": "soon", "description": "d"}]}, "fix kind"),
    ({"components": ["nvidia-frobnicator"]}, "unknown operand"),
    ({"in": ["kernel", "smoke-signals"]}, "`in` must be"),
    ({"code": "WL1"}, "two letters and three digits"),
    ({"host": ["host.no-such-state"]}, "unknown host condition"),
    ({"host": ["host.nouveau-loaded"], "explanation": "{where} {built}"}, "unknown placeholder"),
])
def test_bad_rows_fail_loudly(changes, message):
    with pytest.raises(ValueError, match=message):
        _load(**changes)


def test_named_groups_are_valid_placeholders():
    fc = _load(title="asked {requested}")
    assert fc.title == "asked {requested}"
    assert _load(host=["host.module-vermagic-mismatch"], title="{module} built for {built}, running {kernel}").host == ("host.module-vermagic-mismatch",)


OOM = "$ kubectl logs -n ml trainer-0 --previous\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)\n"


def test_fix_commands_are_filled_or_left_out_with_a_note():
    fc = _load()
    facts = facts_from({"t.log": OOM})
    [hit] = evaluate(fc, facts.get(Logs), None)
    assert hit.fixes[0].commands == ("kubectl exec trainer-0 -n ml -- nvidia-smi",)
    assert "node's name" in hit.fixes[0].description
    assert hit.title == "s" and hit.explanation.startswith("pod trainer-0: RuntimeError: CUDA out of memory")


def test_failing_condition_ignores_old_errors_in_healthy_pods_but_not_previous_logs():
    fc = _load(failing=True)
    current = OOM.replace(" --previous", "")
    healthy = pod("trainer-0", ns="ml")
    facts = facts_from({"t.log": current}, healthy)
    assert evaluate(fc, facts.get(Logs), facts.get(Cluster)) == []
    facts = facts_from({"t.log": OOM}, healthy)
    assert len(evaluate(fc, facts.get(Logs), facts.get(Cluster))) == 1
    crashing = pod("trainer-0", ns="ml", status="CrashLoopBackOff", ready="0/1", containers=(waiting("trainer", "CrashLoopBackOff"),))
    facts = facts_from({"t.log": current}, crashing)
    [hit] = evaluate(fc, facts.get(Logs), facts.get(Cluster))
    assert hit.evidence[0].cite() == "pods.txt:2"


def test_unless_lets_the_more_specific_class_speak():
    fc = _load(unless=["cuda.device-busy"])
    both = OOM + "torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n"
    assert evaluate(fc, facts_from({"t.log": both}).get(Logs), None) == []


def test_components_restrict_known_pods_only():
    fc = _load(components=["nvidia-cuda-validator"])
    assert evaluate(fc, facts_from({"t.log": OOM}).get(Logs), None) == []
    anonymous = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\nRuntimeError: CUDA out of memory.\nTraceback (most recent call last):\n"
    assert len(evaluate(fc, facts_from({"t.log": anonymous}).get(Logs), None)) == 1


def test_row_checks_skip_without_logs_or_events():
    from gpusleuth.analysis.engine import run_checks
    from gpusleuth.checks import get_check

    facts = facts_from({}, pod("x"))
    _, outcomes = run_checks(facts, checks=[get_check("KD101"), get_check("SC103")])
    assert [o.status for o in outcomes] == ["skipped", "skipped"]


def test_context_groups_fill_hints_only():
    """A context signature lends {kernel} to hints (which match its line), never to the title or fixes."""
    hint = {"match": "for Linux kernel version", "text": "kernel {kernel}"}
    fc = _load(signatures=["driver.kernel-version-unresolved"], context=["driver.install.start"], hint=[hint],
               fixes=[{"kind": "immediate", "description": "d"}])
    assert fc.context == ("driver.install.start",)
    with pytest.raises(ValueError, match="kernel"):
        _load(signatures=["driver.kernel-version-unresolved"], context=["driver.install.start"], explanation="{kernel}",
              fixes=[{"kind": "immediate", "description": "d"}])
    with pytest.raises(ValueError, match="unknown signature"):
        _load(context=["no.such.signature"])
