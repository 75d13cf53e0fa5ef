"""The desktop window: Qt wiring of the Qt-free session model (:mod:`app.core.session.model`) to the widgets.

``window`` (the main window and its run wiring), ``layout`` (widgets laid out), ``worker`` (the one
compute thread), ``demo`` (race, caches, compile log, exports), ``inspect`` (source map and IR links),
``mesh`` (devices), ``presentation``, ``exports``, ``user_settings`` and ``main`` (the entry point).
"""
