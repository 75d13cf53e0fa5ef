"""Building blocks every view shares: the read-only table base, the splitter helper, the busy indicator."""
