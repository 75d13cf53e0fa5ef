"""Session files: save, open, compare, diff and replay recorded runs."""
