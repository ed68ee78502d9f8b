"""(being written)"""

TEMPLATES: tuple = ()
