"""The video module (CATALOG.md §4): built-in compositions and HTML compositions rendered to video."""
