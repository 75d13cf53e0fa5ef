"""The examples gallery: short programs, one point each (listed by :mod:`app.core.programs.gallery`)."""
