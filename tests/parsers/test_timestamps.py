"""The timestamp registry: every row's samples parse, patterns stay in the RE2 subset, malformed stamps
lose their time but never raise."""

from datetime import datetime, timedelta, timezone

import pytest
import re2

from gpusleuth.parsers import timestamps as ts

UTC = timezone.utc


@pytest.mark.parametrize("fmt", ts.FORMATS, ids=lambda f: f.id)
def test_every_sample_is_recognised_as_its_own_format(fmt):
    assert fmt.samples
    for sample in fmt.samples:
        hit = ts.find(sample)
        assert hit is not None, sample
        found, value, _end = hit
        assert found.id == fmt.id, (sample, found.id)
        assert value is not None, sample
        if fmt.relative:
            assert isinstance(value, (float, datetime))
        else:
            assert isinstance(value, datetime)
            assert (value.tzinfo is not None) or not fmt.has_zone or fmt.id == "date"
            if not fmt.has_year:
                assert value.year == ts.YEARLESS


@pytest.mark.parametrize("fmt", ts.FORMATS, ids=lambda f: f.id)
def test_patterns_are_in_the_re2_subset(fmt):
    re2.compile(fmt.pattern)  # raises on look-around or back-references


@pytest.mark.parametrize(
    "line, fid, expected, rest",
    [
        ("2025-11-21T11:51:06.123456789Z stdout F Starting driver-manager", "cri",
         datetime(2025, 11, 21, 11, 51, 6, 123456, UTC), "Starting driver-manager"),
        ("2025-11-21T19:51:06.5+08:00 stderr P modprobe: ERROR", "cri",
         datetime(2025, 11, 21, 11, 51, 6, 500000, UTC), "modprobe: ERROR"),
        ("2025-11-21T06:51:06-05:00 Waiting for MOFED", "rfc3339", datetime(2025, 11, 21, 11, 51, 6, tzinfo=UTC), "Waiting for MOFED"),
        ("I1121 11:51:06.123456       1 main.go:154] Starting FS watcher.", "klog",
         datetime(2000, 11, 21, 11, 51, 6, 123456), "Starting FS watcher."),
        ("time=2025-11-21T11:51:41Z level=info msg=Waiting for MOFED to be installed", "logrus",
         datetime(2025, 11, 21, 11, 51, 41, tzinfo=UTC), "Waiting for MOFED to be installed"),
        ("[21-Nov-25_11:58:39] Setting driver ready state", "mofed", datetime(2025, 11, 21, 11, 58, 39), "Setting driver ready state"),
        ("2017/12/08 06:41:44 Loading NVML", "go-log", datetime(2017, 12, 8, 6, 41, 44), "Loading NVML"),
        ("Nov 21 11:51:06 gpu-node-1 kernel: NVRM: loading", "syslog", datetime(2000, 11, 21, 11, 51, 6), "NVRM: loading"),
        ("[  101.234567] NVRM: Xid", "dmesg", 101.234567, "NVRM: Xid"),
        ("[Fri Nov 21 11:57:55 2025] mlx5_core", "dmesg-T", datetime(2025, 11, 21, 11, 57, 55), "mlx5_core"),
        ("Fri Nov 21 06:56:05 EST 2025", "date", datetime(2025, 11, 21, 11, 56, 5, tzinfo=UTC), ""),
        ('{"level":"info","ts":1763725866.5,"msg":"x"}', "json", datetime(2025, 11, 21, 11, 51, 6, 500000, UTC), None),
        ('{"ts":1763725866500,"msg":"millis"}', "json", datetime(2025, 11, 21, 11, 51, 6, 500000, UTC), None),
        ("ERRO[0003] failed to initialize NVML", "logrus-tty", 3.0, "failed to initialize NVML"),
    ],
)
def test_values(line, fid, expected, rest):
    fmt, value, end = ts.find(line)
    assert fmt.id == fid
    assert value == expected
    if rest is not None:
        assert line[end:] == rest


def test_date_with_unknown_zone_abbreviation_is_zone_less():
    fmt, value, _ = ts.find("Fri Nov 21 11:56:05 XYZT 2025")
    assert fmt.id == "date" and value.tzinfo is None


@pytest.mark.parametrize(
    "line",
    [
        "[99-Foo-25_11:51:13] not a month",  # shape fails: no match at all
        "[31-Feb-25_11:51:13] DTK driver build script start",  # shape right, date impossible
        "I1341 11:51:06.123456 1 main.go:1] month 13",
        "2025-13-45T11:51:06Z impossible date",
        "2017/02/30 06:41:44 no such day",
        "Feb 30 11:51:06 host kernel: no such day",
        '{"ts":"yesterday at noon","msg":"x"}',
        "[Fri Nov 31 11:57:55 2025] no such day",
    ],
)
def test_malformed_stamps_never_raise(line):
    hit = ts.find(line)
    assert hit is None or hit[1] is None
    assert ts.parse_timestamp(line) is None


def test_feb_29_in_year_less_formats_parses_with_the_leap_placeholder():
    _fmt, value, _ = ts.find("I0229 00:00:01.000000 1 main.go:1] leap")
    assert (value.month, value.day) == (2, 29)


def test_a_stamp_must_start_the_text():
    assert ts.find("see 2025-11-21T11:51:06Z in the middle") is None
    assert ts.find("") is None


@pytest.mark.parametrize(
    "text, last, first, count",
    [
        ("23m", timedelta(minutes=23), None, None),
        ("2d22h", timedelta(days=2, hours=22), None, None),
        ("3m (x4 over 8m21s)", timedelta(minutes=3), timedelta(minutes=8, seconds=21), 4),
        ("<unknown>", None, None, None),
        ("", None, None, None),
    ],
)
def test_event_ages(text, last, first, count):
    assert ts.parse_event_age(text) == (last, first, count)


def test_durations_read_like_the_seeds():
    assert ts.format_duration(453) == "7m33s"
    assert ts.format_duration(151) == "2m31s"
    assert ts.format_duration(41) == "41s"
    assert ts.format_duration(3 * 3600 + 28 * 60) == "3h28m"


def test_describe_time_helper():
    assert ts.parse_timestamp("Fri, 21 Nov 2025 11:56:02 -0500") == datetime(2025, 11, 21, 16, 56, 2, tzinfo=UTC)
