"""Roundtable host plugin for commonkeep (broker client and local broker, export and memory tools)."""
