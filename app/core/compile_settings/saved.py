"""A settings race as plain data: what ``race --settings`` and ``tradeoff`` print (the table, one JSON line per
setting, the summary line) and what a session file keeps (``SessionFile.settings_races``, one dict per race), so
``show-session`` prints a saved race through the same code as the command that ran it. Pure Python: no JAX (a
session file is read where JAX is not installed).

A race's dict: ``kind`` (:data:`KIND`), ``title`` (what was raced, on which device), ``step`` (``decode``,
``prefill``, ``loop`` or ``program``), ``lanes`` (:meth:`SettingLane.to_json` each, the baseline first) and
``partings`` (setting name → :meth:`app.core.compile_settings.parting.Parting.to_json`; empty when not recorded) and
``paired`` (the paired rounds that state each "vs baseline" ratio: :mod:`app.core.compile_settings.paired`; each
lane's ``verdict`` holds its pair; None in a race without them and absent in a file saved before them).
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from app.core.compile_settings.figures import (
    SettingLane,
    break_even_calls,
    compile_detail,
    detail_text,
    format_table,
    same_hlo,
    summary,
    versus_baseline,
)
from app.core.verdict.words import THREAD_NAMES

#: ``kind`` of a saved settings race.
KIND = "settings-race"
_LANE_FIELDS = {f.name for f in fields(SettingLane)} - {"outputs"}


def race_document(title: str, step: str, lanes: list[SettingLane],
                  partings: dict[str, dict[str, Any]] | None = None,
                  paired: dict[str, Any] | None = None) -> dict[str, Any]:
    """The race as one JSON-able dict (see the module's docstring); ``partings``: setting name → its parting's
    JSON (``Parting.to_json()``); ``paired``: its paired phase (:class:`app.core.compile_settings.paired.
    SettingsVerdicts`' ``doc`` without ``pairs``; default: the one the baseline's verdict keeps), None when none
    ran."""
    if paired is None and lanes and lanes[0].verdict:
        paired = lanes[0].verdict.get("phase")
    return {"kind": KIND, "title": title, "step": step, "lanes": [lane.to_json() for lane in lanes],
            "partings": dict(partings or {}), "paired": paired}


def lanes_of(document: dict[str, Any]) -> list[SettingLane]:
    """The :class:`SettingLane` s of a saved race (fields a newer file adds are left out). Raises ``KeyError`` /
    ``TypeError`` for a malformed lane (the session reader turns them into ``SessionFileError``)."""
    return [SettingLane(**{k: v for k, v in lane.items() if k in _LANE_FIELDS}) for lane in document["lanes"]]


def verdict_fields(base: SettingLane, lane: SettingLane) -> dict[str, Any]:
    """A ``setting`` line's paired fields (``rounds`` keeps its meaning: the cold lanes merged): ``ratio`` (the
    baseline's ms per call over the setting's: a speed-up, > 1 faster), ``ci_low`` / ``ci_high`` (95 %),
    ``paired_rounds`` (paired rounds kept), ``aa_noise`` (± %), ``dropped``, ``noisy``, ``verdict_text`` (the verdict
    module's sentence), ``versus_baseline`` (the table's words) and ``same_hlo``; the paired fields are None without
    paired rounds (``--no-steady``, an old file), the baseline's ``ratio`` 1.0 with no interval."""
    v = lane.verdict or {}
    return {**{k: v.get(k) for k in ("ratio", "ci_low", "ci_high")}, "paired_rounds": v.get("rounds"),
            **{k: v.get(k) for k in ("aa_noise", "dropped", "noisy")}, "verdict_text": v.get("text"),
            "versus_baseline": versus_baseline(base, lane), "same_hlo": same_hlo(base, lane)}


def json_lines(document: dict[str, Any]) -> list[str]:
    """One ``setting`` line per lane (its figures, ``break_even_calls`` and, with a parting, ``first_differing_pass``)
    and one ``settings-summary`` line (``pareto``, ``break_even``, ``break_even_text``, ``unequal``, ``partings``:
    name → parting JSON, ``first_differing_pass``: name → pass or None)."""
    lanes = lanes_of(document)
    partings = document.get("partings") or {}
    lines = []
    for lane in lanes:
        line = {"event": "setting", **lane.to_json(), "break_even_calls": break_even_calls(lanes[0], lane),
                **verdict_fields(lanes[0], lane)}
        if lane.name in partings:
            line["first_differing_pass"] = partings[lane.name].get("pass")
        lines.append(json.dumps(line))
    found = {"event": "settings-summary", "title": document.get("title", ""), "step": document.get("step", ""),
             **summary(lanes), "paired": document.get("paired")}
    if partings:
        found["partings"] = partings
        found["first_differing_pass"] = {name: p.get("pass") for name, p in partings.items()}
    lines.append(json.dumps(found))
    return lines


def verdict_lines(paired: dict[str, Any] | None, lanes: list[SettingLane]) -> list[str]:
    """The paired phase as the CLI prints it under the table: a head line (rounds kept and dropped, the A/A floor,
    threads, why it stopped) and each setting's sentence (:func:`app.core.verdict.words.verdict_text`'s); a race
    without one says its ratios are one pass's."""
    if not paired:
        return ["vs baseline: one pass per lane, no confidence interval (no paired rounds ran)"] if len(lanes) > 1 \
            else []
    aa = paired.get("aa_noise")
    threads = " · ".join(f"{THREAD_NAMES.get(k, k)} {v}" for k, v in (paired.get("threads") or {}).items())
    head = (f"paired rounds: {paired.get('rounds', 0)} kept ({paired.get('dropped', 0)} dropped), baseline "
            f"{paired.get('baseline', '?')} twice per round" + (f", A/A ±{aa:.1f} %" if aa is not None else "")
            + f"; threads {threads or '–'}; stopped: {paired.get('stopped_by', '?')} after "
            f"{paired.get('elapsed_s', 0):.1f} s")
    said = [f"  {lane.verdict['text']}" for lane in lanes[1:] if lane.verdict and lane.verdict.get("ratio")]
    left = [f"  ({lane.name}: no paired rounds, one pass only)" for lane in lanes[1:] if not lane.verdict]
    noisy = ["  noisy machine: the A/A interval is wider than ±3 %; differences smaller than it cannot be told"] \
        if paired.get("noisy") else []
    return [head, *said, *left, *noisy, *[f"  dropped {why}" for why in paired.get("dropped_rounds") or []]]


def format_race(document: dict[str, Any]) -> str:
    """The race as the CLI prints it: its title, the table (:func:`format_table`), the Pareto note and one line per
    setting saying where it parts from the baseline."""
    lanes = lanes_of(document)
    lines = [document.get("title", ""), format_table(lanes),
             "* on the Pareto front (no other setting compiles faster and runs faster); compile ms is the raced "
             "step's own (trace/lower/compile)"]
    lines += verdict_lines(document.get("paired"), lanes)
    details = [f"{lane.name}: {text} ms" for lane in lanes if (text := detail_text(compile_detail(lane)))]
    if details:
        lines.append("XLA's compile, by a profiler capture of it: " + "; ".join(details))
    if any(lane.name.startswith("inductor-") for lane in lanes):
        lines.append("inductor-* lanes ran the torch-compile mode, kernels built from cold; their split is Dynamo "
                     "(trace) / AOT autograd + Inductor lowering (lower) / Inductor codegen + C++ build (compile)")
    partings = document.get("partings") or {}
    if partings:
        lines.append("where each setting parts from the baseline (the first pass whose output HLO differs):")
        lines += [f"  {p.get('text', '')}" for p in partings.values()]
    return "\n".join(lines)
