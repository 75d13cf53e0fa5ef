"""What the export tests read back from an SVG (its elements' styles, texts and fills) and from a rendered image
(pixels near a colour), shared by the plot's and the dataflow graph's export tests."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

SVG = "{http://www.w3.org/2000/svg}"


def style(el: ET.Element) -> dict[str, str]:
    """An element's presentation attributes and ``style`` declarations, merged."""
    out = {k: v for k, v in el.attrib.items() if k != "style"}
    for decl in (el.get("style") or "").split(";"):
        if ":" in decl:
            k, v = decl.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def texts(root: ET.Element) -> dict[str, ET.Element]:
    """Each ``<text>`` element by its text."""
    return {"".join(t.itertext()).strip(): t for t in root.iter(f"{SVG}text")}


def fills(el: ET.Element) -> set[str]:
    """The fill colours of ``el`` and everything under it (lower case)."""
    return {style(e).get("fill", "").lower() for e in el.iter()}


def near_mask(rgb: np.ndarray, colour: str, tol: int = 90) -> np.ndarray:
    """Which pixels of ``rgb`` lie within ``tol`` (summed over R, G, B) of ``colour`` (``#rrggbb``)."""
    target = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    return np.abs(rgb[..., :3].astype(float) - target).sum(axis=-1) < tol


def near(rgb: np.ndarray, colour: str, tol: int = 90) -> int:
    """How many pixels of ``rgb`` lie within ``tol`` of ``colour``."""
    return int(near_mask(rgb, colour, tol).sum())
