"""Every timestamp shape gpusleuth reads, in one table: how to find it at the start of a line, how to turn it
into time, and what it leaves unsaid (year, zone) for the timeline to infer.

Each row is a ``TimeFormat``. Its pattern is written in the RE2 subset (no look-around, no back-references;
tests compile every pattern with re2 too) so that nothing in it can backtrack badly, but it is compiled with
the standard ``re`` module: for one short anchored match per line, re's call overhead is a tenth of the RE2
binding's, and the log parser makes millions of such calls.

``convert(match)`` returns
* an aware ``datetime`` when the text carries its zone,
* a naive ``datetime`` when it does not (MOFED, syslog, ``dmesg -T``, Go's log package): the timeline gives
  it the zone that makes it consistent with the zone-aware sources, and says so,
* for year-less formats (klog, syslog) a datetime in the placeholder year ``YEARLESS`` (2000, a leap year,
  so that ``Feb 29`` parses): the timeline replaces it with the year the other sources show,
* a ``float`` of seconds for relative stamps (``dmesg`` uptime: since boot; logrus ``ERRO[0003]``: since the
  process started), or
* ``None`` when the text has the shape but not a real time (``[99-Foo-25_...]``, month 13): the caller
  skips that line's time, never the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Callable

YEARLESS = 2000  # placeholder year of year-less formats until the timeline infers the real one

_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
_MON = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DOW = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_ISO_DATE = r"\d{4}-\d{2}-\d{2}"
_CLOCK = r"\d{2}:\d{2}:\d{2}"

# Zone abbreviations `date` prints. Ambiguous ones take their most common meaning in server logs (CST is US
# Central, IST is India); the note on each inferred time names the abbreviation so a reader can object.
ZONE_ABBREVIATIONS: dict[str, int] = {  # minutes east of UTC
    "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "BST": 60, "CET": 60, "CEST": 120, "MET": 60, "MEST": 120, "EET": 120,
    "EEST": 180, "MSK": 180, "IST": 330, "SGT": 480, "HKT": 480, "JST": 540, "KST": 540, "AEST": 600,
    "AEDT": 660, "NZST": 720, "NZDT": 780, "EST": -300, "EDT": -240, "CST": -360, "CDT": -300, "MST": -420,
    "MDT": -360, "PST": -480, "PDT": -420, "AKST": -540, "AKDT": -480, "HST": -600,
}


@lru_cache(maxsize=256)
def fixed_zone(minutes: int) -> timezone:
    return timezone.utc if minutes == 0 else timezone(timedelta(minutes=minutes))


@dataclass(frozen=True)
class TimeFormat:
    id: str
    description: str
    pattern: str  # RE2 subset, anchored with ^ at the start of the text after outer prefixes
    convert: Callable[[re.Match], "datetime | float | None"]
    has_year: bool
    has_zone: bool
    relative: str | None  # "boot" | "process" when convert gives seconds, not a wall-clock time
    samples: tuple[str, ...]  # realistic lines, each must match and convert (tests check)
    regex: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern))

    def parse(self, text: str) -> "tuple[datetime | float | None, int] | None":
        """(time, end of the stamp) when text starts with this format; time None when it is malformed."""
        m = self.regex.match(text)
        if m is None:
            return None
        return _safe(self.convert, m), m.end()


def _safe(convert, m):
    try:
        return convert(m)
    except (ValueError, OverflowError, KeyError):
        return None


def _frac_us(frac: str | None) -> int:
    return int(frac[:6].ljust(6, "0")) if frac else 0


def _iso(m: re.Match) -> datetime:
    return iso_stamp(m.group("ts"))


def iso_stamp(ts: str) -> datetime:
    """The ISO rows' conversion from the stamp's text (the `ts` group); parsers/logs.py calls it on stamps it
    found in a whole document at once."""
    ts = ts.replace(",", ".")
    if ts.endswith("UTC"):
        ts = ts[:-3].rstrip() + "+00:00"
    return datetime.fromisoformat(ts)


# Stamps to the second are converted once per distinct second: a log writes many lines per second, and building
# a datetime from the digits costs several times the cache lookup. Fractions are added to the cached second.
_per_second = lru_cache(maxsize=4096)


def _second(t: datetime) -> tuple[datetime, str]:
    return t, t.isoformat()


def _with_frac(second: tuple[datetime, str], frac: str | None) -> datetime:
    """A cached second plus a fraction; fromisoformat reads the fraction as _frac_us does, at a third of the cost
    of datetime.replace."""
    t, iso = second
    if not frac:
        return t
    try:
        return datetime.fromisoformat(f"{iso}.{frac}")
    except ValueError:  # digits fromisoformat does not read (non-ASCII)
        return t.replace(microsecond=_frac_us(frac))


@_per_second
def _go_second(ts: str) -> tuple[datetime, str]:
    return _second(datetime(int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]), int(ts[17:19])))


def _go(m: re.Match) -> datetime:
    return _with_frac(_go_second(m.group("ts")), m.group("frac"))


def _clock(date: tuple[int, int, int], clock: str) -> datetime:
    return datetime(*date, int(clock[0:2]), int(clock[3:5]), int(clock[6:8]))


@_per_second
def _klog_second(mo: str, d: str, clock: str) -> tuple[datetime, str]:
    return _second(_clock((YEARLESS, int(mo), int(d)), clock))


def _klog(m: re.Match) -> datetime:
    mo, d, clock, frac = m.group("mo", "d", "clock", "frac")
    return _with_frac(_klog_second(mo, d, clock), frac)


@_per_second
def _mofed_second(y: str, mon: str, d: str, clock: str) -> datetime:
    return _clock((2000 + int(y), _MONTHS[mon], int(d)), clock)


def _mofed(m: re.Match) -> datetime:
    return _mofed_second(*m.group("y", "mon", "d", "clock"))


@_per_second
def _syslog_second(mon: str, d: str, clock: str) -> tuple[datetime, str]:
    return _second(_clock((YEARLESS, _MONTHS[mon], int(d)), clock))


def _syslog(m: re.Match) -> datetime:
    mon, d, clock, frac = m.group("mon", "d", "clock", "frac")
    return _with_frac(_syslog_second(mon, d, clock), frac)


@_per_second
def _dmesg_t_second(y: str, mon: str, d: str, clock: str) -> datetime:
    return _clock((int(y), _MONTHS[mon], int(d)), clock)


def _dmesg_t(m: re.Match) -> datetime:
    return _dmesg_t_second(*m.group("y", "mon", "d", "clock"))


@_per_second
def _date_second(y: str, mon: str, d: str, clock: str, zone: str) -> datetime:
    t = _clock((int(y), _MONTHS[mon], int(d)), clock)
    if zone[0] in "+-":
        minutes = int(zone[1:3]) * 60 + int(zone[3:5])
        return t.replace(tzinfo=fixed_zone(minutes if zone[0] == "+" else -minutes))
    offset = ZONE_ABBREVIATIONS.get(zone)
    return t if offset is None else t.replace(tzinfo=fixed_zone(offset))  # unknown abbreviation: zone-less


def _date_cmd(m: re.Match) -> datetime:
    return _date_second(*m.group("y", "mon", "d", "clock", "zone"))


@_per_second
def _rfc1123_second(y: str, mon: str, d: str, clock: str, zone: str) -> datetime:
    minutes = 0 if zone in ("GMT", "UTC") else (int(zone[1:3]) * 60 + int(zone[3:5])) * (1 if zone[0] == "+" else -1)
    return _clock((int(y), _MONTHS[mon], int(d)), clock).replace(tzinfo=fixed_zone(minutes))


def _rfc1123(m: re.Match) -> datetime:
    return _rfc1123_second(*m.group("y", "mon", "d", "clock", "zone"))


def _epoch(value: str) -> datetime:
    secs = float(value)
    if secs > 1e14:  # microseconds
        secs /= 1e6
    elif secs > 1e11:  # milliseconds (Java, JS loggers)
        secs /= 1e3
    return datetime.fromtimestamp(secs, timezone.utc)


def _json(m: re.Match) -> datetime:
    if m.group("epoch") is not None:
        return _epoch(m.group("epoch"))
    ts = m.group("ts").replace(",", ".")
    return datetime.fromisoformat(ts[:-3].rstrip() + "+00:00" if ts.endswith("UTC") else ts)


def _audit(m: re.Match) -> datetime:
    return _epoch(m.group("epoch"))


def _seconds(m: re.Match) -> float:
    return float(m.group("secs"))


def _logrus_tty(m: re.Match) -> "datetime | float":
    return float(m.group("secs")) if m.group("secs") is not None else datetime.fromisoformat(m.group("ts"))


_ISO_ZONED = rf"{_ISO_DATE}[T ]{_CLOCK}(?:[.,]\d{{1,9}})? ?(?:Z|[+-]\d{{2}}:?\d{{2}}|UTC)"

# Order matters where shapes nest: the first row whose pattern matches wins (CRI before bare RFC 3339,
# journald before RFC 3339, zoned ISO before zone-less ISO).
FORMATS: tuple[TimeFormat, ...] = (
    TimeFormat(
        "cri", "CRI log file (containerd/CRI-O /var/log/pods/*/N.log): RFC 3339 nano, stream, P(artial)/F(ull)",
        rf"^(?P<ts>{_ISO_DATE}T{_CLOCK}(?:\.\d{{1,9}})?(?:Z|[+-]\d{{2}}:\d{{2}})) (?P<stream>stdout|stderr) (?P<tag>[PF]) ?",
        _iso, True, True, None,
        ("2025-11-21T11:51:06.123456789Z stdout F Starting driver-manager",
         "2025-11-21T19:51:06.5+08:00 stderr P modprobe: ERROR: could not insert 'nvidia_peermem': Inva"),
    ),
    TimeFormat(
        "journal", "journalctl -o short-iso[-precise] / rsyslog RFC 3339: time, host, identifier[pid]:",
        rf"^(?P<ts>{_ISO_DATE}T{_CLOCK}(?:[.,]\d{{1,9}})?(?:Z|[+-]\d{{2}}:?\d{{2}})) (?P<host>[\w.-]+) (?P<ident>[^\s:\[]+)(?:\[(?P<pid>\d+)\])?: ",
        _iso, True, True, None,
        ("2025-11-21T11:57:55+0000 gpu-node-1 kernel: mlx5_core 0000:01:00.0: firmware version: 28.39.1002",
         "2025-11-21T06:52:10.004512-0500 worker-3 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
         "2025-11-21T11:51:02.000123+00:00 gpu-node-1 containerd[2211]: time=\"2025-11-21T11:51:02Z\" level=info msg=\"starting containerd\""),
    ),
    TimeFormat(
        "rfc3339", "RFC 3339 / ISO 8601 with zone: `kubectl logs --timestamps`, zap, Python logging with %z",
        rf"^(?P<ts>{_ISO_ZONED}) ?",
        _iso, True, True, None,
        ("2025-11-21T11:51:06.123456789Z + modprobe nvidia-peermem",
         "2025-11-21T06:51:06.123456789-05:00 Mellanox device found at 0000:01:00.0",
         "2025-11-21 11:51:06.123+0000 INFO starting",
         "2025-11-21T11:51:06,123456+00:00 NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  580.95.05"),
    ),
    TimeFormat(
        "iso-local", "ISO 8601 without a zone (Python logging default, some shell scripts)",
        rf"^(?P<ts>{_ISO_DATE}[T ]{_CLOCK}(?:[.,]\d{{1,9}})?)(?:\s|$)",
        _iso, True, False, None,
        ("2025-11-21 11:51:06,123 - root - INFO - waiting for driver", "2025-11-21T11:51:06 starting nvidia-persistenced"),
    ),
    TimeFormat(
        "klog", "klog / glog header (device plugin, GFD, kubelet): level, MMDD, time, [thread id], file:line]",
        r"^(?P<level>[IWEF])(?P<mo>\d{2})(?P<d>\d{2}) (?P<clock>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d{1,9}))?\s+(?:\d+\s+)?(?P<src>[\w.\-/]+:\d+)\]\s?",
        _klog, False, False, None,
        ("I1121 11:51:06.123456       1 main.go:154] Starting FS watcher.",
         "I0812 09:14:03.011552       1 server.go:146] Registered device plugin for 'nvidia.com/gpu' with Kubelet",
         "E0121 12:04:24.655909 1 main.go:132] error starting plugins: failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND",
         "I0707 03:58:30.735384   server.go:125]  Registered device plugin for 'nvidia.com/gpu' with Kubelet"),
    ),
    TimeFormat(
        "logrus", "logrus TextFormatter: time=\"RFC 3339\" level=... msg=... (quoted, or unquoted with DisableQuote)",
        r"^time=(?:\"(?P<ts>[^\"]{10,40})\"|(?P<ts2>[^\s\"]{10,40}))(?:\s+level=(?P<level>\w+))?\s+msg=",
        lambda m: datetime.fromisoformat(m.group("ts") or m.group("ts2")), True, True, None,
        ('time="2025-11-21T11:51:41Z" level=info msg="Waiting for MOFED to be installed"',
         "time=2025-11-21T11:51:41Z level=info msg=Mellanox device found at 0000:01:00.0",
         "time=2025-11-21T11:51:41Z msg=GPUDirectRDMA is enabled, validating MOFED driver installation",
         'time="2025-11-21T06:51:41-05:00" level=error msg="failed to validate the driver" error="exit status 1"'),
    ),
    TimeFormat(
        "logrus-tty", "logrus TextFormatter on a terminal: LEVL[seconds since start] or LEVL[RFC 3339]",
        r"^(?P<level>INFO|WARN|ERRO|FATA|DEBU|TRAC|PANI)\[(?:(?P<secs>\d{4,})|(?P<ts>\d{4}-\d{2}-\d{2}T[^\]]{8,30}))\]\s?",
        _logrus_tty, True, True, "process",
        ("ERRO[0003] failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND",
         "INFO[0000] Loading config from /etc/nvidia-container-runtime/config.toml",
         "INFO[2025-11-21T11:58:40Z] Restarting containerd"),
    ),
    TimeFormat(
        "go-log", "Go standard library log package: yyyy/mm/dd hh:mm:ss[.micro], local time",
        r"^(?P<ts>\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d{1,6}))?\s",
        _go, True, False, None,
        ("2017/12/08 06:41:44 Loading NVML", "2023/06/22 14:25:38.123456 Registered device plugin for 'nvidia.com/gpu' with Kubelet"),
    ),
    TimeFormat(
        "mofed", "NVIDIA MOFED / DOCA driver container entrypoint: [dd-Mon-yy_HH:MM:SS], container local time",
        rf"^\[(?P<d>\d{{2}})-(?P<mon>{_MON})-(?P<y>\d{{2}})_(?P<clock>\d{{2}}:\d{{2}}:\d{{2}})\]\s?",
        _mofed, True, False, None,
        ("[21-Nov-25_11:51:13] DTK driver build script start", "[21-Nov-25_11:58:39] Setting driver ready state",
         "[23-Oct-25_15:28:32] Unsetting driver ready state[23-Oct-25_15:28:32] Query VFs info from [4] devices"),
    ),
    TimeFormat(
        "json", "JSON lines with an ISO or float-epoch time key (zap ts, logrus JSONFormatter time, timestamp)",
        r"^\{.*?\"(?:ts|time|timestamp|@timestamp)\"\s*:\s*(?:\"(?P<ts>[^\"]{8,40})\"|(?P<epoch>\d{9,16}(?:\.\d+)?(?:[eE][+-]?\d+)?))",
        _json, True, True, None,
        ('{"level":"info","ts":1763725866.123456,"logger":"controllers.ClusterPolicy","msg":"Reconciling ClusterPolicy"}',
         '{"level":"error","ts":"2025-11-21T11:56:05.123Z","msg":"failed to get node","error":"not found"}',
         '{"time":"2025-11-21T11:51:06Z","level":"info","msg":"Starting nvidia-dcgm-exporter"}'),
    ),
    TimeFormat(
        "syslog", "BSD syslog / journalctl short: Mon dd hh:mm:ss host ident[pid]: (no year, host local time)",
        rf"^(?P<mon>{_MON}) (?P<d>[ \d]\d) (?P<clock>\d{{2}}:\d{{2}}:\d{{2}})(?:\.(?P<frac>\d{{1,6}}))? (?P<host>[\w.-]+) (?P<ident>[^\s:\[]+)(?:\[(?P<pid>\d+)\])?: ",
        _syslog, False, False, None,
        ("Nov 21 11:51:06 gpu-node-1 kernel: [  101.234567] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
         "Nov  1 03:04:05 worker-3 kubelet[1734]: E1101 03:04:05.000000 1734 pod_workers.go:1300] Error syncing pod",
         "Nov 21 11:51:06.123456 gpu-node-1 kernel: mlx5_core 0000:01:00.0: E-Switch: Total vports 2"),
    ),
    TimeFormat(
        "dmesg", "dmesg (printk time): [seconds since boot]",
        r"^\[\s*(?P<secs>\d{1,8}\.\d{1,9})\]\s?",
        _seconds, True, True, "boot",
        ("[  101.234567] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
         "[12345.678901] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)"),
    ),
    TimeFormat(
        "dmesg-T", "dmesg -T: [Dow Mon dd hh:mm:ss yyyy], host local time",
        rf"^\[{_DOW} (?P<mon>{_MON}) +(?P<d>\d{{1,2}}) (?P<clock>\d{{2}}:\d{{2}}:\d{{2}}) (?P<y>\d{{4}})\]\s?",
        _dmesg_t, True, False, None,
        ("[Fri Nov 21 11:57:55 2025] mlx5_core 0000:01:00.0: firmware version: 28.39.1002",
         "[Tue Sep  8 04:12:33 2020] NVRM: Xid (PCI:0000:3b:00): 48, pid=1021, name=python, An uncorrectable double bit error"),
    ),
    TimeFormat(
        "date", "`date` output a script printed: Dow Mon dd hh:mm:ss ZONE yyyy (zone-less when the abbreviation is unknown)",
        rf"^(?:{_DOW}) (?P<mon>{_MON}) +(?P<d>\d{{1,2}}) (?P<clock>\d{{2}}:\d{{2}}:\d{{2}}) (?P<zone>[A-Z]{{1,5}}|[+-]\d{{4}}) (?P<y>\d{{4}})(?:\s+|$)",
        _date_cmd, True, True, None,
        ("Fri Nov 21 11:56:05 UTC 2025", "Fri Nov 21 06:56:05 EST 2025", "Sat Nov  1 03:04:05 +0100 2025",
         "Fri Nov 21 11:52:59 UTC 2025 Waiting for openshift-driver-toolkit-ctr container to build the precompiled driver ..."),
    ),
    TimeFormat(
        "rfc1123", "RFC 1123 with zone, as `kubectl describe` prints Started/Finished: Dow, dd Mon yyyy hh:mm:ss -0500",
        rf"^{_DOW}, (?P<d>\d{{1,2}}) (?P<mon>{_MON}) (?P<y>\d{{4}}) (?P<clock>\d{{2}}:\d{{2}}:\d{{2}}) (?P<zone>[+-]\d{{4}}|GMT|UTC)\s?",
        _rfc1123, True, True, None,
        ("Fri, 21 Nov 2025 11:56:02 -0500", "Fri, 21 Nov 2025 16:56:02 GMT"),
    ),
    TimeFormat(
        "audit", "auditd: type=TYPE msg=audit(epoch.millis:serial):",
        r"^type=(?P<type>[A-Z_]+) msg=audit\((?P<epoch>\d{9,11}\.\d{1,6}):\d+\):\s?",
        _audit, True, True, None,
        ("type=AVC msg=audit(1763725866.123:4567): avc:  denied  { read } for  pid=2211 comm=\"nvidia-ctk\"",),
    ),
)

BY_ID: dict[str, TimeFormat] = {f.id: f for f in FORMATS}

# Which rows can match a line, by its first character: one dict lookup instead of trying every row.
_FIRST: dict[str, tuple[TimeFormat, ...]] = {}
for _c in map(chr, range(32, 127)):
    _FIRST[_c] = tuple(
        f for f in FORMATS
        if (f.id in ("cri", "journal", "rfc3339", "iso-local", "go-log") and _c.isdigit())
        or (f.id == "klog" and _c in "IWEF")
        or (f.id == "logrus" and _c == "t")
        or (f.id == "logrus-tty" and _c in "IWEFDTP")
        or (f.id in ("mofed", "dmesg", "dmesg-T") and _c == "[")
        or (f.id == "json" and _c == "{")
        or (f.id == "syslog" and _c in "JFMASOND")
        or (f.id in ("date", "rfc1123") and _c in "MTWFS")
        or (f.id == "audit" and _c == "t")
    )


def candidates(text: str) -> tuple[TimeFormat, ...]:
    """The rows worth trying on text, most specific first."""
    return _FIRST.get(text[:1], ()) if text else ()


def find(text: str) -> "tuple[TimeFormat, datetime | float | None, int] | None":
    """The first format text starts with: (format, converted time or None when malformed, end of stamp)."""
    for f in candidates(text):
        m = f.regex.match(text)
        if m is not None:
            return f, _safe(f.convert, m), m.end()
    return None


def parse_timestamp(text: str) -> datetime | None:
    """A standalone value (a describe `Started:` field, a manifest time) as a datetime, or None."""
    hit = find(text.strip())
    return hit[1] if hit and isinstance(hit[1], datetime) else None


_AGE_PART = re.compile(r"(\d+)([smhdy])")
_AGE = re.compile(r"^(?:\d+[smhdy])+$")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "y": 365 * 86400}
_OVER = re.compile(r"\(x(?P<count>\d+) over (?P<span>(?:\d+[smhdy])+)\)")


def parse_age(text: str | None) -> timedelta | None:
    """A kubectl age (`23m`, `2d22h`, `8m21s`) as a duration; None for `<unknown>` and anything else."""
    if not text:
        return None
    text = text.strip()
    if not _AGE.match(text):
        return None
    return timedelta(seconds=sum(int(n) * _AGE_UNITS[u] for n, u in _AGE_PART.findall(text)))


def parse_event_age(text: str | None) -> tuple[timedelta | None, timedelta | None, int | None]:
    """kubectl event age column: `23m` -> (23m, None, None); `3m (x4 over 8m21s)` -> (3m, 8m21s, 4).

    The first value is how long ago the event was last seen, the second how long ago it was first seen."""
    if not text:
        return None, None, None
    over = _OVER.search(text)
    head = text[: over.start()].strip() if over else text.strip()
    last = parse_age(head) if head else None
    if over:
        first = parse_age(over.group("span"))
        return last, first, int(over.group("count"))
    return last, None, None


def format_duration(seconds: float) -> str:
    """7m33s, 2h05m, 41s, 1d3h: how kubectl and people write durations."""
    s = int(round(abs(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600}h"
