"""Command line: parse arguments, call the pipeline, pick a renderer. No analysis lives here.

Exit codes: 0 nothing at error or above; 1 findings at error or above; 2 bad usage or unreadable source.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib

import click

from gpusleuth import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _fail(message: str) -> None:
    click.echo(f"gpusleuth: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _write(text: str, output: str | None) -> None:
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or exc}")
    else:
        click.echo(text, nl=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpusleuth")
def cli() -> None:
    """Why are the GPUs on this Kubernetes cluster not usable? From the silicon up, with evidence."""


@cli.command()
@click.argument("source")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--select", multiple=True, help="Only these check codes, prefixes (KD) or layers; repeatable.")
@click.option("--ignore", multiple=True, help="Skip these check codes, prefixes or layers; repeatable.")
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when stdout is a terminal).")
def diagnose(source: str, fmt: str, output: str | None, select: tuple[str, ...], ignore: tuple[str, ...], color: bool | None) -> None:
    """Diagnose SOURCE: a directory, a .tar.gz/.tgz/.zip of one, a single file, or example:NAME."""
    from gpusleuth.analysis.diagnose import diagnose as run
    from gpusleuth.analysis.engine import Selection
    from gpusleuth.sources import SourceError, open_source

    try:
        src = open_source(source)
    except SourceError as exc:
        _fail(str(exc))
    report = run(src, Selection(tuple(select), tuple(ignore)))
    if not report.source.get("recognised"):
        reasons = "; ".join(str(g) for g in report.gaps[:5]) or "no files"
        _fail(f"{source}: nothing gpusleuth can read ({reasons})")
    _emit(report, fmt, output, color)


def _emit(report, fmt: str, output: str | None, color: bool | None) -> None:
    """Render a report like `diagnose` does and exit with its code."""
    from gpusleuth.report import renderer

    render = renderer(fmt)
    if fmt == "text":
        use_color = color if color is not None else (output is None and sys.stdout.isatty())
        text = render(report, color=use_color)
    else:
        text = render(report)
    _write(text, output)
    sys.exit(EXIT_FINDINGS if report.worst() >= 2 else EXIT_OK)


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--save", "save_dir", type=click.Path(file_okay=False), help="Also write what was read to DIR (diagnose DIR gives the same findings).")
@click.option("--kernel-log", type=click.Path(exists=True, dir_okay=False), help="Read kernel messages from FILE (saved dmesg / journalctl -k) instead of this machine's.")
@click.option("--node-name", help="Name the node in the report and in fix commands (default: $NODE_NAME, else the host name).")
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when stdout is a terminal).")
def node(fmt: str, output: str | None, save_dir: str | None, kernel_log: str | None, node_name: str | None, color: bool | None) -> None:
    """Probe this node: every GPU through NVML, and the kernel log for Xids; report like diagnose."""
    try:
        import pynvml  # the node path only: the offline commands never load it
    except ImportError:
        _fail("gpusleuth node needs nvidia-ml-py: pip install 'gpusleuth[node]'")
    from pathlib import Path

    from gpusleuth.analysis.diagnose import diagnose as run
    from gpusleuth.sources.node import probe, read_kernel_log, save

    def from_file() -> tuple[str | None, list[str]]:
        try:
            return Path(kernel_log).read_text(encoding="utf-8", errors="replace"), []
        except OSError as exc:
            return None, [f"{kernel_log}: {exc.strerror}"]

    try:
        src = probe(pynvml, from_file if kernel_log else read_kernel_log, node_name)
    except pynvml.NVMLError as exc:
        _fail(f"no usable NVIDIA GPU or driver on this machine (NVML: {exc})")
    report = run(src)
    if save_dir:
        try:
            written = save(src, Path(save_dir))
        except OSError as exc:
            _fail(f"cannot write {save_dir}: {exc.strerror or exc}")
        click.echo(f"gpusleuth: saved {', '.join(str(p) for p in written)}", err=True)
    _emit(report, fmt, output, color)


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


@cli.command()
def examples() -> None:
    """List the bundled example incidents (diagnose them with example:NAME)."""
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

    c = get_check(code)
    if c is None:
        _fail(f"no check with code or name {code!r} (see `gpusleuth checks`)")
    click.echo(f"{c.code} {c.name} (layer: {c.layer.value})\n\n{c.summary}\n")
    for head, body in (("What it does", c.what), ("Why it matters", c.why), ("How to fix", c.fix)):
        click.echo(f"{head}:\n  {body}\n")


def main() -> None:
    """Entry point: no traceback reaches a user unless GPUSLEUTH_DEBUG is set."""
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("gpusleuth: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("GPUSLEUTH_DEBUG"):
            raise
        click.echo(f"gpusleuth: internal error: {type(exc).__name__}: {exc} (set GPUSLEUTH_DEBUG=1 for details)", err=True)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
