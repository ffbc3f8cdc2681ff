"""Hermes Agent host plugin for commonkeep (memory provider, governance plugin, installer)."""
