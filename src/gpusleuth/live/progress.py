"""Progress on the terminal while collecting: resources, nodes, pods, logs, probes (rich, on stderr)."""

from __future__ import annotations


class RichProgress:
    """A rich progress display; use as a context manager around the collection."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            SpinnerColumn(), TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=Console(stderr=True), transient=False,
        )
        self._tasks: dict[str, int] = {}

    def __enter__(self) -> "RichProgress":
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.stop()

    def task(self, key: str, label: str, total: int | None = None) -> None:
        if key not in self._tasks:
            self._tasks[key] = self._progress.add_task(label, total=total)
        elif total is not None:
            self.total(key, total)

    def advance(self, key: str, n: int = 1) -> None:
        if key in self._tasks:
            self._progress.advance(self._tasks[key], n)

    def total(self, key: str, total: int) -> None:
        if key in self._tasks:
            self._progress.update(self._tasks[key], total=total)
