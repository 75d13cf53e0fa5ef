"""A program on the compute thread: its settings race (:mod:`~app.core.programs.compute.race`) and its profile
(:mod:`~app.core.programs.compute.profile`)."""
