"""Command line: parse arguments, call the pipeline, pick a renderer. No analysis lives here.

Exit codes: 0 nothing at the --fail-on severity (default error) or above; 1 findings at it or above;
2 bad usage or unreadable source.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

import click

from gpusleuth import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
FAIL_ON = ("critical", "error", "warning", "info", "never")
FORMATS = ("text", "json", "markdown", "sarif", "junit", "html")
STDIN_GRACE_S = 3.0  # a bare `diagnose` waits this long for piped data before it reads the live cluster


class ByteSize(click.ParamType):
    """A size as people type it: 1000000, 64M, 64MiB, 1.5G (powers of 1024)."""

    name = "SIZE"
    _UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip().lower().removesuffix("b").removesuffix("i")
        unit = text[-1:] if text[-1:] in self._UNITS else ""
        try:
            n = int(float(text[: len(text) - len(unit)]) * self._UNITS[unit])
        except ValueError:
            self.fail(f"{value!r} is not a size (e.g. 64M, 1G, 1000000)", param, ctx)
        if n <= 0:
            self.fail(f"{value!r}: the size must be positive", param, ctx)
        return n


def _fail(message: str) -> None:
    click.echo(f"gpusleuth: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _write(text: str, output: str | None, color: bool | None = None) -> None:
    """To FILE or stdout; color=True keeps the ANSI colours that click would strip from a pipe (`--color always`)."""
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or exc}")
    else:
        click.echo(text, nl=False, color=color)


class _Echo:
    """stdout as a file for writers that write in pieces, each piece as click.echo writes a text."""

    def write(self, text: str) -> None:
        click.echo(text, nl=False)


def _write_with(writer, output: str | None) -> None:
    """What writer(fh) writes, to FILE or stdout, as _write would write it whole."""
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                writer(fh)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or exc}")
    else:
        writer(_Echo())


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        """Ctrl-C ends a command with exit code 130 and one line saying so (click would print "Aborted!" and exit 1)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("\ngpusleuth: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpusleuth")
def cli() -> None:
    """Why are the GPUs on this Kubernetes cluster not usable? From the silicon up, with evidence."""


def _connection_options(func):
    """Which cluster: the current kubeconfig context unless told otherwise (live paths only)."""
    for opt in reversed((
        click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig file (default: in-cluster config, $KUBECONFIG, ~/.kube/config)."),
        click.option("--context", help="Kubeconfig context (default: the current one)."),
        click.option("--server", help="API server URL to use without credentials (`gpusleuth serve`, `kubectl proxy`)."),
        click.option("--request-timeout", type=float, default=15.0, show_default=True, help="Seconds per API request (each retried on 429/5xx)."),
    )):
        func = opt(func)
    return func


def _collect_options(func):
    """What to read from a live cluster (diagnose without SOURCE, collect)."""
    for opt in reversed((
        click.option("--namespace", "-n", "namespaces", multiple=True, help="The operators' namespaces (default: discovered); repeatable."),
        click.option("--logs/--no-logs", default=True, show_default=True, help="Read operand container logs (current and previous)."),
        click.option("--tail", type=click.IntRange(1), default=None, help="Log lines per container (default 2000)."),
        click.option("--concurrency", type=click.IntRange(1, 256), default=16, show_default=True, help="API requests in flight."),
        click.option("--node-probes", is_flag=True, help="Also run short-lived privileged probe pods on the GPU nodes (writes to the cluster; see docs/live.md)."),
        click.option("--max-workers", type=click.IntRange(1, 512), default=8, show_default=True, help="Node probes running at once."),
        click.option("--probe-namespace", default=None, help="Namespace of the probe pods (default gpusleuth)."),
        click.option("--probe-image", default=None, help="Image of the probe pods (default busybox:1.36)."),
    )):
        func = opt(func)
    return _connection_options(func)


def _collect(live: dict, quiet: bool):
    """Run a live collection with progress on the terminal unless quiet; SourceError on failure."""
    from gpusleuth.live.collect import Options
    from gpusleuth.sources.live import Target, collect

    target = Target(live["kubeconfig"], live["context"], live["server"], live["request_timeout"], live["concurrency"])
    options = Options(
        namespaces=tuple(live["namespaces"]), logs=live["logs"], tail_lines=live["tail"], node_probes=live["node_probes"],
        max_workers=live["max_workers"], probe_namespace=live["probe_namespace"], probe_image=live["probe_image"],
    )
    if quiet or not sys.stderr.isatty():
        return collect(target, options)
    from gpusleuth.live.progress import RichProgress

    with RichProgress() as progress:
        return collect(target, options, progress)


