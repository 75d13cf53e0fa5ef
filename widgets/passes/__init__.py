"""The Passes workspace: XLA's pass list and pass chart, the fusion table, the compile-spike bar."""
