"""Two recorded runs side by side (issue 58): compile time per stage, steady speed as a ratio with its interval
when the runs recorded steady rounds, the structural diffs of their optimized HLO and StableHLO, the first XLA
pass whose output differs, token parity and what differs in versions, flags and machine —
:func:`app.core.compare.runs.compare_runs` (the data), :func:`app.core.compare.text.format_comparison` (the CLI's
text), :func:`app.core.compare.report.report_html` (the one-page HTML report, plots from
:mod:`app.core.compare.charts`), :mod:`app.core.compare.programs` (StableHLO and pass pipelines). No JAX or
torch: ``torchax-playground compare`` and File ▸ Compare two runs… both use it."""
