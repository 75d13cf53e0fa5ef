"""What a compiled step runs on: timed trace → lower → compile (``compiled_step``), pytree registration
of Hugging Face outputs and caches (``pytrees``), sampling inside the step (``sampling``) and the one
StaticCache template (``kv_cache``)."""
