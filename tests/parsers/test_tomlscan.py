"""The tolerant TOML line reader under the engine config parsers."""

from __future__ import annotations

from gpusleuth.parsers.tomlscan import dotted, scan, split_key, untemplate


def test_keys_with_quotes_and_dots():
    assert split_key('plugins."io.containerd.grpc.v1.cri".containerd') == ("plugins", "io.containerd.grpc.v1.cri", "containerd")
    assert split_key("plugins.'io.containerd.cri.v1.runtime' . containerd") == ("plugins", "io.containerd.cri.v1.runtime", "containerd")
    assert split_key('a."b') is None and split_key("a..b") is None
    assert dotted(("plugins", "io.containerd.grpc.v1.cri", "x")) == 'plugins."io.containerd.grpc.v1.cri".x'


def test_scan_reads_what_tomllib_refuses():
    lines = [
        "version = 2",
        'imports = [',
        '  "/etc/containerd/conf.d/*.toml",',
        "]",
        "[plugins.cri.containerd]",
        'default_runtime_name = "nvidia',  # unclosed string
        "[plugins.cri.containerd]",  # defined twice
        "snapshotter = 'overlayfs' # comment",
        "this line is junk",
    ]
    sc = scan(lines)
    assert sc.data["imports"] == ["/etc/containerd/conf.d/*.toml"] and sc.line("imports") == 1
    assert sc.data["plugins"]["cri"]["containerd"]["snapshotter"] == "overlayfs"
    assert sc.data["plugins"]["cri"]["containerd"]["default_runtime_name"] == "nvidia"
    assert (("plugins", "cri", "containerd"), 4, 6) in sc.duplicates
    assert {i for i, _ in sc.errors} == {5, 8}


def test_untemplate_keeps_line_count():
    lines = ['{{ template "base" . }}', "[x]", '  a = "{{ .Foo }}"', "  b = {{ .Bar }}", "{{- end }}"]
    out, blanked, stubbed = untemplate(lines)
    assert len(out) == 5 and blanked == [0, 4] and stubbed == [2, 3]
    assert scan(out).data == {"x": {"a": "{{template}}", "b": "{{template}}"}}
