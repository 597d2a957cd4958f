"""The message catalogue: format strings become patterns, every shipped row loads and matches its example."""

from __future__ import annotations

import pytest
import re2

from gpusleuth.knowledge.message_catalogue import CatalogueError, catalogue, load, pattern_of

SOURCE = """
[source]
component = "k8s-device-plugin"
repository = "https://github.com/NVIDIA/k8s-device-plugin"
version = "v0.17.0"
layer = "device-plugin"
tracker = "https://github.com/NVIDIA/k8s-device-plugin/issues"
style = "go"
programs = ["nvidia-device-plugin"]
pods = ["nvidia-device-plugin-daemonset"]
"""


def _cat(rows: str):
    return load({"dp.toml": SOURCE + rows})


def test_go_verbs_become_anything():
    assert pattern_of("failed to create FS watcher: %v", "go") == "failed to create FS watcher:"
    assert pattern_of("error %d of %q (%.2f%%)", "go") == r"error.*of.*\(.*%\)"


def test_shell_and_c_placeholders():
    assert pattern_of('Could not resolve Linux kernel version for ${KERNEL_VERSION}', "shell") == "Could not resolve Linux kernel version for"
    assert pattern_of("load library failed: %s: cannot open %lu", "c") == "load library failed:.*: cannot open"


def test_the_most_specific_message_wins():
    cat = _cat('''
[[message]]
id = "generic"
format = "failed to start plugin: %v"
level = "error"
where = "main.go"
doing = "starting"
[[message]]
id = "specific"
format = "failed to start plugin: error registering with kubelet: %v"
level = "error"
where = "main.go"
doing = "registering"
''')
    found = cat.match("E0101 failed to start plugin: error registering with kubelet: rpc error")
    assert [m.id for m in found] == ["specific", "generic"]
    assert found[0].search_terms() == "failed to start plugin: error registering with kubelet"


def test_attribution_by_program_and_pod():
    cat = _cat("")
    assert cat.by_program("nvidia-device-plugin: failed") == "k8s-device-plugin"
    assert cat.by_program("nvidia-device-plugin-foo: failed") is None
    assert cat.by_pod("nvidia-device-plugin-daemonset-x7k2p") == "k8s-device-plugin"


@pytest.mark.parametrize("row, said", [
    ('id = "a"\nformat = "%v"\nlevel = "error"\nwhere = "x"\ndoing = "y"', "too little fixed text"),
    ('id = "a"\nformat = "failed to frobnicate the widget"\nlevel = "panic"\nwhere = "x"\ndoing = "y"', "level must be"),
    ('id = "a"\nformat = "failed to frobnicate the widget"\nlevel = "error"', "lacks where, doing"),
])
def test_bad_rows_are_refused_with_their_name(row, said):
    with pytest.raises(CatalogueError, match=said):
        _cat("[[message]]\n" + row)


def test_every_shipped_row_compiles_and_matches_its_example():
    cat = catalogue()
    for m in cat.messages:
        re2.compile(m.pattern)
        if m.example:
            assert m in cat.match(m.example), f"{m.key}: its example does not match {m.pattern!r}"
