"""Tests of the roundtable part: broker protocol, export, memory tool, loop scenario, MCP server."""
