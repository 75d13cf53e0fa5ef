"""Programs: the user's own JAX functions and PyTorch modules, from a file or the editor's text.

- :mod:`~app.core.programs.loader`: :func:`load_program` → :class:`Program` (entry points),
  ``Program.prepare`` → :class:`PreparedCall` (a pure JAX function and its arguments);
- :mod:`~app.core.programs.specs`: argument specs (``f32[8,128]``) and random data for them;
- :mod:`~app.core.programs.runner`: timed calls, jit vs no-jit, shape sweeps with buckets;
- :mod:`~app.core.programs.ir`: the :class:`app.core.inspect.ir.StepIR` of an entry point;
- :mod:`~app.core.programs.errors`: :class:`ProgramError` (message, file, line) and :class:`ProgramStopped`;
- :mod:`~app.core.programs.interrupt`: stopping user code stuck in a Python loop (a ``sys.settrace`` hook);
- :mod:`~app.core.programs.gallery`: the examples in ``app/examples``.
- :mod:`~app.core.programs.compiles`: every compile a call makes, with its cause and its trace / lower / compile ms;
- :mod:`~app.core.programs.sites`: those compiles per call site (no JAX: ``show-session`` prints them);
- :mod:`~app.core.programs.watch`: ``program --watch``, a compile per save of the file and the IR change it made.
"""
