"""A sweep's progress on stderr: one line for what there is to do, one per retry, and a
tqdm bar (runs done of all, failed, elapsed, ETA) on a terminal only; nothing with
``progress=False`` (``-q``)."""

from __future__ import annotations

import sys


class Progress:
    def __init__(self, total: int, cached: int, failed: int, label: str, enabled: bool):
        """``cached``: runs already stored; ``failed``: points that failed before running."""
        from tqdm import tqdm  # here: every run process imports this package, and needs no bar

        self.label, self.enabled, self.failed = label, enabled, failed
        if enabled:
            sys.stderr.write(f"{label}{total} runs: {cached} already done, {total - cached} to run\n")
        tty = enabled and sys.stderr.isatty()
        self.bar = tqdm(total=total, initial=cached + failed, desc=label.rstrip(": ") or None, unit="run",
                        file=sys.stderr, disable=not tty, dynamic_ncols=True, postfix={"failed": failed})

    def note(self, text: str) -> None:
        if self.enabled:
            self.bar.write(f"{self.label}{text}", file=sys.stderr)  # above the bar, which stays

    def update(self, ok: bool) -> None:
        if not ok:
            self.failed += 1
            self.bar.set_postfix(failed=self.failed, refresh=False)
        self.bar.update()

    def close(self) -> None:
        self.bar.close()
