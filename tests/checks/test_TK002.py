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