COLORS = ("auto", "always", "never")
PIPE_WIDTH = 100  # columns when stdout is not a terminal (a pipe, a file) and $COLUMNS is not set


class ScreenCommand(click.Command):
    """A command with the screen options: a bare `--color` (as before it took a value) means always, also when a
    SOURCE follows it (`diagnose --color bundle.tgz`), which click alone would read as the colour's value."""

    def parse_args(self, ctx, args):
        fixed, rest = [], list(args)
        while rest:
            a = rest.pop(0)
            if a == "--":
                fixed += [a, *rest]
                break
            if a in ("--color", "--colour") and (not rest or rest[0] not in COLORS):
                a = a + "=always"
            fixed.append(a)
        return super().parse_args(ctx, fixed)


def _screen_options(func):
    """How the text report meets the terminal: width, colour, pager, summary only."""
    for opt in reversed((
        click.option("--color", "--colour", "color", type=click.Choice(COLORS), default="auto", show_default=True,
                     is_flag=False, flag_value="always",
                     help="Colour the text report: auto (when stdout is a terminal), always (also through `| less -R`), never."),
        click.option("--no-color", "--no-colour", "no_color", is_flag=True, hidden=True, help="The same as --color never."),
        click.option("--width", type=click.IntRange(40, 1000), default=None,
                     help=f"Columns of the text report (default: the terminal's width; {PIPE_WIDTH} into a pipe or file)."),
        click.option("--brief", is_flag=True, help="Only the summary: verdict, first root cause, its line, its first fix."),
        click.option("--no-pager", "no_pager", is_flag=True,
                     help="Do not page the text report on a terminal (default: $PAGER, else less -FRX, when it is longer than the screen)."),
    )):
        func = opt(func)
    return func


def _fail_on_option(func):
    return click.option("--fail-on", type=click.Choice(FAIL_ON), default="error", show_default=True,
                        help="Exit 1 when a finding is at this severity or above (never: exit 0 whatever is found).")(func)


def _piped_stdin():
    """Standard input as a byte stream when something was piped or redirected into it, else None (a terminal,
    /dev/null, or a pipe that stays silent for STDIN_GRACE_S, which is said on stderr)."""
    from gpusleuth.sources.loose import Prefixed

    stream = sys.stdin
    if stream is None or stream.isatty():
        return None
    buf = getattr(stream, "buffer", stream)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None  # an in-memory stdin: it has data or it is empty
    if fd is not None:
        import select

        try:
            ready, _, _ = select.select([fd], [], [], STDIN_GRACE_S)
        except (OSError, ValueError):
            ready = [fd]
        if not ready:
            click.echo(f"gpusleuth: stdin is open but nothing came in {STDIN_GRACE_S:g} s; reading the live cluster "
                       "(`gpusleuth diagnose -` waits for piped input)", err=True)
            return None
    head = buf.read(1)
    return Prefixed(head, buf) if head else None


def _selection_gaps(select: tuple[str, ...], ignore: tuple[str, ...]):
    """A --select/--ignore pattern that names no check (a typo) means the report is not what was asked for."""
    from gpusleuth.analysis.engine import Selection
    from gpusleuth.checks import all_checks
    from gpusleuth.model.finding import Gap
    from gpusleuth.sources.loose import PARTIAL

    known = all_checks()
    gaps = []
    for flag, patterns in (("--select", select), ("--ignore", ignore)):
        for p in patterns:
            if not any(Selection((p,)).wants(c) for c in known):
                gaps.append(Gap(PARTIAL, f"{flag} {p} names no known check (codes, prefixes and layers are in `gpusleuth checks`)"))
    return gaps


def _warn_partial(report) -> None:
    """One line on stderr when part of the input was not read: the report cannot be an all-clear."""
    from gpusleuth.sources.loose import PARTIAL

    partial = [g for g in report.gaps if g.what == PARTIAL]
    if partial:
        more = f" (+{len(partial) - 1} more in the report's gaps)" if len(partial) > 1 else ""
        first = f"{partial[0].artifact}: {partial[0].why}" if partial[0].artifact else partial[0].why
        click.echo(f"gpusleuth: warning: partial input, so no all-clear: {first}{more}", err=True)


