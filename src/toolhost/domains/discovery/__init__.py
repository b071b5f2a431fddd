"""The discovery domain (CATALOG.md)."""
