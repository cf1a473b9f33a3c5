"""Cairn's headless engine: the store, the service layer and everything that never needs Qt."""

__version__ = "0.1.0"