class Progress:
    """A one-line note on a terminal's stderr while a big input is read and analysed ("reading 12,000 of 63,059
    files", then "analysing"), cleared before anything else is written. Nothing when stderr is not a terminal,
    and nothing for a run that ends within `after` seconds: most runs never show it."""

    def __init__(self, source, stream=None, clock=None, after: float = 1.0):
        import time

        self.source, self.stream = source, stream if stream is not None else sys.stderr
        self.clock = clock or time.monotonic
        self.start = self.clock()
        self.after, self.next, self.shown = after, self.start + after, False
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, stage: str) -> None:
        if not self.on:
            return
        now = self.clock()
        if stage == "reading" and now < self.next:
            return
        if now - self.start < self.after:
            return
        self.next = now + 0.2
        if stage == "reading":
            docs = self.source.documents
            text = f"gpusleuth: reading {docs.files_read:,} of {self.source.files:,} files"
        else:
            text = f"gpusleuth: {stage}"
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


_ONE_SHOT = False  # set by main(): this process runs one command, then exits


def _settle() -> None:
    """What exists now (the modules, the documents, the report) lives until the process exits: take it out of the
    cycle collector's sight (gc.freeze), so that the collections still to come walk only what is new (the first
    one after a diagnosis walked every object of it). Only in the command line's own process: a program that
    calls gpusleuth's commands keeps its collector as it was."""
    if _ONE_SHOT:
        import gc

        gc.freeze()


@contextmanager
def _jobs(jobs: int | None) -> Iterator[None]:
    """--jobs for one run (gpusleuth/parallel.py JOBS), as it was after."""
    from gpusleuth import parallel

    before = parallel.JOBS
    parallel.JOBS = jobs if jobs is not None else before
    try:
        yield
    finally:
        parallel.JOBS = before


def _budgets(max_bytes: int | None = None, max_total_bytes: int | None = None, max_files: int | None = None,
             time_budget: float | None = None):
    """The run's budgets: the defaults (sources/loose.py) unless a flag says otherwise; --time-budget 0 is none."""
    from gpusleuth.sources.loose import Budgets

    budgets = Budgets(max_bytes=max_bytes)
    if max_total_bytes is not None:
        budgets.max_total_bytes = max_total_bytes
    if max_files is not None:
        budgets.max_files = max_files
    if time_budget is not None:
        budgets.time_budget = time_budget or None
    return budgets


def _open(source: str, max_bytes: int | None = None, budgets=None):
    """open_source, with an empty folder said to be empty (SourceError otherwise propagates)."""
    from gpusleuth.sources import open_source

    src = open_source(source, max_bytes=max_bytes, budgets=budgets)
    if src.kind == "directory" and not src.files and not src.metadata and not src.gaps:
        _fail(f"{source}: the folder is empty, there is nothing to diagnose")
    return src


@cli.command(cls=ScreenCommand)
@click.argument("source", required=False)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="sarif: SARIF 2.1.0 for code-scanning tools; junit: one test case per check, for CI; "
                   "html: one self-contained page to attach to a ticket.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--select", multiple=True, help="Only these check codes, prefixes (KD) or layers; repeatable.")
@click.option("--ignore", multiple=True, help="Skip these check codes, prefixes or layers; repeatable.")
@_screen_options
@_fail_on_option
@click.option("--max-bytes", type=ByteSize(), default=None, help="Read at most SIZE of each file (64M, 1G); the cut is listed in the report's gaps. Default: every file whole.")
@click.option("--max-total-bytes", type=ByteSize(), default=None,
              help="Read at most SIZE in all (default 16G); files past it are listed in the report's gaps as not read.")
@click.option("--max-files", type=click.IntRange(min=1), default=None, help="Read at most N files (default 200000).")
@click.option("--time-budget", type=click.FloatRange(min=0), default=None,
              help="Stop reading input after SECONDS (default 900; 0: no limit); the checks still run on what was read, "
                   "and the report says what was not.")
@click.option("--node", "node", default=None, help="Only this node, in full: its findings ungrouped, its components and timeline (plus what no node owns).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes to read a big YAML List with (default: the cores this process may use, up to 8, on Linux; "
                   "1: none but this one).")
