"""The demo kit's docks (app.gui.demo): race controls and summary, compile log, phase bars, cache controls."""
