"""Arrays of other libraries: taken as NumPy arrays without a copy (``arrays``), and results
given back as the caller's kind of array where its library takes them without a copy
(``results``). Imports only ``errors``."""
