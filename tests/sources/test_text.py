"""Pasting must not move line numbers: evidence cites the line a human sees in the original file."""

from gpusleuth.sources.text import MAX_LINE, decode, normalise, split_documents

PASTE = """Here is what I see:

```
root@192-18-132-31:~/config/gpu-opertor# k get pods -A
NAMESPACE      NAME                      READY   STATUS              RESTARTS   AGE
default        gpu-textgen               0/1     ContainerCreating   0          23m
root@192-18-132-31:~# cat /etc/containerd/config.toml
version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
```
"""


def test_prompts_split_documents_and_keep_line_numbers():
    lines, notes = normalise(PASTE)
    docs = split_documents("paste.md", lines)
    assert not notes
    assert [d.command for d in docs] == [None, "k get pods -A", "cat /etc/containerd/config.toml"]
    pods, config = docs[1], docs[2]
    assert pods.first_line == 5 and pods.lines[1].startswith("default")
    assert pods.evidence(1).line == 6
    assert config.path_hint == "/etc/containerd/config.toml"
    assert config.evidence(0).line == 8 and config.lines[0] == "version = 2"


def test_markdown_quotes_crlf_and_fences_are_undone_without_moving_lines():
    quoted = "> ```\r\n> NAME   READY\r\n> pod-a  1/1\r\n> ```\r\n"
    lines, _ = normalise(quoted)
    assert lines == ["", "NAME   READY", "pod-a  1/1", ""]


def test_a_quote_among_prose_is_undone_but_a_gt_prompt_is_kept():
    """A comment quoting a log's lines between its sentences: the lines are read without the marker. A lone
    `> kubectl ...` among plain lines is a `>` prompt before a command, and stays one."""
    text = ("I see it too.\n\nFrom the toolkit log:\n\n"
            "> E0105 19:55:43.488469 1 nvc_ldcache.c:384] could not start /sbin/ldconfig\n\nconfig has the default.\n"
            "> kubectl get pods -n gpu-operator\n> sudo nvidia-smi\n")
    lines, _ = normalise(text)
    assert lines[4] == "E0105 19:55:43.488469 1 nvc_ldcache.c:384] could not start /sbin/ldconfig"
    assert lines[7:] == ["> kubectl get pods -n gpu-operator", "> sudo nvidia-smi"]


def test_toml_comment_is_not_a_prompt():
    lines, _ = normalise('# Set NVIDIA as default runtime\nversion = 2\n# cat is not a prompt here\n')
    assert len(split_documents("config.toml", lines)) == 1


def test_sudo_and_bracket_prompts():
    lines, _ = normalise("[root@node-1 ~]# sudo cat /var/lib/rancher/k3s/agent/etc/containerd/config.toml\nversion = 2\n")
    (doc,) = split_documents("x", lines)
    assert doc.path_hint == "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
    assert doc.command.startswith("cat ")


def test_binary_and_empty_are_refused_with_a_reason():
    assert decode(b"") == (None, "empty file")
    text, why = decode(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50)
    assert text is None and "binary" in why
    text, why = decode(bytes(range(128, 256)) * 100)
    assert text is None and "binary" in why


def test_utf16_paste_from_windows_is_read():
    text, why = decode("NAME READY\npod 1/1\n".encode("utf-16"))
    assert why is None and text.startswith("NAME")


def test_huge_line_is_cut_and_said_so():
    lines, notes = normalise("a" * (MAX_LINE * 3) + "\nshort\n")
    assert len(lines[0]) == MAX_LINE and lines[1] == "short"
    assert notes and "cut" in notes[0]


def test_a_values_file_saying_how_it_is_applied_is_not_split_at_that_comment():
    text = "# helm upgrade -i nvdp nvdp/nvidia-device-plugin -n kube-system -f values.yaml\nconfig:\n  name: plugin-config\n"
    lines, _ = normalise(text)
    (doc,) = split_documents("values.yaml", lines)
    assert doc.command is None and doc.lines[1] == "config:"
    lines, _ = normalise("root@node:~# helm upgrade -i nvdp nvdp/nvidia-device-plugin\nRelease \"nvdp\" has been upgraded.\n")
    assert split_documents("paste.txt", lines)[0].command.startswith("helm upgrade")  # a real prompt still splits


def test_a_paste_opening_with_the_bare_command_is_tied_to_it():
    lines, _ = normalise("k logs -n gpu-operator nvidia-driver-daemonset-x2k9p -c nvidia-driver-ctr\n+ modprobe nvidia\nmodprobe: ERROR\n")
    (doc,) = split_documents("driver.txt", lines)
    assert doc.command.startswith("k logs -n gpu-operator") and doc.first_line == 2 and doc.lines[0] == "+ modprobe nvidia"
    lines, _ = normalise("I1121 11:51:06.123456 1 main.go:154] kubectl logs is mentioned later\nkubectl get pods\n")
    assert split_documents("x.log", lines)[0].command is None  # only the first line, and only as a command
    lines, _ = normalise("cat /sys/fs/cgroup/devices/devices.list\n...\nc 195:* m\n")  # `cat` of a host file, no prompt
    (doc,) = split_documents("paste.txt", lines)
    assert (doc.command, doc.path_hint, doc.first_line) == ("cat /sys/fs/cgroup/devices/devices.list", "/sys/fs/cgroup/devices/devices.list", 2)
    lines, _ = normalise("cat the file and see for yourself\nline two\n")
    assert split_documents("x.txt", lines)[0].command is None  # `cat` of an absolute path only


