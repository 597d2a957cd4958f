"""Where bytes come from. Everything below this package sees Documents, never paths or sockets."""

from gpusleuth.sources.loose import Source, SourceError, example_names, examples_root, open_source

__all__ = ["Source", "SourceError", "example_names", "examples_root", "open_source"]
