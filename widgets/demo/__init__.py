"""The demo kit's docks (app.gui.panels.demo.kit): race controls and summary, compile log, phase bars, cache controls."""
