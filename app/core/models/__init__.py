"""Model sources: built-in names, hub ids, folders, random shapes (``sources``), GGUF files (``gguf``,
``gguf_header``), the decoder-only check (``kinds``), parameter counts (``size``) and facts read from a
loaded model (``facts``)."""
