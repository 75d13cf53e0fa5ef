"""The app's life around the window: the crash dialog and its reporter (:mod:`.crash_dialog`,
:mod:`.crash_reporter`), one window per user (:mod:`.single_instance`: a second start hands its files to the
running window) and the settings file's notices and reset (:mod:`.settings_reset`)."""
