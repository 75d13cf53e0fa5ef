"""XLA's pass pipeline step by step: record a compile's per-pass HLO snapshots, pass times, backend phases
and fusion decisions (:mod:`.record`), open dumps recorded elsewhere, XLA:GPU's included (:mod:`.dumps`), and
query them (:mod:`.query`). No Qt."""
