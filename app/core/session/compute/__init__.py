"""The session's compute side: :class:`~app.core.session.compute.service.ComputeService` executes every request on
the compute thread, each concept's answers in its own module (passes, settings_race, profile, recorded); a program's
requests go to :class:`app.core.programs.compute.service.ProgramService`."""