@_collect_options
def diagnose(source: str | None, fmt: str, output: str | None, select: tuple[str, ...], ignore: tuple[str, ...], color: str,
             no_color: bool, width: int | None, brief: bool, no_pager: bool, fail_on: str, max_bytes: int | None,
             max_total_bytes: int | None, max_files: int | None, time_budget: float | None, node: str | None,
             jobs: int | None, **live) -> None:
    """Diagnose SOURCE: a directory, a .tar.gz/.tgz/.zip of one (a gpusleuth bundle, a must-gather), a single
    file, example:NAME, or - for standard input (a paste, ended with Ctrl-D). Without SOURCE: what is piped
    into it, else the cluster of the current kubeconfig context (read-only)."""
    from gpusleuth.gcpause import gc_paused

    with gc_paused():  # importing the pipeline builds ~1M lasting objects and no garbage: collecting cost ~10% of it
        from gpusleuth.analysis.diagnose import diagnose as run
        from gpusleuth.analysis.engine import Selection
        from gpusleuth.sources import SourceError
        _settle()

    budgets = _budgets(max_bytes, max_total_bytes, max_files, time_budget)
    try:
        piped = None if source else _piped_stdin()
        if piped is not None:
            from gpusleuth.sources.loose import STDIN, read_piped

            src, source = read_piped(piped, STDIN, budgets=budgets), STDIN
        elif source:
            if source == "-" and sys.stdin is not None and sys.stdin.isatty():
                click.echo("gpusleuth: paste the output, then press Ctrl-D on a line of its own", err=True)
            src = _open(source, budgets=budgets)
        else:
            from gpusleuth.sources.live import source_from_collection

            collection = _collect(live, quiet=fmt == "json")
            if not collection.artifacts:
                gaps = sorted(collection.gaps, key=lambda g: "/version" not in str(g))  # "cannot connect" says it best
                _fail("cannot read the cluster: " + (str(gaps[0]) if gaps else "nothing collected"))
            src = source_from_collection(collection, f"live:{collection.manifest['cluster'].get('context') or collection.manifest['cluster'].get('server')}", budgets)
            source = src.description
    except SourceError as exc:
        _fail(str(exc))
    src.run_gaps.extend(_selection_gaps(select, ignore))
    from gpusleuth.errors import UnknownNode

    progress = Progress(src)
    try:
        with gc_paused(), _jobs(jobs):  # as run() does; and what it built is settled before the collector runs again
            report = run(src, Selection(tuple(select), tuple(ignore)), node=node, progress=progress)
            _settle()
    except UnknownNode as exc:
        progress.clear()
        _fail(exc.message(source))
    finally:
        progress.clear()
    if source in ("-", "stdin", "/dev/stdin") and not report.source.get("documents") and all(g.why == "empty file" for g in src.gaps):
        _fail("nothing came on standard input (pipe or paste the output into it, or give a SOURCE)")
    if not report.source.get("recognised"):
        # why each file could not be read; "N checks could not run" follows from it and says nothing more
        reasons = "; ".join(str(g) for g in report.gaps if g.artifact)[:600] or "no files"
        _fail(f"{source}: nothing gpusleuth can read ({reasons})")
    _warn_partial(report)
    _emit(report, fmt, output, Screen(color, no_color, width, brief, no_pager), fail_on, documents=src.documents)


def exit_code(report, fail_on: str = "error") -> int:
    """1 when a finding is at the --fail-on severity or above, else 0."""
    from gpusleuth.model.finding import Severity

    if fail_on == "never":
        return EXIT_OK
    return EXIT_FINDINGS if report.worst() >= Severity(fail_on).weight else EXIT_OK


class Screen:
    """The text report's terminal settings, resolved against what stdout is."""

    def __init__(self, color: str = "auto", no_color: bool = False, width: int | None = None, brief: bool = False,
                 no_pager: bool = False):
        self.color, self.width, self.brief, self.no_pager = ("never" if no_color else color), width, brief, no_pager

    def tty(self, output: str | None) -> bool:
        return output is None and sys.stdout.isatty()

    def use_color(self, output: str | None) -> bool:
        if self.color != "auto":
            return self.color == "always"
        return self.tty(output) and "NO_COLOR" not in os.environ

    def columns(self, output: str | None) -> int:
        import shutil

        if self.width:
            return self.width
        if output is not None:
            return PIPE_WIDTH
        return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns  # $COLUMNS, else the terminal, else 100


def _page(text: str) -> bool:
    """Show text through the user's pager as git does ($GIT_PAGER aside: $PAGER, else less with LESS=FRX so a short
    report stays on screen and colours pass); False when there is no pager to run (the caller prints)."""
    import shlex
    import shutil
    import subprocess

    pager = os.environ.get("PAGER")
    if pager is None:
        pager = "less"
    if not pager.strip() or pager.strip() == "cat":
        return False
    try:
        if not shutil.which(shlex.split(pager)[0]):
            return False
    except ValueError:
        return False
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    try:
        proc = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    try:
        proc.stdin.write(text.encode("utf-8", errors="replace"))
        proc.stdin.close()
    except BrokenPipeError:  # the user quit the pager early
        pass
    proc.wait()
    return True


