"""The package version (one place: the package, the ownership labels of sandboxes and the CLI read it here)."""

__version__ = "0.1.0"
