"""The per-call latency plot and its parts: runs, axes, legend, fitting, tool tip, PNG and vector exports."""
