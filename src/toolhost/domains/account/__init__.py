"""The account domain (CATALOG.md)."""
