"""A log-scale axis labelled with plain numbers (1, 10, 100, 1000), for millisecond plots."""

from __future__ import annotations

import math

import pyqtgraph as pg  # noqa: TID253 - a heavy module: its users import it inside functions


class LogMsAxis(pg.AxisItem):
    """Log axis labelled 1, 10, 100, 1000 (plus 2 and 5 when less than ~1.5 decades show) — never the
    ``9·10²`` minor labels pyqtgraph writes on a tall plot."""

    def tickStrings(self, values, scale, spacing):
        if not self.logMode:
            return super().tickStrings(values, scale, spacing)
        narrow = self.range[1] - self.range[0] < 1.5
        out = []
        for v in values:
            mantissa = 10 ** (v - math.floor(v + 1e-9))
            decade = abs(v - round(v)) < 1e-6
            keep = decade or (narrow and any(abs(mantissa - m) < 1e-6 for m in (2, 5)))
            value = 10**v
            out.append((f"{value:,.0f}" if value >= 1 else f"{value:.2g}") if keep else "")
        return out
