"""Analytics (CATALOG.md §11): metric snapshots of published posts and what they say."""