def _emit(report, fmt: str, output: str | None, screen: Screen | None = None, fail_on: str = "error", documents=None,
          no_gpu: bool = False) -> None:
    """Render a report like `diagnose` does and exit with its code (2 for a node probe that found no usable GPU
    and nothing at `fail_on` that explains why)."""
    from gpusleuth.gcpause import gc_paused
    from gpusleuth.report import renderer

    screen = screen or Screen()
    code = exit_code(report, fail_on) or (EXIT_USAGE if no_gpu else 0)
    with gc_paused():  # the renderer's imports (rich for text): no garbage either, and they last
        render = renderer(fmt)
        _settle()
    if fmt == "text":
        text = render(report, width=screen.columns(output), color=screen.use_color(output), brief=screen.brief)
        if screen.tty(output) and not screen.no_pager:
            import shutil

            if text.count("\n") > shutil.get_terminal_size((PIPE_WIDTH, 24)).lines - 1 and _page(text):
                sys.exit(code)
        _write(text, output, color=screen.use_color(output) or None)
        sys.exit(code)
    if fmt == "json":  # written as it is encoded: a fleet's report is 100 MB and more (report/jsonenc.py)
        from gpusleuth.report.json_report import write

        _write_with(lambda fh: write(report, fh), output)
        sys.exit(code)
    if fmt == "html":
        text = render(report, documents=documents)
    else:
        text = render(report)
    _write(text, output)
    sys.exit(code)


@cli.command()
@click.argument("source")
@click.option("--since", help="Only entries at or after this time: HH:MM[:SS] (UTC, on the timeline's first day) or ISO 8601.")
@click.option("--until", help="Only entries at or before this time (same forms as --since).")
@click.option("--node", help="Only this node (entries whose node is unknown stay).")
@click.option("--component", "components", multiple=True, help="Only these lanes/components/containers; repeatable.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--svg", "svg", type=click.Path(dir_okay=False), help="Also write the timeline as an SVG picture to FILE.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write to FILE instead of stdout.")
@click.option("--color/--no-color", default=None, help="Colour the text (default: when stdout is a terminal).")
def timeline(source: str, since: str | None, until: str | None, node: str | None, components: tuple[str, ...], fmt: str,
             svg: str | None, output: str | None, color: bool | None) -> None:
    """One timeline across every source of SOURCE: a lane per operator/component, races marked."""
    from gpusleuth.analysis.diagnose import diagnose as run
    from gpusleuth.report.timeline_svg import render_svg
    from gpusleuth.report.timeline_text import render_timeline_command, parse_when
    from gpusleuth.sources import SourceError

    try:
        src = _open(source)
    except SourceError as exc:
        _fail(str(exc))
    from gpusleuth.errors import UnknownNode

    try:
        report = run(src, node=node)  # one node's timeline, phases and races, as `diagnose --node` reports them
    except UnknownNode as exc:
        _fail(exc.message(source))
    if not report.timeline:
        _fail(f"{source}: no timestamped log line, event or container status to put on a timeline")
    fleet = report.extras.get("fleet")
    if svg and fleet and not node:
        _fail(f"{source} holds {fleet['nodes']} nodes: --svg draws one node's timeline; add --node NAME")
    first = next((e.time or e.earliest for e in report.timeline if e.time or e.earliest), None)
    try:
        lo, hi = parse_when(since, first), parse_when(until, first)
    except ValueError as exc:
        _fail(str(exc))
    use_color = color if color is not None else (output is None and fmt == "text" and sys.stdout.isatty())
    import shutil

    text, entries, violations = render_timeline_command(report, lo, hi, node, components, fmt, use_color,
                                                        shutil.get_terminal_size((140, 24)).columns)
    if svg:
        _write(render_svg(entries, violations, title=f"gpusleuth timeline — {source}", focus=not (since or until)), svg)
    _write(text, output)


