"""Apps (CATALOG.md §19): the content calendar and analytics pulse, as MCP UI resources and web pages."""
