"""The Profile tab: measured time per op, line and module, and its links to the IR and the source."""
