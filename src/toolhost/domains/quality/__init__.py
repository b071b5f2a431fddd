"""Quality gates: the seven-category score of CATALOG.md §9 for posts and plans."""
