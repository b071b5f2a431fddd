"""Platform comments (CATALOG.md §12): list, reply, post, moderate and delete through the account's connector."""
