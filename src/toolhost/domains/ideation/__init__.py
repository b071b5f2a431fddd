"""Ideation: trends, the swipe file, ideation context and next-content suggestions, from stored data."""
