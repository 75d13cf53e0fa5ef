"""The window's run state as a plain model (``model``: :class:`Session`), the typed requests it sends
(``requests``) and the service that executes them on the compute thread (``service``)."""