def test_what_copying_from_a_page_a_chat_or_a_wiki_added_is_undone():
    lines, _ = normalise('level=error msg=&quot;unable to restart containerd&quot; dir=&lt;nil&gt;\nurl=a?x=1&amp;y=2\n')
    assert lines == ['level=error msg="unable to restart containerd" dir=<nil>', "url=a?x=1&y=2"]
    assert normalise("url=a?x=1&amp;y=2\n")[0] == ["url=a?x=1&amp;y=2"]  # `&amp;` alone is a URL's, left as written
    assert normalise("it\u2019s \u201cUnknown Error\u201d\n")[0] == ["it's \"Unknown Error\""]
    chat = "```E0120 07:09:15.605081 1 main.go:132] error starting plugins```\n"
    assert normalise(chat)[0] == ["E0120 07:09:15.605081 1 main.go:132] error starting plugins"]
    block = "see:\n```first line\nmiddle\nlast line```\nthanks\n"
    lines, _ = normalise(block)
    assert lines == ["see:", "first line", "middle", "last line", "thanks"] and lines.closing_fences == (4,)
    wiki = "{noformat}\nE0120 error starting plugins\n{noformat}\n"
    assert normalise(wiki)[0] == ["", "E0120 error starting plugins", ""]
    assert normalise("    $ kubectl get pods\n    NAME  READY\n      x\n")[0] == ["$ kubectl get pods", "NAME  READY", "  x"]


def test_a_piece_of_a_bigger_file_is_not_a_paste():
    text = "    indented &quot;as written&quot;\n"
    assert normalise(text, paste=False)[0] == ["    indented &quot;as written&quot;"]
    assert normalise(text)[0] == ['indented "as written"']


def test_a_fenced_block_is_cut_from_the_sentences_around_it():
    paste = ("Here is the config:\n\n```toml\nversion = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  enable_cdi = true\n```\n\n"
             "Any idea?\n")
    docs = split_documents("issue.md", normalise(paste)[0])
    config = next(d for d in docs if "version = 2" in d.lines)
    assert "Any idea?" not in config.lines and "Here is the config:" not in config.lines
    assert config.evidence(config.lines.index("version = 2")).line == 4


def test_a_command_on_a_blocks_first_line_is_a_command_and_one_under_a_prompt_keeps_its_block():
    docs = split_documents("c.md", normalise("I ran:\n```\ncat /etc/containerd/config.toml\nversion = 2\n```\nthen\n")[0])
    [cfg] = [d for d in docs if d.command]
    assert cfg.command == "cat /etc/containerd/config.toml" and cfg.path_hint == "/etc/containerd/config.toml"
    assert [ln for ln in cfg.lines if ln.strip()] == ["version = 2"]
    docs = split_documents("p.md", normalise("$ kubectl get pods -A\n```\nNAME   READY\npod-a  0/1\n```\n")[0])
    [pods] = [d for d in docs if d.command]
    assert pods.command == "kubectl get pods -A" and "pod-a  0/1" in pods.lines


def test_terminal_and_viewer_residue_is_undone():
    coloured = "\x1b[31mERRO\x1b[0m[0003] error running nvidia-toolkit\n\x1b]0;title\x07plain\n"
    assert normalise(coloured)[0] == ["ERRO[0003] error running nvidia-toolkit", "plain"]
    assert normalise(coloured, paste=False)[0] == normalise(coloured)[0]  # a collected log's colours go too
    assert normalise("Loading HCA driver and Access Layer:\x1b[60G[  OK  ]\n")[0] == ["Loading HCA driver and Access Layer: [  OK  ]"]
    assert normalise("no\u00a0break\u200b here\n")[0] == ["no break here"]
    assert normalise("Read-only file system   \nnext\t\n")[0] == ["Read-only file system", "next"]
    numbered = "     1\t[plugins.cri]\n     2\t\n     3\t  enable_cdi = true\n"
    assert normalise(numbered)[0] == ["[plugins.cri]", "", "  enable_cdi = true"]
    not_counting = "   10  a\n   12  b\n   13  c\n"
    assert normalise(not_counting)[0] == ["10  a", "12  b", "13  c"]  # numbers that skip are the text's own


def test_a_bare_command_below_a_sentence_is_a_command_and_a_sentence_that_names_one_is_not():
    docs = split_documents("t.txt", normalise("Here is what I collected:\ncat /sys/fs/cgroup/devices/devices.list\nc 195:* m\n")[0])
    assert [(d.command, d.first_line) for d in docs] == [(None, 1), ("cat /sys/fs/cgroup/devices/devices.list", 3)]
    said = "Installed the plugin.\nkubectl describe node shows nvidia.com/gpu: 0 under Allocatable.\n"
    assert [d.command for d in split_documents("t.txt", normalise(said)[0])] == [None]
