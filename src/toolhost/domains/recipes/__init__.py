"""Recipes (CATALOG.md §15): built-in workflow templates run as `recipe_run` jobs, step by step through execute()."""
