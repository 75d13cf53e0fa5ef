"""Two recorded runs side by side (issue 58): compile time per stage, steady speed as a ratio with its interval
when the runs recorded steady rounds, the structural diff of their optimized HLO, token parity and what differs
in versions, flags and machine — :func:`app.core.compare.runs.compare_runs` and its text,
:func:`app.core.compare.runs.format_comparison`. No JAX or torch."""
