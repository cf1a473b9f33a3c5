"""Cairn's Qt shell: the tray and the governance windows, on top of `core`'s service layer."""
