"""The content pipeline (CATALOG.md §14): readiness, one synchronous run from plan to schedule, its status."""
