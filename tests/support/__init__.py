"""The suite's helpers: factories, servers on loopback, page drivers. Test modules and conftest files import
from here; a conftest only registers fixtures."""
