"""`gpusleuth xid CODE...`: seed 004's triage from the catalogue."""

import json

from click.testing import CliRunner

from gpusleuth.cli import cli


def xid(*args: str):
    return CliRunner().invoke(cli, ["xid", *args])


def test_seed_004_triage():
    r = xid("79", "94", "95", "13")
    assert r.exit_code == 0
    out = r.output
    for head in ("Xid 79: GPU has fallen off the bus", "Xid 94: Contained memory error", "Xid 95: Uncontained memory error",
                 "Xid 13: Graphics Engine Exception"):
        assert head in out
    differ = out[out.index("How they differ"):out.index("Remediation ladder")]
    assert "94 (Contained memory error): memory fault (hardware layer); the other applications on the GPU are unaffected: drain" in " ".join(differ.split())
    assert "nothing may restart on it before the reset" in differ  # 95
    assert "13 (Graphics Engine Exception): application fault: restart the workload" in " ".join(differ.split())
    assert "the node must be reset" in differ and "RMA when: Xid 79 again on the same physical slot" in " ".join(differ.split())
    ladder = out[out.index("Remediation ladder"):]
    assert ladder.index("1. Restart the application") < ladder.index("2. Reload the driver") < ladder.index("3. Run dcgmi diag -r 3") < ladder.index("4. Cordon the node")


def test_json_and_unknown_codes():
    r = xid("--format", "json", "48", "1", "999")
    data = json.loads(r.output)
    known = {x["code"]: x for x in data["xids"]}
    assert known[48]["severity"] == "critical" and known[48]["known"]
    assert "unused" in known[1]["note"] and known[999]["note"] == "Xid 999 is not in the catalogue."
    assert [s["order"] for s in data["ladder"]] == [1, 2, 3, 4]


def test_application_codes_alone_skip_the_ladder_and_bad_input_fails():
    assert "Remediation ladder" not in xid("13", "31").output
    r = xid("79x")
    assert r.exit_code == 2 and "not an Xid code" in r.output
