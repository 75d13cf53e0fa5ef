"""The IR views (What JAX sees): IR tabs and panels, code view and lexer, find bar, HLO diff, line links."""
