"""The window's panels, one per thing the user works with (the demo kit, the IR links, the Profile and Passes
tabs, the Code workspace, session files, the mesh, help, the plot's actions, the Run workspace's views). Each is
built with an :class:`app.gui.context.WindowContext`, the widgets it drives (constructor arguments, or its record
in :mod:`app.gui.context`; never the window's whole set) and the panels it works with; no panel imports another's
module at run time (pyproject.toml's import contracts)."""
