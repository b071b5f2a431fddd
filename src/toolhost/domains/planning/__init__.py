"""The planning domain (CATALOG.md)."""
