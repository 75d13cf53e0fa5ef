"""Reports of a run: the call-record columns (``columns``), text summaries (``text``) and file exports
(``export``)."""