@cli.command(cls=ScreenCommand)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--save", "save_dir", type=click.Path(), help="Also write what was read as a bundle: a directory, or FILE.tar.gz (diagnose it later for the same findings).")
@click.option("--kernel-log", type=click.Path(exists=True, dir_okay=False), help="Read kernel messages from FILE (saved dmesg / journalctl -k) instead of this machine's; works without a GPU or NVML.")
@click.option("--host-root", type=click.Path(exists=True, file_okay=False), help="Read the host's files under DIR (a pod that mounts the host's / there, e.g. /host); default: this machine's own.")
@click.option("--node-name", help="Name the node in the report and in fix commands (default: $NODE_NAME, else the host name).")
@_screen_options
@_fail_on_option
def node(fmt: str, output: str | None, save_dir: str | None, kernel_log: str | None, host_root: str | None, node_name: str | None,
         color: str, no_color: bool, width: int | None, brief: bool, no_pager: bool, fail_on: str) -> None:
    """Probe this node: every GPU through NVML, the kernel log, and the host's driver, runtime and toolkit files; report like diagnose."""
    from pathlib import Path

    from gpusleuth.analysis.diagnose import diagnose as run
    from gpusleuth.live.bundle import refuse_existing, write_bundle
    from gpusleuth.sources.node import kernel_only, no_host, probe, read_host, read_kernel_log, source

    if save_dir:
        try:
            refuse_existing(save_dir)
        except FileExistsError as exc:
            _fail(str(exc))  # names the path and why

    def from_file() -> tuple[str | None, list[str], str | None]:
        try:
            return Path(kernel_log).read_text(encoding="utf-8", errors="replace"), [], None
        except OSError as exc:
            return None, [f"{kernel_log}: {exc.strerror}"], None

    def host():
        return read_host(host_root or "")

    kernel = from_file if kernel_log else read_kernel_log
    try:
        import pynvml  # the node path only: the offline commands never load it
    except ImportError:
        pynvml = None
    no_gpu = None
    if pynvml is None:
        no_gpu = "nvidia-ml-py (NVML's Python binding) is not installed"
        if not kernel_log:
            _fail("gpusleuth node needs nvidia-ml-py, which is not installed: pip install nvidia-ml-py "
                  "(or read a saved kernel log without it: --kernel-log FILE)")
        collection = kernel_only(kernel, no_gpu, node_name, host if host_root else no_host)
    else:
        try:
            collection = probe(pynvml, kernel, node_name, host)
        except Exception as exc:  # noqa: BLE001 - pynvml.NVMLError and its subclasses; pynvml may be a stand-in
            if not isinstance(exc, pynvml.NVMLError):
                raise
            no_gpu = f"NVML: {exc}"
            if not kernel_log:  # on the node: its kernel log and files say why the driver is not there
                click.echo(f"gpusleuth: no usable NVIDIA GPU or driver on this machine ({no_gpu}); reading its kernel log and "
                           "host files for why", err=True)
            collection = (kernel_only(kernel, no_gpu, node_name, host if host_root else no_host) if kernel_log else
                          kernel_only(kernel, no_gpu, node_name, host, nvml_error=str(exc)))
    src = source(collection, f"node {collection.manifest['node']}")
    report = run(src)
    if save_dir:
        try:
            written = write_bundle(collection, save_dir)  # the bundle `diagnose` reads back
        except OSError as exc:
            _fail(f"cannot write {save_dir}: {exc.strerror or exc}")
        click.echo(f"gpusleuth: saved {len(collection.artifacts)} artifact(s) to {written}", err=True)
    if no_gpu and kernel_log:
        click.echo(f"gpusleuth: NVML was not available ({no_gpu}); only the kernel log {'and host files were' if host_root else 'was'} read",
                   err=True)
    _emit(report, fmt, output, Screen(color, no_color, width, brief, no_pager), fail_on, documents=src.documents,
          no_gpu=no_gpu is not None and not kernel_log)


