"""Database: the declarative base, column types, the engine and session factory, and migrations."""
