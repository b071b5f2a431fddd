"""The brand domain: versioned four-layer brand runtimes, extraction and consistency checks."""
