"""The demo kit: mode race, compile log, caches, phases, presentation mode, exports."""
