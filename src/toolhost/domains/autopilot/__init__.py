"""Autopilot (CATALOG.md §13): standing automations that run a pipeline or a recipe on a weekly schedule."""
