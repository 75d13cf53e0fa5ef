"""Compiler settings: a catalog of what each one sets (:mod:`.catalog`), the per-thread XLA compile options every
compile of the app reads (:mod:`.options`), and the settings race — one model step (decode, prefill or jit-loop's
whole loop) or program entry compiled and run under several settings (:mod:`.race`; a program's: :mod:`app.core.programs.compute.race`), with its
trade-off figures (:mod:`.figures`), where two settings' pass pipelines part (:mod:`.parting`) and the race as plain
data for the CLI and session files (:mod:`.saved`).

Nothing is imported here: :mod:`.options` sits under the runtime (``app.core.runtime.compiled_step`` reads it), the
race above the engine, and :mod:`.saved` is read where JAX is not installed (``show-session``)."""
