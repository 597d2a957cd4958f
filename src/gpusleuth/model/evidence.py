"""Where a conclusion comes from: an artifact, a line, the text of that line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Evidence:
    artifact: str
    line: int | None
    text: str

    def cite(self) -> str:
        return f"{self.artifact}:{self.line}" if self.line else self.artifact

    def to_dict(self) -> dict:
        return {"artifact": self.artifact, "line": self.line, "text": self.text}
