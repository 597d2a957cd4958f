"""shellwords.split gives shlex.split's words (the fast path only where they must agree)."""

import random
import shlex

import pytest

from gpusleuth.parsers import shellwords

CASES = [
    "kubectl logs -n gpu-operator nvidia-driver-daemonset-x7k2p -c nvidia-driver-ctr --previous",
    "kubectl exec -it ds/x -- sh -c 'lsmod | grep nvidia'",
    'journalctl -k --since "1 hour ago"',
    r"cat /etc/foo\ bar",
    "echo a#b # comment",
    "  spaced\tout\r\n",
    "",
    "a\x0bb",  # str.split() splits at \x0b, shlex does not
    "a\xa0b",
    "it's",
]


def _shlex(s):
    try:
        return tuple(shlex.split(s))
    except ValueError:
        return "ValueError"


def _ours(s):
    shellwords.split.cache_clear()
    try:
        return shellwords.split(s)
    except ValueError:
        return "ValueError"


@pytest.mark.parametrize("line", CASES)
def test_known_lines(line):
    assert _ours(line) == _shlex(line)


def test_random_lines_agree_with_shlex():
    rnd = random.Random(7)
    alphabet = "ab -=/|;'\"\\#$`\t\n\r\x0b\x0c\xa0é"
    for _ in range(20000):
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 14)))
        assert _ours(s) == _shlex(s), repr(s)
