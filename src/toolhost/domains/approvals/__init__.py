"""The approvals domain (CATALOG.md)."""
