"""Cairn's headless engine: the store, the service layer and everything that never needs Qt."""

__version__ = "0.1.0"
# The version of the agent protocol this Cairn speaks (docs/protocol.md), here so that a client
# needs nothing of the engine to say it.
PROTOCOL_VERSION = 1
