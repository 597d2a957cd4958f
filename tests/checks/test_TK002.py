"""TK002: a toolkit.env value that YAML reads as a boolean or number."""

from __future__ import annotations

from runtime_samples import facts_from, fired

VALUES = """\
root@n:~# helm get values gpu-operator -n gpu-operator
USER-SUPPLIED VALUES:
toolkit:
  env:
  - name: CONTAINERD_RUNTIME_CLASS
    value: nvidia
  - name: CONTAINERD_SET_AS_DEFAULT
    value: true
"""


def test_fires_on_unquoted_boolean(tmp_path):
    (f,) = fired(facts_from({"values.txt": VALUES}, tmp_path), "TK002")
    assert "CONTAINERD_SET_AS_DEFAULT is bool True" in f.title and f.evidence[0].cite() == "values.txt:8"
    assert 'value: "true"' in f.fixes[0].snippet


def test_silent_when_quoted(tmp_path):
    assert fired(facts_from({"values.txt": VALUES.replace("value: true", 'value: "true"')}, tmp_path), "TK002") == []


def test_a_set_flag_that_helm_reads_as_a_bool_is_fixed_with_set_string():
    from failure_fixtures import facts_from, run

    cmd = ("helm install gpu-operator nvidia/gpu-operator -n gpu-operator \\\n"
           "  --set 'toolkit.env[0].name=CONTAINERD_SET_AS_DEFAULT' \\\n"
           "  --set 'toolkit.env[0].value=true'\n")
    [f] = run("TK002", facts_from({"install.sh": cmd}))
    assert f.evidence[0].line == 3 and "--set toolkit.env[0].value=true" in f.explanation
    assert f.fixes[0].commands == ("--set-string 'toolkit.env[0].value=true'",)
    quoted = cmd.replace("--set 'toolkit.env[0].value=true'", "--set-string 'toolkit.env[0].value=true'")
    assert run("TK002", facts_from({"install.sh": quoted})) == []
