"""Skills (CATALOG.md §16): playbooks shipped as documents (guides) and previews of workflows (recipes)."""