@cli.command()
@click.argument("codes", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def xid(codes: tuple[str, ...], fmt: str) -> None:
    """Explain Xid CODES from the catalogue: meaning, immediate action, app vs hardware, and the ladder."""
    from gpusleuth.report.xid import explain_json, explain_text

    numbers = []
    for c in codes:
        if not c.strip().isdigit():
            _fail(f"{c!r} is not an Xid code (a number, e.g. gpusleuth xid 79 94)")
        numbers.append(int(c))
    click.echo(explain_json(numbers) if fmt == "json" else explain_text(numbers), nl=False)


@cli.command("cuda-error")
@click.argument("codes", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def cuda_error(codes: tuple[str, ...], fmt: str) -> None:
    """Explain CUDA error CODES (numbers, cudaError/CUDA_ERROR names or messages): meaning, layer, causes."""
    from gpusleuth.report.cuda_error import explain_json, explain_text

    keys = [c.strip() for c in codes if c.strip()]
    if not keys:
        _fail("give a CUDA error code, name or message, e.g. gpusleuth cuda-error 35 CUDA_ERROR_NO_DEVICE")
    click.echo(explain_json(keys) if fmt == "json" else explain_text(keys), nl=False)


@cli.command()
def examples() -> None:
    """List the bundled example incidents (diagnose them with example:NAME)."""
    import tomllib

    from gpusleuth.sources import example_names, examples_root

    for name in example_names():
        meta = tomllib.loads((examples_root() / name / "example.toml").read_text(encoding="utf-8"))
        click.echo(f"{name:<28} {meta.get('title', '')}")


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def checks(fmt: str) -> None:
    """The check catalogue: code, layer, name and what each one finds."""
    from gpusleuth.checks import all_checks

    items = all_checks()
    if fmt == "json":
        import json

        click.echo(json.dumps([c.to_dict() for c in items], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for col in ("code", "layer", "name", "summary"):
        table.add_column(col, overflow="fold")
    for c in items:
        table.add_row(c.code, c.layer.value, c.name, c.summary)
    Console(width=int(os.environ.get("COLUMNS", 140))).print(table)


@cli.command()
@click.argument("code")
def explain(code: str) -> None:
    """One check's documentation: what it does, why it matters, how to fix."""
    from gpusleuth.checks import get_check

    from gpusleuth.checks import MOVED

    c = get_check(code)
    if c is None:
        _fail(f"no check with code or name {code!r} (see `gpusleuth checks`)")
    if (moved := MOVED.get(code.upper())) is not None:
        click.echo(f"{code.upper()} is now {c.code}: {moved[1]}.\n")
    click.echo(f"{c.code} {c.name} (layer: {c.layer.value})\n\n{c.summary}\n")
    for head, body in (("What it does", c.what), ("Why it matters", c.why), ("How to fix", c.fix)):
        click.echo(f"{head}:\n  {body}\n")


@cli.command()
@click.option("--output", "-o", type=click.Path(), default=None, help="FILE.tar.gz or DIR (default: gpusleuth-bundle-<UTC time>.tar.gz).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="json: the manifest's summary on stdout, no progress.")
@_collect_options
def collect(output: str | None, fmt: str, **live) -> None:
    """Collect a bundle from the cluster (read-only unless --node-probes) for `diagnose BUNDLE` anywhere."""
    from gpusleuth.live.bundle import default_name, refuse_existing, write_bundle
    from gpusleuth.sources import SourceError

    output = output or default_name()
    try:
        refuse_existing(output)
        collection = _collect(live, quiet=fmt == "json")
    except (FileExistsError, SourceError) as exc:
        _fail(str(exc))
    if not collection.artifacts:
        gaps = sorted(collection.gaps, key=lambda g: "/version" not in str(g))
        _fail("nothing collected: " + (str(gaps[0]) if gaps else "no access?"))
    try:
        path = write_bundle(collection, output)
    except (OSError, FileExistsError) as exc:
        _fail(str(exc))
    m = collection.manifest
    summary = {"bundle": str(path), "artifacts": len(collection.artifacts), "counts": m["counts"],
               "gaps": [str(g) for g in collection.gaps], "redacted": m["redaction"]["total"]}
    if fmt == "json":
        import json

        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(f"wrote {path}: {summary['artifacts']} artifacts ({m['counts']['nodes']} nodes, {m['counts']['pods']} pods), "
               f"{summary['redacted']} value(s) redacted")
    for g in summary["gaps"]:
        click.echo(f"  not collected: {g}")


@cli.command()
@click.argument("source")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True, help="Port on 127.0.0.1 (0: any free port).")
@click.option("--faults", type=click.Path(exists=True, dir_okay=False), help="YAML of injected faults (see gpusleuth.serve.faults).")
@click.option("--emulate-probes", metavar="NAMESPACE", default=None, help="For tests: accept probe pod create/delete in NAMESPACE and emulate them.")
def serve(source: str, port: int, faults: str | None, emulate_probes: str | None) -> None:
    """Serve SOURCE (a bundle, must-gather, folder or example:NAME) as a read-only Kubernetes API on 127.0.0.1."""
    from gpusleuth.serve.faults import Faults
    from gpusleuth.serve.server import App, Server
    from gpusleuth.serve.store import Store
    from gpusleuth.sources import SourceError

    try:
        store = Store.from_source(_open(source))
        injected = Faults.load(faults) if faults else Faults()
    except (SourceError, ValueError) as exc:
        _fail(str(exc))
    try:
        server = Server(App(store, injected, probe_namespace=emulate_probes), port=port)
    except OSError as exc:
        _fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}")
    counts = {r: len(b) for r, b in store.objects.items() if b}
    click.echo(f"serving {source} at {server.url} (read-only): " + ", ".join(f"{n} {r}" for r, n in sorted(counts.items())), err=True)
    for note in store.notes:
        click.echo(f"  note: {note}", err=True)
    click.echo(f"  try: kubectl --server {server.url} get pods -A", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()


@cli.command()
@_connection_options
@click.option("--namespace", "-n", default=None, help="Only this namespace (default: all namespaces).")
def cleanup(kubeconfig: str | None, context: str | None, server: str | None, request_timeout: float, namespace: str | None) -> None:
    """Delete node-probe pods a killed `--node-probes` run left behind (by their gpusleuth labels)."""
    import asyncio

    from gpusleuth.live.api import Api, ApiFailure
    from gpusleuth.live.probes import PROBE_SELECTOR, sweep

    async def run():
        api = Api.connect(kubeconfig=kubeconfig, context=context, server=server, timeout=request_timeout)
        try:
            return await sweep(api, namespace, PROBE_SELECTOR)
        finally:
            await api.aclose()

    try:
        deleted, left = asyncio.run(run())
    except ApiFailure as exc:
        _fail(f"cleanup failed: {exc.reason}")
    click.echo(f"deleted {len(deleted)} probe pod(s)" + (": " + ", ".join(deleted) if deleted else ""))
    if left:
        _fail(f"could not delete: {', '.join(left)}")


def main(args: list[str] | None = None, prog_name: str | None = None) -> None:
    """Entry point: no traceback reaches a user unless GPUSLEUTH_DEBUG is set."""
    import atexit
    import gc

    # At exit the interpreter runs one last cycle collection over every object still alive (a diagnosis's
    # documents, lines and findings: ~45 ms for the bundled example) only to free memory the process is about to
    # give back anyway. Frozen objects are skipped; files are closed by `with` blocks and the standard streams
    # are flushed at shutdown whatever the collector does.
    atexit.register(gc.freeze)
    from gpusleuth import compilecache

    compilecache.install()  # regexes and dataclass methods compiled in an earlier run are not compiled again
    global _ONE_SHOT
    _ONE_SHOT = True
    try:
        cli(args=args, prog_name=prog_name, standalone_mode=True)
    except KeyboardInterrupt:  # between commands (while click reads the arguments)
        click.echo("gpusleuth: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("GPUSLEUTH_DEBUG"):
            raise
        click.echo(f"gpusleuth: internal error: {type(exc).__name__}: {exc} (set GPUSLEUTH_DEBUG=1 for details)", err=True)
        sys.exit(EXIT_USAGE)


# kubectl's global flags that gpusleuth honours (its own option names, flag -> (option, takes a value)).
_KUBECTL_FLAGS = {"--context": "--context", "--kubeconfig": "--kubeconfig", "--namespace": "--namespace", "-n": "--namespace",
                  "--server": "--server", "-s": "--server", "--request-timeout": "--request-timeout"}


def _seconds(value: str) -> str:
    """kubectl's --request-timeout (0, 30, 30s, 1m, 1m30s) as gpusleuth's seconds; 0 (no timeout) as an hour."""
    import re

    if re.fullmatch(r"\d+(\.\d+)?", value):
        n = float(value)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", value)
        if not parts or "".join(a + b for a, b in parts) != value:
            return value  # let the option say what is wrong
        n = sum(float(a) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[u] for a, u in parts)
    return f"{n if n > 0 else 3600:g}"


def kubectl_args(argv: list[str]) -> list[str]:
    """`kubectl gpusleuth [FLAGS] COMMAND [ARGS]` as gpusleuth's own arguments. kubectl hands a plugin every word
    after its name and refuses global flags before it, so --context, --kubeconfig, -n/--namespace, -s/--server
    and --request-timeout arrive here, before or after the command: those before it are moved after it, and
    kubectl's spellings (-s, --request-timeout=30s) become gpusleuth's."""
    def split(tok: str) -> tuple[str, str | None]:
        if tok.startswith("--") and "=" in tok:
            name, value = tok.split("=", 1)
            return name, value
        if tok.startswith("-n") and len(tok) > 2 and not tok.startswith("--"):
            return "-n", tok[2:]
        return tok, None

    out, moved, i, command_at = [], [], 0, None
    while i < len(argv):
        tok = argv[i]
        name, value = split(tok)
        if name in _KUBECTL_FLAGS:
            if value is None and i + 1 < len(argv):
                value, i = argv[i + 1], i + 1
            if value is None:
                out.append(tok)
                i += 1
                continue
            option = _KUBECTL_FLAGS[name]
            pair = [option, _seconds(value) if option == "--request-timeout" else value]
            (moved if command_at is None else out).extend(pair)
        else:
            if command_at is None and not tok.startswith("-"):
                command_at = len(out)
                out.append(tok)
                out.extend(moved)
                moved = []
            else:
                out.append(tok)
        i += 1
    return out + moved


def kubectl_main() -> None:
    """The `kubectl-gpusleuth` console script: `kubectl gpusleuth diagnose` once it is on PATH."""
    main(kubectl_args(sys.argv[1:]), prog_name="kubectl gpusleuth")


if __name__ == "__main__":
    main()
