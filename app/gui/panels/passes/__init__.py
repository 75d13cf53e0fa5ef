"""The Passes tab: XLA's pass pipeline step by step (:mod:`.wiring`), and its recorded compile split shown where the user already looks (:mod:`.annotate`)."""
