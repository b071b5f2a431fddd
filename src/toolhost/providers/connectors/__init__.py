"""Publishing connectors behind one interface (CATALOG.md §1.12), and the registry of them."""
