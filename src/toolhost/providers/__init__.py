"""Adapters to the outside: URL fetching, providers, connectors, storage."""
