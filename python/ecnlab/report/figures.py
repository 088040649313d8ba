"""Figure files of a report: each figure saved as PNG (for the page) and SVG (to zoom or
reuse), listed with its caption in the order drawn."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator


@dataclass
class Figures:
    out: Path  # the report directory; files go to out/figures/
    items: list[dict[str, str]] = field(default_factory=list)

    @contextmanager
    def figure(self, name: str, title: str, caption: str, ncols: int = 1, nrows: int = 1,
               size: tuple[float, float] | None = None) -> Iterator[tuple[Any, Any]]:
        """Yield (fig, axes[nrows][ncols]); on exit save figures/NAME.png and .svg. A
        figure with nothing drawn (every axis empty) is not saved and not listed."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(nrows, ncols, figsize=size or (4.6 * ncols + 0.6, 3.3 * nrows + 0.4),
                                 squeeze=False)
        try:
            yield fig, axes
            if not any(ax.has_data() for row in axes for ax in row):
                return
            for row in axes:
                for ax in row:
                    if not ax.has_data():
                        ax.set_visible(False)
            fig.tight_layout()
            d = self.out / "figures"
            d.mkdir(parents=True, exist_ok=True)
            fig.savefig(d / f"{name}.png", dpi=110)
            fig.savefig(d / f"{name}.svg")
            self.items.append({"name": name, "title": title, "caption": caption,
                               "png": f"figures/{name}.png", "svg": f"figures/{name}.svg"})
        finally:
            plt.close(fig)
